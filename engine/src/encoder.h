/*
 * The FastConformer encoder of a prefill with pcm_in (docs/reference-model-audio.md): dw-striding
 * x8 subsampling, relative positional encoding, two conformer blocks (half FFN, rel-pos MHSA,
 * conv module, half FFN, LayerNorm out).
 */
#ifndef TI_ENCODER_H
#define TI_ENCODER_H

#include "session.h"

/* features: [F, 32] float32 (widened bf16); out: [R, 32], R = ceil(F / 8). Emits encoder.*. */
ti_status encoder_run(pass_ctx *p, const float *features, float *out);

#endif
