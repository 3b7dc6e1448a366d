/*
 * The adapter (docs/reference-model-audio.md): LayerNorm -> Linear(32 -> 64) -> erf GELU ->
 * Linear(64 -> 64) per encoder step; its R rows fill the prompt's -1 positions.
 */
#ifndef TI_ADAPTER_H
#define TI_ADAPTER_H

#include "session.h"

/* encoded: [R, 32]; rows: [R, 64] (possibly injected). Emits adapter.out and adapter.valid_rows. */
ti_status adapter_run(pass_ctx *p, const float *encoded, float *rows);

#endif
