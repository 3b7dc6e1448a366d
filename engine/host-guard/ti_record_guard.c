/*
 * ti_record_guard.c — the record callback the engine host hands to an engine (libti_record_guard.so).
 *
 * The host's own callback is a JavaScript function bound to the thread that runs the pass: a
 * call from any other thread is queued for that thread, which is blocked inside ti_prefill /
 * ti_decode waiting for the engine, so an engine that emits a record from a thread of its own
 * would deadlock until the watchdog and be reported as a timeout. This guard sits in front: a
 * record from the thread that created the guard (the host's worker thread, the only one that
 * calls passes) is forwarded; a record from any other thread is refused (the callback returns
 * nonzero: the engine is asked to stop) and counted with its boundary name, which the host
 * reports as "record from a foreign thread".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "trace_abi.h"

typedef struct trg_guard {
    ti_record_fn forward;
    void *forward_user;
    pthread_t owner;
    uint32_t foreign;     /* records refused since the last trg_take_foreign (atomic) */
    char first_name[128]; /* the boundary of the first one, written by the thread that counted it first */
} trg_guard;

/* Creates a guard owned by the calling thread, forwarding to `forward`. NULL when out of memory. */
TI_API trg_guard *trg_new(ti_record_fn forward) {
    trg_guard *guard = calloc(1, sizeof *guard);
    if (guard == NULL) return NULL;
    guard->forward = forward;
    guard->owner = pthread_self();
    return guard;
}

TI_API void trg_free(trg_guard *guard) { free(guard); }

/* Forwards to `forward` with `user` from now on (the host switches between its C recorder and its JavaScript callback between passes). */
TI_API void trg_set_forward(trg_guard *guard, ti_record_fn forward, void *user) {
    guard->forward = forward;
    guard->forward_user = user;
}

/* The ti_record_fn to register, with the guard as its user pointer. */
TI_API int trg_record(void *user, const ti_record *record) {
    trg_guard *guard = user;
    if (guard == NULL) return 1;
    if (!pthread_equal(pthread_self(), guard->owner)) {
        if (__atomic_fetch_add(&guard->foreign, 1u, __ATOMIC_SEQ_CST) == 0u) {
            snprintf(guard->first_name, sizeof guard->first_name, "%s",
                     record != NULL && record->name != NULL ? record->name : "(no name)");
        }
        return 1;
    }
    return guard->forward(guard->forward_user, record);
}

/* trg_record as a value (a function pointer the host passes to ti_set_record_callback). */
TI_API ti_record_fn trg_record_fn(void) { return trg_record; }

/* How many records were refused since the last call, and resets the count (owner thread only). */
TI_API uint32_t trg_take_foreign(trg_guard *guard) { return __atomic_exchange_n(&guard->foreign, 0u, __ATOMIC_SEQ_CST); }

/* The boundary name of the first record refused (valid after trg_take_foreign returned nonzero). */
TI_API const char *trg_first_foreign_name(const trg_guard *guard) { return guard->first_name; }
