#include "backbone.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "records.h"

/* Scratch for one pass; every buffer is sized by T (and the attention span), allocated once. */
typedef struct backbone_ws {
    float *normed;  /* [T, 64] */
    float *mixed;   /* [T, 64] operator output before the residual */
    float *proj;    /* [T, 192] in_proj output (B, C, xv) or q [T, 64] */
    float *bx;      /* [T + 2, 64] carry columns followed by this pass's Bx */
    float *keys;    /* [T, 32] */
    float *values;  /* [T, 32] */
    float *scores;  /* [span] attention weights of one query */
    float *hidden;  /* [2 * 128] SwiGLU */
    float *ffn_out; /* [64] */
} backbone_ws;

static void ws_free(backbone_ws *ws) {
    free(ws->normed);
    free(ws->mixed);
    free(ws->proj);
    free(ws->bx);
    free(ws->keys);
    free(ws->values);
    free(ws->scores);
    free(ws->hidden);
    free(ws->ffn_out);
}

static bool ws_alloc(backbone_ws *ws, int64_t T, int64_t span) {
    size_t t = (size_t)T;
    memset(ws, 0, sizeof *ws);
    ws->normed = malloc(t * M_D * sizeof(float));
    ws->mixed = malloc(t * M_D * sizeof(float));
    ws->proj = malloc(t * 3 * M_D * sizeof(float));
    ws->bx = malloc((t + M_CARRY) * M_D * sizeof(float));
    ws->keys = malloc(t * M_NKV * M_HD * sizeof(float));
    ws->values = malloc(t * M_NKV * M_HD * sizeof(float));
    ws->scores = malloc((size_t)span * sizeof(float));
    ws->hidden = malloc(2 * M_FF * sizeof(float));
    ws->ffn_out = malloc(M_D * sizeof(float));
    return ws->normed && ws->mixed && ws->proj && ws->bx && ws->keys && ws->values && ws->scores && ws->hidden &&
           ws->ffn_out;
}

/* backbone.embed: text rows, audio-in rows, or the previous pass's output. */
static void assemble(pass_ctx *p, float *x) {
    const ti_session *s = p->s;
    const model_weights *w = &s->weights;
    if (p->kind == TI_PASS_PREFILL) {
        int64_t audio_row = 0;
        for (int64_t t = 0; t < p->T; t++) {
            int32_t id = s->inputs.prompt[t];
            float *row = x + t * M_D;
            if (id >= 0) {
                memcpy(row, w->embed_tokens + (int64_t)id * M_D, M_D * sizeof(float));
                continue;
            }
            memcpy(row, p->audio_in_rows + audio_row * M_D, M_D * sizeof(float));
            audio_row++;
            if (s->options.on[OPT_NAN_TO_ZERO])
                for (int d = 0; d < M_D; d++)
                    if (isnan(row[d])) row[d] = 0.0f;
        }
        return;
    }
    if (s->state.last_output == MODE_TEXT) {
        memcpy(x, w->embed_tokens + (int64_t)s->state.last_token * M_D, M_D * sizeof(float));
        return;
    }
    /* An audio frame: the sum over codebooks in order k = 0..7, starting from +0.0. */
    for (int d = 0; d < M_D; d++) x[d] = 0.0f;
    for (int k = 0; k < M_NCB; k++) {
        const float *row = w->audio_embedding + (int64_t)(s->state.last_codes[k] + M_VCB * k) * M_D;
        for (int d = 0; d < M_D; d++) x[d] += row[d];
    }
    if (s->options.on[OPT_AUDIO_EMBED_MEAN])
        for (int d = 0; d < M_D; d++) x[d] /= (float)M_NCB;
}

