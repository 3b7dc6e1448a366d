/*
 * ti_helper.c — the trace ABI (engine/include/trace_abi.h) implemented once for any engine
 * that defines a `tih_engine TIH_ENGINE` (see ti_helper.h). Compile it with your engine:
 *
 *   cc -std=c11 -O2 -fPIC -shared -Ipath/to/engine/include -Ipath/to/engine/helpers \
 *      -o libmyengine.so my_engine.c path/to/engine/helpers/ti_helper.c
 */
#include "ti_helper.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>

#define TIH_ERROR_CAPACITY 512
#define TIH_STATE_CAPACITY 1024
#define TIH_MAX_SYMBOLS 16

typedef struct tih_option_value {
    int64_t number;
    char *text;
} tih_option_value;

typedef struct tih_injection {
    bool set;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK];
    void *data;
    uint64_t byte_length;
} tih_injection;

struct ti_session {
    const tih_engine *engine;
    void *state;
    uint32_t passes_run;
    bool in_pass;
    tih_tensor *inputs;             /* input_count entries; data NULL when not set */
    tih_option_value *options;      /* option_count entries */
    tih_injection *injections;      /* boundary_count entries */
    bool *wanted;                   /* boundary_count entries */
    bool all_wanted;
    ti_record_fn record;
    void *record_user;
    char error[TIH_ERROR_CAPACITY];
    char state_json[TIH_STATE_CAPACITY];
};

/* ---- small pieces ------------------------------------------------------------------------- */

static const char *const DTYPE_NAMES[] = {"f32", "f16", "bf16", "f64", "i8",  "i16", "i32",
                                          "i64", "u8",  "u16",  "u32", "u64", "bool", "c64"};
static const size_t DTYPE_SIZES[] = {4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8};
#define DTYPE_COUNT (sizeof DTYPE_SIZES / sizeof DTYPE_SIZES[0])

size_t tih_dtype_size(uint32_t dtype) { return dtype < DTYPE_COUNT ? DTYPE_SIZES[dtype] : 0; }

static const char *dtype_name(uint32_t dtype) { return dtype < DTYPE_COUNT ? DTYPE_NAMES[dtype] : "unknown"; }

ti_status tih_fail(tih_session *s, ti_status status, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(s->error, sizeof s->error, format, args);
    va_end(args);
    return status;
}

void *tih_state(tih_session *s) { return s->state; }
uint32_t tih_pass_index(const tih_session *s) { return s->passes_run; }

const tih_tensor *tih_input_tensor(const tih_session *s, size_t input) {
    if (input >= s->engine->input_count || s->inputs[input].data == NULL) return NULL;
    return &s->inputs[input];
}

bool tih_option_bool(const tih_session *s, size_t option) {
    return option < s->engine->option_count && s->options[option].number != 0;
}
int64_t tih_option_int(const tih_session *s, size_t option) {
    return option < s->engine->option_count ? s->options[option].number : 0;
}
const char *tih_option_string(const tih_session *s, size_t option) {
    return option < s->engine->option_count && s->options[option].text ? s->options[option].text : "";
}

static char *copy_text(const char *text) {
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy) memcpy(copy, text, n);
    return copy;
}

/* ---- the catalogue: ti_describe ----------------------------------------------------------- */

/* Appends to a buffer that may be NULL (the measuring pass): returns the length written so far. */
typedef struct json_out {
    char *buf;
    size_t len;
} json_out;

static void put(json_out *o, const char *text) {
    size_t n = strlen(text);
    if (o->buf) memcpy(o->buf + o->len, text, n);
    o->len += n;
}

static void put_string(json_out *o, const char *text) {
    put(o, "\"");
    for (const unsigned char *c = (const unsigned char *)(text ? text : ""); *c; c++) {
        char esc[8];
        if (*c == '"' || *c == '\\') snprintf(esc, sizeof esc, "\\%c", *c);
        else if (*c < 0x20) snprintf(esc, sizeof esc, "\\u%04x", *c);
        else snprintf(esc, sizeof esc, "%c", *c);
        put(o, esc);
    }
    put(o, "\"");
}

static void put_shape(json_out *o, const tih_shape *shape) {
    put(o, "[");
    for (uint32_t i = 0; i < shape->rank && i < TI_MAX_RANK; i++) {
        if (i) put(o, ",");
        if (shape->dims[i].symbol) {
            put_string(o, shape->dims[i].symbol);
        } else {
            char n[32];
            snprintf(n, sizeof n, "%" PRId64, shape->dims[i].size);
            put(o, n);
        }
    }
    put(o, "]");
}

