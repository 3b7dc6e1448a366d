/*
 * Float32 building blocks shared by the backbone and the Depthformer. Every reduction is a plain
 * sequential float accumulation: the precision contract allows any order, and a fixed one keeps
 * runs reproducible.
 */
#ifndef TI_KERNELS_H
#define TI_KERNELS_H

#include <stdint.h>

/* y[o] = sum_i W[o, i] x[i] for W [out, in] row-major. */
void k_matvec(const float *W, const float *x, float *y, int out, int in);

/* y = x * 1/sqrt(mean(x^2) + eps) * w over n values (y may alias x). */
void k_rmsnorm(const float *x, const float *w, float *y, int n);

/* Rotate-half RoPE on one head of hd values at position pos: (v[i], v[i + hd/2]) pairs. */
void k_rope_half(float *v, int hd, int64_t pos, float theta);

/* Interleaved-pair RoPE on one head: (v[2i], v[2i+1]) pairs. */
void k_rope_pairs(float *v, int hd, int64_t pos, float theta);

float k_silu(float x);

/* out[dim] = w2 (silu(w1 x) * w3 x); hidden is scratch of 2 * ff floats. */
void k_swiglu(const float *w1, const float *w3, const float *w2, const float *x, float *out, int dim, int ff,
              float *hidden);

/*
 * One query head over n cached positions: keys/values at keys + j*stride, values + j*stride
 * (hd values each). scores/sqrt(hd), softmax with the maximum subtracted, weighted sum of values.
 * scratch holds n floats.
 */
void k_attend(const float *q, const float *keys, const float *values, int64_t n, int64_t stride, int hd, float *out,
              float *scratch);

#endif
