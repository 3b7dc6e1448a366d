/*
 * toy_engine.h — a tiny but honest trace ABI 1 engine shared by the test libraries.
 *
 * Each testlibs/<name>.c defines the TOY_* knobs it needs and includes this file once, so the
 * crash, hang and bad-input libraries differ from a well-behaved engine only where they mean to.
 * (engine/Makefile builds every .c file of testlibs/ on its own; this header is not a library.)
 *
 * The model: inputs `prompt_tokens` (i32 [T], required); a pass consumes T positions (the prompt
 * for prefill, the previous token for decode) and emits, in this order:
 *   toy.embed  f32 [T, 4]  row-major            embed[t][j] = token_t * 0.5 + j + cursor_t
 *   toy.mix    f32 [T, 4]  stored transposed    mix[t][j] = sign * embed[t][j] * (j + 1)
 *                          (strides [1, T]: the buffer is [4][T], described truthfully)
 *   toy.token  i32 [1]                          (sum of the last row of mix) mod 97, as an int
 * Options: `perturb.flip_sign` (bool) negates toy.mix. Injectable: toy.embed, toy.token.
 */
#ifndef TOY_ENGINE_H
#define TOY_ENGINE_H

#include "trace_abi.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
/* What goes wrong in decode pass 1, after TOY_FAULT_AFTER boundaries of that pass. */
#define TOY_FAULT_NONE 0
#define TOY_FAULT_SEGV 1  /* dereference NULL */
#define TOY_FAULT_HANG 2  /* never return (toy_hang_forever) */
#define TOY_FAULT_ABORT 3 /* abort() */
/* The TOY_FAULT_AFTER-th record of decode pass 1 points its data at unmapped memory: the host
 * faults (SIGSEGV) while copying it, inside the record callback. */
#define TOY_FAULT_BAD_DATA 4
/* The TOY_FAULT_AFTER-th record of decode pass 1 is emitted from a thread the engine creates
 * (and joins): the host's record callback is bound to the thread that called ti_decode. */
#define TOY_FAULT_FOREIGN_THREAD 5
/* Prefill forks a child that sleeps 30 s holding every descriptor the engine host had (its
 * stdout and stderr too), then exits: it must not outlive the engine host. */
#define TOY_FAULT_FORK_LINGER 6
/* Decode pass 1 emits a record the catalogue does not know (the host asks to stop), ignores the
 * callback's answer and returns TI_OK. */
#define TOY_FAULT_IGNORE_STOP 7
/* The TOY_FAULT_AFTER-th record of decode pass 1 says shape [2^33, 2^31] (2^64 elements: the
 * product overflows 64 bits; byte_length is what the overflowed product gives, 0). */
#define TOY_FAULT_SHAPE_OVERFLOW 8
/* The TOY_FAULT_AFTER-th record of decode pass 1 breaks the record contract in the way the
 * environment variable TOY_BAD_RECORD names (toy_break_record): the host must stop the pass and
 * name the violation. */
#define TOY_FAULT_BAD_RECORD 9

/* What goes wrong while the library is loaded (a constructor runs at dlopen, before any ti_* call). */
#define TOY_CONSTRUCTOR_NONE 0
#define TOY_CONSTRUCTOR_SEGV 1
#define TOY_CONSTRUCTOR_HANG 2
#ifndef TOY_CONSTRUCTOR_FAULT
#define TOY_CONSTRUCTOR_FAULT TOY_CONSTRUCTOR_NONE
#endif

#ifndef TOY_FAULT
#define TOY_FAULT TOY_FAULT_NONE
#endif
#ifndef TOY_FAULT_AFTER
#define TOY_FAULT_AFTER 2
#endif
#ifndef TOY_ABI_VERSION_VALUE
#define TOY_ABI_VERSION_VALUE TI_ABI_VERSION
#endif
#ifndef TOY_ENGINE_NAME
#define TOY_ENGINE_NAME "toy"
#endif

#if TOY_FAULT == TOY_FAULT_FOREIGN_THREAD
#include <pthread.h>
#endif
#if TOY_FAULT == TOY_FAULT_BAD_RECORD
#include <stdlib.h>
#endif
#if TOY_FAULT == TOY_FAULT_FORK_LINGER
#include <sys/types.h>
#include <unistd.h>
#endif