/* ShortConv: in_proj -> (B, C, xv); Bx = B * xv; causal depthwise conv k3 over carry ++ Bx; out_proj(C * y). */
static ti_status shortconv(pass_ctx *p, int l, backbone_ws *ws) {
    const backbone_layer_w *L = &p->s->weights.layers[l];
    int64_t T = p->T;
    float *carry = p->next.carry[l];
    memcpy(ws->bx, carry, M_CARRY * M_D * sizeof(float));
    for (int64_t t = 0; t < T; t++) {
        float *pr = ws->proj + t * 3 * M_D;
        k_matvec(L->in_proj, ws->normed + t * M_D, pr, 3 * M_D, M_D);
        const float *B = pr, *xv = pr + 2 * M_D;
        float *bx = ws->bx + (t + M_CARRY) * M_D;
        for (int c = 0; c < M_D; c++) bx[c] = B[c] * xv[c];
    }
    for (int64_t t = 0; t < T; t++) {
        const float *C = ws->proj + t * 3 * M_D + M_D;
        const float *col0 = ws->bx + t * M_D; /* Bx[t - 2] in carry-extended time */
        float gated[M_D];
        for (int c = 0; c < M_D; c++) {
            const float *wc = L->conv + c * M_CONV_K;
            float y = wc[0] * col0[c] + wc[1] * col0[M_D + c] + wc[2] * col0[2 * M_D + c];
            gated[c] = C[c] * y;
        }
        k_matvec(L->conv_out, gated, ws->mixed + t * M_D, M_D, M_D);
    }
    /* New carry: the last two columns of carry ++ Bx (so a 1-position pass keeps the older
     * carry column as row 0). The perturbation keeps the columns one step too early. */
    int64_t first = T + M_CARRY - 2 - (p->s->options.on[OPT_CONV_CARRY_OFF_BY_ONE] ? 1 : 0);
    memcpy(carry, ws->bx + first * M_D, M_CARRY * M_D * sizeof(float));
    return rec_boundary(p, p->cat->layer[l][LAYER_CONV_CARRY], carry);
}

static void rope(const pass_ctx *p, float *head, int64_t pos) {
    if (p->s->options.on[OPT_BACKBONE_ROPE_INTERLEAVED])
        k_rope_pairs(head, M_HD, pos, M_BACKBONE_THETA);
    else
        k_rope_half(head, M_HD, pos, M_BACKBONE_THETA);
}

/* GQA attention with per-head q/k RMSNorm, RoPE at the absolute position, KV cache append. */
static ti_status attention(pass_ctx *p, int l, backbone_ws *ws) {
    ti_session *s = p->s;
    const backbone_layer_w *L = &s->weights.layers[l];
    int64_t T = p->T;
    const int kv_width = M_NKV * M_HD;
    /* The position of the pass's first token; the perturbation shifts decode passes by one. */
    int64_t base = p->next.cursor;
    if (p->kind == TI_PASS_DECODE && s->options.on[OPT_KV_POSITION_OFF_BY_ONE]) base += 1;
    float *kc = s->k_cache[l], *vc = s->v_cache[l];
    /* Slots skipped over (only by the perturbation) read as zeros, never as stale data. */
    for (int64_t slot = p->next.kv_len[l]; slot < base; slot++) {
        memset(kc + slot * kv_width, 0, kv_width * sizeof(float));
        memset(vc + slot * kv_width, 0, kv_width * sizeof(float));
    }
    float *q = ws->proj; /* [T, 64] */
    for (int64_t t = 0; t < T; t++) {
        const float *xn = ws->normed + t * M_D;
        float *qt = q + t * M_NQ * M_HD;
        float *kt = kc + (base + t) * kv_width;
        float *vt = vc + (base + t) * kv_width;
        k_matvec(L->q_proj, xn, qt, M_NQ * M_HD, M_D);
        k_matvec(L->k_proj, xn, kt, kv_width, M_D);
        k_matvec(L->v_proj, xn, vt, kv_width, M_D);
        for (int h = 0; h < M_NQ; h++) {
            k_rmsnorm(qt + h * M_HD, L->q_norm, qt + h * M_HD, M_HD);
            rope(p, qt + h * M_HD, base + t);
        }
        for (int h = 0; h < M_NKV; h++) {
            k_rmsnorm(kt + h * M_HD, L->k_norm, kt + h * M_HD, M_HD);
            rope(p, kt + h * M_HD, base + t);
        }
    }
    p->next.kv_len[l] = base + T;
    ti_status status = rec_boundary(p, p->cat->layer[l][LAYER_K_APPEND], kc + base * kv_width);
    if (status == TI_OK) status = rec_boundary(p, p->cat->layer[l][LAYER_V_APPEND], vc + base * kv_width);
    int32_t kv_len = (int32_t)p->next.kv_len[l];
    if (status == TI_OK) status = rec_boundary(p, p->cat->layer[l][LAYER_KV_LEN], &kv_len);
    if (status != TI_OK) return status;
    for (int64_t t = 0; t < T; t++) {
        float heads[M_NQ * M_HD];
        for (int h = 0; h < M_NQ; h++) {
            int kvh = h / (M_NQ / M_NKV);
            /* Causal: position base + t sees every cached slot up to and including itself. */
            k_attend(q + t * M_NQ * M_HD + h * M_HD, kc + kvh * M_HD, vc + kvh * M_HD, base + t + 1, kv_width, M_HD,
                     heads + h * M_HD, ws->scores);
        }
        k_matvec(L->attn_out, heads, ws->mixed + t * M_D, M_D, M_NQ * M_HD);
    }
    return TI_OK;
}

