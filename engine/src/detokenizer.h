/*
 * The incremental detokenizer (docs/reference-model-audio.md, "Detokenizer"): one code frame per
 * audio pass -> mean code embedding repeated 6x -> small LFM2 stack [conv, conv, attn, conv] with
 * its carries and a sliding-window KV cache -> head -> polar spectrum -> ISTFT by overlap-add with
 * the pending state carried across passes -> 1440 (first frame) or 1920 PCM samples.
 */
#ifndef TI_DETOKENIZER_H
#define TI_DETOKENIZER_H

#include "session.h"

/* codes: the frame's 8 codes (code 0 is not end-of-audio). Advances p->next.detok; emits detok.*. */
ti_status detok_run(pass_ctx *p, const int32_t *codes);

#endif
