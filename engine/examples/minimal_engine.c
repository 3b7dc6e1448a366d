/*
 * minimal_engine.c — the smallest complete trace-inspector engine, used by
 * docs/implementing-the-abi.md and built and exercised by the test suite.
 *
 * Model: one input vector x (f32 [N]). Prefill computes y = 2x and its sum; every decode
 * pass computes y = y + 1 and its sum. Boundaries: "toy.y" (f32 [N]) and "toy.sum" (f32 [1]).
 */
#include "trace_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ti_session {
    float *y;            /* current state, N values */
    int64_t n;           /* N, 0 until the input is set */
    uint32_t passes_run; /* 0 before prefill */
    ti_record_fn record;
    void *record_user;
    char error[256];
    char state_json[128];
};

static const char DESCRIPTION[] =
    "{\"abi_version\":1,"
    "\"engine\":{\"name\":\"minimal-example\",\"version\":\"1.0.0\",\"build_id\":\"example\"},"
    "\"model\":{},"
    "\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[\"N\"],\"required\":true,\"doc\":\"input vector\"}],"
    "\"boundaries\":["
    "{\"name\":\"toy.y\",\"stage\":\"toy\",\"dtype\":\"f32\",\"shape\":[\"N\"],\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"state\"},"
    "{\"name\":\"toy.sum\",\"stage\":\"toy\",\"dtype\":\"f32\",\"shape\":[1],\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"sum of the state\"}],"
    "\"options\":[]}";

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }
TI_API const char *ti_describe(void) { return DESCRIPTION; }

TI_API const char *ti_status_string(ti_status status) {
    switch (status) {
    case TI_OK: return "TI_OK";
    case TI_ERR_INVALID_ARGUMENT: return "TI_ERR_INVALID_ARGUMENT";
    case TI_ERR_STATE: return "TI_ERR_STATE";
    case TI_ERR_UNKNOWN_NAME: return "TI_ERR_UNKNOWN_NAME";
    case TI_ERR_SHAPE: return "TI_ERR_SHAPE";
    case TI_ERR_OUT_OF_MEMORY: return "TI_ERR_OUT_OF_MEMORY";
    case TI_ERR_ABORTED: return "TI_ERR_ABORTED";
    default: return "TI_ERR_INTERNAL";
    }
}

static ti_status fail(ti_session *s, ti_status status, const char *message) {
    snprintf(s->error, sizeof s->error, "%s", message);
    return status;
}

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out,
                         char *err, size_t err_capacity) {
    (void)config_json;
    (void)weights_path; /* this toy model has no weights */
    if (out == NULL) return TI_ERR_INVALID_ARGUMENT;
    *out = calloc(1, sizeof **out);
    if (*out == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    free(s->y);
    free(s);
}

TI_API const char *ti_last_error(const ti_session *s) { return s ? s->error : ""; }

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank,
                              const int64_t *shape, const void *data, uint64_t byte_length) {
    if (s == NULL || name == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (strcmp(name, "x") != 0) return fail(s, TI_ERR_UNKNOWN_NAME, "unknown input (this engine takes only \"x\")");
    if (dtype != TI_F32 || rank != 1 || shape[0] < 1 || byte_length != (uint64_t)shape[0] * 4)
        return fail(s, TI_ERR_SHAPE, "input x: expected f32 [N] with N >= 1");
    float *copy = malloc((size_t)byte_length);
    if (copy == NULL) return fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(copy, data, (size_t)byte_length);
    free(s->y);
    s->y = copy;
    s->n = shape[0];
    return TI_OK;
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    (void)value;
    if (s == NULL || key == NULL) return TI_ERR_INVALID_ARGUMENT;
    return fail(s, TI_ERR_UNKNOWN_NAME, "this engine has no options");
}

TI_API ti_status ti_set_record_callback(ti_session *s, ti_record_fn fn, void *user) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->record = fn;
    s->record_user = user;
    return TI_OK;
}

TI_API ti_status ti_set_wanted(ti_session *s, const char *const *names, uint32_t count) {
    (void)names;
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    return count == 0 ? TI_OK : fail(s, TI_ERR_INVALID_ARGUMENT, "this engine always records everything");
}

TI_API ti_status ti_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank,
                           const int64_t *shape, const void *data, uint64_t byte_length) {
    (void)boundary; (void)dtype; (void)rank; (void)shape; (void)data; (void)byte_length;
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    return fail(s, TI_ERR_UNKNOWN_NAME, "no boundary of this engine accepts injection");
}

/* Hand one boundary to the host; the pointer is valid only during the call. */
static ti_status emit(ti_session *s, const char *name, const float *data, int64_t n) {
    if (s->record == NULL) return TI_OK;
    const int64_t shape[1] = {n};
    const int64_t strides[1] = {1};
    const ti_record rec = {s->passes_run, s->passes_run == 0 ? TI_PASS_PREFILL : TI_PASS_DECODE,
                           name, TI_F32, 1, shape, strides, data, (uint64_t)n * sizeof(float)};
    return s->record(s->record_user, &rec) == 0 ? TI_OK : fail(s, TI_ERR_ABORTED, "stopped by the host");
}

static ti_status run_pass(ti_session *s, float scale, float offset) {
    float sum = 0.0f;
    for (int64_t i = 0; i < s->n; i++) {
        s->y[i] = s->y[i] * scale + offset;
        sum += s->y[i];
    }
    ti_status status = emit(s, "toy.y", s->y, s->n);
    if (status == TI_OK) status = emit(s, "toy.sum", &sum, 1);
    s->passes_run++;
    return status;
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->n == 0) return fail(s, TI_ERR_STATE, "set input x before prefill");
    if (s->passes_run != 0) return fail(s, TI_ERR_STATE, "prefill already ran; call ti_reset first");
    return run_pass(s, 2.0f, 0.0f);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run == 0) return fail(s, TI_ERR_STATE, "decode before prefill");
    return run_pass(s, 1.0f, 1.0f);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    return fail(s, TI_ERR_STATE, "this toy engine cannot rewind its state; open a new session");
}

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{}";
    snprintf(s->state_json, sizeof s->state_json, "{\"passes_run\":%u}", s->passes_run);
    return s->state_json;
}
