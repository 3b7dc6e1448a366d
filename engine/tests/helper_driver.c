/*
 * helper_driver.c — drives tests/helper_test_engine.c (built on engine/helpers/ti_helper.c)
 * through the trace ABI under ASan + UBSan and checks every service of the helper: the
 * catalogue JSON, input / option / injection checks with their statuses and messages, the
 * record callback and wanted filter, injection (own value recorded, injected value flows on,
 * pass-dependent extents checked, cleared after the pass), strided records, abort, reset and
 * the session state. Prints one line per failed check and "helper-driver: N checks, F failed".
 */
#include "trace_abi.h"

#include <stdio.h>
#include <string.h>

static int checks, failed;

#define CHECK(cond, ...)                                \
    do {                                                \
        checks++;                                       \
        if (!(cond)) {                                  \
            failed++;                                   \
            printf("FAIL line %d: ", __LINE__);         \
            printf(__VA_ARGS__);                        \
            printf("\n");                               \
        }                                               \
    } while (0)

typedef struct seen {
    int count;
    char names[32][32];
    float first[32];
    double total;
    int64_t strides[2];
    uint64_t bytes[32];
    int stop_at; /* stop at the record with this count, -1 never */
} seen;

static int on_record(void *user, const ti_record *r) {
    seen *s = user;
    if (s->count < 32) {
        snprintf(s->names[s->count], sizeof s->names[0], "%s", r->name);
        s->first[s->count] = r->dtype == TI_F32 ? *(const float *)r->data : 0.0f;
        s->bytes[s->count] = r->byte_length;
    }
    if (strcmp(r->name, "t.total") == 0) s->total = *(const double *)r->data;
    if (strcmp(r->name, "t.pair") == 0) s->strides[0] = r->strides[0], s->strides[1] = r->strides[1];
    s->count++;
    return s->count == s->stop_at;
}