static void stage_of(const tih_boundary *b, char *out, size_t capacity) {
    if (b->stage) {
        snprintf(out, capacity, "%s", b->stage);
        return;
    }
    size_t n = strcspn(b->name, ".");
    snprintf(out, capacity, "%.*s", (int)n, b->name);
}

static void write_description(json_out *o, const tih_engine *e) {
    static const char *const TYPES[] = {"bool", "int", "string"};
    put(o, "{\"abi_version\":1,\"engine\":{\"name\":");
    put_string(o, e->name);
    put(o, ",\"version\":");
    put_string(o, e->version);
    put(o, ",\"build_id\":");
    put_string(o, e->build_id);
    put(o, "},\"model\":");
    put(o, e->model_json ? e->model_json : "{}");
    put(o, ",\"inputs\":[");
    for (size_t i = 0; i < e->input_count; i++) {
        const tih_input *in = &e->inputs[i];
        put(o, i ? ",{\"name\":" : "{\"name\":");
        put_string(o, in->name);
        put(o, ",\"dtype\":");
        put_string(o, dtype_name(in->dtype));
        put(o, ",\"shape\":");
        put_shape(o, &in->shape);
        put(o, in->required ? ",\"required\":true,\"doc\":" : ",\"required\":false,\"doc\":");
        put_string(o, in->doc);
        put(o, "}");
    }
    put(o, "],\"boundaries\":[");
    for (size_t i = 0; i < e->boundary_count; i++) {
        const tih_boundary *b = &e->boundaries[i];
        char stage[128];
        stage_of(b, stage, sizeof stage);
        put(o, i ? ",{\"name\":" : "{\"name\":");
        put_string(o, b->name);
        put(o, ",\"stage\":");
        put_string(o, stage);
        put(o, ",\"dtype\":");
        put_string(o, dtype_name(b->dtype));
        put(o, ",\"shape\":");
        put_shape(o, &b->shape);
        put(o, ",\"emit\":");
        put_string(o, b->emit ? b->emit : "every_pass");
        put(o, b->injectable ? ",\"injectable\":true,\"doc\":" : ",\"injectable\":false,\"doc\":");
        put_string(o, b->doc);
        put(o, "}");
    }
    put(o, "],\"options\":[");
    for (size_t i = 0; i < e->option_count; i++) {
        const tih_option *opt = &e->options[i];
        const char *value = opt->default_value ? opt->default_value : "";
        put(o, i ? ",{\"name\":" : "{\"name\":");
        put_string(o, opt->name);
        put(o, ",\"type\":");
        put_string(o, TYPES[opt->type <= TIH_STRING ? opt->type : TIH_STRING]);
        put(o, ",\"default\":");
        if (opt->type == TIH_BOOL) put(o, strcmp(value, "1") == 0 || strcmp(value, "true") == 0 ? "true" : "false");
        else if (opt->type == TIH_INT) put(o, *value ? value : "0");
        else put_string(o, value);
        put(o, ",\"doc\":");
        put_string(o, opt->doc);
        put(o, "}");
    }
    put(o, "]}");
}

static char *description;
static once_flag description_once = ONCE_FLAG_INIT;

static void build_description(void) {
    json_out measure = {NULL, 0};
    write_description(&measure, &TIH_ENGINE);
    json_out out = {malloc(measure.len + 1), 0};
    if (out.buf == NULL) return;
    write_description(&out, &TIH_ENGINE);
    out.buf[out.len] = '\0';
    description = out.buf;
}

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }

TI_API const char *ti_describe(void) {
    call_once(&description_once, build_description);
    /* Out of memory: an empty object the host refuses with a named schema error. */
    return description ? description : "{}";
}

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

/* ---- options ------------------------------------------------------------------------------ */

