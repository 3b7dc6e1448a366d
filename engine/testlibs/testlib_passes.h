/*
 * testlib_passes.h — the pass entry points of the synthetic engines that run one pass at a time
 * from a session with `have_input`, `passes_run` and a `state` buffer (bulk_engine.c,
 * small_records_engine.c), so each orders its passes the same way: prefill needs the prompt and
 * comes first, decode follows it, reset starts over, and the session state counts the passes.
 * The includer defines TESTLIB_FAIL(s, status, message) and TESTLIB_PASS(s, kind) first, after
 * its session struct. Included once per library.
 */
#ifndef TESTLIB_PASSES_H
#define TESTLIB_PASSES_H

#include "trace_abi.h"

#include <stdio.h>

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (!s->have_input) return TESTLIB_FAIL(s, TI_ERR_STATE, "prefill needs the input prompt_tokens");
    if (s->passes_run != 0) return TESTLIB_FAIL(s, TI_ERR_STATE, "prefill after prefill: call ti_reset first");
    return TESTLIB_PASS(s, TI_PASS_PREFILL);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run == 0) return TESTLIB_FAIL(s, TI_ERR_STATE, "decode before prefill");
    return TESTLIB_PASS(s, TI_PASS_DECODE);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->passes_run = 0;
    return TI_OK;
}

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{}";
    snprintf(s->state, sizeof s->state, "{\"passes_run\":%u,\"cursor\":%u,\"mode\":\"text\",\"last_output\":%s}", s->passes_run,
             s->passes_run, s->passes_run == 0 ? "null" : "\"text\"");
    return s->state;
}

#endif