#if TOY_CONSTRUCTOR_FAULT == TOY_CONSTRUCTOR_HANG || TOY_FAULT == TOY_FAULT_HANG
/* A hang: never returns. It sleeps rather than spins: a hung engine the host cannot stop (thread
 * isolation) otherwise burned a core for the rest of the test process, and the tests that wait
 * for a hang's timeout shared the machine with it. What the host sees is the same: a call that
 * does not come back. */
static void toy_hang_forever(void) {
    for (;;) {
        struct timespec second = {1, 0};
        nanosleep(&second, NULL);
    }
}
#endif

#if TOY_CONSTRUCTOR_FAULT != TOY_CONSTRUCTOR_NONE
__attribute__((constructor)) static void toy_constructor_fault(void) {
#if TOY_CONSTRUCTOR_FAULT == TOY_CONSTRUCTOR_SEGV
    volatile int *volatile nowhere = NULL;
    *nowhere = 42;
#else
    toy_hang_forever();
#endif
}
#endif

#define TOY_D 4
#define TOY_MAX_T 4096

#ifndef TOY_DESCRIBE_JSON
#define TOY_DESCRIBE_JSON                                                                          \
    "{\"abi_version\":1,"                                                                          \
    "\"engine\":{\"name\":\"" TOY_ENGINE_NAME "\",\"version\":\"0.1.0\",\"build_id\":\"testlib\"},"  \
    "\"model\":{\"D\":4},"                                                                         \
    "\"inputs\":[{\"name\":\"prompt_tokens\",\"dtype\":\"i32\",\"shape\":[\"T\"],\"required\":true," \
    "\"doc\":\"token ids\"}],"                                                                      \
    "\"boundaries\":["                                                                             \
    "{\"name\":\"toy.embed\",\"stage\":\"toy\",\"dtype\":\"f32\",\"shape\":[\"T\",4],"                 \
    "\"emit\":\"every_pass\",\"injectable\":true,\"doc\":\"embedding rows\"},"                      \
    "{\"name\":\"toy.mix\",\"stage\":\"toy\",\"dtype\":\"f32\",\"shape\":[\"T\",4],"                   \
    "\"emit\":\"every_pass\",\"injectable\":false,\"doc\":\"scaled rows, stored transposed\"},"     \
    "{\"name\":\"toy.token\",\"stage\":\"sampler\",\"dtype\":\"i32\",\"shape\":[1],"                   \
    "\"emit\":\"every_pass\",\"injectable\":true,\"doc\":\"the pass output\"}],"                    \
    "\"options\":[{\"name\":\"perturb.flip_sign\",\"type\":\"bool\",\"default\":false,"             \
    "\"doc\":\"negate toy.mix\"}]}"
#endif

struct ti_session {
    int32_t *prompt;
    int64_t prompt_len;
    int flip_sign;
    int passes_run; /* passes completed since open/reset */
    int64_t cursor;
    int32_t last_token;
    ti_record_fn fn;
    void *user;
    int wanted[3]; /* per boundary: record it */
    int inject_embed, inject_token;
    float *injected_embed;
    int64_t injected_embed_rows;
    int32_t injected_token;
    char error[256];
    char state[160];
};

static const char *const toy_boundary_names[3] = {"toy.embed", "toy.mix", "toy.token"};

TI_API uint32_t ti_abi_version(void) { return TOY_ABI_VERSION_VALUE; }

TI_API const char *ti_describe(void) { return TOY_DESCRIBE_JSON; }

#include "testlib_status.h"

static ti_status toy_fail(ti_session *s, ti_status status, const char *message) {
    snprintf(s->error, sizeof s->error, "%s", message);
    return status;
}

