#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "safetensors.h"

typedef struct expected_list {
    st_expected items[128];
    size_t count;
} expected_list;

static void expect(expected_list *list, float **slot, int64_t d0, int64_t d1, const char *fmt, int index) {
    st_expected *t = &list->items[list->count++];
    snprintf(t->name, sizeof t->name, fmt, index);
    t->rank = d1 > 0 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
    t->slot = slot;
}

/* The table of docs/reference-model.md, in its order. */
static void build_expected(expected_list *list, model_weights *w) {
    list->count = 0;
    expect(list, &w->embed_tokens, M_VT, M_D, "backbone.embed_tokens", 0);
    expect(list, &w->audio_embedding, M_NCB * M_VCB, M_D, "backbone.audio_embedding", 0);
    for (int l = 0; l < M_LAYERS; l++) {
        backbone_layer_w *L = &w->layers[l];
        expect(list, &L->operator_norm, M_D, 0, "backbone.layers.%d.operator_norm", l);
        if (model_layer_is_attn(l)) {
            expect(list, &L->q_proj, M_NQ * M_HD, M_D, "backbone.layers.%d.self_attn.q_proj", l);
            expect(list, &L->k_proj, M_NKV * M_HD, M_D, "backbone.layers.%d.self_attn.k_proj", l);
            expect(list, &L->v_proj, M_NKV * M_HD, M_D, "backbone.layers.%d.self_attn.v_proj", l);
            expect(list, &L->attn_out, M_D, M_NQ * M_HD, "backbone.layers.%d.self_attn.out_proj", l);
            expect(list, &L->q_norm, M_HD, 0, "backbone.layers.%d.self_attn.q_norm", l);
            expect(list, &L->k_norm, M_HD, 0, "backbone.layers.%d.self_attn.k_norm", l);
        } else {
            expect(list, &L->in_proj, 3 * M_D, M_D, "backbone.layers.%d.conv.in_proj", l);
            expect(list, &L->conv, M_D, M_CONV_K, "backbone.layers.%d.conv.conv", l);
            expect(list, &L->conv_out, M_D, M_D, "backbone.layers.%d.conv.out_proj", l);
        }
        expect(list, &L->ffn_norm, M_D, 0, "backbone.layers.%d.ffn_norm", l);
        expect(list, &L->w1, M_FF, M_D, "backbone.layers.%d.feed_forward.w1", l);
        expect(list, &L->w3, M_FF, M_D, "backbone.layers.%d.feed_forward.w3", l);
        expect(list, &L->w2, M_D, M_FF, "backbone.layers.%d.feed_forward.w2", l);
    }
    expect(list, &w->embedding_norm, M_D, 0, "backbone.embedding_norm", 0);
    expect(list, &w->depth_linear_w, M_NCB * M_DD, M_D, "depth.linear.weight", 0);
    expect(list, &w->depth_linear_b, M_NCB * M_DD, 0, "depth.linear.bias", 0);
    for (int i = 0; i < M_NCB; i++) expect(list, &w->depth_embeddings[i], M_VCB, M_DD, "depth.embeddings.%d", i);
    for (int j = 0; j < M_DLAYERS; j++) {
        depth_layer_w *L = &w->depth_layers[j];
        expect(list, &L->operator_norm, M_DD, 0, "depth.layers.%d.operator_norm", j);
        expect(list, &L->ffn_norm, M_DD, 0, "depth.layers.%d.ffn_norm", j);
        expect(list, &L->q_proj, M_DNQ * M_HD, M_DD, "depth.layers.%d.self_attn.q_proj", j);
        expect(list, &L->k_proj, M_DNKV * M_HD, M_DD, "depth.layers.%d.self_attn.k_proj", j);
        expect(list, &L->v_proj, M_DNKV * M_HD, M_DD, "depth.layers.%d.self_attn.v_proj", j);
        expect(list, &L->out_proj, M_DD, M_DNQ * M_HD, "depth.layers.%d.self_attn.out_proj", j);
        expect(list, &L->q_norm, M_HD, 0, "depth.layers.%d.self_attn.q_norm", j);
        expect(list, &L->k_norm, M_HD, 0, "depth.layers.%d.self_attn.k_norm", j);
        expect(list, &L->w1, M_DFF, M_DD, "depth.layers.%d.feed_forward.w1", j);
        expect(list, &L->w3, M_DFF, M_DD, "depth.layers.%d.feed_forward.w3", j);
        expect(list, &L->w2, M_DD, M_DFF, "depth.layers.%d.feed_forward.w2", j);
    }
    for (int i = 0; i < M_NCB; i++) expect(list, &w->depth_norms[i], M_DD, 0, "depth.norms.%d", i);
}

ti_status weights_load(model_weights *w, const char *path, errbuf *err) {
    memset(w, 0, sizeof *w);
    expected_list *list = malloc(sizeof *list);
    if (list == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "weights file %s: out of memory", path);
    build_expected(list, w);

    ti_status status = st_load_f32_table(path, list->items, list->count, &w->arena, err);
    free(list);
    if (status == TI_OK) status = audio_weights_load(&w->audio, path, err); /* part 2 */
    if (status != TI_OK) weights_free(w);
    return status;
}

void weights_free(model_weights *w) {
    audio_weights_free(&w->audio);
    free(w->arena);
    memset(w, 0, sizeof *w);
}
