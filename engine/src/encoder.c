#include "encoder.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio_kernels.h"
#include "kernels.h"
#include "records.h"

typedef struct encoder_ws {
    float *img[2];  /* subsampling planes, up to [8, ceil(F/2), 16] each */
    float *pe;      /* [P, 32] relative positions */
    float *pos;     /* [P, 32] linear_pos(pe) */
    float *normed;  /* [R, 32] */
    float *q, *k, *v; /* [R, 32] */
    float *probs;   /* [4, R, R] */
    float *bd_full; /* [P] */
    float *heads;   /* [R, 32] */
    float *glu;     /* [R, 32] */
    float *bn;      /* [R, 32] */
    float *hidden;  /* [128] */
    float *tmp;     /* [64] */
} encoder_ws;

static void ws_free(encoder_ws *ws) {
    free(ws->img[0]);
    free(ws->img[1]);
    free(ws->pe);
    free(ws->pos);
    free(ws->normed);
    free(ws->q);
    free(ws->k);
    free(ws->v);
    free(ws->probs);
    free(ws->bd_full);
    free(ws->heads);
    free(ws->glu);
    free(ws->bn);
    free(ws->hidden);
    free(ws->tmp);
}

static bool ws_alloc(encoder_ws *ws, int64_t F, int64_t R) {
    size_t plane = (size_t)A_SUB_CH * (size_t)((F + 1) / 2) * 16, r = (size_t)R, pr = (size_t)(2 * R - 1);
    ws->img[0] = malloc(plane * sizeof(float));
    ws->img[1] = malloc(plane * sizeof(float));
    ws->pe = malloc(pr * A_ED * sizeof(float));
    ws->pos = malloc(pr * A_ED * sizeof(float));
    ws->normed = malloc(r * A_ED * sizeof(float));
    ws->q = malloc(r * A_ED * sizeof(float));
    ws->k = malloc(r * A_ED * sizeof(float));
    ws->v = malloc(r * A_ED * sizeof(float));
    ws->probs = malloc((size_t)A_EH * r * r * sizeof(float));
    ws->bd_full = malloc(pr * sizeof(float));
    ws->heads = malloc(r * A_ED * sizeof(float));
    ws->glu = malloc(r * A_ED * sizeof(float));
    ws->bn = malloc(r * A_ED * sizeof(float));
    ws->hidden = malloc(A_EFF * sizeof(float));
    ws->tmp = malloc(2 * A_ED * sizeof(float));
    return ws->img[0] && ws->img[1] && ws->pe && ws->pos && ws->normed && ws->q && ws->k && ws->v && ws->probs &&
           ws->bd_full && ws->heads && ws->glu && ws->bn && ws->hidden && ws->tmp;
}

/* One 3x3 stride-2 padding-1 single-channel convolution [H, W] -> [ceil(H/2), ceil(W/2)], + bias. */
static void conv3x3s2(const float *in, int64_t H, int64_t W, const float *k, float bias, float *out) {
    int64_t H2 = (H + 1) / 2, W2 = (W + 1) / 2;
    for (int64_t i = 0; i < H2; i++)
        for (int64_t j = 0; j < W2; j++) {
            float acc = 0.0f;
            for (int di = 0; di < 3; di++) {
                int64_t y = 2 * i - 1 + di;
                if (y < 0 || y >= H) continue;
                for (int dj = 0; dj < 3; dj++) {
                    int64_t x = 2 * j - 1 + dj;
                    if (x >= 0 && x < W) acc += k[di * 3 + dj] * in[y * W + x];
                }
            }
            out[i * W2 + j] = acc + bias;
        }
}

static float relu(float x) { return x > 0.0f ? x : (x == x ? 0.0f : x); } /* NaN passes through */

