/*
 * Part-2 tensors of the weights file (docs/reference-model-audio.md, "Weights"), loaded into one
 * arena after part 1. Every tensor's presence, dtype and shape is checked before anything is
 * allocated; a missing or misshapen tensor is named together with the file.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_model.h"
#include "safetensors.h"

#define AW_MAX_TENSORS 160

typedef struct aw_list {
    st_expected items[AW_MAX_TENSORS];
    size_t count;
    int overflow;
} aw_list;

/* One expected tensor; `rank` extents follow the name. */
static void want(aw_list *list, float **slot, const char *name, uint32_t rank, ...) {
    if (list->count == AW_MAX_TENSORS) {
        list->overflow = 1;
        return;
    }
    st_expected *t = &list->items[list->count++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->rank = rank;
    t->slot = slot;
    va_list args;
    va_start(args, rank);
    for (uint32_t i = 0; i < rank; i++) t->shape[i] = va_arg(args, int);
    va_end(args);
}

static void linear(aw_list *list, float **w, float **b, const char *prefix, int out, int in) {
    char name[64];
    snprintf(name, sizeof name, "%s.weight", prefix);
    want(list, w, name, 2, out, in);
    snprintf(name, sizeof name, "%s.bias", prefix);
    want(list, b, name, 1, out);
}

/* A LayerNorm's weight and bias, [32] each. */
static void norm(aw_list *list, float **w, float **b, const char *prefix) {
    char name[64];
    snprintf(name, sizeof name, "%s.weight", prefix);
    want(list, w, name, 1, A_ED);
    snprintf(name, sizeof name, "%s.bias", prefix);
    want(list, b, name, 1, A_ED);
}

/* The table of the spec, in its order. */
static void build(aw_list *list, audio_weights *w) {
    char p[64], n[96];
    list->count = 0;
    want(list, &w->window, "frontend.window", 1, A_NFFT);
    want(list, &w->mel_fb, "frontend.mel_fb", 2, A_NMEL, A_NBINS);
    want(list, &w->conv0_w, "encoder.subsampling.conv0.weight", 4, A_SUB_CH, 1, 3, 3);
    want(list, &w->conv0_b, "encoder.subsampling.conv0.bias", 1, A_SUB_CH);
    for (int k = 0; k < 2; k++) {
        snprintf(n, sizeof n, "encoder.subsampling.conv%d_dw.weight", k + 1);
        want(list, &w->dw_w[k], n, 4, A_SUB_CH, 1, 3, 3);
        snprintf(n, sizeof n, "encoder.subsampling.conv%d_dw.bias", k + 1);
        want(list, &w->dw_b[k], n, 1, A_SUB_CH);
        snprintf(n, sizeof n, "encoder.subsampling.conv%d_pw.weight", k + 1);
        want(list, &w->pw_w[k], n, 4, A_SUB_CH, A_SUB_CH, 1, 1);
        snprintf(n, sizeof n, "encoder.subsampling.conv%d_pw.bias", k + 1);
        want(list, &w->pw_b[k], n, 1, A_SUB_CH);
    }
    linear(list, &w->sub_out_w, &w->sub_out_b, "encoder.subsampling.out", A_ED, A_SUB_CH * A_SUB_MEL);
    for (int j = 0; j < A_EBLOCKS; j++) {
        enc_block_w *B = &w->blocks[j];
#define PFX(suffix) (snprintf(p, sizeof p, "encoder.blocks.%d.%s", j, suffix), p)
        norm(list, &B->ffn1_norm_w, &B->ffn1_norm_b, PFX("ffn1.norm"));
        linear(list, &B->ffn1_l1_w, &B->ffn1_l1_b, PFX("ffn1.linear1"), A_EFF, A_ED);
        linear(list, &B->ffn1_l2_w, &B->ffn1_l2_b, PFX("ffn1.linear2"), A_ED, A_EFF);
        norm(list, &B->attn_norm_w, &B->attn_norm_b, PFX("attn.norm"));
        linear(list, &B->q_w, &B->q_b, PFX("attn.q"), A_ED, A_ED);
        linear(list, &B->k_w, &B->k_b, PFX("attn.k"), A_ED, A_ED);
        linear(list, &B->v_w, &B->v_b, PFX("attn.v"), A_ED, A_ED);
        linear(list, &B->out_w, &B->out_b, PFX("attn.out"), A_ED, A_ED);
        want(list, &B->pos_w, PFX("attn.pos.weight"), 2, A_ED, A_ED);
        want(list, &B->pos_bias_u, PFX("attn.pos_bias_u"), 2, A_EH, A_EHD);
        want(list, &B->pos_bias_v, PFX("attn.pos_bias_v"), 2, A_EH, A_EHD);
        norm(list, &B->conv_norm_w, &B->conv_norm_b, PFX("conv.norm"));
        linear(list, &B->pw1_w, &B->pw1_b, PFX("conv.pw1"), 2 * A_ED, A_ED);
        linear(list, &B->dw_w, &B->dw_b, PFX("conv.dw"), A_ED, A_CONV_K);
        want(list, &B->bn_w, PFX("conv.bn.weight"), 1, A_ED);
        want(list, &B->bn_b, PFX("conv.bn.bias"), 1, A_ED);
        want(list, &B->bn_mean, PFX("conv.bn.running_mean"), 1, A_ED);
        want(list, &B->bn_var, PFX("conv.bn.running_var"), 1, A_ED);
        linear(list, &B->pw2_w, &B->pw2_b, PFX("conv.pw2"), A_ED, A_ED);
        norm(list, &B->ffn2_norm_w, &B->ffn2_norm_b, PFX("ffn2.norm"));
        linear(list, &B->ffn2_l1_w, &B->ffn2_l1_b, PFX("ffn2.linear1"), A_EFF, A_ED);
        linear(list, &B->ffn2_l2_w, &B->ffn2_l2_b, PFX("ffn2.linear2"), A_ED, A_EFF);
        norm(list, &B->out_norm_w, &B->out_norm_b, PFX("norm_out"));
#undef PFX
    }
    norm(list, &w->ad_norm_w, &w->ad_norm_b, "adapter.norm");
    linear(list, &w->ad_l1_w, &w->ad_l1_b, "adapter.linear1", A_AD_HIDDEN, A_ED);
    linear(list, &w->ad_l2_w, &w->ad_l2_b, "adapter.linear2", A_AD_HIDDEN, A_AD_HIDDEN);
    want(list, &w->detok_embed, "detok.embed", 2, A_DEMBED_ROWS, A_DW);
    for (int l = 0; l < A_DLAYERS; l++) {
        detok_layer_w *L = &w->detok[l];
#define PFX(suffix) (snprintf(p, sizeof p, "detok.layers.%d.%s", l, suffix), p)
        want(list, &L->operator_norm, PFX("operator_norm"), 1, A_DW);
        if (audio_detok_layer_is_attn(l)) {
            want(list, &L->q_proj, PFX("self_attn.q_proj"), 2, A_DNQ * A_DHD, A_DW);
            want(list, &L->k_proj, PFX("self_attn.k_proj"), 2, A_DNKV * A_DHD, A_DW);
            want(list, &L->v_proj, PFX("self_attn.v_proj"), 2, A_DNKV * A_DHD, A_DW);
            want(list, &L->attn_out, PFX("self_attn.out_proj"), 2, A_DW, A_DNQ * A_DHD);
            want(list, &L->q_norm, PFX("self_attn.q_norm"), 1, A_DHD);
            want(list, &L->k_norm, PFX("self_attn.k_norm"), 1, A_DHD);
        } else {
            want(list, &L->in_proj, PFX("conv.in_proj"), 2, 3 * A_DW, A_DW);
            want(list, &L->conv, PFX("conv.conv"), 2, A_DW, 3);
            want(list, &L->conv_out, PFX("conv.out_proj"), 2, A_DW, A_DW);
        }
        want(list, &L->ffn_norm, PFX("ffn_norm"), 1, A_DW);
        want(list, &L->w1, PFX("feed_forward.w1"), 2, A_DFF, A_DW);
        want(list, &L->w3, PFX("feed_forward.w3"), 2, A_DFF, A_DW);
        want(list, &L->w2, PFX("feed_forward.w2"), 2, A_DW, A_DFF);
#undef PFX
    }
    want(list, &w->detok_norm, "detok.norm", 1, A_DW);
    linear(list, &w->head_w, &w->head_b, "detok.head", A_DSPEC, A_DW);
    want(list, &w->detok_window, "detok.window", 1, A_ISTFT_N);
}

ti_status audio_weights_load(audio_weights *w, const char *path, errbuf *err) {
    memset(w, 0, sizeof *w);
    aw_list *list = malloc(sizeof *list);
    if (list == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "weights file %s: out of memory", path);
    memset(list, 0, sizeof *list);
    build(list, w);
    if (list->overflow) {
        free(list);
        return err_fail(err, TI_ERR_INTERNAL, "weights file %s: part-2 tensor table overflow", path);
    }
    ti_status status = st_load_f32_table(path, list->items, list->count, &w->arena, err);
    free(list);
    if (status != TI_OK) audio_weights_free(w);
    return status;
}

void audio_weights_free(audio_weights *w) {
    free(w->arena);
    memset(w, 0, sizeof *w);
}
