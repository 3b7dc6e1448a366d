/*
 * ti_driver: drives the reference engine through the trace ABI the way the inspector does, under
 * AddressSanitizer + UBSan, and checks every record against the catalogue the engine describes.
 *
 *   ti_driver <weights.safetensors> <inputs.safetensors> <decode_passes> [--options-only] [key=value options...]
 *
 * --options-only runs what an engine option can change: the main run checked record by record,
 * reset and the reproduced prefill, the failed and aborted passes against a twin, the wanted
 * subset. It skips the error paths of ti_open and of a fresh session and the injection at every
 * injectable boundary (a lockstep replay per boundary, most of the driver's time), which no option
 * reaches and the clean runs of every case already check.
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

/* ---- part 2 (docs/reference-model-audio.md): shape symbols and emit kinds ------------------
 * The symbols F, R, L16, P follow from the length of pcm_in; prefill_audio_in boundaries come with
 * a prefill given pcm_in, audio_frame boundaries with an audio pass whose 8 codes are all below EOA
 * (a frame with an EOA code anywhere is not detokenized). */

static int64_t g_pcm_len = -1; /* samples of the case's pcm_in, -1 when it has none */
static bool g_options_set;      /* engine options (perturbations) change what the spec's values are */

/* The code a shape symbol is declared with (-1 T, -2 F, -3 R, -4 L16, -5 P), 0 for an unknown one. */
static int symbol_code(const char *symbol) {
    static const char *const names[] = {"T", "F", "R", "L16", "P"};
    for (int i = 0; i < 5; i++)
        if (strcmp(symbol, names[i]) == 0) return -1 - i;
    return 0;
}

static int64_t resolve_dim(int64_t code, int64_t T) {
    int64_t L = g_pcm_len < 0 ? 0 : g_pcm_len, L16 = (2 * L + 2) / 3, F = 1 + L16 / 160, R = (F + 7) / 8;
    switch (code) {
    case -1: return T;
    case -2: return F;
    case -3: return R;
    case -4: return L16;
    case -5: return 2 * R - 1;
    default: return code;
    }
}

static bool audio_emit_expected(const char *emit, uint32_t pass_kind, const char *mode, bool decoded) {
    return (strcmp(emit, "prefill_audio_in") == 0 && pass_kind == TI_PASS_PREFILL && g_pcm_len >= 0) ||
           (strcmp(emit, "audio_frame") == 0 && strcmp(mode, "audio") == 0 && decoded);
}

/* ---- the catalogue as ti_describe() declares it ------------------------------------------- */

typedef struct declared {
    char name[64];
    uint32_t dtype;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK]; /* -1 for "T" */
    char emit[24]; /* "prefill_audio_in" needs 17 */
    bool injectable;
} declared;

typedef struct declared_catalogue {
    declared items[MAX_BOUNDARIES];
    int count;
} declared_catalogue;