int main(void) {
    const char *d = ti_describe();
    CHECK(strstr(d, "\"inputs\":[{\"name\":\"x\",\"dtype\":\"f32\",\"shape\":[\"N\"],\"required\":true,\"doc\":\"input \\\"vector\\\"\"}]") != NULL, "describe inputs: %s", d);
    CHECK(strstr(d, "{\"name\":\"t.pair\",\"stage\":\"t\",\"dtype\":\"f32\",\"shape\":[2,\"N\"],\"emit\":\"every_pass\",\"injectable\":false") != NULL, "describe pair: %s", d);
    CHECK(strstr(d, "\"stage\":\"sum\"") != NULL && strstr(d, "\"model\":{\"width\":4}") != NULL, "describe stage/model");
    CHECK(strstr(d, "{\"name\":\"gain\",\"type\":\"int\",\"default\":2,") != NULL && strstr(d, "\"type\":\"bool\",\"default\":false") != NULL &&
              strstr(d, "\"default\":\"plain\"") != NULL, "describe options: %s", d);
    CHECK(ti_abi_version() == TI_ABI_VERSION, "abi version");
    CHECK(strcmp(ti_status_string(TI_ERR_SHAPE), "TI_ERR_SHAPE") == 0 && strcmp(ti_status_string((ti_status)99), "TI_ERR_UNKNOWN_STATUS") == 0, "status strings");

    char err[128];
    CHECK(ti_open(NULL, NULL, NULL, err, sizeof err) == TI_ERR_INVALID_ARGUMENT, "open with out NULL");
    ti_session *s = NULL;
    CHECK(ti_open("{}", NULL, &s, err, sizeof err) == TI_OK && s != NULL, "open: %s", err);
    if (s == NULL) return 1;
    CHECK(ti_decode(s) == TI_ERR_STATE && strcmp(ti_last_error(s), "decode before prefill") == 0, "decode before prefill: %s", ti_last_error(s));
    CHECK(ti_prefill(s) == TI_ERR_STATE && strcmp(ti_last_error(s), "set input x before prefill") == 0, "required input: %s", ti_last_error(s));

    const float x[4] = {1, 2, 3, 4};
    const int64_t n4[1] = {4}, n3[1] = {3}, n2[1] = {2};
    CHECK(ti_set_input(s, "y", TI_F32, 1, n4, x, 16) == TI_ERR_UNKNOWN_NAME, "unknown input");
    CHECK(ti_set_input(s, "x", TI_F64, 1, n2, x, 16) == TI_ERR_SHAPE && strstr(ti_last_error(s), "dtype f64, the catalogue declares f32"), "input dtype: %s", ti_last_error(s));
    CHECK(ti_set_input(s, "x", TI_F32, 2, n4, x, 16) == TI_ERR_SHAPE && strstr(ti_last_error(s), "rank 2"), "input rank: %s", ti_last_error(s));
    CHECK(ti_set_input(s, "x", TI_F32, 1, n4, x, 12) == TI_ERR_SHAPE && strstr(ti_last_error(s), "12 bytes for 4 elements"), "input bytes: %s", ti_last_error(s));
    CHECK(ti_set_input(s, "x", TI_F32, 1, n4, NULL, 16) == TI_ERR_INVALID_ARGUMENT, "input data NULL");
    CHECK(ti_set_input(s, NULL, TI_F32, 1, n4, x, 16) == TI_ERR_INVALID_ARGUMENT, "input name NULL");
    CHECK(ti_set_input(s, "x", TI_F32, 1, n4, x, 16) == TI_OK, "input: %s", ti_last_error(s));

    CHECK(ti_set_option(s, "nope", "1") == TI_ERR_UNKNOWN_NAME, "unknown option");
    CHECK(ti_set_option(s, "gain", "2x") == TI_ERR_INVALID_ARGUMENT && strstr(ti_last_error(s), "expected an integer, found \"2x\""), "int option: %s", ti_last_error(s));
    CHECK(ti_set_option(s, "perturb.flip", "yes") == TI_ERR_INVALID_ARGUMENT, "bool option");
    CHECK(ti_set_option(s, "gain", "3") == TI_OK && ti_set_option(s, "label", "xy") == TI_OK, "options: %s", ti_last_error(s));

    CHECK(ti_inject(s, "t.pair", TI_F32, 2, n4, x, 32) == TI_ERR_INVALID_ARGUMENT && strstr(ti_last_error(s), "does not accept injection"), "inject non-injectable");
    CHECK(ti_inject(s, "t.nope", TI_F32, 1, n4, x, 16) == TI_ERR_UNKNOWN_NAME, "inject unknown");
    CHECK(ti_inject(s, "t.scaled", TI_I32, 1, n4, x, 16) == TI_ERR_SHAPE, "inject dtype");
    CHECK(ti_inject(s, "t.scaled", TI_F32, 1, n3, x, 12) == TI_ERR_SHAPE && strstr(ti_last_error(s), "symbol N is 4"), "inject bound extent: %s", ti_last_error(s));

    seen rec = {.stop_at = -1};
    CHECK(ti_set_record_callback(s, on_record, &rec) == TI_OK, "callback");
    CHECK(ti_prefill(s) == TI_OK, "prefill: %s", ti_last_error(s));
    CHECK(rec.count == 4 && strcmp(rec.names[0], "t.scaled") == 0 && strcmp(rec.names[3], "t.total") == 0, "prefill records %d", rec.count);
    CHECK(rec.first[0] == 3.0f && rec.total == 3.0, "prefill values %g %g", rec.first[0], rec.total);
    CHECK(rec.strides[0] == 1 && rec.strides[1] == 2 && rec.bytes[2] == 32, "strided record %lld %lld %llu", (long long)rec.strides[0], (long long)rec.strides[1], (unsigned long long)rec.bytes[2]);
    CHECK(ti_set_input(s, "x", TI_F32, 1, n4, x, 16) == TI_ERR_STATE, "input after prefill");

    /* Pass 1 computes T = 2: a window of 3 is refused when the pass reaches it, after the record. */
    const float w3[3] = {9, 9, 9};
    CHECK(ti_inject(s, "t.window", TI_F32, 1, n3, w3, 12) == TI_OK, "inject window: %s", ti_last_error(s));
    rec.count = 0;
    CHECK(ti_decode(s) == TI_ERR_SHAPE && strstr(ti_last_error(s), "injection at t.window: extent 0 is 3, this pass computes 2"), "pass extent: %s", ti_last_error(s));
    CHECK(rec.count == 2, "records before the refused injection: %d", rec.count);
    /* The refused injection was cleared with the pass: the same pass runs clean now. */
    rec.count = 0;
    CHECK(ti_decode(s) == TI_OK && rec.count == 4 && rec.total == 9.0, "decode after clear: %s %d %g", ti_last_error(s), rec.count, rec.total);

    /* Injection: the record shows the engine's own value; the injected one flows on. */
    const float inj[4] = {100, 200, 300, 400};
    CHECK(ti_inject(s, "t.scaled", TI_F32, 1, n4, inj, 16) == TI_OK, "inject scaled");
    rec.count = 0;
    CHECK(ti_decode(s) == TI_OK, "decode injected: %s", ti_last_error(s));
    CHECK(rec.first[0] == 3.0f && rec.first[1] == 100.0f && rec.total == 600.0, "own then injected: %g %g %g", rec.first[0], rec.first[1], rec.total);
    rec.count = 0;
    CHECK(ti_decode(s) == TI_OK && rec.first[1] == 3.0f, "injection cleared after its pass: %g", rec.first[1]);

    /* The wanted filter: only t.total; an unknown name is refused and changes nothing. */
    const char *only_total[1] = {"t.total"}, *bad[2] = {"t.scaled", "t.nope"};
    CHECK(ti_reset(s) == TI_OK, "reset");
    CHECK(ti_set_wanted(s, only_total, 1) == TI_OK, "wanted");
    CHECK(ti_set_wanted(s, bad, 2) == TI_ERR_UNKNOWN_NAME, "wanted unknown");
    rec.count = 0;
    CHECK(ti_prefill(s) == TI_OK && rec.count == 1 && strcmp(rec.names[0], "t.total") == 0, "filtered: %d %s", rec.count, rec.names[0]);
    CHECK(ti_set_wanted(s, NULL, 0) == TI_OK, "wanted all");

    /* The host stops the pass: TI_ERR_ABORTED naming where. */
    rec.count = 0;
    rec.stop_at = 2;
    CHECK(ti_decode(s) == TI_ERR_ABORTED && strstr(ti_last_error(s), "stopped by the host at t.window"), "abort: %s", ti_last_error(s));
    CHECK(strcmp(ti_session_state(s), "{\"passes_run\":1,\"label\":\"xy\"}") == 0,
          "state: %s", ti_session_state(s));

    CHECK(ti_set_option(s, "perturb.flip", "1") == TI_OK, "flip");
    rec.stop_at = -1;
    rec.count = 0;
    CHECK(ti_decode(s) == TI_OK && rec.first[0] == 4.0f, "perturbation option read: %g", rec.first[0]);
    CHECK(ti_last_error(NULL)[0] == '\0' && ti_session_state(NULL)[0] == '{', "NULL session");
    ti_close(s);
    ti_close(NULL);
    printf("helper-driver: %d checks, %d failed\n", checks, failed);
    return failed == 0 ? 0 : 1;
}
