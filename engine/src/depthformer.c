#include "depthformer.h"

#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "records.h"
#include "sampler.h"

ti_status depthformer_reserve(ti_session *s, int64_t slots, int64_t keep, errbuf *err) {
    if (slots <= s->depth_capacity) return TI_OK;
    int64_t capacity = s->depth_capacity > 0 ? s->depth_capacity : M_NCB;
    while (capacity < slots) capacity *= 2;
    float *fresh[2 * M_DLAYERS] = {0};
    for (int i = 0; i < 2 * M_DLAYERS; i++) {
        fresh[i] = malloc((size_t)capacity * M_HD * sizeof(float));
        if (fresh[i] == NULL) {
            for (int j = 0; j < i; j++) free(fresh[j]);
            return err_fail(err, TI_ERR_OUT_OF_MEMORY, "Depthformer KV cache: out of memory for %lld slots",
                           (long long)capacity);
        }
    }
    for (int j = 0; j < M_DLAYERS; j++) {
        if (keep > 0) {
            memcpy(fresh[2 * j], s->depth_k[j], (size_t)keep * M_HD * sizeof(float));
            memcpy(fresh[2 * j + 1], s->depth_v[j], (size_t)keep * M_HD * sizeof(float));
        }
        free(s->depth_k[j]);
        free(s->depth_v[j]);
        s->depth_k[j] = fresh[2 * j];
        s->depth_v[j] = fresh[2 * j + 1];
    }
    s->depth_capacity = capacity;
    return TI_OK;
}

/*
 * One Depthformer block on the single token h of codebook i (RoPE position i), whose cache slot
 * is `slot`; the token attends to slots 0..slot. scores holds slot + 1 floats.
 */
static void block(ti_session *s, int j, float *h, int i, int64_t slot, float *scores) {
    const depth_layer_w *L = &s->weights.depth_layers[j];
    float normed[M_DD], q[M_DNQ * M_HD], heads[M_DNQ * M_HD], mixed[M_DD], hidden[2 * M_DFF], ffn[M_DD];
    float *kslot = s->depth_k[j] + slot * M_HD, *vslot = s->depth_v[j] + slot * M_HD;
    k_rmsnorm(h, L->operator_norm, normed, M_DD);
    k_matvec(L->q_proj, normed, q, M_DNQ * M_HD, M_DD);
    k_matvec(L->k_proj, normed, kslot, M_DNKV * M_HD, M_DD);
    k_matvec(L->v_proj, normed, vslot, M_DNKV * M_HD, M_DD);
    for (int head = 0; head < M_DNQ; head++) {
        k_rmsnorm(q + head * M_HD, L->q_norm, q + head * M_HD, M_HD);
        k_rope_pairs(q + head * M_HD, M_HD, i, M_DEPTH_THETA);
    }
    k_rmsnorm(kslot, L->k_norm, kslot, M_HD);
    k_rope_pairs(kslot, M_HD, i, M_DEPTH_THETA);
    /* One KV head serves both query heads. */
    for (int head = 0; head < M_DNQ; head++)
        k_attend(q + head * M_HD, s->depth_k[j], s->depth_v[j], slot + 1, M_HD, M_HD, heads + head * M_HD, scores);
    k_matvec(L->out_proj, heads, mixed, M_DD, M_DNQ * M_HD);
    for (int d = 0; d < M_DD; d++) h[d] += mixed[d];
    k_rmsnorm(h, L->ffn_norm, normed, M_DD);
    k_swiglu(L->w1, L->w3, L->w2, normed, ffn, M_DD, M_DFF, hidden);
    for (int d = 0; d < M_DD; d++) h[d] += ffn[d];
}

static ti_status frame(pass_ctx *p, const float *hlast, int32_t *codes, int64_t base, float *scores) {
    ti_session *s = p->s;
    const model_weights *w = &s->weights;
    const catalogue *cat = p->cat;
    float linear[M_NCB * M_DD], X[M_NCB * M_DD];
    k_matvec(w->depth_linear_w, hlast, linear, M_NCB * M_DD, M_D);
    for (int o = 0; o < M_NCB * M_DD; o++) linear[o] += w->depth_linear_b[o];
    if (s->options.on[OPT_DEPTH_IN_TRANSPOSED]) {
        /* Stored column-major ([32, 8] memory order), then read back as row-major [8, 32]. */
        for (int i = 0; i < M_NCB; i++)
            for (int d = 0; d < M_DD; d++) X[d * M_NCB + i] = linear[i * M_DD + d];
    } else {
        memcpy(X, linear, sizeof X);
    }
    ti_status status = rec_boundary(p, cat->depth_in, X);
    if (status != TI_OK) return status;

    sampler_perturb perturb = {s->options.on[OPT_SAMPLER_WALK_SORTED], s->options.on[OPT_TIE_ORDER_REVERSED],
                               s->options.on[OPT_PRNG_DOUBLE_ADVANCE]};
    float feedback[M_DD] = {0}; /* fb = 0 for codebook 0 */
    for (int i = 0; i < M_NCB; i++) {
        const int *ids = cat->cb[i];
        float h[M_DD], normed[M_DD], logits[M_VCB];
        for (int d = 0; d < M_DD; d++) h[d] = X[i * M_DD + d] + feedback[d];
        status = rec_boundary(p, ids[CB_IN], h);
        for (int j = 0; j < M_DLAYERS && status == TI_OK; j++) {
            block(s, j, h, i, base + i, scores);
            status = rec_boundary(p, ids[j == 0 ? CB_L0_OUT : CB_L1_OUT], h);
        }
        if (status != TI_OK) return status;
        k_rmsnorm(h, w->depth_norms[i], normed, M_DD);
        k_matvec(w->depth_embeddings[i], normed, logits, M_VCB, M_DD);
        status = rec_boundary(p, ids[CB_LOGITS], logits);
        if (status != TI_OK) return status;
        sampler_result result;
        sampler_run(logits, M_VCB, s->inputs.temperature[1], s->inputs.top_k[1], &p->next.prng, &perturb, &result);
        status = rec_sampler(p, &ids[CB_SAMPLER], &result);
        if (status != TI_OK) return status;
        codes[i] = result.token;
        memcpy(feedback, w->depth_embeddings[i] + (int64_t)codes[i] * M_DD, sizeof feedback);
        status = rec_boundary(p, ids[CB_FEEDBACK], feedback);
        if (status != TI_OK) return status;
    }
    return rec_boundary(p, cat->codes, codes);
}

ti_status depthformer_run(pass_ctx *p, const float *hlast, int32_t *codes) {
    ti_session *s = p->s;
    /* The cache starts empty every frame; the perturbation keeps the previous frames' entries. */
    int64_t base = s->options.on[OPT_DEPTH_KV_NOT_RESET] ? p->next.depth_kv_len : 0;
    ti_status status = depthformer_reserve(s, base + M_NCB, base, &p->err);
    if (status != TI_OK) return status;
    float *scores = malloc((size_t)(base + M_NCB) * sizeof(float));
    if (scores == NULL)
        return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for the Depthformer", p->index);
    status = frame(p, hlast, codes, base, scores);
    free(scores);
    p->next.depth_kv_len = s->options.on[OPT_DEPTH_KV_NOT_RESET] ? base + M_NCB : 0;
    return status;
}