static void toy_all_wanted(ti_session *s) {
    for (int i = 0; i < 3; i++) s->wanted[i] = 1;
}

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out,
                         char *err, size_t err_capacity) {
    (void)config_json;
    (void)weights_path; /* the toy has no weights */
    if (out == NULL) {
        if (err != NULL && err_capacity > 0) snprintf(err, err_capacity, "ti_open: out is NULL");
        return TI_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    ti_session *s = calloc(1, sizeof *s);
    if (s == NULL) {
        if (err != NULL && err_capacity > 0) snprintf(err, err_capacity, "ti_open: out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    toy_all_wanted(s);
    *out = s;
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    free(s->prompt);
    free(s->injected_embed);
    free(s);
}

TI_API const char *ti_last_error(const ti_session *s) { return s == NULL ? "" : s->error; }

static int64_t toy_elements(uint32_t rank, const int64_t *shape) {
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; i++) n *= shape[i];
    return n;
}

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank,
                              const int64_t *shape, const void *data, uint64_t byte_length) {
    if (s == NULL || name == NULL || (rank > 0 && shape == NULL)) return TI_ERR_INVALID_ARGUMENT;
    if (strcmp(name, "prompt_tokens") != 0) {
        char message[200];
        snprintf(message, sizeof message, "unknown input '%.120s' (this engine takes prompt_tokens)", name);
        return toy_fail(s, TI_ERR_UNKNOWN_NAME, message);
    }
    if (dtype != TI_I32 || rank != 1 || shape[0] < 1 || shape[0] > TOY_MAX_T ||
        byte_length != (uint64_t)toy_elements(rank, shape) * 4u || data == NULL)
        return toy_fail(s, TI_ERR_SHAPE, "input prompt_tokens must be i32 [T] with 1 <= T <= 4096");
    int32_t *copy = malloc((size_t)byte_length);
    if (copy == NULL) return toy_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
    memcpy(copy, data, (size_t)byte_length);
    free(s->prompt);
    s->prompt = copy;
    s->prompt_len = shape[0];
    return TI_OK;
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL || key == NULL || value == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (strcmp(key, "perturb.flip_sign") != 0) {
        char message[200];
        snprintf(message, sizeof message, "unknown option '%.120s'", key);
        return toy_fail(s, TI_ERR_UNKNOWN_NAME, message);
    }
    if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0) s->flip_sign = 1;
    else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0) s->flip_sign = 0;
    else return toy_fail(s, TI_ERR_INVALID_ARGUMENT, "option perturb.flip_sign takes true/false");
    return TI_OK;
}

TI_API ti_status ti_set_record_callback(ti_session *s, ti_record_fn fn, void *user) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->fn = fn;
    s->user = user;
    return TI_OK;
}

static int toy_boundary_index(const char *name) {
    for (int i = 0; i < 3; i++)
        if (strcmp(name, toy_boundary_names[i]) == 0) return i;
    return -1;
}

TI_API ti_status ti_set_wanted(ti_session *s, const char *const *names, uint32_t count) {
    if (s == NULL || (count > 0 && names == NULL)) return TI_ERR_INVALID_ARGUMENT;
    if (count == 0) {
        toy_all_wanted(s);
        return TI_OK;
    }
    int wanted[3] = {0, 0, 0};
    for (uint32_t i = 0; i < count; i++) {
        int b = names[i] == NULL ? -1 : toy_boundary_index(names[i]);
        if (b < 0) {
            char message[200];
            snprintf(message, sizeof message, "unknown boundary '%.120s'", names[i] == NULL ? "(null)" : names[i]);
            return toy_fail(s, TI_ERR_UNKNOWN_NAME, message);
        }
        wanted[b] = 1;
    }
    memcpy(s->wanted, wanted, sizeof wanted);
    return TI_OK;
}

static int64_t toy_next_positions(const ti_session *s) { return s->passes_run == 0 ? s->prompt_len : 1; }

