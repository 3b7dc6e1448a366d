/*
 * helper_test_engine.c — an engine written with engine/helpers/ti_helper.h that uses every part
 * of the helper (options of each type, an injectable boundary with an input-bound extent and one
 * with a pass-dependent extent, a strided record, extra session state), driven through the ABI by
 * tests/helper_driver.c under ASan + UBSan.
 *
 * Input x f32 [N]. Pass p: s = gain * x (+1 in element 0 when perturb.flip), injectable;
 * w = the first p + 1 values of s (T = p + 1), injectable; pair [2, N] = (s, -s) stored
 * column-major; total = sum of w (f64 [1]).
 */
#include "ti_helper.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IN_X };
enum { B_SCALED, B_WINDOW, B_PAIR, B_TOTAL };
enum { OPT_GAIN, OPT_FLIP, OPT_LABEL };

static const tih_input INPUTS[] = {{"x", TI_F32, TIH_SHAPE(TIH_SYM("N")), true, "input \"vector\""}};
static const tih_boundary BOUNDARIES[] = {
    {"t.scaled", NULL, TI_F32, TIH_SHAPE(TIH_SYM("N")), NULL, true, "gain * x"},
    {"t.window", NULL, TI_F32, TIH_SHAPE(TIH_SYM("T")), NULL, true, "first pass+1 values"},
    {"t.pair", NULL, TI_F32, TIH_SHAPE(TIH_DIM(2), TIH_SYM("N")), NULL, false, "(s, -s), column-major"},
    {"t.total", "sum", TI_F64, TIH_SHAPE(TIH_DIM(1)), "every_pass", false, "sum of the window"},
};
static const tih_option OPTIONS[] = {
    {"gain", TIH_INT, "2", "scale"},
    {"perturb.flip", TIH_BOOL, "0", "adds 1 to element 0"},
    {"label", TIH_STRING, "plain", "a label shown in the session state"},
};

typedef struct state { float *s, *pair; } state;

static void test_close(tih_session *ses) {
    state *st = tih_state(ses);
    free(st->s);
    free(st->pair);
}

static ti_status test_pass(tih_session *ses) {
    state *st = tih_state(ses);
    const tih_tensor *x = tih_input_tensor(ses, IN_X);
    int64_t n = x->shape[0], t = tih_pass_index(ses) + 1;
    if (t > n) return tih_fail(ses, TI_ERR_STATE, "pass %u: only %lld values", tih_pass_index(ses), (long long)n);
    free(st->s);
    free(st->pair);
    st->s = malloc((size_t)n * sizeof(float));
    st->pair = malloc((size_t)n * 2 * sizeof(float));
    if (!st->s || !st->pair) return tih_fail(ses, TI_ERR_OUT_OF_MEMORY, "out of memory");
    const float *xv = x->data;
    for (int64_t i = 0; i < n; i++) st->s[i] = (float)tih_option_int(ses, OPT_GAIN) * xv[i];
    if (tih_option_bool(ses, OPT_FLIP)) st->s[0] += 1.0f;
    ti_status status = tih_emit_injectable(ses, B_SCALED, st->s, 1, &n);
    if (status != TI_OK) return status;
    float window[64];
    memcpy(window, st->s, (size_t)t * sizeof(float));
    if ((status = tih_emit_injectable(ses, B_WINDOW, window, 1, &t)) != TI_OK) return status;
    for (int64_t i = 0; i < n; i++) st->pair[2 * i] = st->s[i], st->pair[2 * i + 1] = -st->s[i];
    const int64_t pair_shape[2] = {2, n}, pair_strides[2] = {1, 2};
    if ((status = tih_emit_strided(ses, B_PAIR, st->pair, 2, pair_shape, pair_strides)) != TI_OK) return status;
    double total = 0.0;
    for (int64_t i = 0; i < t; i++) total += window[i];
    const int64_t one = 1;
    return tih_emit(ses, B_TOTAL, &total, 1, &one);
}

static ti_status test_reset(tih_session *ses) {
    (void)ses;
    return TI_OK;
}

static void test_state(tih_session *ses, char *out, size_t capacity) {
    snprintf(out, capacity, "\"label\":\"%s\"", tih_option_string(ses, OPT_LABEL));
}

const tih_engine TIH_ENGINE = {
    .name = "helper-test", .version = "1", .build_id = "test", .model_json = "{\"width\":4}",
    .inputs = INPUTS, .input_count = 1, .boundaries = BOUNDARIES, .boundary_count = 4,
    .options = OPTIONS, .option_count = 3, .state_size = sizeof(state),
    .close = test_close, .pass = test_pass, .reset = test_reset, .state_json = test_state,
};
