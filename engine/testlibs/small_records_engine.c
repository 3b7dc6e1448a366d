/*
 * small_records_engine.c — a synthetic trace ABI 1 engine for the capture-overhead benchmark: many
 * small records per pass. The reference engine's ~105 records of ~299 bytes a pass cost a capture
 * less than that pass's own CPU time varies between repetitions, so the benchmark cannot resolve
 * what a capture costs per small record there; 4,096 records of 300 bytes a pass (1.2 MB) make the
 * capture's per-record cost far larger than that noise.
 *
 * Input `prompt_tokens` (i32 [T], required; only its values seed the data). Every pass emits the
 * boundaries small.r0000, small.r0001, ... in that order, `small.records` of them (1..4096, default
 * 4096), each f32 [E] (E = option `small.elements`, 1..4096, default 75: 300 bytes), filled by
 * xorshift32 from a per-(pass, record) state (a few cycles per element: an engine that produces
 * data far faster than a real model, so the capture's share of the pass looks as large as it can):
 *   h = seed ^ (pass * 0x9e3779b9) ^ ((record + 1) * 0x85ebca6b), 1 if that is 0;
 *   per element: h ^= h << 13; h ^= h >> 17; h ^= h << 5; value = (h >> 8) / 2^24 (exact in f32).
 * seed is FNV-1a over the tokens' int32 values. tests/engine-host/small-records-capture.test.ts
 * computes the same values to check a capture. The records are row-major and valid only during
 * the callback, like any engine's.
 */
#include "trace_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_MAX_RECORDS 4096
#define SMALL_MAX_ELEMENTS 4096
#define SMALL_NAME_BYTES 16 /* "small.r4095" and its NUL */

struct ti_session {
    uint32_t seed;
    int have_input;
    int records;
    int64_t elements;
    uint32_t passes_run;
    float data[SMALL_MAX_ELEMENTS];
    ti_record_fn fn;
    void *user;
    char error[256];
    char state[128];
};

static char names[SMALL_MAX_RECORDS][SMALL_NAME_BYTES];

#define BOUNDARY_TEXT                                                                             \
    "{\"name\":\"%s\",\"stage\":\"small\",\"dtype\":\"f32\",\"shape\":[\"E\"],"                      \
    "\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"synthetic values\"}"
/* ~130 bytes a boundary, 4,096 of them, and the fixed text around them. */
static char description[SMALL_MAX_RECORDS * 160 + 2048];

static void build_description(void) {
    size_t at = 0;
#define PUT(...) at += (size_t)snprintf(description + at, sizeof description - at, __VA_ARGS__)
    PUT("{\"abi_version\":1,\"engine\":{\"name\":\"small_records\",\"version\":\"0.1.0\",\"build_id\":\"testlib\"},"
        "\"model\":{\"shape_symbols\":{\"E\":\"elements of every record (option small.elements)\"}},"
        "\"inputs\":[{\"name\":\"prompt_tokens\",\"dtype\":\"i32\",\"shape\":[\"T\"],\"required\":true,"
        "\"doc\":\"seeds the data\"}],\"boundaries\":[");
    for (int i = 0; i < SMALL_MAX_RECORDS; i++) {
        snprintf(names[i], sizeof names[i], "small.r%04d", i);
        PUT("%s" BOUNDARY_TEXT, i ? "," : "", names[i]);
    }
    PUT("],\"options\":["
        "{\"name\":\"small.records\",\"type\":\"int\",\"default\":4096,\"doc\":\"records per pass (1..4096)\"},"
        "{\"name\":\"small.elements\",\"type\":\"int\",\"default\":75,\"doc\":\"f32 elements E of every record (1..4096)\"}]}");
#undef PUT
}

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }
TI_API const char *ti_describe(void) {
    if (description[0] == '\0') build_description();
    return description;
}

#include "testlib_status.h"

#include "testlib_recording.h"

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out, char *err, size_t err_capacity) {
    (void)config_json;
    (void)weights_path;
    if (out == NULL) return TI_ERR_INVALID_ARGUMENT;
    ti_describe(); /* the names */
    ti_session *s = calloc(1, sizeof *s);
    *out = s;
    if (s == NULL) {
        if (err != NULL && err_capacity > 0) snprintf(err, err_capacity, "out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    s->records = SMALL_MAX_RECORDS;
    s->elements = 75;
    return TI_OK;
}

TI_API void ti_close(ti_session *s) { free(s); }

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL || key == NULL || value == NULL) return TI_ERR_INVALID_ARGUMENT;
    char *end = NULL;
    long parsed = strtol(value, &end, 10);
    int valid = end != value && *end == '\0';
    if (strcmp(key, "small.records") == 0) {
        if (!valid || parsed < 1 || parsed > SMALL_MAX_RECORDS) return testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "small.records takes 1..4096");
        s->records = (int)parsed;
        return TI_OK;
    }
    if (strcmp(key, "small.elements") == 0) {
        if (!valid || parsed < 1 || parsed > SMALL_MAX_ELEMENTS) return testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "small.elements takes 1..4096");
        s->elements = parsed;
        return TI_OK;
    }
    return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "unknown option (small.records, small.elements)");
}

static ti_status small_pass(ti_session *s, uint32_t kind) {
    const int64_t shape[1] = {s->elements};
    for (int b = 0; b < s->records; b++) {
        uint32_t h = s->seed ^ (s->passes_run * 0x9e3779b9u) ^ ((uint32_t)(b + 1) * 0x85ebca6bu);
        if (h == 0) h = 1; /* xorshift stays at 0 */
        for (int64_t i = 0; i < s->elements; i++) {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            s->data[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
        }
        if (s->fn == NULL) continue;
        const ti_record r = {s->passes_run, kind, names[b], TI_F32, 1, shape, NULL, s->data, (uint64_t)s->elements * 4u};
        if (s->fn(s->user, &r) != 0) return testlib_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass");
    }
    s->passes_run++;
    return TI_OK;
}

#define TESTLIB_PASS small_pass
#include "testlib_session.h"