TI_API ti_status ti_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank,
                           const int64_t *shape, const void *data, uint64_t byte_length) {
    if (s == NULL || boundary == NULL || data == NULL || (rank > 0 && shape == NULL)) return TI_ERR_INVALID_ARGUMENT;
    int b = toy_boundary_index(boundary);
    if (b < 0) return toy_fail(s, TI_ERR_UNKNOWN_NAME, "unknown boundary");
    if (b == 1) return toy_fail(s, TI_ERR_INVALID_ARGUMENT, "boundary toy.mix is not injectable");
    if (b == 0) {
        int64_t t = toy_next_positions(s);
        if (dtype != TI_F32 || rank != 2 || shape[0] != t || shape[1] != TOY_D ||
            byte_length != (uint64_t)(t * TOY_D) * 4u)
            return toy_fail(s, TI_ERR_SHAPE, "toy.embed injection must be f32 [T, 4] for the next pass");
        float *copy = malloc((size_t)byte_length);
        if (copy == NULL) return toy_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
        memcpy(copy, data, (size_t)byte_length);
        free(s->injected_embed);
        s->injected_embed = copy;
        s->injected_embed_rows = t;
        s->inject_embed = 1;
        return TI_OK;
    }
    if (dtype != TI_I32 || rank != 1 || shape[0] != 1 || byte_length != 4u)
        return toy_fail(s, TI_ERR_SHAPE, "toy.token injection must be i32 [1]");
    memcpy(&s->injected_token, data, 4);
    s->inject_token = 1;
    return TI_OK;
}

static void toy_fault_point(const ti_session *s, uint32_t pass_index, int *reached) {
    (void)s;
    *reached += 1;
    if (TOY_FAULT == TOY_FAULT_NONE || pass_index != 1 || *reached != TOY_FAULT_AFTER) return;
#if TOY_FAULT == TOY_FAULT_SEGV
    {
        /* volatile twice: the compiler must neither see the NULL (and emit a trap instead) nor drop the store */
        volatile int *volatile nowhere = NULL;
        *nowhere = 42;
    }
#elif TOY_FAULT == TOY_FAULT_HANG
    toy_hang_forever();
#elif TOY_FAULT == TOY_FAULT_ABORT
    abort();
#endif
}

#if TOY_FAULT == TOY_FAULT_FOREIGN_THREAD
struct toy_thread_call {
    ti_session *s;
    const ti_record *r;
    int result;
};

static void *toy_thread_main(void *arg) {
    struct toy_thread_call *call = arg;
    call->result = call->s->fn(call->s->user, call->r);
    return NULL;
}

static int toy_emit_from_thread(ti_session *s, const ti_record *r) {
    struct toy_thread_call call = {s, r, 0};
    pthread_t thread;
    if (pthread_create(&thread, NULL, toy_thread_main, &call) != 0) return 1;
    pthread_join(thread, NULL);
    return call.result;
}
#endif

#if TOY_FAULT == TOY_FAULT_BAD_RECORD
/* Breaks `r` as TOY_BAD_RECORD says; returns nonzero when the callback asked to stop (duplicate: the record is emitted twice). */
static int toy_break_record(ti_session *s, ti_record *r, int64_t *shape, int64_t *strides) {
    const char *bad = getenv("TOY_BAD_RECORD");
    if (bad == NULL) return 0;
    for (uint32_t axis = 0; axis < r->rank && axis < 2; axis++) {
        shape[axis] = r->shape[axis];
        strides[axis] = r->strides != NULL ? r->strides[axis] : 0;
    }
    if (strcmp(bad, "pass_index") == 0) r->pass_index += 1;
    else if (strcmp(bad, "pass_kind") == 0) r->pass_kind ^= 1u;
    else if (strcmp(bad, "name") == 0) r->name = "toy.unknown";
    else if (strcmp(bad, "null_name") == 0) r->name = NULL;
    else if (strcmp(bad, "dtype") == 0) {
        /* Whatever element size a host that skipped the dtype check read for 99 (its table has 14),
         * the data covers the span: such a host would take the record, not stop on another check. */
        static uint8_t covering[4096];
        r->dtype = 99;
        r->data = covering;
        r->byte_length = sizeof covering;
    } else if (strcmp(bad, "rank") == 0) {
        /* Rank 9 with 9 valid extents and strides (the extra axes of extent 1): a host that skipped
         * the rank check would find nothing else wrong with it. */
        static int64_t rank_shape[TI_MAX_RANK + 1], rank_strides[TI_MAX_RANK + 1];
        for (uint32_t axis = 0; axis <= TI_MAX_RANK; axis++) {
            rank_shape[axis] = axis < 2 ? shape[axis] : 1;
            rank_strides[axis] = axis < 2 ? strides[axis] : 1;
        }
        r->rank = TI_MAX_RANK + 1;
        r->shape = rank_shape;
        r->strides = rank_strides;
    }
    else if (strcmp(bad, "null_shape") == 0) r->shape = NULL;
    else if (strcmp(bad, "extent") == 0) {
        shape[0] = -1;
        r->shape = shape;
    } else if (strcmp(bad, "stride") == 0) {
        strides[0] = -1;
        r->strides = strides;
    } else if (strcmp(bad, "huge_stride") == 0) {
        shape[0] = 0; /* no elements: the stride addresses nothing, but a frame cannot hold it */
        strides[0] = (int64_t)1 << 60;
        r->shape = shape;
        r->strides = strides;
    } else if (strcmp(bad, "huge_shape") == 0) {
        shape[0] = (int64_t)1 << 52; /* 2^54 bytes of f32: more than a host can address */
        r->shape = shape;
        r->strides = NULL;
        r->byte_length = UINT64_MAX;
    } else if (strcmp(bad, "byte_length") == 0) r->byte_length -= 1;
    else if (strcmp(bad, "data") == 0) r->data = NULL;
    else if (strcmp(bad, "duplicate") == 0) return s->fn(s->user, r);
    return 0;
}
#endif