/* Parses `value` as the option's type into `out`; false with a message in s->error when it is not. */
static bool parse_option(tih_session *s, const tih_option *opt, const char *value, tih_option_value *out) {
    out->number = 0;
    out->text = NULL;
    if (opt->type == TIH_BOOL) {
        if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0) out->number = 1;
        else if (strcmp(value, "0") != 0 && strcmp(value, "false") != 0 && *value != '\0') {
            tih_fail(s, TI_ERR_INVALID_ARGUMENT, "option %s: expected 0, 1, true or false, found \"%s\"", opt->name, value);
            return false;
        }
        return true;
    }
    if (opt->type == TIH_INT) {
        char *end = NULL;
        errno = 0;
        long long number = strtoll(value, &end, 10);
        if (*value == '\0' || end == NULL || *end != '\0' || errno == ERANGE) {
            tih_fail(s, TI_ERR_INVALID_ARGUMENT, "option %s: expected an integer, found \"%s\"", opt->name, value);
            return false;
        }
        out->number = number;
        return true;
    }
    out->text = copy_text(value);
    if (out->text == NULL) {
        tih_fail(s, TI_ERR_OUT_OF_MEMORY, "option %s: out of memory", opt->name);
        return false;
    }
    return true;
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (key == NULL || value == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "ti_set_option: key and value are required");
    const tih_engine *e = s->engine;
    for (size_t i = 0; i < e->option_count; i++) {
        if (strcmp(e->options[i].name, key) != 0) continue;
        tih_option_value parsed;
        if (!parse_option(s, &e->options[i], value, &parsed)) return TI_ERR_INVALID_ARGUMENT;
        free(s->options[i].text);
        s->options[i] = parsed;
        return TI_OK;
    }
    if (e->option_count == 0) return tih_fail(s, TI_ERR_UNKNOWN_NAME, "unknown option \"%s\" (this engine has no options)", key);
    return tih_fail(s, TI_ERR_UNKNOWN_NAME, "unknown option \"%s\" (ti_describe lists the options)", key);
}

/* ---- sessions ----------------------------------------------------------------------------- */