/* dw-striding x8: [1, F, 32] -> [8, R, 4] -> [R, 32] (index c * 4 + m) -> Linear(32 -> 32). */
static void subsample(const audio_weights *w, const float *features, int64_t F, encoder_ws *ws, float *out) {
    int64_t H = F, W = A_NMEL;
    float *a = ws->img[0], *b = ws->img[1];
    int64_t H2 = (H + 1) / 2, W2 = (W + 1) / 2;
    for (int c = 0; c < A_SUB_CH; c++) {
        float *plane = a + c * H2 * W2;
        conv3x3s2(features, H, W, w->conv0_w + c * 9, w->conv0_b[c], plane);
        for (int64_t i = 0; i < H2 * W2; i++) plane[i] = relu(plane[i]);
    }
    H = H2;
    W = W2;
    for (int stage = 0; stage < 2; stage++) {
        H2 = (H + 1) / 2;
        W2 = (W + 1) / 2;
        int64_t area = H2 * W2;
        for (int c = 0; c < A_SUB_CH; c++)
            conv3x3s2(a + c * H * W, H, W, w->dw_w[stage] + c * 9, w->dw_b[stage][c], b + c * area);
        /* pointwise 1x1 (8 -> 8) + bias, ReLU, back into a */
        for (int64_t i = 0; i < area; i++)
            for (int o = 0; o < A_SUB_CH; o++) {
                float acc = 0.0f;
                for (int c = 0; c < A_SUB_CH; c++) acc += w->pw_w[stage][o * A_SUB_CH + c] * b[c * area + i];
                a[o * area + i] = relu(acc + w->pw_b[stage][o]);
            }
        H = H2;
        W = W2;
    }
    /* a is [8, R, 4] */
    float flat[A_SUB_CH * A_SUB_MEL];
    for (int64_t t = 0; t < H; t++) {
        for (int c = 0; c < A_SUB_CH; c++)
            for (int m = 0; m < A_SUB_MEL; m++) flat[c * A_SUB_MEL + m] = a[(c * H + t) * A_SUB_MEL + m];
        ak_linear(w->sub_out_w, w->sub_out_b, flat, out + t * A_ED, A_ED, A_SUB_CH * A_SUB_MEL);
    }
}

/* pe[i][2j] = sin(r d_j), pe[i][2j+1] = cos(r d_j), r = R - 1 - i, d_j = exp(-2j ln(10000) / 32). */
static void positions(int64_t R, float *pe) {
    const float scale = (float)(-log(10000.0) / (double)A_ED);
    for (int64_t i = 0; i < 2 * R - 1; i++) {
        float r = (float)(R - 1 - i);
        for (int j = 0; j < A_ED / 2; j++) {
            float a = r * expf((float)(2 * j) * scale);
            pe[i * A_ED + 2 * j] = sinf(a);
            pe[i * A_ED + 2 * j + 1] = cosf(a);
        }
    }
}

/* x += 0.5 * Linear2(SiLU(Linear1(LN x))) for every step. */
static void half_ffn(const float *nw, const float *nb, const float *w1, const float *b1, const float *w2,
                     const float *b2, float *x, int64_t R, encoder_ws *ws) {
    float normed[A_ED], out[A_ED];
    for (int64_t t = 0; t < R; t++) {
        float *xt = x + t * A_ED;
        ak_layernorm(xt, nw, nb, normed, A_ED);
        ak_linear(w1, b1, normed, ws->hidden, A_EFF, A_ED);
        for (int i = 0; i < A_EFF; i++) ws->hidden[i] = k_silu(ws->hidden[i]);
        ak_linear(w2, b2, ws->hidden, out, A_ED, A_EFF);
        for (int d = 0; d < A_ED; d++) xt[d] += 0.5f * out[d];
    }
}

