/*
 * testlib_recording.h — the entry points of the synthetic engines (bulk, small-records, scale)
 * that only hold the record callback: they record everything, accept no injection and report
 * their last error, which testlib_fail sets. The includer's session has `error`, `fn` and `user`;
 * it includes this right after its session struct. Included once per library.
 */
#ifndef TESTLIB_RECORDING_H
#define TESTLIB_RECORDING_H

#include "trace_abi.h"

#include <stdio.h>

/* The session's last error is `message`; returns `status` for the caller to return. */
static ti_status testlib_fail(ti_session *s, ti_status status, const char *message) {
    snprintf(s->error, sizeof s->error, "%s", message);
    return status;
}

TI_API const char *ti_last_error(const ti_session *s) { return s == NULL ? "" : s->error; }

TI_API ti_status ti_set_record_callback(ti_session *s, ti_record_fn fn, void *user) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->fn = fn;
    s->user = user;
    return TI_OK;
}

TI_API ti_status ti_set_wanted(ti_session *s, const char *const *wanted, uint32_t count) {
    (void)wanted;
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    return count == 0 ? TI_OK : testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "this engine always records everything");
}

TI_API ti_status ti_inject(ti_session *s, const char *boundary_name, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data,
                           uint64_t byte_length) {
    (void)boundary_name; (void)dtype; (void)rank; (void)shape; (void)data; (void)byte_length;
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "no boundary of this engine accepts injection");
}

#endif
