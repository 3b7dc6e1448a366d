#include "frontend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "audio_kernels.h"
#include "dft.h"
#include "kernels.h"
#include "records.h"

typedef struct frontend_ws {
    float *resampled; /* [L16] */
    float *preemph;   /* [L16] */
    float *frames;    /* [F, 512] */
    float *power;     /* [F, 257] */
    float *mel;       /* [F, 32] */
    float *log_mel;   /* [F, 32] */
    uint16_t *bf16;   /* [F, 32] */
} frontend_ws;

static void ws_free(frontend_ws *ws) {
    free(ws->resampled);
    free(ws->preemph);
    free(ws->frames);
    free(ws->power);
    free(ws->mel);
    free(ws->log_mel);
    free(ws->bf16);
}

static bool ws_alloc(frontend_ws *ws, int64_t L16, int64_t F) {
    size_t l = (size_t)(L16 > 0 ? L16 : 1), f = (size_t)F;
    ws->resampled = malloc(l * sizeof(float));
    ws->preemph = malloc(l * sizeof(float));
    ws->frames = malloc(f * A_NFFT * sizeof(float));
    ws->power = malloc(f * A_NBINS * sizeof(float));
    ws->mel = malloc(f * A_NMEL * sizeof(float));
    ws->log_mel = malloc(f * A_NMEL * sizeof(float));
    ws->bf16 = malloc(f * A_NMEL * sizeof(uint16_t));
    return ws->resampled && ws->preemph && ws->frames && ws->power && ws->mel && ws->log_mel && ws->bf16;
}

/*
 * The kernel of torchaudio.functional.resample(x, 24000, 16000) with its defaults
 * (sinc_interp_hann, lowpass_filter_width 6, rolloff 0.99), computed in float32 with the same
 * operations in the same order as torchaudio computes it for a float32 waveform: for phase p
 * and tap i, t = ((-p) / 2 + (i - 10) / 3) * 1.98 clamped to [-6, 6]; window = cos(t pi / 6 / 2)^2;
 * then t *= pi and kernel = (t == 0 ? 1 : sin(t) / t) * (window * 0.66).
 */
static void resampler_kernel(float kernel[A_RS_NEW][A_TAPS]) {
    const float pi = (float)3.14159265358979323846;
    const double base_freq = (double)(A_RS_NEW < A_RS_ORIG ? A_RS_NEW : A_RS_ORIG) * 0.99; /* rolloff */
    const float base = (float)base_freq, scale = (float)(base_freq / A_RS_ORIG);
    const float width = (float)A_RS_LOWPASS;
    for (int p = 0; p < A_RS_NEW; p++)
        for (int i = 0; i < A_TAPS; i++) {
            float idx = (float)(i - A_RS_WIDTH) / (float)A_RS_ORIG;
            float t = (float)(-p) / (float)A_RS_NEW + idx;
            t *= base;
            t = t < -width ? -width : (t > width ? width : t);
            float c = cosf(t * pi / width / 2.0f);
            float window = c * c;
            t *= pi;
            float sinc = t == 0.0f ? 1.0f : sinf(t) / t;
            kernel[p][i] = sinc * (window * scale);
        }
}

/*
 * Output n = 2j + p: y[n] = sum_i kernel[p][i] x[3j + i - 10], x outside [0, L) is zero (torchaudio
 * pads 10 zeros before and 13 after, then a stride-3 conv1d); accumulated in i order from +0.0.
 */
static void resample(const float *x, int64_t L, float *y, int64_t L16) {
    float kernel[A_RS_NEW][A_TAPS];
    resampler_kernel(kernel);
    for (int64_t n = 0; n < L16; n++) {
        const float *k = kernel[n % A_RS_NEW];
        int64_t first = A_RS_ORIG * (n / A_RS_NEW) - A_RS_WIDTH;
        float acc = 0.0f;
        for (int i = 0; i < A_TAPS; i++) {
            int64_t at = first + i;
            if (at >= 0 && at < L) acc += k[i] * x[at];
        }
        y[n] = acc;
    }
}

/* The periodic Hann of 400 (the perturbation's window), zero-padded by 56 on each side. */
static void periodic_window(float *win) {
    const double two_pi = 6.283185307179586476925286766559;
    for (int i = 0; i < A_NFFT; i++) win[i] = 0.0f;
    for (int i = 0; i < 400; i++) win[56 + i] = (float)(0.5 - 0.5 * cos(two_pi * (double)i / 400.0));
}

