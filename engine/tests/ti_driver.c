/*
 * ti_driver: drives the reference engine through the trace ABI the way the inspector does, under
 * AddressSanitizer + UBSan, and checks every record against the catalogue the engine describes.
 *
 *   ti_driver <weights.safetensors> <inputs.safetensors> <decode_passes> [key=value options...]
 *
 * Prints "pass <i> <kind> <mode> records=<n>" per pass of the main run on stdout, diagnostics on
 * stderr, and exits 0 only when every check held.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/json.h"
#include "../src/safetensors.h"
#include "trace_abi.h"

#define MAX_BOUNDARIES 512

static int g_failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fprintf(stderr, "FAIL: ");
    vfprintf(stderr, fmt, args);
    fprintf(stderr, "\n");
    va_end(args);
    g_failures++;
}

/* ---- the catalogue as ti_describe() declares it ------------------------------------------- */

typedef struct declared {
    char name[64];
    uint32_t dtype;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK]; /* -1 for "T" */
    char emit[16];
    bool injectable;
} declared;

typedef struct declared_catalogue {
    declared items[MAX_BOUNDARIES];
    int count;
} declared_catalogue;

static int dtype_from_abi_name(const char *name) {
    for (uint32_t d = 0; d <= TI_C64; d++)
        if (strcmp(ti_dtype_abi_name(d), name) == 0) return (int)d;
    return -1;
}

static bool load_catalogue(declared_catalogue *cat) {
    const char *doc = ti_describe();
    if (doc == NULL) {
        fail("ti_describe returned NULL");
        return false;
    }
    char msg[160];
    json_value *root = json_parse(doc, strlen(doc), msg, sizeof msg);
    if (root == NULL) {
        fail("ti_describe is not valid JSON: %s", msg);
        return false;
    }
    bool ok = true;
    const json_value *abi = json_member(root, "abi_version");
    const json_value *engine = json_member(root, "engine");
    const json_value *boundaries = json_member(root, "boundaries");
    if (abi == NULL || !abi->is_integer || abi->integer != (int64_t)TI_ABI_VERSION) ok = false;
    if (engine == NULL || json_member(engine, "name") == NULL || json_member(engine, "build_id") == NULL) ok = false;
    if (json_member(root, "model") == NULL || json_member(root, "inputs") == NULL ||
        json_member(root, "options") == NULL)
        ok = false;
    if (boundaries == NULL || boundaries->type != JSON_ARRAY || boundaries->count > MAX_BOUNDARIES) ok = false;
    if (!ok) {
        fail("ti_describe lacks abi_version/engine/model/inputs/boundaries/options");
        json_free(root);
        return false;
    }
    cat->count = 0;
    for (size_t i = 0; i < boundaries->count && ok; i++) {
        const json_value *b = &boundaries->items[i];
        const json_value *name = json_member(b, "name"), *dtype = json_member(b, "dtype");
        const json_value *shape = json_member(b, "shape"), *emit = json_member(b, "emit");
        const json_value *inj = json_member(b, "injectable"), *stage = json_member(b, "stage");
        const json_value *bdoc = json_member(b, "doc");
        if (name == NULL || name->type != JSON_STRING || dtype == NULL || dtype->type != JSON_STRING ||
            shape == NULL || shape->type != JSON_ARRAY || shape->count > TI_MAX_RANK || emit == NULL ||
            emit->type != JSON_STRING || inj == NULL || inj->type != JSON_BOOL || stage == NULL ||
            stage->type != JSON_STRING || bdoc == NULL || bdoc->type != JSON_STRING ||
            strlen(name->string) >= sizeof cat->items[0].name) {
            fail("ti_describe boundary %zu is malformed", i);
            ok = false;
            break;
        }
        declared *d = &cat->items[cat->count++];
        snprintf(d->name, sizeof d->name, "%s", name->string);
        int code = dtype_from_abi_name(dtype->string);
        if (code < 0) {
            fail("boundary %s: unknown dtype %s", d->name, dtype->string);
            ok = false;
        }
        d->dtype = (uint32_t)code;
        d->rank = (uint32_t)shape->count;
        for (size_t k = 0; k < shape->count; k++) {
            const json_value *dim = &shape->items[k];
            if (dim->type == JSON_STRING && strcmp(dim->string, "T") == 0)
                d->shape[k] = -1;
            else if (dim->type == JSON_NUMBER && dim->is_integer && dim->integer >= 0)
                d->shape[k] = dim->integer;
            else {
                fail("boundary %s: bad shape entry", d->name);
                ok = false;
            }
        }
        snprintf(d->emit, sizeof d->emit, "%s", emit->string);
        d->injectable = inj->boolean;
        for (int j = 0; j + 1 < cat->count; j++)
            if (strcmp(cat->items[j].name, d->name) == 0) {
                fail("boundary %s declared twice", d->name);
                ok = false;
            }
    }
    json_free(root);
    return ok;
}

