/*
 * The exported trace ABI (include/trace_abi.h): argument checks, session lifetime, and the
 * dispatch into the modules. Every failure leaves a message naming what is at fault.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "depthformer.h"
#include "describe.h"
#include "json.h"
#include "records.h"
#include "session.h"

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }

TI_API const char *ti_describe(void) { return describe_document(); }

TI_API const char *ti_status_string(ti_status status) {
    switch (status) {
    case TI_OK: return "TI_OK";
    case TI_ERR_INVALID_ARGUMENT: return "TI_ERR_INVALID_ARGUMENT";
    case TI_ERR_IO: return "TI_ERR_IO";
    case TI_ERR_FORMAT: return "TI_ERR_FORMAT";
    case TI_ERR_STATE: return "TI_ERR_STATE";
    case TI_ERR_UNKNOWN_NAME: return "TI_ERR_UNKNOWN_NAME";
    case TI_ERR_SHAPE: return "TI_ERR_SHAPE";
    case TI_ERR_OUT_OF_MEMORY: return "TI_ERR_OUT_OF_MEMORY";
    case TI_ERR_ABORTED: return "TI_ERR_ABORTED";
    case TI_ERR_INTERNAL: return "TI_ERR_INTERNAL";
    }
    return "TI_ERR_UNKNOWN_STATUS";
}

/* Session calls start with a clean message, so ti_last_error() describes the latest call. */
static errbuf session_err(ti_session *s) {
    errbuf err = {s->last_error, sizeof s->last_error};
    err_clear(&err);
    return err;
}

/* A record callback that calls back into its own session would change state mid-pass. */
#define REFUSE_DURING_PASS(s, err, fn)                                                              \
    do {                                                                                            \
        if ((s)->in_pass)                                                                           \
            return err_fail(&(err), TI_ERR_STATE, "%s: called from inside a pass (record callback)", fn); \
    } while (0)

/* Reads the optional config: {"max_positions": n}. Unknown keys are refused so typos surface. */
static ti_status parse_config(const char *config_json, int64_t *max_positions, errbuf *err) {
    *max_positions = TI_DEFAULT_MAX_POSITIONS;
    if (config_json == NULL) return TI_OK;
    char msg[160];
    json_value *root = json_parse(config_json, strlen(config_json), msg, sizeof msg);
    if (root == NULL) return err_fail(err, TI_ERR_INVALID_ARGUMENT, "config: %s", msg);
    ti_status status = TI_OK;
    if (root->type != JSON_OBJECT) {
        status = err_fail(err, TI_ERR_INVALID_ARGUMENT, "config: expected a JSON object");
        goto done;
    }
    for (size_t i = 0; i < root->count; i++) {
        const json_value *v = &root->items[i];
        if (strcmp(root->keys[i], "max_positions") == 0) {
            if (v->type != JSON_NUMBER || !v->is_integer || v->integer < 1 || v->integer > TI_MAX_MAX_POSITIONS) {
                status = err_fail(err, TI_ERR_INVALID_ARGUMENT,
                                 "config: field max_positions must be an integer in [1, %d]", TI_MAX_MAX_POSITIONS);
                goto done;
            }
            *max_positions = v->integer;
        } else {
            status = err_fail(err, TI_ERR_INVALID_ARGUMENT, "config: unknown field \"%s\" (known: max_positions)",
                             root->keys[i]);
            goto done;
        }
    }
done:
    json_free(root);
    return status;
}

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out, char *err_text,
                         size_t err_capacity) {
    errbuf err = {err_text, err_capacity};
    err_clear(&err);
    if (out == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_open: out is NULL");
    *out = NULL;
    if (weights_path == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_open: weights_path is NULL");
    const catalogue *cat = catalogue_get();
    if (cat == NULL) return err_fail(&err, TI_ERR_INTERNAL, "ti_open: the boundary catalogue could not be built");
    int64_t max_positions;
    ti_status status = parse_config(config_json, &max_positions, &err);
    if (status != TI_OK) return status;

    ti_session *s = calloc(1, sizeof *s);
    if (s == NULL) return err_fail(&err, TI_ERR_OUT_OF_MEMORY, "ti_open: out of memory");
    s->cat = cat;
    s->max_positions = max_positions;
    inputs_init(&s->inputs);
    for (int i = 0; i < CAT_COUNT; i++) s->wanted[i] = true;
    status = weights_load(&s->weights, weights_path, &err);
    if (status != TI_OK) {
        ti_close(s);
        return status;
    }
    for (int l = 0; l < M_LAYERS && status == TI_OK; l++) {
        if (!model_layer_is_attn(l)) continue;
        size_t bytes = (size_t)max_positions * M_NKV * M_HD * sizeof(float);
        s->k_cache[l] = malloc(bytes);
        s->v_cache[l] = malloc(bytes);
        if (s->k_cache[l] == NULL || s->v_cache[l] == NULL)
            status = err_fail(&err, TI_ERR_OUT_OF_MEMORY, "ti_open: out of memory for a KV cache of %lld positions",
                             (long long)max_positions);
    }
    if (status == TI_OK) status = depthformer_reserve(s, M_NCB, 0, &err);
    if (status != TI_OK) {
        ti_close(s);
        return status;
    }
    session_initial_state(s, &s->state);
    *out = s;
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    session_clear_injections(s);
    inputs_free(&s->inputs);
    weights_free(&s->weights);
    for (int l = 0; l < M_LAYERS; l++) {
        free(s->k_cache[l]);
        free(s->v_cache[l]);
    }
    for (int j = 0; j < M_DLAYERS; j++) {
        free(s->depth_k[j]);
        free(s->depth_v[j]);
    }
    free(s);
}

TI_API const char *ti_last_error(const ti_session *s) {
    return s == NULL ? "ti_last_error: session is NULL" : s->last_error;
}

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape,
                              const void *data, uint64_t byte_length) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_set_input");
    if (name == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_set_input: name is NULL");
    if (s->state.prefilled)
        return err_fail(&err, TI_ERR_STATE, "input %s: inputs must be set before prefill (call ti_reset first)", name);
    ti_status status = inputs_set(&s->inputs, name, dtype, rank, shape, data, byte_length, &err);
    /* Seed and start mode are part of the state before prefill: keep ti_session_state truthful. */
    if (status == TI_OK) session_initial_state(s, &s->state);
    return status;
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_set_option");
    if (key == NULL || value == NULL)
        return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_set_option: %s is NULL", key == NULL ? "key" : "value");
    ti_status status = options_set(&s->options, key, value, &err);
    if (status == TI_OK && !s->state.prefilled) session_initial_state(s, &s->state);
    return status;
}

TI_API ti_status ti_set_record_callback(ti_session *s, ti_record_fn fn, void *user) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_set_record_callback");
    s->record_fn = fn;
    s->record_user = user;
    return TI_OK;
}