ti_status frontend_run(pass_ctx *p, float *features) {
    const ti_session *s = p->s;
    const audio_weights *w = &s->weights.audio;
    const cat_audio_ids *ids = &p->cat->audio;
    const int64_t L = s->inputs.pcm_len, L16 = audio_l16(L), F = audio_frames(L), N = F - 1;
    frontend_ws ws;
    memset(&ws, 0, sizeof ws);
    if (!ws_alloc(&ws, L16, F)) {
        ws_free(&ws);
        return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory for the frontend (F = %lld)", p->index,
                       (long long)F);
    }
    /* 1. resampler */
    resample(s->inputs.pcm, L, ws.resampled, L16);
    ti_status status = rec_boundary(p, ids->fe[FE_RESAMPLED], ws.resampled);
    /* 2. pre-emphasis */
    if (status == TI_OK) {
        for (int64_t t = 0; t < L16; t++)
            ws.preemph[t] = ws.resampled[t] - 0.97f * (t > 0 ? ws.resampled[t - 1] : 0.0f);
        status = rec_boundary(p, ids->fe[FE_PREEMPH], ws.preemph);
    }
    /* 3. centred frames times the window */
    if (status == TI_OK) {
        float periodic[A_NFFT];
        const float *win = w->window;
        if (s->options.on[OPT_FRONTEND_PERIODIC_WINDOW]) {
            periodic_window(periodic);
            win = periodic;
        }
        for (int64_t f = 0; f < F; f++) {
            float *frame = ws.frames + f * A_NFFT;
            for (int n = 0; n < A_NFFT; n++) {
                int64_t i = A_HOP * f + n - A_PAD;
                frame[n] = (i >= 0 && i < L16 ? ws.preemph[i] : 0.0f) * win[n];
            }
        }
        status = rec_boundary(p, ids->fe[FE_FRAMES], ws.frames);
    }
    /* 4. power spectrum */
    if (status == TI_OK) {
        for (int64_t f = 0; f < F; f++) dft_power512(ws.frames + f * A_NFFT, ws.power + f * A_NBINS);
        status = rec_boundary(p, ids->fe[FE_POWER], ws.power);
    }
    /* 5. mel and log mel */
    if (status == TI_OK) {
        for (int64_t f = 0; f < F; f++) k_matvec(w->mel_fb, ws.power + f * A_NBINS, ws.mel + f * A_NMEL, A_NMEL, A_NBINS);
        status = rec_boundary(p, ids->fe[FE_MEL], ws.mel);
    }
    if (status == TI_OK) {
        for (int64_t i = 0; i < F * A_NMEL; i++) ws.log_mel[i] = logf(ws.mel[i] + 0x1p-24f);
        status = rec_boundary(p, ids->fe[FE_LOG_MEL], ws.log_mel);
    }
    /* 6. per-mel normalisation over the first N frames */
    float mean[A_NMEL], std[A_NMEL];
    if (status == TI_OK) {
        for (int m = 0; m < A_NMEL; m++) {
            float sum = 0.0f;
            for (int64_t f = 0; f < N; f++) sum += ws.log_mel[f * A_NMEL + m];
            mean[m] = sum / (float)N;
        }
        status = rec_boundary(p, ids->fe[FE_MEAN], mean);
    }
    if (status == TI_OK) {
        float divisor = (float)(s->options.on[OPT_FRONTEND_BIASED_STD] ? N : N - 1);
        for (int m = 0; m < A_NMEL; m++) {
            float ss = 0.0f;
            for (int64_t f = 0; f < N; f++) {
                float d = ws.log_mel[f * A_NMEL + m] - mean[m];
                ss += d * d;
            }
            std[m] = sqrtf(ss / divisor) + 1e-5f;
        }
        status = rec_boundary(p, ids->fe[FE_STD], std);
    }
    /* 7. bf16 features: frames 0..N-1 normalised, the last frame zeros */
    if (status == TI_OK) {
        int truncate = s->options.on[OPT_FEATURES_BF16_TRUNCATE];
        for (int64_t f = 0; f < F; f++)
            for (int m = 0; m < A_NMEL; m++) {
                float z = f < N ? (ws.log_mel[f * A_NMEL + m] - mean[m]) / std[m] : 0.0f;
                ws.bf16[f * A_NMEL + m] = ak_bf16_round(z, truncate);
            }
        status = rec_boundary(p, ids->fe[FE_FEATURES], ws.bf16);
    }
    if (status == TI_OK) {
        for (int64_t i = 0; i < F * A_NMEL; i++) features[i] = ak_bf16_widen(ws.bf16[i]);
        int32_t valid = (int32_t)F;
        status = rec_boundary(p, ids->fe[FE_VALID_FRAMES], &valid);
    }
    ws_free(&ws);
    return status;
}