static int find_declared(const declared_catalogue *cat, const char *name) {
    for (int i = 0; i < cat->count; i++)
        if (strcmp(cat->items[i].name, name) == 0) return i;
    return -1;
}

/* ---- the record callback ---------------------------------------------------------------- */

typedef struct observer {
    const declared_catalogue *cat;
    uint32_t pass_index;
    uint32_t pass_kind;
    int64_t expected_T;
    int last_id;
    size_t records;
    int seen[MAX_BOUNDARIES];
    uint64_t hash;
    int abort_at;          /* catalogue id whose record makes the callback return 1, or -1 */
    bool subset;           /* a wanted subset is active: only those may arrive */
    bool wanted[MAX_BOUNDARIES];
    int32_t text_token;    /* last sampler.text.token seen, -1 if none */
    int32_t cb0_code;      /* last depth.cb0.sampler.token seen, -1 if none */
    float embed_row0[64];  /* backbone.embed row 0 */
    ti_session *reenter;   /* when set, the callback tries ti_decode on it once (must be refused) */
    ti_status reenter_status;
} observer;

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

static void observer_start(observer *o, uint32_t index, uint32_t kind, int64_t T) {
    o->pass_index = index;
    o->pass_kind = kind;
    o->expected_T = T;
    o->last_id = -1;
    o->records = 0;
    memset(o->seen, 0, sizeof o->seen);
    o->hash = UINT64_C(0xcbf29ce484222325);
    o->text_token = -1;
    o->cb0_code = -1;
}

static int on_record(void *user, const ti_record *r) {
    observer *o = user;
    o->records++;
    if (r == NULL || r->name == NULL) {
        fail("record without a name");
        return 0;
    }
    int id = find_declared(o->cat, r->name);
    if (id < 0) {
        fail("record %s is not in the catalogue", r->name);
        return 0;
    }
    const declared *d = &o->cat->items[id];
    if (id <= o->last_id) fail("record %s arrives out of catalogue order", r->name);
    o->last_id = id;
    o->seen[id]++;
    if (o->subset && !o->wanted[id]) fail("record %s arrived although it was not wanted", r->name);
    if (r->pass_index != o->pass_index || r->pass_kind != o->pass_kind)
        fail("record %s: pass %u kind %u, expected pass %u kind %u", r->name, r->pass_index, r->pass_kind,
             o->pass_index, o->pass_kind);
    if (r->dtype != d->dtype) fail("record %s: dtype %u, declared %u", r->name, r->dtype, d->dtype);
    if (r->rank != d->rank) {
        fail("record %s: rank %u, declared %u", r->name, r->rank, d->rank);
        return 0;
    }
    uint64_t count = 1;
    int64_t stride = 1;
    for (int k = (int)r->rank - 1; k >= 0; k--) {
        int64_t want = d->shape[k] < 0 ? o->expected_T : d->shape[k];
        if (r->shape[k] != want)
            fail("record %s: shape[%d] = %" PRId64 ", expected %" PRId64, r->name, k, r->shape[k], want);
        if (r->strides[k] != stride)
            fail("record %s: strides[%d] = %" PRId64 ", expected row-major %" PRId64, r->name, k, r->strides[k],
                 stride);
        stride *= r->shape[k];
        count *= (uint64_t)r->shape[k];
    }
    uint64_t bytes = count * ti_dtype_size(r->dtype);
    if (r->byte_length != bytes)
        fail("record %s: byte_length %" PRIu64 ", expected %" PRIu64, r->name, r->byte_length, bytes);
    if (r->data == NULL && bytes > 0) {
        fail("record %s: data is NULL", r->name);
        return 0;
    }
    o->hash = fnv1a(o->hash, r->name, strlen(r->name));
    o->hash = fnv1a(o->hash, r->data, (size_t)r->byte_length);
    if (strcmp(r->name, "sampler.text.token") == 0) memcpy(&o->text_token, r->data, sizeof(int32_t));
    if (strcmp(r->name, "depth.cb0.sampler.token") == 0) memcpy(&o->cb0_code, r->data, sizeof(int32_t));
    if (strcmp(r->name, "backbone.embed") == 0) memcpy(o->embed_row0, r->data, sizeof o->embed_row0);
    if (o->reenter != NULL) {
        o->reenter_status = ti_decode(o->reenter);
        o->reenter = NULL;
    }
    return id == o->abort_at ? 1 : 0;
}

