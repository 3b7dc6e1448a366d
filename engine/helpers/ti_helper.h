/*
 * ti_helper.h — write a trace-inspector engine without the ABI boilerplate.
 *
 * engine/include/trace_abi.h is the contract; ti_helper.c implements every exported ti_
 * function of it once, for any engine that defines one `tih_engine` named TIH_ENGINE:
 *
 *   - the catalogue: ti_describe() JSON built from the engine's tables of inputs, boundaries
 *     and options (dtypes, shapes with symbols, emit conditions, docs), escaped and validated;
 *   - inputs: ti_set_input copies a declared input after checking dtype, rank and the fixed
 *     extents; a symbol ("N") is bound by the first input that uses it and checked against later
 *     ones; required inputs are checked before prefill;
 *   - options: declared bool / int / string options, parsed and range-checked by type; read with
 *     tih_option_bool / tih_option_int / tih_option_string;
 *   - records: tih_emit (contiguous) and tih_emit_strided honour the host's callback and the
 *     wanted filter (ti_set_wanted), fill pass index and kind, and turn a host "stop" into
 *     TI_ERR_ABORTED;
 *   - injection: ti_inject checks the boundary is injectable, the dtype, the rank, the fixed and
 *     bound extents (docs/implementing-the-abi.md); tih_emit_injectable records the engine's own
 *     value, then checks the pass-dependent extents and copies the injected value over it;
 *     injections are cleared when a pass ends, whether it completed or not;
 *   - errors: tih_fail formats the session's ti_last_error message; ti_open's err buffer and
 *     ti_status_string are handled; NULL sessions and names are refused, never dereferenced.
 *
 * The engine supplies its per-session state (state_size bytes, zeroed, tih_state(s)) and a
 * few callbacks: open (read weights), close, pass (one prefill or decode), optionally reset and
 * state_json. Helper names use the tih_ prefix; only the ABI's ti_ symbols are exported.
 * C11; no global mutable state; one session is used from one thread at a time (as the ABI says).
 */
#ifndef TI_HELPER_H
#define TI_HELPER_H

#include "trace_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A shape as the catalogue declares it: up to TI_MAX_RANK extents, each a fixed size or a
 * symbol. Write it with TIH_SHAPE: TIH_SHAPE(TIH_SYM("N")), TIH_SHAPE(TIH_DIM(1)),
 * TIH_SHAPE(TIH_SYM("C"), TIH_SYM("T")). */
typedef struct tih_dim {
    int64_t size;       /* the extent when symbol is NULL */
    const char *symbol; /* e.g. "T"; NULL for a fixed extent */
} tih_dim;

typedef struct tih_shape {
    uint32_t rank;
    tih_dim dims[TI_MAX_RANK];
} tih_shape;

#define TIH_DIM(n) {(n), NULL}
#define TIH_SYM(s) {0, (s)}
#define TIH_SHAPE(...) \
    {sizeof((tih_dim[]){__VA_ARGS__}) / sizeof(tih_dim), {__VA_ARGS__}}

typedef struct tih_input {
    const char *name;
    ti_dtype dtype;
    tih_shape shape;
    bool required;
    const char *doc;
} tih_input;

typedef struct tih_boundary {
    const char *name;  /* stable dotted name */
    const char *stage; /* NULL: the name's first dotted part */
    ti_dtype dtype;
    tih_shape shape;
    const char *emit;  /* "every_pass", "prefill", "engine_decides", ... (trace_abi.h); NULL: "every_pass" */
    bool injectable;
    const char *doc;
} tih_boundary;

typedef enum tih_option_type { TIH_BOOL = 0, TIH_INT = 1, TIH_STRING = 2 } tih_option_type;

typedef struct tih_option {
    const char *name; /* e.g. "perturb.dilation_off_by_one" */
    tih_option_type type;
    const char *default_value; /* as ti_set_option would receive it: "0", "42", "text" */
    const char *doc;
} tih_option;

typedef struct ti_session tih_session; /* the ABI's session, managed by ti_helper.c */

/* A tensor the host set with ti_set_input (owned by the session). */
typedef struct tih_tensor {
    ti_dtype dtype;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK];
    const void *data;
    uint64_t byte_length;
} tih_tensor;

typedef struct tih_engine {
    const char *name, *version, *build_id;
    const char *model_json; /* a JSON object of free-form dimensions, NULL: {} */
    const tih_input *inputs;
    size_t input_count;
    const tih_boundary *boundaries; /* in execution order */
    size_t boundary_count;
    const tih_option *options;
    size_t option_count;
    size_t state_size; /* bytes of per-session engine state, zeroed at open */
    /* Read weights, allocate state. Report failures with tih_fail. May be NULL. weights_path is
     * NULL when the reference names no weights (an engine that embeds or generates them). */
    ti_status (*open)(tih_session *s, const char *config_json, const char *weights_path);
    /* Free what open and the passes allocated inside the state. May be NULL. */
    void (*close)(tih_session *s);
    /* Run one pass: tih_pass_index(s) is 0 for the prefill. Required. */
    ti_status (*pass)(tih_session *s);
    /* Return to before prefill (inputs and options are kept). NULL: ti_reset refuses. */
    ti_status (*reset)(tih_session *s);
    /* Extra members of ti_session_state, written as `"key":value,...` (no braces). May be NULL. */
    void (*state_json)(tih_session *s, char *out, size_t capacity);
} tih_engine;

/* The engine defines exactly one of these; ti_helper.c exports the ABI from it. */
extern const tih_engine TIH_ENGINE;

/* The engine's per-session state (state_size bytes). */
void *tih_state(tih_session *s);
/* Index of the pass being run (0 = prefill) and the number of passes completed so far. */
uint32_t tih_pass_index(const tih_session *s);
/* The input with this catalogue index, NULL when not set. */
const tih_tensor *tih_input_tensor(const tih_session *s, size_t input);
/* Value of a shape symbol bound by the inputs ("N"), -1 when none bound it. */
int64_t tih_symbol(const tih_session *s, const char *symbol);
/* Option values by catalogue index (the default until ti_set_option changes them). */
bool tih_option_bool(const tih_session *s, size_t option);
int64_t tih_option_int(const tih_session *s, size_t option);
const char *tih_option_string(const tih_session *s, size_t option);

/* Record the message of a failure (printf format) and return `status`. */
ti_status tih_fail(tih_session *s, ti_status status, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Is anyone listening for this boundary (callback set and the boundary wanted)? Use it to skip
 * building a value that exists only to be recorded. */
bool tih_wanted(const tih_session *s, size_t boundary);

/* Record a contiguous row-major tensor at a boundary (catalogue index); dtype from the catalogue.
 * Returns TI_ERR_ABORTED when the host asked to stop. */
ti_status tih_emit(tih_session *s, size_t boundary, const void *data, uint32_t rank, const int64_t *shape);

/* Record a tensor with explicit strides (in elements); byte_length covers the addressed span. */
ti_status tih_emit_strided(tih_session *s, size_t boundary, const void *data, uint32_t rank, const int64_t *shape,
                           const int64_t *strides);

/* At an injectable boundary: record `data` (the engine's own value), then, when the host
 * injected a value for this pass, check it has exactly this shape and copy it over `data`, so
 * everything downstream follows the injected value. */
ti_status tih_emit_injectable(tih_session *s, size_t boundary, void *data, uint32_t rank, const int64_t *shape);

/* Size in bytes of one element of a dtype (0 for an unknown one). */
size_t tih_dtype_size(uint32_t dtype);

#ifdef __cplusplus
}
#endif

#endif /* TI_HELPER_H */
