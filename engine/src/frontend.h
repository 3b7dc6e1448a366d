/*
 * The audio frontend of a prefill with pcm_in (docs/reference-model-audio.md, "Frontend"):
 * resampler 24 -> 16 kHz, pre-emphasis, centred windowed frames, 512-point power spectrum,
 * Slaney mel, log, per-mel normalisation, bf16 features.
 */
#ifndef TI_FRONTEND_H
#define TI_FRONTEND_H

#include "session.h"

/* Emits every frontend.* boundary; features receives the F x 32 bf16 features that flow on
 * (injected ones included), widened to float32. */
ti_status frontend_run(pass_ctx *p, float *features);

#endif
