/*
 * trace_abi.h — the trace-inspector engine ABI, version 1.
 *
 * Any native inference engine that exports these symbols can be opened by
 * trace-inspector: the inspector sets named inputs, runs prefill and decode
 * passes, and receives every boundary tensor through a record callback.
 *
 * Rules that hold for every function:
 *  - Plain C, no C++ exceptions, no allocations cross the boundary: every pointer
 *    the engine returns stays owned by the engine; every pointer the host passes
 *    in is borrowed for the duration of the call only (the engine copies what it keeps).
 *  - Nothing aborts or exits the process on bad input: failures return a ti_status
 *    and leave a message readable with ti_last_error() (or in the err buffer of ti_open).
 *  - A session is used from one thread at a time.
 */
#ifndef TRACE_ABI_H
#define TRACE_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TI_API __declspec(dllexport)
#else
#define TI_API __attribute__((visibility("default")))
#endif

#define TI_ABI_VERSION 1u

typedef enum ti_status {
    TI_OK = 0,
    TI_ERR_INVALID_ARGUMENT = 1, /* a NULL, an out-of-range value, a malformed JSON config */
    TI_ERR_IO = 2,               /* a file could not be opened or read */
    TI_ERR_FORMAT = 3,           /* a weights file or tensor is malformed */
    TI_ERR_STATE = 4,            /* the call is not valid now (decode before prefill, ...) */
    TI_ERR_UNKNOWN_NAME = 5,     /* an input, boundary or option name the engine does not know */
    TI_ERR_SHAPE = 6,            /* dtype, rank, shape or byte length disagree with the declaration */
    TI_ERR_OUT_OF_MEMORY = 7,
    TI_ERR_ABORTED = 8,          /* the record callback asked to stop the pass */
    TI_ERR_INTERNAL = 9
} ti_status;

/* Element types. complex64 is interleaved (re, im) float32 pairs; bool is one byte (0 or 1). */
typedef enum ti_dtype {
    TI_F32 = 0,
    TI_F16 = 1,
    TI_BF16 = 2,
    TI_F64 = 3,
    TI_I8 = 4,
    TI_I16 = 5,
    TI_I32 = 6,
    TI_I64 = 7,
    TI_U8 = 8,
    TI_U16 = 9,
    TI_U32 = 10,
    TI_U64 = 11,
    TI_BOOL = 12,
    TI_C64 = 13
} ti_dtype;

typedef enum ti_pass_kind { TI_PASS_PREFILL = 0, TI_PASS_DECODE = 1 } ti_pass_kind;

#define TI_MAX_RANK 8

/*
 * One boundary record. Valid only during the callback: the host copies what it keeps.
 * shape and strides have `rank` entries; strides are in elements (not bytes) and describe
 * how the engine's buffer maps logical indices to memory, so a transposed buffer is
 * described truthfully rather than copied. byte_length covers the whole addressed span.
 */
typedef struct ti_record {
    uint32_t pass_index;   /* 0 for prefill, 1.. for decode passes */
    uint32_t pass_kind;    /* ti_pass_kind */
    const char *name;      /* stable dotted boundary name from the catalogue */
    uint32_t dtype;        /* ti_dtype */
    uint32_t rank;
    const int64_t *shape;
    const int64_t *strides;
    const void *data;
    uint64_t byte_length;
} ti_record;

/* Return 0 to continue; any other value stops the pass with TI_ERR_ABORTED. */
typedef int (*ti_record_fn)(void *user, const ti_record *record);

typedef struct ti_session ti_session;

/* TI_ABI_VERSION of the library. The host refuses a library whose version it does not speak. */
TI_API uint32_t ti_abi_version(void);

/*
 * Self-description as a NUL-terminated JSON document owned by the library (static):
 *   { "abi_version": 1,
 *     "engine":  { "name", "version", "build_id" },
 *     "model":   { free-form dimensions },
 *     "inputs":  [ { "name", "dtype", "shape": [int | symbol], "required", "doc" } ],
 *     "boundaries": [ { "name", "stage", "dtype", "shape": [int | symbol],
 *                       "emit": "every_pass" | "prefill" | "engine_decides"
 *                               | "text_out" | "audio_out" | "prefill_audio_in" | "audio_frame",
 *                       (optional: absent means "every_pass"; engine_decides: the engine emits
 *                        it when it chooses, so it may be absent from any pass; the last four
 *                        are the reference model's, docs/implementing-the-abi.md)
 *                       "injectable": bool, "doc" } ],        (in execution order)
 *     "options": [ { "name", "type": "bool" | "int" | "string", "default", "doc" } ] }
 */