/* Every boundary whose emit rule applies to this pass arrived exactly once, and no other. */
static void check_emit_rules(const observer *o, const char *mode) {
    if (o->subset) return;
    for (int i = 0; i < o->cat->count; i++) {
        const declared *d = &o->cat->items[i];
        bool expected = strcmp(d->emit, "every_pass") == 0 ||
                        (strcmp(d->emit, "prefill") == 0 && o->pass_kind == TI_PASS_PREFILL) ||
                        (strcmp(d->emit, "text_out") == 0 && strcmp(mode, "text") == 0) ||
                        (strcmp(d->emit, "audio_out") == 0 && strcmp(mode, "audio") == 0);
        if (o->seen[i] != (expected ? 1 : 0))
            fail("pass %u (%s): boundary %s arrived %d times, expected %d", o->pass_index, mode, d->name, o->seen[i],
                 expected ? 1 : 0);
    }
}

/* ---- session state ------------------------------------------------------------------------- */

typedef struct state_view {
    int64_t passes_run;
    int64_t cursor;
    char next_mode[8];
    char last_output[8];
    int64_t count;
    int64_t prng_counter;
} state_view;

static bool read_state(ti_session *s, state_view *v) {
    const char *text = ti_session_state(s);
    char msg[160];
    json_value *root = text ? json_parse(text, strlen(text), msg, sizeof msg) : NULL;
    if (root == NULL) {
        fail("ti_session_state is not JSON: %s", text ? text : "(NULL)");
        return false;
    }
    const json_value *p = json_member(root, "passes_run"), *c = json_member(root, "cursor");
    const json_value *n = json_member(root, "next_mode"), *l = json_member(root, "last_output");
    const json_value *k = json_member(root, "count"), *r = json_member(root, "prng_counter");
    bool ok = p && p->is_integer && c && c->is_integer && n && n->type == JSON_STRING && l &&
              (l->type == JSON_STRING || l->type == JSON_NULL) && k && k->is_integer && r && r->is_integer;
    if (ok) {
        v->passes_run = p->integer;
        v->cursor = c->integer;
        snprintf(v->next_mode, sizeof v->next_mode, "%s", n->string);
        snprintf(v->last_output, sizeof v->last_output, "%s", l->type == JSON_NULL ? "null" : l->string);
        v->count = k->integer;
        v->prng_counter = r->integer;
    } else {
        fail("ti_session_state lacks a field: %s", text);
    }
    json_free(root);
    return ok;
}

/* ---- helpers ---------------------------------------------------------------------------- */

static void expect_status(ti_status got, ti_status want, const char *what, const char *message,
                          const char *must_contain) {
    if (got != want) {
        fail("%s: got %s, expected %s (%s)", what, ti_status_string(got), ti_status_string(want),
             message ? message : "");
        return;
    }
    if (must_contain != NULL && (message == NULL || strstr(message, must_contain) == NULL))
        fail("%s: message \"%s\" does not name \"%s\"", what, message ? message : "", must_contain);
    else
        fprintf(stderr, "ok   %s -> %s: %s\n", what, ti_status_string(got), message ? message : "");
}

