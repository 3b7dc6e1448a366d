/*
 * The LFM2 backbone of one pass: modality assembly, the six layers (ShortConv / GQA attention
 * with their carries and caches), the final norm and the tied logits of the last position.
 */
#ifndef TI_BACKBONE_H
#define TI_BACKBONE_H

#include "session.h"

/*
 * Runs the backbone over the pass's T positions, emitting every backbone boundary.
 * final_norm receives [T, 64] (possibly injected) and logits [160] (possibly injected).
 */
ti_status backbone_run(pass_ctx *p, float *final_norm, float *logits);

#endif
