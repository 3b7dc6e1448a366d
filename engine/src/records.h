/*
 * Boundary emission: hands the engine's computed buffer to the record callback (only when a
 * callback is set and the boundary is wanted), then applies a pending injection to that buffer, so
 * a record always observes what the engine computed and the injected value is what flows on.
 */
#ifndef TI_RECORDS_H
#define TI_RECORDS_H

#include "sampler.h"
#include "session.h"

/*
 * Boundary `id` has just been computed into `data` (row-major, catalogue dtype, T substituted).
 * The computed contents are recorded first; then a pending injection replaces them (its
 * T-dependent shape is checked before the record -> TI_ERR_SHAPE), so the caller continues with
 * the injected value. Returns TI_ERR_ABORTED when the callback asks.
 */
ti_status rec_boundary(pass_ctx *p, int id, void *data);

/* Emits the SAMP_FIELDS boundaries of one sampler call (ids[SAMP_*]); token may be injected. */
ti_status rec_sampler(pass_ctx *p, const int *ids, sampler_result *r);

/* Validates and stores an injection (fixed dims now, T-dependent dims when the pass reaches it). */
ti_status rec_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank, const int64_t *shape,
                     const void *data, uint64_t byte_length, errbuf *err);

#endif