TI_API const char *ti_describe(void);

/* Human-readable name of a status ("TI_ERR_SHAPE", ...). Never NULL. */
TI_API const char *ti_status_string(ti_status status);

/*
 * Open a session. config_json may be NULL or "{}". weights_path is NULL when the reference
 * bundle names no weights (an engine that embeds or generates them): such an engine opens
 * without; one that needs weights refuses NULL with a message. On failure *out is NULL and a message
 * (naming the file and the field when one is at fault) is written to err (NUL-terminated,
 * truncated to err_capacity).
 */
TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out,
                         char *err, size_t err_capacity);

/* Close a session; NULL is accepted. */
TI_API void ti_close(ti_session *session);

/*
 * Message of the session's last failure ("" when none), NUL-terminated. Owned by the session.
 * Lifetime: the pointer and its text stay valid until the next call that takes this session
 * (any ti_* function: a call may rewrite or clear the message) or ti_close; the host copies the
 * text before its next call. For a NULL session the engine may return a static string.
 * Not to be called concurrently with another call on the same session.
 */
TI_API const char *ti_last_error(const ti_session *session);

/* Set a named input tensor (copied). Inputs must be set before prefill. */
TI_API ti_status ti_set_input(ti_session *session, const char *name, uint32_t dtype, uint32_t rank,
                              const int64_t *shape, const void *data, uint64_t byte_length);

/* Set an engine option, e.g. a deliberate perturbation ("perturb.kv_cursor", "1"). */
TI_API ti_status ti_set_option(ti_session *session, const char *key, const char *value);

/* Register the record callback; fn NULL disables recording (the engine skips the copies). */
TI_API ti_status ti_set_record_callback(ti_session *session, ti_record_fn fn, void *user);

/*
 * Restrict recording to the named boundaries (the "ask" phase: the engine does not build
 * records nobody observes). count 0 restores "all boundaries".
 */
TI_API ti_status ti_set_wanted(ti_session *session, const char *const *names, uint32_t count);

/*
 * Replace the engine's value at a named boundary on the next pass with this tensor
 * (copied; row-major; dtype and shape as the catalogue declares them for that pass).
 * When the pass reaches the boundary, the engine first RECORDS ITS OWN COMPUTED VALUE there
 * (a record is always an observation of what the engine computed), then continues downstream
 * with the injected value: everything after the boundary — later boundaries, state updates
 * (caches, carries), the generation schedule — follows the injected value. An injected token or
 * code is what the next step embeds and what the schedule sees (e.g. an injected end-of-audio
 * code switches modes). This gives teacher forcing (the record still shows the engine's own
 * choice, later passes stay comparable) and layer isolation (inject a segment's reference input:
 * the records inside the segment show the error that segment alone adds). An injection at a
 * boundary the pass does not reach is ignored. Injections are cleared when the pass ends.
 */
TI_API ti_status ti_inject(ti_session *session, const char *boundary, uint32_t dtype, uint32_t rank,
                           const int64_t *shape, const void *data, uint64_t byte_length);

/* Run the prefill pass (pass index 0) over the inputs. */
TI_API ti_status ti_prefill(ti_session *session);

/* Run one decode pass (pass index 1, 2, ...). */
TI_API ti_status ti_decode(ti_session *session);

/* Return to the state before prefill; inputs and options are kept. */
TI_API ti_status ti_reset(ti_session *session);

/* Session state as JSON owned by the session, e.g. the reference engine's
 * { "passes_run", "cursor", "next_mode", "last_output", "count", "prng_counter" }; the host reads
 * "last_output" ("text" | "audio" | null) as the output mode of the pass just run.
 * Lifetime: valid until the next call that takes this session (the reference engine rewrites one
 * buffer on every ti_session_state call) or ti_close; the host copies it before its next call.
 * Not to be called concurrently with another call on the same session. */
TI_API const char *ti_session_state(ti_session *session);

#ifdef __cplusplus
}
#endif

#endif /* TRACE_ABI_H */
