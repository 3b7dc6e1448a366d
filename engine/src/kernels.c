#include "kernels.h"

#include <math.h>

void k_matvec(const float *W, const float *x, float *y, int out, int in) {
    for (int o = 0; o < out; o++) {
        const float *row = W + (int64_t)o * in;
        float acc = 0.0f;
        for (int i = 0; i < in; i++) acc += row[i] * x[i];
        y[o] = acc;
    }
}

void k_rmsnorm(const float *x, const float *w, float *y, int n) {
    float ss = 0.0f;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    float inv = 1.0f / sqrtf(ss / (float)n + 1e-5f);
    for (int i = 0; i < n; i++) y[i] = x[i] * inv * w[i];
}

/* inv_freq[i] = theta^(-2i/hd) as one float32 power (the exponent i * (-2/hd) is exact). */
static float inv_freq(int i, int hd, float theta) { return powf(theta, (float)i * (-2.0f / (float)hd)); }

void k_rope_half(float *v, int hd, int64_t pos, float theta) {
    int half = hd / 2;
    for (int i = 0; i < half; i++) {
        float a = (float)pos * inv_freq(i, hd, theta);
        float c = cosf(a), s = sinf(a);
        float x0 = v[i], x1 = v[i + half];
        v[i] = x0 * c - x1 * s;
        v[i + half] = x1 * c + x0 * s;
    }
}

void k_rope_pairs(float *v, int hd, int64_t pos, float theta) {
    for (int i = 0; i < hd / 2; i++) {
        float a = (float)pos * inv_freq(i, hd, theta);
        float c = cosf(a), s = sinf(a);
        float x0 = v[2 * i], x1 = v[2 * i + 1];
        v[2 * i] = x0 * c - x1 * s;
        v[2 * i + 1] = x1 * c + x0 * s;
    }
}

float k_silu(float x) { return x / (1.0f + expf(-x)); }

void k_swiglu(const float *w1, const float *w3, const float *w2, const float *x, float *out, int dim, int ff,
              float *hidden) {
    float *gate = hidden, *up = hidden + ff;
    k_matvec(w1, x, gate, ff, dim);
    k_matvec(w3, x, up, ff, dim);
    for (int i = 0; i < ff; i++) gate[i] = k_silu(gate[i]) * up[i];
    k_matvec(w2, gate, out, dim, ff);
}

void k_attend(const float *q, const float *keys, const float *values, int64_t n, int64_t stride, int hd, float *out,
              float *scratch) {
    float scale = 1.0f / sqrtf((float)hd);
    float max = -INFINITY;
    for (int64_t j = 0; j < n; j++) {
        const float *k = keys + j * stride;
        float s = 0.0f;
        for (int d = 0; d < hd; d++) s += q[d] * k[d];
        s *= scale;
        scratch[j] = s;
        /* NaN propagates through the sum below; the maximum only needs the finite values. */
        if (s > max) max = s;
    }
    float sum = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        scratch[j] = expf(scratch[j] - max);
        sum += scratch[j];
    }
    for (int d = 0; d < hd; d++) out[d] = 0.0f;
    for (int64_t j = 0; j < n; j++) {
        float p = scratch[j] / sum;
        const float *v = values + j * stride;
        for (int d = 0; d < hd; d++) out[d] += p * v[d];
    }
}