typedef struct input_tensor {
    char name[64];
    uint32_t dtype;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK];
    void *data;
    uint64_t bytes;
} input_tensor;

typedef struct input_set {
    input_tensor items[16];
    int count;
    int64_t prompt_len;
} input_set;

static bool load_inputs(const char *path, input_set *set) {
    st_file file;
    char msg[512];
    ti_errbuf err = {msg, sizeof msg};
    memset(set, 0, sizeof *set);
    if (st_open(&file, path, "inputs file", &err) != TI_OK) {
        fail("%s", msg);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; i < file.count && ok; i++) {
        const st_tensor *t = &file.tensors[i];
        if (set->count == 16 || strlen(t->name) >= sizeof set->items[0].name) {
            fail("inputs file %s: too many inputs or a name too long", path);
            ok = false;
            break;
        }
        input_tensor *in = &set->items[set->count++];
        snprintf(in->name, sizeof in->name, "%s", t->name);
        in->dtype = (uint32_t)t->dtype;
        in->rank = t->rank;
        memcpy(in->shape, t->shape, sizeof in->shape);
        in->bytes = t->end - t->begin;
        in->data = malloc(in->bytes ? in->bytes : 1);
        if (in->data == NULL || st_read(&file, t, in->data, &err) != TI_OK) {
            fail("inputs file %s: cannot read %s", path, t->name);
            ok = false;
        }
        if (strcmp(t->name, "prompt_tokens") == 0 && t->rank == 1) set->prompt_len = t->shape[0];
    }
    st_close(&file);
    return ok;
}

static void free_inputs(input_set *set) {
    for (int i = 0; i < set->count; i++) free(set->items[i].data);
}

static bool apply_inputs(ti_session *s, const input_set *set) {
    for (int i = 0; i < set->count; i++) {
        const input_tensor *in = &set->items[i];
        ti_status st = ti_set_input(s, in->name, in->dtype, in->rank, in->shape, in->data, in->bytes);
        if (st != TI_OK) {
            fail("ti_set_input %s: %s: %s", in->name, ti_status_string(st), ti_last_error(s));
            return false;
        }
    }
    return true;
}

static bool apply_options(ti_session *s, int argc, char **argv) {
    for (int i = 4; i < argc; i++) {
        char key[128];
        const char *eq = strchr(argv[i], '=');
        if (eq == NULL || (size_t)(eq - argv[i]) >= sizeof key) {
            fail("option %s is not key=value", argv[i]);
            return false;
        }
        memcpy(key, argv[i], (size_t)(eq - argv[i]));
        key[eq - argv[i]] = '\0';
        ti_status st = ti_set_option(s, key, eq + 1);
        if (st != TI_OK) {
            fail("ti_set_option %s: %s: %s", argv[i], ti_status_string(st), ti_last_error(s));
            return false;
        }
    }
    return true;
}

/* Runs one pass with the observer armed; returns the status and fills mode from the state. */
static ti_status observed_pass(ti_session *s, observer *o, bool prefill, int64_t T, char *mode, size_t mode_cap) {
    state_view before;
    if (!read_state(s, &before)) return TI_ERR_INTERNAL;
    observer_start(o, prefill ? 0 : (uint32_t)before.passes_run, prefill ? TI_PASS_PREFILL : TI_PASS_DECODE, T);
    ti_status st = prefill ? ti_prefill(s) : ti_decode(s);
    state_view after;
    if (!read_state(s, &after)) return TI_ERR_INTERNAL;
    snprintf(mode, mode_cap, "%s", after.last_output);
    if (st == TI_OK) {
        if (after.passes_run != (prefill ? 1 : before.passes_run + 1))
            fail("passes_run %" PRId64 " after pass %u", after.passes_run, o->pass_index);
        check_emit_rules(o, mode);
    } else if (after.passes_run != before.passes_run || after.cursor != before.cursor ||
               after.prng_counter != before.prng_counter) {
        fail("a failed pass changed the session state");
    }
    return st;
}

