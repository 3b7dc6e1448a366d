/*
 * testlib_session.h — the session entry points the bulk and small-records engines share
 * (bulk_engine.c, small_records_engine.c): those of testlib_recording.h, and the prompt seeds
 * their values (FNV-1a over its tokens), prefill needs the prompt and comes first, decode follows
 * it, reset starts over, and the session state counts the passes. The includer's session has
 * `error`, `seed`, `have_input`, `fn`, `user`, `passes_run` and a `state` buffer; it includes
 * testlib_recording.h after the struct and defines TESTLIB_PASS(s, kind) before including this.
 * Included once per library.
 */
#ifndef TESTLIB_SESSION_H
#define TESTLIB_SESSION_H

#include "trace_abi.h"

#include <stdio.h>
#include <string.h>

#include "testlib_recording.h"

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data,
                              uint64_t byte_length) {
    if (s == NULL || name == NULL || (rank > 0 && shape == NULL)) return TI_ERR_INVALID_ARGUMENT;
    if (strcmp(name, "prompt_tokens") != 0) return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "unknown input (this engine takes prompt_tokens)");
    if (dtype != TI_I32 || rank != 1 || shape[0] < 1 || byte_length != (uint64_t)shape[0] * 4u || data == NULL)
        return testlib_fail(s, TI_ERR_SHAPE, "input prompt_tokens must be i32 [T] with T >= 1");
    uint32_t seed = 2166136261u;
    const int32_t *tokens = data;
    for (int64_t i = 0; i < shape[0]; i++) seed = (seed ^ (uint32_t)tokens[i]) * 16777619u;
    s->seed = seed;
    s->have_input = 1;
    return TI_OK;
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (!s->have_input) return testlib_fail(s, TI_ERR_STATE, "prefill needs the input prompt_tokens");
    if (s->passes_run != 0) return testlib_fail(s, TI_ERR_STATE, "prefill after prefill: call ti_reset first");
    return TESTLIB_PASS(s, TI_PASS_PREFILL);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run == 0) return testlib_fail(s, TI_ERR_STATE, "decode before prefill");
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
