#include "detokenizer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dft.h"
#include "kernels.h"
#include "records.h"

enum { SPAN = A_DKV_KEEP + A_DREPEAT, /* cached positions plus the frame's own */
       LOCAL = A_PENDING + A_PCM       /* samples [320 M0, 320 M0 + 2880) touched by one frame */ };

/* The frame's larger buffers (about 90 KB): one allocation per frame rather than on the stack. */
typedef struct detok_ws {
    float spectral[A_DREPEAT * A_DSPEC];
    float complex_spec[A_DREPEAT * A_DBINS * 2];
    float ola[LOCAL], env[LOCAL];
    float frame[A_ISTFT_N];
    float pcm[A_PCM];
} detok_ws;

/* ShortConv over the frame's 6 positions with the 2-column carry (as the backbone's). */
static void shortconv(const detok_layer_w *L, float *carry, const float *normed, float *mixed) {
    float proj[A_DREPEAT][3 * A_DW];
    float bx[(A_DREPEAT + 2) * A_DW];
    memcpy(bx, carry, 2 * A_DW * sizeof(float));
    for (int t = 0; t < A_DREPEAT; t++) {
        k_matvec(L->in_proj, normed + t * A_DW, proj[t], 3 * A_DW, A_DW);
        const float *B = proj[t], *xv = proj[t] + 2 * A_DW;
        for (int c = 0; c < A_DW; c++) bx[(t + 2) * A_DW + c] = B[c] * xv[c];
    }
    for (int t = 0; t < A_DREPEAT; t++) {
        const float *C = proj[t] + A_DW, *col0 = bx + t * A_DW;
        float gated[A_DW];
        for (int c = 0; c < A_DW; c++) {
            const float *wc = L->conv + c * 3;
            float y = wc[0] * col0[c] + wc[1] * col0[A_DW + c] + wc[2] * col0[2 * A_DW + c];
            gated[c] = C[c] * y;
        }
        k_matvec(L->conv_out, gated, mixed + t * A_DW, A_DW, A_DW);
    }
    memcpy(carry, bx + A_DREPEAT * A_DW, 2 * A_DW * sizeof(float));
}

/* Attention with 2 query heads over 1 KV head, RoPE at the absolute position, window 30. */
static void attention(const detok_layer_w *L, detok_state *st, const float *normed, float *mixed) {
    float keys[SPAN * A_DHD], values[SPAN * A_DHD], q[A_DREPEAT][A_DNQ * A_DHD];
    const int cached = st->kv_len;
    memcpy(keys, st->k, (size_t)cached * A_DHD * sizeof(float));
    memcpy(values, st->v, (size_t)cached * A_DHD * sizeof(float));
    for (int t = 0; t < A_DREPEAT; t++) {
        const int64_t pos = st->positions + t;
        float *kt = keys + (cached + t) * A_DHD, *vt = values + (cached + t) * A_DHD;
        k_matvec(L->q_proj, normed + t * A_DW, q[t], A_DNQ * A_DHD, A_DW);
        k_matvec(L->k_proj, normed + t * A_DW, kt, A_DHD, A_DW);
        k_matvec(L->v_proj, normed + t * A_DW, vt, A_DHD, A_DW);
        for (int h = 0; h < A_DNQ; h++) {
            k_rmsnorm(q[t] + h * A_DHD, L->q_norm, q[t] + h * A_DHD, A_DHD);
            k_rope_half(q[t] + h * A_DHD, A_DHD, pos, A_DTHETA);
        }
        k_rmsnorm(kt, L->k_norm, kt, A_DHD);
        k_rope_half(kt, A_DHD, pos, A_DTHETA);
    }
    for (int t = 0; t < A_DREPEAT; t++) {
        /* Slot cached + t is this position; it sees the 29 positions before it (window 30). */
        int last = cached + t, first = last - (A_DWINDOW - 1);
        if (first < 0) first = 0;
        float heads[A_DNQ * A_DHD], scores[A_DWINDOW];
        for (int h = 0; h < A_DNQ; h++)
            k_attend(q[t] + h * A_DHD, keys + first * A_DHD, values + first * A_DHD, last - first + 1, A_DHD, A_DHD,
                     heads + h * A_DHD, scores);
        k_matvec(L->attn_out, heads, mixed + t * A_DW, A_DW, A_DNQ * A_DHD);
    }
    /* Keep the last 29 positions, oldest first. */
    int total = cached + A_DREPEAT, keep = total < A_DKV_KEEP ? total : A_DKV_KEEP;
    memmove(st->k, keys + (total - keep) * A_DHD, (size_t)keep * A_DHD * sizeof(float));
    memmove(st->v, values + (total - keep) * A_DHD, (size_t)keep * A_DHD * sizeof(float));
    st->kv_len = keep;
}

static ti_status stack(pass_ctx *p, float *x) {
    const audio_weights *w = &p->s->weights.audio;
    detok_state *st = &p->next.detok;
    float normed[A_DREPEAT * A_DW], mixed[A_DREPEAT * A_DW], hidden[2 * A_DFF], ffn[A_DW];
    for (int l = 0; l < A_DLAYERS; l++) {
        const detok_layer_w *L = &w->detok[l];
        for (int t = 0; t < A_DREPEAT; t++) k_rmsnorm(x + t * A_DW, L->operator_norm, normed + t * A_DW, A_DW);
        if (audio_detok_layer_is_attn(l))
            attention(L, st, normed, mixed);
        else
            shortconv(L, st->carry[l], normed, mixed);
        for (int i = 0; i < A_DREPEAT * A_DW; i++) x[i] += mixed[i];
        for (int t = 0; t < A_DREPEAT; t++) {
            float *h = x + t * A_DW;
            k_rmsnorm(h, L->ffn_norm, normed + t * A_DW, A_DW);
            k_swiglu(L->w1, L->w3, L->w2, normed + t * A_DW, ffn, A_DW, A_DFF, hidden);
            for (int d = 0; d < A_DW; d++) h[d] += ffn[d];
        }
        ti_status status = rec_boundary(p, p->cat->audio.dt[DT_L0_OUT + l], x);
        if (status != TI_OK) return status;
    }
    return TI_OK;
}