/* Returns nonzero when the callback asked to stop. */
static int toy_emit(ti_session *s, int boundary, uint32_t pass_index, uint32_t kind, uint32_t dtype,
                    uint32_t rank, const int64_t *shape, const int64_t *strides, const void *data,
                    uint64_t byte_length) {
    if (s->fn == NULL || !s->wanted[boundary]) return 0;
    ti_record r;
    r.pass_index = pass_index;
    r.pass_kind = kind;
    r.name = toy_boundary_names[boundary];
    r.dtype = dtype;
    r.rank = rank;
    r.shape = shape;
    r.strides = strides;
    r.data = data;
    r.byte_length = byte_length;
#if TOY_FAULT == TOY_FAULT_BAD_DATA
    if (pass_index == 1 && boundary == TOY_FAULT_AFTER - 1) r.data = (const void *)(uintptr_t)16; /* never mapped */
#endif
#if TOY_FAULT == TOY_FAULT_SHAPE_OVERFLOW
    static const int64_t overflowing[2] = {(int64_t)1 << 33, (int64_t)1 << 31};
    if (pass_index == 1 && boundary == TOY_FAULT_AFTER - 1) {
        r.rank = 2;
        r.shape = overflowing;
        r.strides = NULL;
        r.byte_length = (uint64_t)overflowing[0] * (uint64_t)overflowing[1] * 4u; /* wraps to 0 */
    }
#endif
#if TOY_FAULT == TOY_FAULT_FOREIGN_THREAD
    if (pass_index == 1 && boundary == TOY_FAULT_AFTER - 1) return toy_emit_from_thread(s, &r);
#endif
#if TOY_FAULT == TOY_FAULT_BAD_RECORD
    int64_t broken_shape[2], broken_strides[2];
    if (pass_index == 1 && boundary == TOY_FAULT_AFTER - 1 && toy_break_record(s, &r, broken_shape, broken_strides)) return 1;
#endif
#if TOY_FAULT == TOY_FAULT_IGNORE_STOP
    if (pass_index == 1 && boundary == 0) {
        ti_record bogus = r;
        bogus.name = "toy.not_in_catalogue";
        (void)s->fn(s->user, &bogus); /* the host says stop; this engine does not listen */
    }
    if (pass_index == 1) {
        (void)s->fn(s->user, &r);
        return 0;
    }
#endif
    return s->fn(s->user, &r);
}

