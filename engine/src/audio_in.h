/*
 * Audio in for a prefill given pcm_in: frontend -> encoder -> adapter, emitting their boundaries
 * (emit prefill_audio_in) before backbone.embed.
 */
#ifndef TI_AUDIO_IN_H
#define TI_AUDIO_IN_H

#include "session.h"

/* On success *rows holds the R x 64 adapter rows (malloc'd, the caller frees them). */
ti_status audio_in_run(pass_ctx *p, float **rows);

#endif
