/*
 * Float32 building blocks of part 2 (LayerNorm, biased linear, GELU, sigmoid, bf16 rounding).
 * Sequential index-order reductions, like kernels.h.
 */
#ifndef TI_AUDIO_KERNELS_H
#define TI_AUDIO_KERNELS_H

#include <stdint.h>

/* y = (x - mean) / sqrt(var + 1e-5) * w + b over n values, var biased (/ n); y may alias x. */
void ak_layernorm(const float *x, const float *w, const float *b, float *y, int n);

/* y[o] = sum_i W[o, i] x[i] + bias[o] (bias may be NULL). */
void ak_linear(const float *W, const float *bias, const float *x, float *y, int out, int in);

float ak_sigmoid(float x);

/* 0.5 x (1 + erf(x / sqrt(2))) */
float ak_gelu_erf(float x);

/* float32 -> bf16 bits, round to nearest even (truncate: drop the low 16 bits); NaN stays a quiet NaN. */
uint16_t ak_bf16_round(float v, int truncate);

/* bf16 bits -> float32 (exact). */
float ak_bf16_widen(uint16_t bits);

#endif
