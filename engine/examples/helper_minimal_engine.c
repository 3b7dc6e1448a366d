/*
 * helper_minimal_engine.c — engine/examples/minimal_engine.c written with the helper
 * (engine/helpers/ti_helper.h): the same model, catalogue and records; ti_helper.c does the ABI.
 *
 * Model: one input vector x (f32 [N]). Prefill computes y = 2x and its sum; every decode
 * pass computes y = y + 1 and its sum. Boundaries: "toy.y" (f32 [N]) and "toy.sum" (f32 [1]).
 */
#include "ti_helper.h"

#include <stdlib.h>
#include <string.h>

enum { IN_X };
enum { B_Y, B_SUM };

static const tih_input INPUTS[] = {{"x", TI_F32, TIH_SHAPE(TIH_SYM("N")), true, "input vector"}};
static const tih_boundary BOUNDARIES[] = {
    {"toy.y", "toy", TI_F32, TIH_SHAPE(TIH_SYM("N")), "every_pass", false, "state"},
    {"toy.sum", "toy", TI_F32, TIH_SHAPE(TIH_DIM(1)), "every_pass", false, "sum of the state"},
};

typedef struct minimal { float *y; } minimal; /* the state, N values, allocated at prefill */

static void minimal_close(tih_session *s) { free(((minimal *)tih_state(s))->y); }

static ti_status minimal_pass(tih_session *s) {
    minimal *m = tih_state(s);
    const tih_tensor *x = tih_input_tensor(s, IN_X);
    const int64_t n = x->shape[0];
    float scale = 1.0f, offset = 1.0f, sum = 0.0f;
    if (tih_pass_index(s) == 0) {
        free(m->y);
        if ((m->y = malloc((size_t)x->byte_length)) == NULL) return tih_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(m->y, x->data, (size_t)x->byte_length);
        scale = 2.0f, offset = 0.0f;
    }
    for (int64_t i = 0; i < n; i++) sum += m->y[i] = m->y[i] * scale + offset;
    const int64_t one = 1;
    ti_status status = tih_emit(s, B_Y, m->y, 1, &n);
    return status == TI_OK ? tih_emit(s, B_SUM, &sum, 1, &one) : status;
}

const tih_engine TIH_ENGINE = {
    .name = "minimal-example", .version = "1.0.0", .build_id = "example",
    .inputs = INPUTS, .input_count = 1, .boundaries = BOUNDARIES, .boundary_count = 2,
    .state_size = sizeof(minimal), .close = minimal_close, .pass = minimal_pass,
};
