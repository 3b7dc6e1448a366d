/*
 * The Depthformer of an audio pass: depth.linear on the last final-norm row, then one token per
 * codebook through two blocks with a per-frame KV cache, tied per-codebook logits and the audio
 * sampler, feeding each sampled code's embedding into the next codebook.
 */
#ifndef TI_DEPTHFORMER_H
#define TI_DEPTHFORMER_H

#include "session.h"

/* hlast: final_norm[T-1] (64 values). Writes the frame's 8 codes. Emits every depth.* boundary. */
ti_status depthformer_run(pass_ctx *p, const float *hlast, int32_t *codes);

/* Grows the Depthformer caches to hold `slots` entries, keeping the first `keep` of them. */
ti_status depthformer_reserve(ti_session *s, int64_t slots, int64_t keep, errbuf *err);

#endif