static ti_status frame_run(pass_ctx *p, const int32_t *codes, detok_ws *ws);

ti_status detok_run(pass_ctx *p, const int32_t *codes) {
    detok_ws *ws = malloc(sizeof *ws);
    if (ws == NULL) return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for the detokenizer", p->index);
    ti_status status = frame_run(p, codes, ws);
    free(ws);
    return status;
}

static ti_status frame_run(pass_ctx *p, const int32_t *codes, detok_ws *ws) {
    const ti_session *s = p->s;
    const audio_weights *w = &s->weights.audio;
    const int *ids = p->cat->audio.dt;
    detok_state *st = &p->next.detok;
    if (s->options.on[OPT_OLA_STATE_RESET]) {
        memset(st->ola, 0, sizeof st->ola);
        memset(st->env, 0, sizeof st->env);
    }
    /* 1. fused embedding: mean over codebooks (offset 32 per codebook) */
    float embed[A_DW];
    for (int d = 0; d < A_DW; d++) embed[d] = 0.0f;
    for (int k = 0; k < M_NCB; k++) {
        const float *row = w->detok_embed + (int64_t)(codes[k] + A_DCODE_OFFSET * k) * A_DW;
        for (int d = 0; d < A_DW; d++) embed[d] += row[d];
    }
    if (!s->options.on[OPT_DETOK_EMBED_SUM])
        for (int d = 0; d < A_DW; d++) embed[d] *= 0.125f;
    ti_status status = rec_boundary(p, ids[DT_EMBED], embed);
    if (status != TI_OK) return status;
    /* 2. repeat 6x, 3. the LFM2 stack, final norm */
    float x[A_DREPEAT * A_DW];
    for (int t = 0; t < A_DREPEAT; t++) memcpy(x + t * A_DW, embed, sizeof embed);
    status = stack(p, x);
    if (status != TI_OK) return status;
    for (int t = 0; t < A_DREPEAT; t++) k_rmsnorm(x + t * A_DW, w->detok_norm, x + t * A_DW, A_DW);
    status = rec_boundary(p, ids[DT_FINAL_NORM], x);
    if (status != TI_OK) return status;
    /* 4. head, 5. polar spectrum */
    float *spectral = ws->spectral;
    for (int t = 0; t < A_DREPEAT; t++) {
        k_matvec(w->head_w, x + t * A_DW, spectral + t * A_DSPEC, A_DSPEC, A_DW);
        for (int o = 0; o < A_DSPEC; o++) spectral[t * A_DSPEC + o] += w->head_b[o];
    }
    status = rec_boundary(p, ids[DT_SPECTRAL], spectral);
    if (status != TI_OK) return status;
    float *complex_spec = ws->complex_spec;
    for (int t = 0; t < A_DREPEAT; t++)
        for (int k = 0; k < A_DBINS; k++) {
            float mag = expf(spectral[t * A_DSPEC + k]), phase = spectral[t * A_DSPEC + A_DBINS + k];
            complex_spec[(t * A_DBINS + k) * 2] = mag * cosf(phase);
            complex_spec[(t * A_DBINS + k) * 2 + 1] = mag * sinf(phase);
        }
    status = rec_boundary(p, ids[DT_COMPLEX], complex_spec);
    if (status != TI_OK) return status;
    /* 6. ISTFT: overlap-add into the samples [320 M0, 320 M0 + 2880) this frame touches */
    float *ola = ws->ola, *env = ws->env, *frame = ws->frame;
    memcpy(ola, st->ola, sizeof st->ola);
    memcpy(env, st->env, sizeof st->env);
    memset(ola + A_PENDING, 0, A_PCM * sizeof(float));
    memset(env + A_PENDING, 0, A_PCM * sizeof(float));
    for (int t = 0; t < A_DREPEAT; t++) {
        dft_irfft1280(complex_spec + t * A_DBINS * 2, frame);
        float *o = ola + t * A_ISTFT_HOP, *e = env + t * A_ISTFT_HOP;
        for (int n = 0; n < A_ISTFT_N; n++) {
            float wn = w->detok_window[n];
            o[n] += frame[n] * wn;
            e[n] += wn * wn;
        }
    }
    /* Final now: global samples s with 480 <= s < 320 M; the first frame trims the first 480. */
    const int first = st->positions == 0 ? A_ISTFT_TRIM : 0;
    const bool divide = !s->options.on[OPT_SKIP_ENVELOPE_DIVISION];
    float *pcm = ws->pcm;
    for (int i = 0; i < A_PCM; i++) {
        int local = first + i;
        pcm[i] = local < A_PCM ? (divide ? ola[local] / env[local] : ola[local]) : 0.0f;
    }
    st->positions += A_DREPEAT;
    memcpy(st->ola, ola + A_PCM, sizeof st->ola);
    memcpy(st->env, env + A_PCM, sizeof st->env);
    status = rec_boundary(p, ids[DT_PCM], pcm);
    if (status == TI_OK) status = rec_boundary(p, ids[DT_OLA], st->ola);
    if (status == TI_OK) status = rec_boundary(p, ids[DT_ENVELOPE], st->env);
    return status;
}