static int dtype_from_abi_name(const char *name) {
    for (uint32_t d = 0; d <= TI_C64; d++)
        if (strcmp(dtype_abi_name(d), name) == 0) return (int)d;
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
            if (dim->type == JSON_STRING && symbol_code(dim->string) < 0)
                d->shape[k] = symbol_code(dim->string);
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
    int32_t code0;         /* depth.codes[0] of the pass (32: EOA frame), -1 before it arrives */
    bool decoded;          /* the pass's 8 codes are all below EOA: the detokenizer decodes the frame */
    bool subset;           /* a wanted subset is active: only those may arrive */
    bool wanted[MAX_BOUNDARIES];
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
    o->code0 = -1;
    o->decoded = false;
    o->records = 0;
    memset(o->seen, 0, sizeof o->seen);
    o->hash = UINT64_C(0xcbf29ce484222325);
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
        int64_t want = d->shape[k] < 0 ? resolve_dim(d->shape[k], o->expected_T) : d->shape[k];
        if (r->shape[k] != want)
            fail("record %s: shape[%d] = %" PRId64 ", expected %" PRId64, r->name, k, r->shape[k], want);
        if (r->strides[k] != stride)
            fail("record %s: strides[%d] = %" PRId64 ", expected row-major %" PRId64, r->name, k, r->strides[k],
                 stride);
        stride *= r->shape[k];
        count *= (uint64_t)r->shape[k];
    }
    uint64_t bytes = count * dtype_size(r->dtype);
    if (r->byte_length != bytes)
        fail("record %s: byte_length %" PRIu64 ", expected %" PRIu64, r->name, r->byte_length, bytes);
    if (r->data == NULL && bytes > 0) {
        fail("record %s: data is NULL", r->name);
        return 0;
    }
    o->hash = fnv1a(o->hash, r->name, strlen(r->name));
    o->hash = fnv1a(o->hash, r->data, (size_t)r->byte_length);
    if (strcmp(r->name, "depth.codes") == 0 && r->byte_length >= 8 * sizeof(int32_t)) {
        int32_t codes[8];
        memcpy(codes, r->data, sizeof codes);
        o->code0 = codes[0];
        o->decoded = true;
        for (int k = 0; k < 8; k++)
            if (codes[k] >= 32) o->decoded = false;
    }
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
        bool expected = audio_emit_expected(d->emit, o->pass_kind, mode, o->decoded) ||
                        strcmp(d->emit, "every_pass") == 0 ||
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
    int64_t modality_left;
    bool text_done;
    bool ended;
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
    const json_value *k = json_member(root, "modality_left"), *r = json_member(root, "prng_counter");
    const json_value *t = json_member(root, "text_done"), *e = json_member(root, "ended");
    bool ok = p && p->is_integer && c && c->is_integer && n && n->type == JSON_STRING && l &&
              (l->type == JSON_STRING || l->type == JSON_NULL) && k && k->is_integer && r && r->is_integer && t &&
              t->type == JSON_BOOL && e && e->type == JSON_BOOL;
    if (ok) {
        v->passes_run = p->integer;
        v->cursor = c->integer;
        snprintf(v->next_mode, sizeof v->next_mode, "%s", n->string);
        snprintf(v->last_output, sizeof v->last_output, "%s", l->type == JSON_NULL ? "null" : l->string);
        v->modality_left = k->integer;
        v->text_done = t->boolean;
        v->ended = e->boolean;
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
    errbuf err = {msg, sizeof msg};
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
    g_options_set = argc > 4;
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

/* Reads row `row` (of `width` f32 values) of weight tensor `tensor` from the weights file. */
static bool weight_row(const char *weights_path, const char *tensor, int row, int width, float *out) {
    st_file file;
    char msg[512];
    errbuf err = {msg, sizeof msg};
    if (st_open(&file, weights_path, "weights file", &err) != TI_OK) return false;
    const st_tensor *t = st_find(&file, tensor);
    bool ok = false;
    if (t != NULL && t->dtype == TI_F32 && t->rank == 2 && t->shape[1] == width && row >= 0 && row < t->shape[0]) {
        float *all = malloc((size_t)(t->end - t->begin));
        if (all != NULL && st_read(&file, t, all, &err) == TI_OK) {
            memcpy(out, all + (size_t)row * (size_t)width, (size_t)width * sizeof(float));
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

/* ---- injection semantics ------------------------------------------------------------------
 *
 * At an injected boundary the engine records its own computed value, then continues with the
 * injected one. Checked for every injectable boundary of the catalogue on two sessions kept in
 * lockstep (`a` gets the injection, `b` is the twin that never does): at the pass that reaches the
 * boundary, every record up to and including it is byte-identical between the two (the record is
 * the engine's own value), and what follows uses the injected value — a later record of the pass
 * differs for a float boundary; for a token or code, the next pass embeds the injected id, the
 * codes and feedback of the frame carry it, and an injected end-of-audio code switches the schedule.
 */

/* Every record of one pass, copied out, in arrival order. */
typedef struct snapshot {
    const declared_catalogue *cat;
    void *data[MAX_BOUNDARIES];
    uint64_t bytes[MAX_BOUNDARIES];
    int64_t shape[MAX_BOUNDARIES][TI_MAX_RANK]; /* as recorded (every shape symbol resolved) */
    int arrival[MAX_BOUNDARIES];
    int count;
} snapshot;

static void snapshot_clear(snapshot *snap) {
    for (int i = 0; i < MAX_BOUNDARIES; i++) {
        free(snap->data[i]);
        snap->data[i] = NULL;
        snap->bytes[i] = 0;
    }
    snap->count = 0;
}

static int on_snapshot(void *user, const ti_record *r) {
    snapshot *snap = user;
    int id = find_declared(snap->cat, r->name);
    if (id < 0 || snap->data[id] != NULL || snap->count == MAX_BOUNDARIES) {
        fail("snapshot: record %s unknown or repeated", r->name);
        return 0;
    }
    snap->data[id] = malloc(r->byte_length ? (size_t)r->byte_length : 1);
    if (snap->data[id] == NULL) {
        fail("snapshot: out of memory");
        return 1;
    }
    memcpy(snap->data[id], r->data, (size_t)r->byte_length);
    snap->bytes[id] = r->byte_length;
    for (uint32_t k = 0; k < r->rank && k < TI_MAX_RANK; k++) snap->shape[id][k] = r->shape[k];
    snap->arrival[snap->count++] = id;
    return 0;
}

static bool same_record(const snapshot *x, const snapshot *y, int id) {
    return x->data[id] != NULL && y->data[id] != NULL && x->bytes[id] == y->bytes[id] &&
           memcmp(x->data[id], y->data[id], (size_t)x->bytes[id]) == 0;
}

static int32_t snapshot_i32(const snapshot *snap, const declared_catalogue *cat, const char *name, int index) {
    int id = find_declared(cat, name);
    if (id < 0 || snap->data[id] == NULL || snap->bytes[id] < (uint64_t)(index + 1) * 4) return INT32_MIN;
    int32_t value;
    memcpy(&value, (const char *)snap->data[id] + (size_t)index * 4, 4);
    return value;
}

static bool all_nan_f32(const snapshot *snap, const declared_catalogue *cat, int id) {
    if (snap->data[id] == NULL || cat->items[id].dtype != TI_F32 || snap->bytes[id] == 0) return false;
    const float *v = snap->data[id];
    for (uint64_t i = 0; i < snap->bytes[id] / 4; i++)
        if (v[i] == v[i]) return false;
    return true;
}

#define TWIN_PASSES 258

typedef struct lockstep {
    const declared_catalogue *cat;
    const char *weights;
    ti_session *a, *b;
    snapshot snap_a;
    /* The twin's records of each pass: b is never injected, so it runs once, forward, and each
     * check compares a's target pass with the cached pass of b. */
    snapshot *twin[TWIN_PASSES];
    long twin_passes;
    char modes[257]; /* output mode of each pass of the main run ('t' / 'a'), NUL-terminated */
} lockstep;

/* Runs one pass on `s` into `snap`; pass 0 is the prefill. */
static bool snap_pass(ti_session *s, snapshot *snap, long index) {
    snapshot_clear(snap);
    ti_status st = index == 0 ? ti_prefill(s) : ti_decode(s);
    if (st != TI_OK) fail("lockstep pass %ld: %s: %s", index, ti_status_string(st), ti_last_error(s));
    return st == TI_OK;
}

/* The twin's records of pass `index`, running b forward as far as needed (it is never reset). */
static const snapshot *twin_pass(lockstep *ls, long index) {
    if (index >= TWIN_PASSES) {
        fail("lockstep: pass %ld is past the %d passes the twin keeps", index, TWIN_PASSES);
        return NULL;
    }
    while (ls->twin_passes <= index) {
        snapshot *snap = calloc(1, sizeof *snap);
        if (snap == NULL) {
            fail("lockstep: out of memory");
            return NULL;
        }
        snap->cat = ls->cat;
        ti_status st = ti_set_record_callback(ls->b, on_snapshot, snap);
        if (st == TI_OK) st = ls->twin_passes == 0 ? ti_prefill(ls->b) : ti_decode(ls->b);
        if (st != TI_OK) {
            fail("twin pass %ld: %s: %s", ls->twin_passes, ti_status_string(st), ti_last_error(ls->b));
            snapshot_clear(snap);
            free(snap);
            return NULL;
        }
        ls->twin[ls->twin_passes++] = snap;
    }
    return ls->twin[index];
}

/* Resets a and runs passes 0..count-1 on it without a callback: what the engine computes must
 * not depend on whether anyone records (the twin recorded the same passes), and it is cheaper. */
static bool replay(lockstep *ls, long count) {
    if (ti_reset(ls->a) != TI_OK || ti_set_record_callback(ls->a, NULL, NULL) != TI_OK) {
        fail("lockstep reset failed: %s", ti_last_error(ls->a));
        return false;
    }
    for (long i = 0; i < count; i++) {
        ti_status st = i == 0 ? ti_prefill(ls->a) : ti_decode(ls->a);
        if (st != TI_OK) {
            fail("lockstep pass %ld: %s: %s", i, ti_status_string(st), ti_last_error(ls->a));
            return false;
        }
    }
    if (ti_set_record_callback(ls->a, on_snapshot, &ls->snap_a) != TI_OK) {
        fail("lockstep: cannot set the callback again: %s", ti_last_error(ls->a));
        return false;
    }
    return true;
}

/* The first pass of the main run whose mode is `mode` ('t', 'a' decoded audio frame, 'e' EOA frame, 'r' refused
 * frame, 'A' any audio frame),
 * or 0 for any ('\0'); -1 if none. */
static long first_pass(const lockstep *ls, char mode) {
    for (long i = 0; ls->modes[i] != '\0'; i++)
        if (mode == '\0' || ls->modes[i] == mode ||
            (mode == 'A' && (ls->modes[i] == 'a' || ls->modes[i] == 'e' || ls->modes[i] == 'r')))
            return i;
    return -1;
}

/* A value nobody computes: 0.5 * ((i mod 7) - 3) + 0.125, finite everywhere. */
static void pattern_f32(float *out, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) out[i] = 0.5f * (float)((int)(i % 7) - 3) + 0.125f;
}

/* The same pattern as bf16 (exact: every value has at most 3 significant bits). */
static void pattern_bf16(uint16_t *out, uint64_t count) {
    for (uint64_t i = 0; i < count; i++) {
        float v = 0.5f * (float)((int)(i % 7) - 3) + 0.125f;
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        out[i] = (uint16_t)(bits >> 16);
    }
}

static void check_one_injection(lockstep *ls, int id) {
    const declared *d = &ls->cat->items[id];
    bool is_token = d->dtype == TI_I32;
    bool is_text_token = strcmp(d->name, "sampler.text.token") == 0;
    int codebook = -1;
    int suffix = -1;
    if (!is_text_token && (sscanf(d->name, "depth.cb%d.%n", &codebook, &suffix) != 1 || suffix < 0 ||
                           strcmp(d->name + suffix, "sampler.token") != 0))
        codebook = -1;
    char mode = strcmp(d->emit, "text_out") == 0    ? 't'
                : strcmp(d->emit, "audio_out") == 0   ? 'A'
                : strcmp(d->emit, "audio_frame") == 0 ? 'a'
                : strcmp(d->emit, "prefill_audio_in") == 0 && g_pcm_len < 0 ? 'x' /* no pass emits it */
                                                      : '\0';
    /* Logits only flow on in a text pass (an audio pass samples the Depthformer instead). */
    bool logits = strcmp(d->name, "backbone.logits") == 0;
    if (logits && first_pass(ls, 't') >= 0) mode = 't';
    long target = first_pass(ls, mode);
    if (target < 0) {
        fprintf(stderr, "skip injection %s: no pass of the run emits it\n", d->name);
        return;
    }
    const snapshot *tb = twin_pass(ls, target);
    if (tb == NULL || !replay(ls, target)) return;
    if (tb->data[id] == NULL) {
        fail("injection %s: the twin did not emit it in pass %ld", d->name, target);
        return;
    }
    /* The injection takes the shape the twin recorded in this pass (every shape symbol resolved). */
    uint64_t bytes = tb->bytes[id];
    const int64_t *shape = tb->shape[id];
    uint64_t count = bytes / dtype_size(d->dtype);
    int32_t own = 0, injected = 0;
    void *value = malloc((size_t)bytes);
    if (value == NULL) {
        fail("out of memory");
        return;
    }
    if (is_token) {
        memcpy(&own, tb->data[id], 4);
        /* +2 leaves the pair of duplicated rows a code or token may belong to. */
        if (is_text_token) injected = (own + 2) % 160;
        else if (codebook == 0) injected = own == 32 ? 0 : 32; /* end of audio: the schedule must switch */
        else injected = (own + 2) % 32;
        memcpy(value, &injected, 4);
    } else {
        if (d->dtype == TI_BF16) pattern_bf16(value, count);
        else pattern_f32(value, count);
    }
    ti_status st = ti_inject(ls->a, d->name, d->dtype, d->rank, shape, value, bytes);
    free(value);
    if (st != TI_OK) {
        fail("inject %s: %s: %s", d->name, ti_status_string(st), ti_last_error(ls->a));
        return;
    }
    if (!snap_pass(ls->a, &ls->snap_a, target)) return;

    /* The record at the boundary, and every record before it, is what the engine computed. */
    bool upstream_same = true;
    int position = -1;
    for (int i = 0; i < tb->count; i++) {
        int other = tb->arrival[i];
        if (!same_record(&ls->snap_a, tb, other)) {
            fail("injection %s in pass %ld: record %s (%s it) differs from the twin's", d->name, target,
                 ls->cat->items[other].name, other == id ? "at" : "before");
            upstream_same = false;
        }
        if (other == id) {
            position = i;
            break;
        }
    }
    /* What follows uses the injected value. */
    bool downstream_differs = false;
    for (int i = position + 1; position >= 0 && i < tb->count; i++)
        if (!same_record(&ls->snap_a, tb, tb->arrival[i])) downstream_differs = true;
    /* In the NaN case a poisoned cache can make everything after the boundary NaN whatever flows in. */
    bool next_is_nan = position >= 0 && position + 1 < tb->count &&
                       all_nan_f32(tb, ls->cat, tb->arrival[position + 1]) &&
                       all_nan_f32(&ls->snap_a, ls->cat, tb->arrival[position + 1]);
    if (!is_token && !downstream_differs && next_is_nan)
        fprintf(stderr, "note injection %s in pass %ld: the next record is all NaN on both sides, so the injected "
                        "value cannot show\n", d->name, target);
    else if (!is_token && !downstream_differs && !(logits && ls->modes[target] != 't'))
        fail("injection %s in pass %ld: nothing after it changed, so the injected value did not flow on", d->name,
             target);
    if (codebook >= 0) {
        char name[64];
        int32_t recorded = snapshot_i32(&ls->snap_a, ls->cat, "depth.codes", codebook);
        if (recorded != injected)
            fail("injection %s: depth.codes[%d] = %d, injected %d", d->name, codebook, recorded, injected);
        float want[32];
        snprintf(name, sizeof name, "depth.cb%d.feedback", codebook);
        int fb = find_declared(ls->cat, name);
        snprintf(name, sizeof name, "depth.embeddings.%d", codebook);
        if (fb < 0 || ls->snap_a.data[fb] == NULL || !weight_row(ls->weights, name, injected, 32, want) ||
            memcmp(want, ls->snap_a.data[fb], sizeof want) != 0)
            fail("injection %s: depth.cb%d.feedback is not %s[%d]", d->name, codebook, name, injected);
        if (codebook == 0 && injected == 32) {
            /* Text next, the countdown kept as it would have been (generate_interleaved does not
             * reset it on an EOA). */
            int32_t next_mode = snapshot_i32(&ls->snap_a, ls->cat, "gen.state", 1);
            int32_t left = snapshot_i32(&ls->snap_a, ls->cat, "gen.state", 2);
            int32_t twin_left = snapshot_i32(tb, ls->cat, "gen.state", 2);
            if (next_mode != 0 || left != twin_left)
                fail("injected end-of-audio code: gen.state next_mode %d modality_left %d, expected text (0) and the "
                     "twin's %d",
                     next_mode, left, twin_left);
        }
    }
    /* Code 0 of the frame that flowed on: when it is EOA, the whole frame is fed back as EOA. */
    bool frame_is_eoa = codebook > 0 && snapshot_i32(&ls->snap_a, ls->cat, "depth.codes", 0) == 32;
    if (is_token) {
        /* The next pass embeds the injected token / the frame of injected codes. */
        const snapshot *next = twin_pass(ls, target + 1);
        if (next == NULL || !snap_pass(ls->a, &ls->snap_a, target + 1)) return;
        int embed = find_declared(ls->cat, "backbone.embed");
        if (is_text_token) {
            float want[64];
            if (!weight_row(ls->weights, "backbone.embed_tokens", injected, 64, want) ||
                ls->snap_a.data[embed] == NULL || memcmp(want, ls->snap_a.data[embed], sizeof want) != 0)
                fail("injection %s: the next pass does not embed embed_tokens[%d]", d->name, injected);
        } else if (frame_is_eoa) {
            /* Codes 1..7 of an EOA frame never reach the backbone: the frame is fed back as all EOA. */
            if (!same_record(&ls->snap_a, next, embed))
                fail("injection %s: code 0 is EOA, yet the next pass embeds a different frame than the twin", d->name);
        } else if (same_record(&ls->snap_a, next, embed)) {
            fail("injection %s: the next pass embeds the same frame as the twin", d->name);
        } else if (codebook == 0 && injected == 32 && !g_options_set) {
            /* An EOA code 0 feeds the whole frame back as EOA: sum of the 8 EOA rows, k order from +0.0
             * (a perturbation such as perturb.audio_embed_mean changes that sum on purpose). */
            float want[64] = {0}, row[64];
            bool rows_ok = true;
            for (int k = 0; k < 8 && rows_ok; k++) {
                rows_ok = weight_row(ls->weights, "backbone.audio_embedding", 32 + 33 * k, 64, row);
                for (int c = 0; c < 64 && rows_ok; c++) want[c] += row[c];
            }
            if (!rows_ok || ls->snap_a.data[embed] == NULL || memcmp(want, ls->snap_a.data[embed], sizeof want) != 0)
                fail("injection %s: after an EOA code 0 the next pass does not embed the all-EOA frame", d->name);
        }
    }
    if (upstream_same)
        fprintf(stderr, "ok   injection %s in pass %ld: own value recorded, injected value flowed on\n", d->name, target);
}

/* An injection the pass never reaches (a text token in an audio pass) changes nothing and is dropped. */
static void check_unreached_injection(lockstep *ls) {
    long target = first_pass(ls, 'a');
    if (target < 0) return;
    if (twin_pass(ls, target + 1) == NULL || !replay(ls, target)) return;
    int32_t token = 3;
    int64_t one[1] = {1};
    if (ti_inject(ls->a, "sampler.text.token", TI_I32, 1, one, &token, sizeof token) != TI_OK) {
        fail("inject sampler.text.token: %s", ti_last_error(ls->a));
        return;
    }
    for (long pass = target; pass < target + 2; pass++) {
        const snapshot *tb = ls->twin[pass];
        if (!snap_pass(ls->a, &ls->snap_a, pass)) return;
        for (int i = 0; i < tb->count; i++)
            if (!same_record(&ls->snap_a, tb, tb->arrival[i]))
                fail("an unreached injection changed %s in pass %ld", ls->cat->items[tb->arrival[i]].name, pass);
    }
    fprintf(stderr, "ok   a text-token injection in an audio pass changed nothing and was cleared\n");
}

/* A case with pcm_in: note its length (shape symbols, emit rules) and check that a prompt whose -1
 * count differs from the adapter's R rows is refused with a message naming both numbers. */
static void pcm_in_checks(const char *weights, const input_set *inputs) {
    const input_tensor *pcm = NULL, *prompt = NULL;
    for (int i = 0; i < inputs->count; i++) {
        if (strcmp(inputs->items[i].name, "pcm_in") == 0) pcm = &inputs->items[i];
        if (strcmp(inputs->items[i].name, "prompt_tokens") == 0) prompt = &inputs->items[i];
    }
    if (pcm == NULL || prompt == NULL) return;
    g_pcm_len = pcm->shape[0];
    char err[512], want_r[32], want_m[32];
    ti_session *s = NULL;
    if (ti_open(NULL, weights, &s, err, sizeof err) != TI_OK) {
        fail("pcm_in checks: ti_open: %s", err);
        return;
    }
    int64_t markers = 0, n = prompt->shape[0] + 1;
    int32_t *tokens = malloc((size_t)n * sizeof *tokens);
    if (tokens != NULL && apply_inputs(s, inputs)) {
        memcpy(tokens, prompt->data, (size_t)prompt->bytes);
        tokens[n - 1] = -1; /* one marker too many */
        for (int64_t i = 0; i < n; i++) markers += tokens[i] == -1;
        int64_t shape[1] = {n};
        if (ti_set_input(s, "prompt_tokens", TI_I32, 1, shape, tokens, (uint64_t)n * sizeof *tokens) != TI_OK)
            fail("pcm_in checks: ti_set_input prompt_tokens: %s", ti_last_error(s));
        snprintf(want_r, sizeof want_r, "R = %" PRId64, resolve_dim(-3, 0));
        snprintf(want_m, sizeof want_m, "%" PRId64 " audio-in markers", markers);
        ti_status st = ti_prefill(s);
        expect_status(st, TI_ERR_SHAPE, "prefill with one -1 more than pcm_in's R rows", ti_last_error(s), want_r);
        expect_status(st, TI_ERR_SHAPE, "prefill with one -1 more than pcm_in's R rows", ti_last_error(s), want_m);
    }
    free(tokens);
    ti_close(s);
}

static void check_injections(const declared_catalogue *cat, const char *weights, const input_set *inputs, int argc,
                             char **argv, const char *modes) {
    static lockstep ls;
    memset(&ls, 0, sizeof ls);
    ls.cat = cat;
    ls.weights = weights;
    ls.snap_a.cat = cat;
    snprintf(ls.modes, sizeof ls.modes, "%s", modes);
    char err[512];
    if (ti_open("{\"max_positions\": 4096}", weights, &ls.a, err, sizeof err) != TI_OK ||
        ti_open("{\"max_positions\": 4096}", weights, &ls.b, err, sizeof err) != TI_OK) {
        fail("lockstep ti_open: %s", err);
    } else if (apply_inputs(ls.a, inputs) && apply_inputs(ls.b, inputs) && apply_options(ls.a, argc, argv) &&
               apply_options(ls.b, argc, argv) && ti_set_record_callback(ls.a, on_snapshot, &ls.snap_a) == TI_OK) {
        int checked = 0;
        for (int id = 0; id < cat->count; id++) {
            if (!cat->items[id].injectable) continue;
            check_one_injection(&ls, id);
            checked++;
        }
        check_unreached_injection(&ls);
        fprintf(stderr, "ok   %d injectable boundaries checked\n", checked);
    }
    snapshot_clear(&ls.snap_a);
    for (long i = 0; i < ls.twin_passes; i++) {
        snapshot_clear(ls.twin[i]);
        free(ls.twin[i]);
    }
    ti_close(ls.a);
    ti_close(ls.b);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s <weights.safetensors> <inputs.safetensors> <decode_passes> [--options-only] [key=value...]\n",
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
    bool options_only = argc > 4 && strcmp(argv[4], "--options-only") == 0;
    if (options_only) {
        /* Dropped here so that argv[4..] stay the key=value options open_case and the twin apply. */
        for (int i = 4; i + 1 < argc; i++) argv[i] = argv[i + 1];
        argc--;
    }
    if (ti_abi_version() != TI_ABI_VERSION) fail("ti_abi_version %u", ti_abi_version());
    for (int st = 0; st <= 10; st++)
        if (ti_status_string((ti_status)st) == NULL) fail("ti_status_string(%d) is NULL", st);

    static declared_catalogue cat;
    static observer obs, obs_b;
    input_set inputs;
    if (!load_catalogue(&cat) || !load_inputs(inputs_path, &inputs)) return 1;
    pcm_in_checks(weights, &inputs);
    obs.cat = obs_b.cat = &cat;
    obs.abort_at = obs_b.abort_at = -1;

    if (!options_only) open_error_paths(weights, inputs_path);

    ti_session *s = open_case(weights, &inputs, argc, argv, &obs);
    if (s == NULL) {
        free_inputs(&inputs);
        return 1;
    }
    if (!options_only) {
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

    /* The schedule's countdown before prefill, which ti_reset must restore. */
    state_view initial;
    bool have_initial = read_state(s, &initial);

    /* The main run: prefill and the decode passes. */
    char mode[8];
    char modes[257] = {0};
    uint64_t prefill_hash = 0;
    for (long i = 0; i <= decode_passes; i++) {
        ti_status st = observed_pass(s, &obs, i == 0, i == 0 ? inputs.prompt_len : 1, mode, sizeof mode);
        if (st != TI_OK) {
            fail("pass %ld: %s: %s", i, ti_status_string(st), ti_last_error(s));
            break;
        }
        if (i == 0) prefill_hash = obs.hash;
        if (i < (long)sizeof modes - 1) {
            /* 'a': a decoded audio frame, 'e': an EOA frame, 'r': a frame the detokenizer refuses */
            modes[i] = mode[0] == 'a' ? (obs.code0 == 32 ? 'e' : (obs.decoded ? 'a' : 'r')) : 't';
            modes[i + 1] = '\0';
        }
        printf("pass %ld %s %s records=%zu\n", i, i == 0 ? "prefill" : "decode", mode, obs.records);
    }
    fflush(stdout);

    /* A run that sampled <|im_end|> has ended: the engine refuses another pass, naming the end. */
    state_view after_run;
    if (read_state(s, &after_run) && after_run.ended) {
        expect_status(ti_decode(s), TI_ERR_STATE, "decode after the generation ended", ti_last_error(s), "im_end");
        state_view still;
        if (read_state(s, &still) && still.passes_run != after_run.passes_run)
            fail("a refused decode after the end changed the state: %s", ti_session_state(s));
    }

    /* Inputs are frozen after prefill; reset returns to before prefill and keeps them. */
    int32_t seed_vec[2] = {0, 0};
    int64_t seed_shape[1] = {1};
    expect_status(ti_set_input(s, "seed", TI_U64, 1, seed_shape, seed_vec, 8), TI_ERR_STATE,
                  "set_input after prefill", ti_last_error(s), "seed");
    expect_status(ti_prefill(s), TI_ERR_STATE, "second prefill without reset", ti_last_error(s), "ti_reset");
    if (ti_reset(s) != TI_OK) fail("ti_reset: %s", ti_last_error(s));
    state_view v;
    if (read_state(s, &v) && (v.passes_run != 0 || v.cursor != 0 || v.prng_counter != 0 || v.text_done || v.ended ||
                              !have_initial || v.modality_left != initial.modality_left ||
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

    /* Injection: the engine records its own value, the injected one flows on (every injectable). */
    if (!options_only) check_injections(&cat, weights, &inputs, argc, argv, modes);

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
