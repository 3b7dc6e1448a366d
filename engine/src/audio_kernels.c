#include "audio_kernels.h"

#include <math.h>
#include <string.h>

void ak_layernorm(const float *x, const float *w, const float *b, float *y, int n) {
    float sum = 0.0f;
    for (int i = 0; i < n; i++) sum += x[i];
    float mean = sum / (float)n;
    float ss = 0.0f;
    for (int i = 0; i < n; i++) {
        float d = x[i] - mean;
        ss += d * d;
    }
    float inv = 1.0f / sqrtf(ss / (float)n + 1e-5f);
    for (int i = 0; i < n; i++) y[i] = (x[i] - mean) * inv * w[i] + b[i];
}

void ak_linear(const float *W, const float *bias, const float *x, float *y, int out, int in) {
    for (int o = 0; o < out; o++) {
        const float *row = W + (int64_t)o * in;
        float acc = 0.0f;
        for (int i = 0; i < in; i++) acc += row[i] * x[i];
        y[o] = bias != NULL ? acc + bias[o] : acc;
    }
}

float ak_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

float ak_gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }

uint16_t ak_bf16_round(float v, int truncate) {
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((bits >> 16) | 0x0040u); /* NaN: keep it a NaN */
    if (!truncate) bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

float ak_bf16_widen(uint16_t bits) {
    uint32_t wide = (uint32_t)bits << 16;
    float v;
    memcpy(&v, &wide, sizeof v);
    return v;
}