static ti_status layer(pass_ctx *p, int l, float *x, backbone_ws *ws) {
    const backbone_layer_w *L = &p->s->weights.layers[l];
    int64_t T = p->T;
    for (int64_t t = 0; t < T; t++) k_rmsnorm(x + t * M_D, L->operator_norm, ws->normed + t * M_D, M_D);
    ti_status status = model_layer_is_attn(l) ? attention(p, l, ws) : shortconv(p, l, ws);
    if (status != TI_OK) return status;
    for (int64_t i = 0; i < T * M_D; i++) x[i] += ws->mixed[i];
    status = rec_boundary(p, p->cat->layer[l][LAYER_MIXER_OUT], x);
    if (status != TI_OK) return status;
    for (int64_t t = 0; t < T; t++) {
        float *h = x + t * M_D;
        k_rmsnorm(h, L->ffn_norm, ws->normed + t * M_D, M_D);
        k_swiglu(L->w1, L->w3, L->w2, ws->normed + t * M_D, ws->ffn_out, M_D, M_FF, ws->hidden);
        for (int d = 0; d < M_D; d++) h[d] += ws->ffn_out[d];
    }
    return rec_boundary(p, p->cat->layer[l][LAYER_OUT], x);
}

/* bf16 storage by truncation: keep the top 16 bits of the float32 pattern. */
static float bf16_truncate(float v) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    bits &= 0xFFFF0000u;
    memcpy(&v, &bits, sizeof v);
    return v;
}

ti_status backbone_run(pass_ctx *p, float *x, float *logits) {
    ti_session *s = p->s;
    int64_t T = p->T;
    /* The longest attention span of the pass: every cached slot plus this pass's positions. */
    int64_t span = p->next.cursor + T + 1;
    backbone_ws ws;
    if (!ws_alloc(&ws, T, span)) {
        ws_free(&ws);
        return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for T = %lld", p->index, (long long)T);
    }
    assemble(p, x);
    ti_status status = rec_boundary(p, p->cat->embed, x);
    for (int l = 0; l < M_LAYERS && status == TI_OK; l++) status = layer(p, l, x, &ws);
    if (status == TI_OK) {
        for (int64_t t = 0; t < T; t++) k_rmsnorm(x + t * M_D, s->weights.embedding_norm, x + t * M_D, M_D);
        status = rec_boundary(p, p->cat->final_norm, x);
    }
    if (status == TI_OK) {
        /* Tied logits, one row reduction per id, so equal embedding rows give equal logits. */
        k_matvec(s->weights.embed_tokens, x + (T - 1) * M_D, logits, M_VT, M_D);
        if (s->options.on[OPT_LOGITS_BF16_TRUNCATE])
            for (int j = 0; j < M_VT; j++) logits[j] = bf16_truncate(logits[j]);
        status = rec_boundary(p, p->cat->logits, logits);
    }
    ws_free(&ws);
    return status;
}