static ti_status toy_pass(ti_session *s, uint32_t kind) {
    const uint32_t pass_index = (uint32_t)s->passes_run;
    const int64_t t_len = toy_next_positions(s);
    ti_status status = TI_OK;
    int reached = 0;
    float *embed = malloc((size_t)(t_len * TOY_D) * sizeof(float));
    float *mix_t = malloc((size_t)(t_len * TOY_D) * sizeof(float)); /* [4][T] */
    if (embed == NULL || mix_t == NULL) {
        status = toy_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (s->inject_embed) {
        memcpy(embed, s->injected_embed, (size_t)(t_len * TOY_D) * sizeof(float));
    } else {
        for (int64_t t = 0; t < t_len; t++) {
            int32_t token = kind == TI_PASS_PREFILL ? s->prompt[t] : s->last_token;
            for (int j = 0; j < TOY_D; j++)
                embed[t * TOY_D + j] = (float)token * 0.5f + (float)j + (float)(s->cursor + t);
        }
    }
    const int64_t shape_rows[2] = {t_len, TOY_D};
    const int64_t strides_rows[2] = {TOY_D, 1};
    if (toy_emit(s, 0, pass_index, kind, TI_F32, 2, shape_rows, strides_rows, embed,
                 (uint64_t)(t_len * TOY_D) * 4u)) {
        status = toy_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass at toy.embed");
        goto done;
    }
    toy_fault_point(s, pass_index, &reached);

    const float sign = s->flip_sign ? -1.0f : 1.0f;
    for (int64_t t = 0; t < t_len; t++)
        for (int j = 0; j < TOY_D; j++) mix_t[j * t_len + t] = sign * embed[t * TOY_D + j] * (float)(j + 1);
    const int64_t strides_transposed[2] = {1, t_len};
    if (toy_emit(s, 1, pass_index, kind, TI_F32, 2, shape_rows, strides_transposed, mix_t,
                 (uint64_t)(t_len * TOY_D) * 4u)) {
        status = toy_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass at toy.mix");
        goto done;
    }
    toy_fault_point(s, pass_index, &reached);

    float sum = 0.0f;
    for (int j = 0; j < TOY_D; j++) sum += mix_t[j * t_len + (t_len - 1)];
    int32_t token = (int32_t)sum % 97;
    if (token < 0) token += 97;
    if (s->inject_token) token = s->injected_token;
    const int64_t shape_one[1] = {1};
    const int64_t stride_one[1] = {1};
    if (toy_emit(s, 2, pass_index, kind, TI_I32, 1, shape_one, stride_one, &token, 4u)) {
        status = toy_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass at toy.token");
        goto done;
    }
    toy_fault_point(s, pass_index, &reached);

    s->last_token = token;
    s->cursor += t_len;
    s->passes_run += 1;
done:
    free(embed);
    free(mix_t);
    s->inject_embed = 0;
    s->inject_token = 0;
    return status;
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->error[0] = '\0';
#if TOY_FAULT == TOY_FAULT_FORK_LINGER
    pid_t child = fork();
    if (child == 0) {
        /* Far longer than any test waits for the command (60 s), so a host that waits for the
         * child is told from a slow, loaded machine; the host kills it with its process group. */
        sleep(180);
        _exit(0);
    }
    /* Tells the test which process must not outlive the engine host. */
    const char *pid_file = getenv("TOY_LINGER_PID_FILE");
    if (child > 0 && pid_file != NULL) {
        FILE *f = fopen(pid_file, "w");
        if (f != NULL) {
            fprintf(f, "%d\n", (int)child);
            fclose(f);
        }
    }
#endif
    if (s->prompt == NULL) return toy_fail(s, TI_ERR_STATE, "prefill needs the input prompt_tokens");
    if (s->passes_run != 0) return toy_fail(s, TI_ERR_STATE, "prefill after prefill: call ti_reset first");
    return toy_pass(s, TI_PASS_PREFILL);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->error[0] = '\0';
    if (s->passes_run == 0) return toy_fail(s, TI_ERR_STATE, "decode before prefill");
    return toy_pass(s, TI_PASS_DECODE);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->passes_run = 0;
    s->cursor = 0;
    s->last_token = 0;
    s->inject_embed = 0;
    s->inject_token = 0;
    return TI_OK;
}

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{}";
    snprintf(s->state, sizeof s->state, "{\"passes_run\":%d,\"cursor\":%lld,\"mode\":\"text\",\"last_token\":%d}",
             s->passes_run, (long long)s->cursor, (int)s->last_token);
    return s->state;
}

#endif /* TOY_ENGINE_H */
