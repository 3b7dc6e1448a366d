/*
 * bulk_engine.c — a synthetic trace ABI 1 engine for the capture-overhead benchmark: few, large
 * records (the reference engine emits ~105 small ones per pass), so the benchmark shows how the
 * cost of capturing scales with record size rather than record count.
 *
 * Input `prompt_tokens` (i32 [T], required; only its values seed the data). Every pass emits
 * `bulk.records` boundaries bulk.b0 .. bulk.b7 (f32 [R, 1024], R = option `bulk.rows`), each
 * filled by a small integer hash of (pass, boundary, element): about a nanosecond of work per
 * element, i.e. an engine that produces data far faster than a real model computes it, which
 * makes the capture's share of the pass look as large as it can. Options: `bulk.rows` (1..4096,
 * default 64: 256 KiB per record), `bulk.records` (1..8, default 8). The records are row-major
 * and valid only during the callback, like any engine's.
 */
#include "trace_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BULK_COLS 1024
#define BULK_MAX_ROWS 4096
#define BULK_MAX_RECORDS 8

struct ti_session {
    uint32_t seed;
    int have_input;
    int64_t rows;
    int records;
    uint32_t passes_run;
    float *data;
    ti_record_fn fn;
    void *user;
    char error[256];
    char state[128];
};

static const char *const bulk_names[BULK_MAX_RECORDS] = {"bulk.b0", "bulk.b1", "bulk.b2", "bulk.b3",
                                                          "bulk.b4", "bulk.b5", "bulk.b6", "bulk.b7"};

#define BULK_BOUNDARY(n)                                                                           \
    "{\"name\":\"bulk.b" #n "\",\"stage\":\"bulk\",\"dtype\":\"f32\",\"shape\":[\"R\",1024],"         \
    "\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"synthetic rows\"}"

static const char DESCRIPTION[] =
    "{\"abi_version\":1,"
    "\"engine\":{\"name\":\"bulk\",\"version\":\"0.1.0\",\"build_id\":\"testlib\"},"
    "\"model\":{\"cols\":1024},"
    "\"inputs\":[{\"name\":\"prompt_tokens\",\"dtype\":\"i32\",\"shape\":[\"T\"],\"required\":true,"
    "\"doc\":\"seeds the data\"}],"
    "\"boundaries\":[" BULK_BOUNDARY(0) "," BULK_BOUNDARY(1) "," BULK_BOUNDARY(2) "," BULK_BOUNDARY(3) ","
    BULK_BOUNDARY(4) "," BULK_BOUNDARY(5) "," BULK_BOUNDARY(6) "," BULK_BOUNDARY(7) "],"
    "\"options\":["
    "{\"name\":\"bulk.rows\",\"type\":\"int\",\"default\":64,\"doc\":\"rows R of every record (1..4096)\"},"
    "{\"name\":\"bulk.records\",\"type\":\"int\",\"default\":8,\"doc\":\"records per pass (1..8)\"}]}";

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }
TI_API const char *ti_describe(void) { return DESCRIPTION; }

#include "testlib_status.h"

#include "testlib_recording.h"

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out,
                         char *err, size_t err_capacity) {
    (void)config_json;
    (void)weights_path;
    if (out == NULL) return TI_ERR_INVALID_ARGUMENT;
    *out = NULL;
    ti_session *s = calloc(1, sizeof *s);
    if (s != NULL) s->data = malloc((size_t)BULK_MAX_ROWS * BULK_COLS * sizeof(float));
    if (s == NULL || s->data == NULL) {
        free(s);
        if (err != NULL && err_capacity > 0) snprintf(err, err_capacity, "out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    s->rows = 64;
    s->records = BULK_MAX_RECORDS;
    *out = s;
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    free(s->data);
    free(s);
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL || key == NULL || value == NULL) return TI_ERR_INVALID_ARGUMENT;
    char *end = NULL;
    long parsed = strtol(value, &end, 10);
    int valid = end != value && *end == '\0';
    if (strcmp(key, "bulk.rows") == 0) {
        if (!valid || parsed < 1 || parsed > BULK_MAX_ROWS) return testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "bulk.rows takes 1..4096");
        s->rows = parsed;
        return TI_OK;
    }
    if (strcmp(key, "bulk.records") == 0) {
        if (!valid || parsed < 1 || parsed > BULK_MAX_RECORDS) return testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "bulk.records takes 1..8");
        s->records = (int)parsed;
        return TI_OK;
    }
    return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "unknown option (bulk.rows, bulk.records)");
}

static ti_status bulk_pass(ti_session *s, uint32_t kind) {
    const int64_t count = s->rows * BULK_COLS;
    for (int b = 0; b < s->records; b++) {
        uint32_t h = s->seed ^ (s->passes_run * 0x9e3779b9u) ^ ((uint32_t)b * 0x85ebca6bu);
        for (int64_t i = 0; i < count; i++) {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            s->data[i] = (float)(h >> 8) * (1.0f / 16777216.0f);
        }
        if (s->fn == NULL) continue;
        const int64_t shape[2] = {s->rows, BULK_COLS};
        const ti_record r = {s->passes_run, kind, bulk_names[b], TI_F32, 2, shape, NULL, s->data, (uint64_t)count * 4u};
        if (s->fn(s->user, &r) != 0) return testlib_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass");
    }
    s->passes_run++;
    return TI_OK;
}

#define TESTLIB_PASS bulk_pass
#include "testlib_session.h"