static void open_error_paths(const char *weights_path, const char *inputs_path) {
    char err[512];
    ti_session *s = (ti_session *)1;
    ti_status st = ti_open(NULL, "/nonexistent/dir/weights.safetensors", &s, err, sizeof err);
    expect_status(st, TI_ERR_IO, "open a missing weights file", err, "/nonexistent/dir/weights.safetensors");
    if (s != NULL) fail("ti_open left *out set on failure");
    st = ti_open("{\"max_positions\": 0}", weights_path, &s, err, sizeof err);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "config max_positions 0", err, "max_positions");
    st = ti_open("{\"max_position\": 8}", weights_path, &s, err, sizeof err);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "config with an unknown key", err, "max_position");
    st = ti_open("{not json", weights_path, &s, err, sizeof err);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "malformed config", err, "config");
    st = ti_open(NULL, inputs_path, &s, err, sizeof err);
    expect_status(st, TI_ERR_FORMAT, "inputs file opened as weights", err, "backbone.embed_tokens");
    char tiny[8];
    st = ti_open(NULL, "/nonexistent", &s, tiny, sizeof tiny);
    if (st != TI_ERR_IO || strlen(tiny) != sizeof tiny - 1) fail("a small err buffer is not truncated safely");
    st = ti_open(NULL, "/nonexistent", &s, NULL, 0);
    if (st != TI_ERR_IO) fail("ti_open with a NULL err buffer: %s", ti_status_string(st));
}

static void session_error_paths(ti_session *s) {
    int32_t prompt[2] = {1, 2};
    int64_t shape1[1] = {2};
    int64_t shape_bad[1] = {4};
    ti_status st = ti_decode(s);
    expect_status(st, TI_ERR_STATE, "decode before prefill", ti_last_error(s), "prefill");
    st = ti_set_input(s, "prompt_tokenz", TI_I32, 1, shape1, prompt, sizeof prompt);
    expect_status(st, TI_ERR_UNKNOWN_NAME, "unknown input name", ti_last_error(s), "prompt_tokenz");
    st = ti_set_input(s, "prompt_tokens", TI_F32, 1, shape1, prompt, sizeof prompt);
    expect_status(st, TI_ERR_SHAPE, "prompt_tokens with dtype f32", ti_last_error(s), "prompt_tokens");
    st = ti_set_input(s, "gen_config", TI_I32, 1, shape_bad, prompt, 16);
    expect_status(st, TI_ERR_SHAPE, "gen_config with shape [4]", ti_last_error(s), "gen_config");
    st = ti_set_input(s, "prompt_tokens", TI_I32, 1, shape1, prompt, 4);
    expect_status(st, TI_ERR_SHAPE, "prompt_tokens with a short byte_length", ti_last_error(s), "prompt_tokens");
    int32_t bad_prompt[2] = {1, 160};
    st = ti_set_input(s, "prompt_tokens", TI_I32, 1, shape1, bad_prompt, sizeof bad_prompt);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "prompt token out of range", ti_last_error(s), "prompt_tokens");
    st = ti_prefill(s);
    expect_status(st, TI_ERR_STATE, "prefill without prompt_tokens", ti_last_error(s), "prompt_tokens");
    st = ti_set_option(s, "perturb.nope", "1");
    expect_status(st, TI_ERR_UNKNOWN_NAME, "unknown option", ti_last_error(s), "perturb.nope");
    st = ti_set_option(s, "perturb.nan_to_zero", "maybe");
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "bad option value", ti_last_error(s), "perturb.nan_to_zero");
    const char *names[1] = {"backbone.l9.out"};
    st = ti_set_wanted(s, names, 1);
    expect_status(st, TI_ERR_UNKNOWN_NAME, "unknown wanted boundary", ti_last_error(s), "backbone.l9.out");
    float row[64] = {0};
    int64_t shape_row[2] = {1, 64};
    st = ti_inject(s, "backbone.nothing", TI_F32, 2, shape_row, row, sizeof row);
    expect_status(st, TI_ERR_UNKNOWN_NAME, "inject an unknown boundary", ti_last_error(s), "backbone.nothing");
    st = ti_inject(s, "backbone.l0.mixer_out", TI_F32, 2, shape_row, row, sizeof row);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "inject a non-injectable boundary", ti_last_error(s),
                  "backbone.l0.mixer_out");
    int64_t shape_wrong[2] = {1, 32};
    st = ti_inject(s, "backbone.embed", TI_F32, 2, shape_wrong, row, 32 * sizeof(float));
    expect_status(st, TI_ERR_SHAPE, "inject backbone.embed with shape [1, 32]", ti_last_error(s), "backbone.embed");
    int32_t token = 200;
    int64_t shape_token[1] = {1};
    st = ti_inject(s, "sampler.text.token", TI_I32, 1, shape_token, &token, sizeof token);
    expect_status(st, TI_ERR_INVALID_ARGUMENT, "inject an out-of-range token", ti_last_error(s),
                  "sampler.text.token");
    if (ti_set_input(NULL, "seed", TI_U64, 0, NULL, NULL, 0) != TI_ERR_INVALID_ARGUMENT)
        fail("a NULL session is not refused");
}