/* Rel-pos MHSA on LN x; fills ws->probs [4, R, R] and adds the attention output to x. */
static void rel_attention(const pass_ctx *p, const enc_block_w *B, float *x, int64_t R, encoder_ws *ws) {
    const int64_t P = 2 * R - 1;
    const bool off_by_one = p->s->options.on[OPT_REL_SHIFT_OFF_BY_ONE];
    for (int64_t t = 0; t < R; t++) {
        float *n = ws->normed + t * A_ED;
        ak_layernorm(x + t * A_ED, B->attn_norm_w, B->attn_norm_b, n, A_ED);
        ak_linear(B->q_w, B->q_b, n, ws->q + t * A_ED, A_ED, A_ED);
        ak_linear(B->k_w, B->k_b, n, ws->k + t * A_ED, A_ED, A_ED);
        ak_linear(B->v_w, B->v_b, n, ws->v + t * A_ED, A_ED, A_ED);
    }
    for (int64_t r = 0; r < P; r++) ak_linear(B->pos_w, NULL, ws->pe + r * A_ED, ws->pos + r * A_ED, A_ED, A_ED);
    const float sqrt_dk = sqrtf((float)A_EHD);
    for (int h = 0; h < A_EH; h++) {
        const float *u = B->pos_bias_u + h * A_EHD, *vb = B->pos_bias_v + h * A_EHD;
        for (int64_t i = 0; i < R; i++) {
            const float *qi = ws->q + i * A_ED + h * A_EHD;
            float qu[A_EHD], qv[A_EHD];
            for (int d = 0; d < A_EHD; d++) {
                qu[d] = qi[d] + u[d];
                qv[d] = qi[d] + vb[d];
            }
            for (int64_t r = 0; r < P; r++) {
                const float *pr = ws->pos + r * A_ED + h * A_EHD;
                float acc = 0.0f;
                for (int d = 0; d < A_EHD; d++) acc += qv[d] * pr[d];
                ws->bd_full[r] = acc;
            }
            float *row = ws->probs + ((int64_t)h * R + i) * R;
            float max = -INFINITY;
            for (int64_t j = 0; j < R; j++) {
                const float *kj = ws->k + j * A_ED + h * A_EHD;
                float ac = 0.0f;
                for (int d = 0; d < A_EHD; d++) ac += qu[d] * kj[d];
                int64_t r = R - 1 - i + j + (off_by_one ? 1 : 0);
                float bd = r < P ? ws->bd_full[r] : 0.0f;
                row[j] = (ac + bd) / sqrt_dk;
                if (row[j] > max) max = row[j];
            }
            float sum = 0.0f;
            for (int64_t j = 0; j < R; j++) {
                row[j] = expf(row[j] - max);
                sum += row[j];
            }
            for (int64_t j = 0; j < R; j++) row[j] /= sum;
        }
    }
    for (int64_t i = 0; i < R; i++) {
        float *out = ws->heads + i * A_ED;
        for (int h = 0; h < A_EH; h++) {
            const float *row = ws->probs + ((int64_t)h * R + i) * R;
            float *oh = out + h * A_EHD;
            for (int d = 0; d < A_EHD; d++) oh[d] = 0.0f;
            for (int64_t j = 0; j < R; j++) {
                const float *vj = ws->v + j * A_ED + h * A_EHD;
                for (int d = 0; d < A_EHD; d++) oh[d] += row[j] * vj[d];
            }
        }
    }
    for (int64_t t = 0; t < R; t++) {
        float o[A_ED];
        ak_linear(B->out_w, B->out_b, ws->heads + t * A_ED, o, A_ED, A_ED);
        for (int d = 0; d < A_ED; d++) x[t * A_ED + d] += o[d];
    }
}

/* Conv module, first half: GLU(pw1(LN x)) into ws->glu. */
static void conv_glu(const enc_block_w *B, const float *x, int64_t R, encoder_ws *ws) {
    for (int64_t t = 0; t < R; t++) {
        float n[A_ED];
        ak_layernorm(x + t * A_ED, B->conv_norm_w, B->conv_norm_b, n, A_ED);
        ak_linear(B->pw1_w, B->pw1_b, n, ws->tmp, 2 * A_ED, A_ED);
        for (int c = 0; c < A_ED; c++) ws->glu[t * A_ED + c] = ws->tmp[c] * ak_sigmoid(ws->tmp[A_ED + c]);
    }
}

