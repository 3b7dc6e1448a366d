/*
 * Session state helpers shared by the ABI entry points and the pass: the state before prefill
 * (also what ti_reset returns to) and the per-pass injection store.
 */
#include <stdlib.h>
#include <string.h>

#include "session.h"

void session_initial_state(const ti_session *s, gen_state *state) {
    memset(state, 0, sizeof *state);
    state->next_mode = s->inputs.gen_config[2];
    state->left = state->next_mode == MODE_TEXT ? s->inputs.gen_config[0] : s->inputs.gen_config[1];
    state->last_output = OUTPUT_NONE;
    state->prng.seed = s->inputs.seed;
    state->prng.counter = 0;
    /* Conv carries start as zeros; the perturbation starts them as negative zeros. */
    float zero = s->options.on[OPT_CARRY_INIT_NEGATIVE_ZERO] ? -0.0f : 0.0f;
    for (int l = 0; l < M_LAYERS; l++)
        for (int i = 0; i < M_CARRY * M_D; i++) state->carry[l][i] = zero;
}

void session_clear_injections(ti_session *s) {
    for (int i = 0; i < CAT_COUNT; i++) {
        if (s->injections[i] == NULL) continue;
        free(s->injections[i]->data);
        free(s->injections[i]);
        s->injections[i] = NULL;
    }
}