static void free_session(tih_session *s) {
    const tih_engine *e = s->engine;
    if (s->inputs)
        for (size_t i = 0; i < e->input_count; i++) free((void *)s->inputs[i].data);
    if (s->options)
        for (size_t i = 0; i < e->option_count; i++) free(s->options[i].text);
    if (s->injections)
        for (size_t i = 0; i < e->boundary_count; i++) free(s->injections[i].data);
    free(s->inputs);
    free(s->options);
    free(s->injections);
    free(s->wanted);
    free(s->state);
    free(s);
}

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out, char *err,
                         size_t err_capacity) {
    if (err && err_capacity) err[0] = '\0';
    if (out == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "ti_open: out is NULL");
        return TI_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    const tih_engine *e = &TIH_ENGINE;
    tih_session *s = calloc(1, sizeof *s);
    if (s == NULL) {
        if (err && err_capacity) snprintf(err, err_capacity, "out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    s->engine = e;
    s->all_wanted = true;
    s->inputs = calloc(e->input_count ? e->input_count : 1, sizeof *s->inputs);
    s->options = calloc(e->option_count ? e->option_count : 1, sizeof *s->options);
    s->injections = calloc(e->boundary_count ? e->boundary_count : 1, sizeof *s->injections);
    s->wanted = calloc(e->boundary_count ? e->boundary_count : 1, sizeof *s->wanted);
    s->state = calloc(1, e->state_size ? e->state_size : 1);
    ti_status status = TI_OK;
    if (!s->inputs || !s->options || !s->injections || !s->wanted || !s->state) status = tih_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; status == TI_OK && i < e->option_count; i++) {
        const tih_option *opt = &e->options[i];
        if (!parse_option(s, opt, opt->default_value ? opt->default_value : "", &s->options[i])) status = TI_ERR_INTERNAL;
    }
    /* No weights (a bundle naming none, so the host passes NULL; "" alike): open gets NULL. */
    const char *weights = weights_path && weights_path[0] ? weights_path : NULL;
    if (status == TI_OK && e->open) status = e->open(s, config_json ? config_json : "{}", weights);
    if (status != TI_OK) {
        if (err && err_capacity) snprintf(err, err_capacity, "%s", s->error[0] ? s->error : ti_status_string(status));
        if (e->close) e->close(s);
        free_session(s);
        return status;
    }
    *out = s;
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    if (s->engine->close) s->engine->close(s);
    free_session(s);
}

TI_API const char *ti_last_error(const ti_session *s) { return s ? s->error : ""; }

/* ---- inputs and shapes -------------------------------------------------------------------- */

/* The value of a symbol bound by the inputs set so far, skipping input `except`; -1 if unbound. */
static int64_t bound_symbol(const tih_session *s, const char *symbol, size_t except) {
    const tih_engine *e = s->engine;
    for (size_t i = 0; i < e->input_count; i++) {
        if (i == except || s->inputs[i].data == NULL) continue;
        const tih_shape *shape = &e->inputs[i].shape;
        for (uint32_t d = 0; d < shape->rank; d++)
            if (shape->dims[d].symbol && strcmp(shape->dims[d].symbol, symbol) == 0) return s->inputs[i].shape[d];
    }
    return -1;
}

int64_t tih_symbol(const tih_session *s, const char *symbol) { return bound_symbol(s, symbol, (size_t)-1); }

/* Checks a tensor against a declared shape: rank, fixed extents, extents of symbols the inputs
 * bound (`except`: the input being set). Writes the first disagreement to s->error. */
static bool check_shape(tih_session *s, const char *what, const tih_shape *declared, uint32_t rank,
                        const int64_t *shape, size_t except) {
    if (rank != declared->rank) {
        tih_fail(s, TI_ERR_SHAPE, "%s: rank %u, the catalogue declares rank %u", what, rank, declared->rank);
        return false;
    }
    if (rank > 0 && shape == NULL) {
        tih_fail(s, TI_ERR_SHAPE, "%s: shape is NULL", what);
        return false;
    }
    for (uint32_t d = 0; d < rank; d++) {
        const tih_dim *dim = &declared->dims[d];
        int64_t want = dim->symbol ? bound_symbol(s, dim->symbol, except) : dim->size;
        if (shape[d] < 0 || (want >= 0 && shape[d] != want)) {
            if (dim->symbol)
                tih_fail(s, TI_ERR_SHAPE, "%s: extent %u is %" PRId64 ", symbol %s is %" PRId64 " here", what, d, shape[d], dim->symbol, want);
            else
                tih_fail(s, TI_ERR_SHAPE, "%s: extent %u is %" PRId64 ", the catalogue declares %" PRId64, what, d, shape[d], want);
            return false;
        }
    }
    return true;
}

/* Element count of a shape, or -1 on overflow. */
static int64_t element_count(uint32_t rank, const int64_t *shape) {
    int64_t n = 1;
    for (uint32_t d = 0; d < rank; d++) {
        if (shape[d] != 0 && n > INT64_MAX / shape[d]) return -1;
        n *= shape[d];
    }
    return n;
}

/* Checks dtype, shape and byte length of a tensor handed in by the host. */
static ti_status check_tensor(tih_session *s, const char *what, ti_dtype declared_dtype, const tih_shape *declared, uint32_t dtype,
                              uint32_t rank, const int64_t *shape, const void *data, uint64_t byte_length, size_t except) {
    if (dtype != (uint32_t)declared_dtype)
        return tih_fail(s, TI_ERR_SHAPE, "%s: dtype %s, the catalogue declares %s", what, dtype_name(dtype), dtype_name(declared_dtype));
    if (!check_shape(s, what, declared, rank, shape, except)) return TI_ERR_SHAPE;
    int64_t n = element_count(rank, shape);
    if (n < 0 || byte_length != (uint64_t)n * tih_dtype_size(dtype))
        return tih_fail(s, TI_ERR_SHAPE, "%s: %" PRIu64 " bytes for %" PRId64 " elements of %s", what, byte_length, n, dtype_name(dtype));
    if (byte_length > 0 && data == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "%s: data is NULL", what);
    return TI_OK;
}

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape,
                              const void *data, uint64_t byte_length) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (name == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "ti_set_input: name is NULL");
    if (s->passes_run > 0) return tih_fail(s, TI_ERR_STATE, "input %s: inputs are set before prefill (ti_reset first)", name);
    const tih_engine *e = s->engine;
    for (size_t i = 0; i < e->input_count; i++) {
        const tih_input *in = &e->inputs[i];
        if (strcmp(in->name, name) != 0) continue;
        char what[160];
        snprintf(what, sizeof what, "input %s", name);
        ti_status checked = check_tensor(s, what, in->dtype, &in->shape, dtype, rank, shape, data, byte_length, i);
        if (checked != TI_OK) return checked;
        void *copy = malloc(byte_length ? (size_t)byte_length : 1);
        if (copy == NULL) return tih_fail(s, TI_ERR_OUT_OF_MEMORY, "input %s: out of memory", name);
        if (byte_length) memcpy(copy, data, (size_t)byte_length);
        free((void *)s->inputs[i].data);
        tih_tensor *t = &s->inputs[i];
        t->dtype = (ti_dtype)dtype;
        t->rank = rank;
        for (uint32_t d = 0; d < rank; d++) t->shape[d] = shape[d];
        t->data = copy;
        t->byte_length = byte_length;
        return TI_OK;
    }
    return tih_fail(s, TI_ERR_UNKNOWN_NAME, "unknown input \"%s\" (ti_describe lists the inputs)", name);
}