TI_API ti_status ti_set_wanted(ti_session *s, const char *const *names, uint32_t count) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_set_wanted");
    if (count > 0 && names == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_set_wanted: names is NULL");
    /* Validate every name before changing anything, so a bad list leaves the old set in place. */
    bool wanted[CAT_COUNT];
    for (int i = 0; i < CAT_COUNT; i++) wanted[i] = count == 0;
    for (uint32_t i = 0; i < count; i++) {
        if (names[i] == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_set_wanted: names[%u] is NULL", i);
        int id = catalogue_find(s->cat, names[i]);
        if (id < 0) return err_fail(&err, TI_ERR_UNKNOWN_NAME, "ti_set_wanted: unknown boundary %s", names[i]);
        wanted[id] = true;
    }
    memcpy(s->wanted, wanted, sizeof wanted);
    return TI_OK;
}

TI_API ti_status ti_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank, const int64_t *shape,
                           const void *data, uint64_t byte_length) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_inject");
    if (boundary == NULL) return err_fail(&err, TI_ERR_INVALID_ARGUMENT, "ti_inject: boundary is NULL");
    return rec_inject(s, boundary, dtype, rank, shape, data, byte_length, &err);
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_prefill");
    return pass_run(s, TI_PASS_PREFILL);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_decode");
    return pass_run(s, TI_PASS_DECODE);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    errbuf err = session_err(s);
    REFUSE_DURING_PASS(s, err, "ti_reset");
    session_initial_state(s, &s->state);
    return TI_OK;
}

static const char *mode_name(int32_t mode) { return mode == MODE_AUDIO ? "\"audio\"" : "\"text\""; }

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{\"error\":\"session is NULL\"}";
    const gen_state *g = &s->state;
    snprintf(s->state_json, sizeof s->state_json,
             "{\"passes_run\":%u,\"cursor\":%lld,\"next_mode\":%s,\"last_output\":%s,\"modality_left\":%d,"
             "\"text_done\":%s,\"ended\":%s,\"prng_counter\":%llu}",
             g->passes_run, (long long)g->cursor, mode_name(g->next_mode),
             g->last_output == OUTPUT_NONE ? "null" : mode_name(g->last_output), (int)g->left,
             g->text_done ? "true" : "false", g->ended ? "true" : "false", (unsigned long long)g->prng.counter);
    return s->state_json;
}