/* Depthwise k9 (symmetric 4/4, or causal 8/0 under the perturbation) + bias, BatchNorm (eval). */
static void conv_bn(const pass_ctx *p, const enc_block_w *B, int64_t R, encoder_ws *ws) {
    const int64_t left = p->s->options.on[OPT_CONFORMER_CAUSAL_CONV] ? A_CONV_K - 1 : (A_CONV_K - 1) / 2;
    for (int64_t t = 0; t < R; t++)
        for (int c = 0; c < A_ED; c++) {
            float acc = 0.0f;
            for (int k = 0; k < A_CONV_K; k++) {
                int64_t s = t - left + k;
                if (s >= 0 && s < R) acc += B->dw_w[c * A_CONV_K + k] * ws->glu[s * A_ED + c];
            }
            float y = acc + B->dw_b[c];
            ws->bn[t * A_ED + c] = (y - B->bn_mean[c]) / sqrtf(B->bn_var[c] + 1e-5f) * B->bn_w[c] + B->bn_b[c];
        }
}

/* Conv module, last part: x += pw2(SiLU(bn)). */
static void conv_out(const enc_block_w *B, float *x, int64_t R, const encoder_ws *ws) {
    for (int64_t t = 0; t < R; t++) {
        float a[A_ED], o[A_ED];
        for (int c = 0; c < A_ED; c++) a[c] = k_silu(ws->bn[t * A_ED + c]);
        ak_linear(B->pw2_w, B->pw2_b, a, o, A_ED, A_ED);
        for (int d = 0; d < A_ED; d++) x[t * A_ED + d] += o[d];
    }
}

/* One conformer block; block 0 records its intermediates. */
static ti_status block(pass_ctx *p, int j, float *x, int64_t R, encoder_ws *ws) {
    const enc_block_w *B = &p->s->weights.audio.blocks[j];
    const int *ids = p->cat->audio.enc;
    const bool inner = j == 0;
    ti_status status = TI_OK;
    half_ffn(B->ffn1_norm_w, B->ffn1_norm_b, B->ffn1_l1_w, B->ffn1_l1_b, B->ffn1_l2_w, B->ffn1_l2_b, x, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_FFN1], x);
    if (status != TI_OK) return status;
    rel_attention(p, B, x, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_ATTN_PROBS], ws->probs);
    if (inner && status == TI_OK) status = rec_boundary(p, ids[ENC_B0_ATTN], x);
    if (status != TI_OK) return status;
    conv_glu(B, x, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_CONV_GLU], ws->glu);
    if (status != TI_OK) return status;
    conv_bn(p, B, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_CONV_BN], ws->bn);
    if (status != TI_OK) return status;
    conv_out(B, x, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_CONV], x);
    if (status != TI_OK) return status;
    half_ffn(B->ffn2_norm_w, B->ffn2_norm_b, B->ffn2_l1_w, B->ffn2_l1_b, B->ffn2_l2_w, B->ffn2_l2_b, x, R, ws);
    if (inner) status = rec_boundary(p, ids[ENC_B0_FFN2], x);
    if (status != TI_OK) return status;
    for (int64_t t = 0; t < R; t++) ak_layernorm(x + t * A_ED, B->out_norm_w, B->out_norm_b, x + t * A_ED, A_ED);
    return rec_boundary(p, ids[j == 0 ? ENC_B0_OUT : ENC_B1_OUT], x);
}

ti_status encoder_run(pass_ctx *p, const float *features, float *out) {
    const int64_t L = p->s->inputs.pcm_len, F = audio_frames(L), R = audio_rows(L);
    const int *ids = p->cat->audio.enc;
    encoder_ws ws;
    memset(&ws, 0, sizeof ws);
    if (!ws_alloc(&ws, F, R)) {
        ws_free(&ws);
        return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for the encoder (R = %lld)", p->index,
                       (long long)R);
    }
    subsample(&p->s->weights.audio, features, F, &ws, out);
    ti_status status = rec_boundary(p, ids[ENC_SUBSAMPLING], out);
    if (status == TI_OK) {
        positions(R, ws.pe);
        status = rec_boundary(p, ids[ENC_POS_EMB], ws.pe);
    }
    for (int j = 0; j < A_EBLOCKS && status == TI_OK; j++) status = block(p, j, out, R, &ws);
    ws_free(&ws);
    return status;
}