/* ---- records, the wanted filter and injection -------------------------------------------------- */

TI_API ti_status ti_set_record_callback(ti_session *s, ti_record_fn fn, void *user) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->record = fn;
    s->record_user = user;
    return TI_OK;
}

static size_t boundary_index(const tih_session *s, const char *name) {
    for (size_t i = 0; i < s->engine->boundary_count; i++)
        if (strcmp(s->engine->boundaries[i].name, name) == 0) return i;
    return (size_t)-1;
}

TI_API ti_status ti_set_wanted(ti_session *s, const char *const *names, uint32_t count) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (count > 0 && names == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "ti_set_wanted: names is NULL");
    for (uint32_t i = 0; i < count; i++) {
        if (names[i] == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "ti_set_wanted: names[%u] is NULL", i);
        if (boundary_index(s, names[i]) == (size_t)-1) return tih_fail(s, TI_ERR_UNKNOWN_NAME, "unknown boundary \"%s\"", names[i]);
    }
    /* Validated before changing anything: a refused call leaves the filter as it was. */
    memset(s->wanted, 0, s->engine->boundary_count * sizeof *s->wanted);
    for (uint32_t i = 0; i < count; i++) s->wanted[boundary_index(s, names[i])] = true;
    s->all_wanted = count == 0;
    return TI_OK;
}

bool tih_wanted(const tih_session *s, size_t boundary) {
    return s->record != NULL && boundary < s->engine->boundary_count && (s->all_wanted || s->wanted[boundary]);
}

ti_status tih_emit_strided(tih_session *s, size_t boundary, const void *data, uint32_t rank, const int64_t *shape,
                           const int64_t *strides) {
    if (boundary >= s->engine->boundary_count) return tih_fail(s, TI_ERR_INTERNAL, "emit: boundary index %zu is not in the catalogue", boundary);
    if (!tih_wanted(s, boundary)) return TI_OK;
    const tih_boundary *b = &s->engine->boundaries[boundary];
    if (rank > TI_MAX_RANK) return tih_fail(s, TI_ERR_INTERNAL, "emit %s: rank %u exceeds %d", b->name, rank, TI_MAX_RANK);
    /* The addressed span: one past the furthest element, in elements. */
    uint64_t span = 1;
    for (uint32_t d = 0; d < rank; d++) {
        if (shape[d] == 0) {
            span = 0;
            break;
        }
        span += (uint64_t)(shape[d] - 1) * (uint64_t)strides[d];
    }
    const ti_record rec = {s->passes_run, s->passes_run == 0 ? TI_PASS_PREFILL : TI_PASS_DECODE, b->name, (uint32_t)b->dtype,
                           rank, shape, strides, data, span * tih_dtype_size(b->dtype)};
    return s->record(s->record_user, &rec) == 0 ? TI_OK : tih_fail(s, TI_ERR_ABORTED, "stopped by the host at %s", b->name);
}

ti_status tih_emit(tih_session *s, size_t boundary, const void *data, uint32_t rank, const int64_t *shape) {
    int64_t strides[TI_MAX_RANK];
    int64_t step = 1;
    if (rank > TI_MAX_RANK) return tih_fail(s, TI_ERR_INTERNAL, "emit: rank %u exceeds %d", rank, TI_MAX_RANK);
    for (uint32_t d = rank; d-- > 0;) {
        strides[d] = step;
        step *= shape[d];
    }
    return tih_emit_strided(s, boundary, data, rank, shape, strides);
}