/* Reads row `row` of backbone.embed_tokens from the weights file. */
static bool embed_row(const char *weights_path, int row, float *out) {
    st_file file;
    char msg[512];
    ti_errbuf err = {msg, sizeof msg};
    if (st_open(&file, weights_path, "weights file", &err) != TI_OK) return false;
    const st_tensor *t = st_find(&file, "backbone.embed_tokens");
    bool ok = false;
    if (t != NULL && t->dtype == TI_F32 && t->rank == 2 && t->shape[1] == 64 && row < t->shape[0]) {
        float *all = malloc((size_t)(t->end - t->begin));
        if (all != NULL && st_read(&file, t, all, &err) == TI_OK) {
            memcpy(out, all + (size_t)row * 64, 64 * sizeof(float));
            ok = true;
        }
        free(all);
    }
    st_close(&file);
    return ok;
}

/* Opens a session with the case's inputs and options and the observer as callback. */
static ti_session *open_case(const char *weights, const input_set *inputs, int argc, char **argv, observer *o) {
    char err[512];
    ti_session *s = NULL;
    ti_status st = ti_open("{\"max_positions\": 4096}", weights, &s, err, sizeof err);
    if (st != TI_OK) {
        fail("ti_open %s: %s: %s", weights, ti_status_string(st), err);
        return NULL;
    }
    if (!apply_inputs(s, inputs) || !apply_options(s, argc, argv) ||
        ti_set_record_callback(s, on_record, o) != TI_OK) {
        ti_close(s);
        return NULL;
    }
    return s;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <weights.safetensors> <inputs.safetensors> <decode_passes> [key=value...]\n",
                argv[0]);
        return 2;
    }
    const char *weights = argv[1], *inputs_path = argv[2];
    char *end = NULL;
    long decode_passes = strtol(argv[3], &end, 10);
    if (end == argv[3] || *end != '\0' || decode_passes < 0 || decode_passes > 100000) {
        fprintf(stderr, "decode_passes must be a non-negative integer\n");
        return 2;
    }
    if (ti_abi_version() != TI_ABI_VERSION) fail("ti_abi_version %u", ti_abi_version());
    for (int st = 0; st <= 10; st++)
        if (ti_status_string((ti_status)st) == NULL) fail("ti_status_string(%d) is NULL", st);

    static declared_catalogue cat;
    static observer obs, obs_b;
    input_set inputs;
    if (!load_catalogue(&cat) || !load_inputs(inputs_path, &inputs)) return 1;
    obs.cat = obs_b.cat = &cat;
    obs.abort_at = obs_b.abort_at = -1;

    open_error_paths(weights, inputs_path);

    ti_session *s = open_case(weights, &inputs, argc, argv, &obs);
    if (s == NULL) {
        free_inputs(&inputs);
        return 1;
    }
    {
        /* The error paths run on a separate session so the main one keeps the case's inputs. */
        char err[512];
        ti_session *scratch = NULL;
        if (ti_open(NULL, weights, &scratch, err, sizeof err) == TI_OK) {
            session_error_paths(scratch);
            ti_close(scratch);
        } else {
            fail("ti_open: %s", err);
        }
    }

    /* The main run: prefill and the decode passes. */
    char mode[8];
    uint64_t prefill_hash = 0;
    for (long i = 0; i <= decode_passes; i++) {
        ti_status st = observed_pass(s, &obs, i == 0, i == 0 ? inputs.prompt_len : 1, mode, sizeof mode);
        if (st != TI_OK) {
            fail("pass %ld: %s: %s", i, ti_status_string(st), ti_last_error(s));
            break;
        }
        if (i == 0) prefill_hash = obs.hash;
        printf("pass %ld %s %s records=%zu\n", i, i == 0 ? "prefill" : "decode", mode, obs.records);
    }
    fflush(stdout);

    /* Inputs are frozen after prefill; reset returns to before prefill and keeps them. */
    int32_t seed_vec[2] = {0, 0};
    int64_t seed_shape[1] = {1};
    expect_status(ti_set_input(s, "seed", TI_U64, 1, seed_shape, seed_vec, 8), TI_ERR_STATE,
                  "set_input after prefill", ti_last_error(s), "seed");
    expect_status(ti_prefill(s), TI_ERR_STATE, "second prefill without reset", ti_last_error(s), "ti_reset");
    if (ti_reset(s) != TI_OK) fail("ti_reset: %s", ti_last_error(s));
    state_view v;
    if (read_state(s, &v) && (v.passes_run != 0 || v.cursor != 0 || v.prng_counter != 0 || v.count != 0 ||
                              strcmp(v.last_output, "null") != 0))
        fail("state after reset: %s", ti_session_state(s));
    expect_status(ti_decode(s), TI_ERR_STATE, "decode after reset", ti_last_error(s), "prefill");

    /* A second prefill after reset reproduces the first bit for bit. */
    if (observed_pass(s, &obs, true, inputs.prompt_len, mode, sizeof mode) != TI_OK)
        fail("second prefill: %s", ti_last_error(s));
    else if (obs.hash != prefill_hash)
        fail("the prefill after ti_reset differs from the first prefill");
    fprintf(stderr, "ok   reset + second prefill reproduce pass 0 (records=%zu)\n", obs.records);

    /* A twin session runs the same passes without interference, to compare against. */
    ti_session *twin = open_case(weights, &inputs, argc, argv, &obs_b);
    if (twin != NULL && observed_pass(twin, &obs_b, true, inputs.prompt_len, mode, sizeof mode) != TI_OK)
        fail("twin prefill: %s", ti_last_error(twin));

    /* An injection with the wrong T fails the pass with TI_ERR_SHAPE, leaves the state alone, and
     * is cleared with the pass. */
    {
        static float rows[2 * 64];
        int64_t shape[2] = {2, 64};
        if (ti_inject(s, "backbone.l3.out", TI_F32, 2, shape, rows, sizeof rows) != TI_OK)
            fail("inject backbone.l3.out [2, 64]: %s", ti_last_error(s));
        ti_status st = observed_pass(s, &obs, false, 1, mode, sizeof mode);
        expect_status(st, TI_ERR_SHAPE, "decode with backbone.l3.out injected as [2, 64]", ti_last_error(s),
                      "backbone.l3.out");
    }

    /* An aborting callback stops the pass with TI_ERR_ABORTED and leaves the state alone. */
    obs.abort_at = find_declared(&cat, "backbone.l2.kv_len");
    expect_status(observed_pass(s, &obs, false, 1, mode, sizeof mode), TI_ERR_ABORTED,
                  "callback returning 1 at backbone.l2.kv_len", ti_last_error(s), "backbone.l2.kv_len");
    obs.abort_at = -1;

    /* After both failures the session decodes exactly as the twin that never failed. */
    if (twin != NULL) {
        if (observed_pass(s, &obs, false, 1, mode, sizeof mode) != TI_OK)
            fail("decode after failures: %s", ti_last_error(s));
        if (observed_pass(twin, &obs_b, false, 1, mode, sizeof mode) != TI_OK)
            fail("twin decode: %s", ti_last_error(twin));
        if (obs.hash != obs_b.hash) fail("a failed or aborted pass left a trace in the session state");
        else fprintf(stderr, "ok   failed and aborted passes left the state untouched (pass 1 matches the twin)\n");
    }

    /* Teacher forcing: inject the token of whichever output the next pass produces. */
    {
        int32_t text_token = 5, code = 3;
        int64_t one[1] = {1};
        if (ti_inject(s, "sampler.text.token", TI_I32, 1, one, &text_token, sizeof text_token) != TI_OK ||
            ti_inject(s, "depth.cb0.sampler.token", TI_I32, 1, one, &code, sizeof code) != TI_OK)
            fail("token injection: %s", ti_last_error(s));
        if (observed_pass(s, &obs, false, 1, mode, sizeof mode) != TI_OK) {
            fail("decode with injected tokens: %s", ti_last_error(s));
        } else if (strcmp(mode, "text") == 0) {
            if (obs.text_token != text_token)
                fail("sampler.text.token recorded %d, injected %d", obs.text_token, text_token);
            float want[64];
            if (observed_pass(s, &obs, false, 1, mode, sizeof mode) != TI_OK)
                fail("decode after the injected token: %s", ti_last_error(s));
            else if (!embed_row(weights, text_token, want) || memcmp(want, obs.embed_row0, sizeof want) != 0)
                fail("the pass after an injected text token does not embed embed_tokens[%d]", text_token);
            else
                fprintf(stderr, "ok   injected text token %d was recorded and embedded by the next pass\n",
                        text_token);
        } else {
            if (obs.cb0_code != code) fail("depth.cb0.sampler.token recorded %d, injected %d", obs.cb0_code, code);
            else fprintf(stderr, "ok   injected code %d was recorded at depth.cb0.sampler.token\n", code);
        }
    }

    /* A callback that re-enters its own session is refused with TI_ERR_STATE; the pass goes on. */
    obs.reenter = s;
    obs.reenter_status = TI_OK;
    if (observed_pass(s, &obs, false, 1, mode, sizeof mode) != TI_OK)
        fail("decode with a re-entering callback: %s", ti_last_error(s));
    else if (obs.reenter_status != TI_ERR_STATE)
        fail("ti_decode from inside the record callback returned %s", ti_status_string(obs.reenter_status));
    else
        fprintf(stderr, "ok   ti_decode from inside the record callback -> TI_ERR_STATE, the pass completed\n");

    /* A wanted subset: only those boundaries arrive. */
    {
        const char *names[2] = {"backbone.logits", "gen.state"};
        if (ti_set_wanted(s, names, 2) != TI_OK) fail("ti_set_wanted: %s", ti_last_error(s));
        obs.subset = true;
        memset(obs.wanted, 0, sizeof obs.wanted);
        obs.wanted[find_declared(&cat, "backbone.logits")] = true;
        obs.wanted[find_declared(&cat, "gen.state")] = true;
        if (observed_pass(s, &obs, false, 1, mode, sizeof mode) != TI_OK)
            fail("decode with a wanted subset: %s", ti_last_error(s));
        else if (obs.records != 2)
            fail("a wanted subset of 2 delivered %zu records", obs.records);
        obs.subset = false;
        if (ti_set_wanted(s, NULL, 0) != TI_OK) fail("ti_set_wanted(NULL, 0): %s", ti_last_error(s));
        if (ti_set_record_callback(s, NULL, NULL) != TI_OK || ti_decode(s) != TI_OK)
            fail("decode without a callback: %s", ti_last_error(s));
    }

    ti_close(twin);
    ti_close(s);
    ti_close(NULL);
    free_inputs(&inputs);
    if (g_failures > 0) {
        fprintf(stderr, "ti_driver: %d check(s) failed\n", g_failures);
        return 1;
    }
    fprintf(stderr, "ti_driver: all checks passed\n");
    return 0;
}