TI_API ti_status ti_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank, const int64_t *shape,
                           const void *data, uint64_t byte_length) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (boundary == NULL) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "ti_inject: boundary is NULL");
    size_t index = boundary_index(s, boundary);
    if (index == (size_t)-1) return tih_fail(s, TI_ERR_UNKNOWN_NAME, "unknown boundary \"%s\"", boundary);
    const tih_boundary *b = &s->engine->boundaries[index];
    if (!b->injectable) return tih_fail(s, TI_ERR_INVALID_ARGUMENT, "boundary %s does not accept injection (the catalogue says injectable: false)", boundary);
    char what[160];
    snprintf(what, sizeof what, "injection at %s", boundary);
    /* Pass-dependent symbols (unbound by inputs) are checked when the pass reaches the boundary. */
    ti_status checked = check_tensor(s, what, b->dtype, &b->shape, dtype, rank, shape, data, byte_length, (size_t)-1);
    if (checked != TI_OK) return checked;
    void *copy = malloc(byte_length ? (size_t)byte_length : 1);
    if (copy == NULL) return tih_fail(s, TI_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    if (byte_length) memcpy(copy, data, (size_t)byte_length);
    tih_injection *slot = &s->injections[index];
    free(slot->data);
    slot->set = true;
    slot->rank = rank;
    for (uint32_t d = 0; d < rank; d++) slot->shape[d] = shape[d];
    slot->data = copy;
    slot->byte_length = byte_length;
    return TI_OK;
}

ti_status tih_emit_injectable(tih_session *s, size_t boundary, void *data, uint32_t rank, const int64_t *shape) {
    ti_status status = tih_emit(s, boundary, data, rank, shape); /* the engine's own value first */
    if (status != TI_OK || boundary >= s->engine->boundary_count) return status;
    tih_injection *slot = &s->injections[boundary];
    if (!slot->set) return TI_OK;
    const char *name = s->engine->boundaries[boundary].name;
    if (slot->rank != rank) return tih_fail(s, TI_ERR_SHAPE, "injection at %s: rank %u, this pass computes rank %u", name, slot->rank, rank);
    for (uint32_t d = 0; d < rank; d++)
        if (slot->shape[d] != shape[d])
            return tih_fail(s, TI_ERR_SHAPE, "injection at %s: extent %u is %" PRId64 ", this pass computes %" PRId64, name, d, slot->shape[d], shape[d]);
    if (slot->byte_length) memcpy(data, slot->data, (size_t)slot->byte_length);
    return TI_OK;
}

static void clear_injections(tih_session *s) {
    for (size_t i = 0; i < s->engine->boundary_count; i++) {
        free(s->injections[i].data);
        s->injections[i] = (tih_injection){0};
    }
}

/* ---- passes ------------------------------------------------------------------------------- */

static ti_status run_pass(tih_session *s) {
    if (s->in_pass) return tih_fail(s, TI_ERR_STATE, "a pass is already running in this session");
    s->error[0] = '\0';
    s->in_pass = true;
    ti_status status = s->engine->pass ? s->engine->pass(s) : tih_fail(s, TI_ERR_INTERNAL, "the engine defines no pass function");
    s->in_pass = false;
    clear_injections(s); /* whether the pass completed or not */
    if (status == TI_OK) s->passes_run++;
    else if (s->error[0] == '\0') tih_fail(s, status, "pass %u failed: %s", s->passes_run, ti_status_string(status));
    return status;
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run != 0) return tih_fail(s, TI_ERR_STATE, "prefill already ran; call ti_reset first");
    const tih_engine *e = s->engine;
    for (size_t i = 0; i < e->input_count; i++)
        if (e->inputs[i].required && s->inputs[i].data == NULL) return tih_fail(s, TI_ERR_STATE, "set input %s before prefill", e->inputs[i].name);
    return run_pass(s);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run == 0) return tih_fail(s, TI_ERR_STATE, "decode before prefill");
    return run_pass(s);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->engine->reset == NULL) return tih_fail(s, TI_ERR_STATE, "this engine cannot rewind its state; open a new session");
    ti_status status = s->engine->reset(s);
    if (status == TI_OK) {
        s->passes_run = 0;
        clear_injections(s);
    }
    return status;
}

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{}";
    int n = snprintf(s->state_json, sizeof s->state_json, "{\"passes_run\":%u", s->passes_run);
    if (s->engine->state_json && n > 0 && (size_t)n + 2 < sizeof s->state_json) {
        char extra[TIH_STATE_CAPACITY];
        extra[0] = '\0';
        s->engine->state_json(s, extra, sizeof extra);
        if (extra[0] && (size_t)n + 1 + strlen(extra) + 2 <= sizeof s->state_json) n += snprintf(s->state_json + n, sizeof s->state_json - (size_t)n, ",%s", extra);
    }
    snprintf(s->state_json + n, sizeof s->state_json - (size_t)n, "}");
    return s->state_json;
}
