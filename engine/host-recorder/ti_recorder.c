/*
 * ti_recorder.c — the engine host's record callback in C (libti_recorder.so).
 *
 * During a pass the engine calls its ti_record_fn once per boundary, on the engine's thread, and
 * waits. What must happen there is small: the contract checks that stop a pass at once, the
 * crash crumb (so the host can name the record being taken if the engine dies now), and one copy
 * of the record into the capture pool. A JavaScript callback through koffi costs microseconds
 * per record for that (a 299-byte record copies in ~0.1 us); this does it in C, and everything
 * else — the announcements for live progress, the pass's counters — is read by the host once per
 * pass (tir_records, tir_log_*), and when it wakes the capture writer (every MiB or so).
 *
 * It mirrors the host's JavaScript path (main/engine-host/engine-worker.ts takeRecord and
 * poolRecord) decision for decision: sizes and spans are computed in doubles, as JavaScript
 * numbers are, so a record is accepted here exactly when it would be there. A record that breaks
 * a check is not refused here: it is handed to the JavaScript callback (the fallback), which runs
 * the same checks, stops the pass with the same message, or, finding nothing wrong (a name whose
 * bytes JavaScript decodes differently), hands the record back with tir_take_as and its
 * boundary. Layouts written here are the host's: the capture pool entry
 * (main/core/bundle/capture-pool-layout.ts) holding one capture frame whose crc32 is left 0
 * (main/core/bundle/capture-frame.ts); the crumb's four int32 slots (engine-protocol.ts
 * CRUMB_SLOTS); the control block's slots (capture-pool-protocol.ts SIGNAL, POSITION).
 *
 * It also writes each captured pass's BEGIN_PASS and END_PASS entries into the ring, in the
 * host's one call at each end of the pass (tir_open_pass, tir_put_end_pass), so the engine's
 * thread stores nothing into the pool from JavaScript per pass; an entry that does not fit then is
 * left to the host (TIR_ENTRY_DEFERRED), which waits or wraps as for a record.
 *
 * Room in the ring, growing it and waking the capture writer thread are the host's (its
 * Atomics wait and notify): when an entry does not fit, or enough bytes were published since the
 * writer was last woken, this calls the host's service callback, which updates the ring state
 * (tir_set_ring) before it returns.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace_abi.h"

#define TIR_DTYPES 14u
#define TIR_NO_BOUNDARY (-1)

/* capture-pool-layout.ts */
#define ENTRY_MAGIC 0x45504954u
#define ENTRY_HEADER_BYTES 16u
#define ENTRY_KIND_BEGIN_PASS 1u
#define ENTRY_KIND_FRAME 2u
#define ENTRY_KIND_END_PASS 3u
/* The largest pass entry payload (u32 pass, then the output mode): the host's CapturePool.endPass refuses a longer mode. */
#define PASS_ENTRY_MAX 256u
/* capture-frame.ts */
#define FRAME_MAGIC 0x4d524654u
#define FRAME_FIXED_BYTES 32u
/* capture-pool-protocol.ts: Int32 slot FAILED, BigInt64 slots HEAD and TAIL of the control block */
#define SIGNAL_FAILED 2
#define POSITION_HEAD 3
#define POSITION_TAIL 4
/* engine-protocol.ts CRUMB_SLOTS */
#define CRUMB_PASS 0
#define CRUMB_BOUNDARY 1
#define CRUMB_COUNT 2
#define CRUMB_SEQUENCE 3

/* The service callback's requests (the host answers 0, or nonzero when the capture failed). */
#define TIR_SERVICE_ROOM 1
#define TIR_SERVICE_WAKE 2

/* tir_take_as results other than 0 (taken): the record needed the fallback after all. */
#define TIR_REFUSED 1
/* tir_open_pass / tir_put_end_pass: the pass entry was not written here (no room now, a wrap, a
 * failed writer, a ring the host moved): the host writes it (CapturePool.beginPass / endPass). */
#define TIR_ENTRY_DEFERRED 1

/* Largest integer a double holds exactly with every smaller one: Number.MAX_SAFE_INTEGER. */
#define SAFE_INTEGER 9007199254740991.0

typedef int (*tir_service_fn)(int op, uint64_t bytes);

typedef struct tir_boundary {
    char *name;
    uint32_t name_bytes;
    char *stage;
    uint32_t stage_bytes;
    uint32_t keep;      /* captured in passes before the window too */
    uint32_t seen_pass; /* the pass generation in which it was last captured (duplicates) */
} tir_boundary;

typedef struct tir_recorder {
    uint8_t dtype_size[TIR_DTYPES];
    tir_boundary *boundaries;
    uint32_t boundary_count;
    int32_t *table; /* open addressing: boundary index or -1 */
    uint32_t table_mask;

    ti_record_fn fallback;
    tir_service_fn service;
    int32_t *crumb; /* 4 slots (a shared mapping of the crumb file, or the caller's shared memory) */
    int32_t crumb_sequence;
    int32_t *signals; /* the control block: Int32 view */
    int64_t *positions; /* the same block: BigInt64 view */

    /* the ring, as the host's CapturePool holds it (tir_set_ring) */
    uint8_t *ring; /* the first ring byte, after the pool file's header */
    uint64_t capacity, base, head, woken, wake_bytes;
    uint32_t seq;

    /* the pass */
    int active;
    int stopped;
    int capturing;
    uint32_t pass_index, pass_kind, window_from, generation;
    uint32_t records, captured;
    uint64_t bytes;
    int32_t last_boundary;

    /* what the host announces: per record u32 boundary, u32 dtype, u32 rank, u32 0, then the byte
     * length and the rank extents as doubles (JavaScript numbers: the host reads them without BigInt) */
    uint8_t *log;
    size_t log_bytes, log_capacity;
} tir_recorder;

static uint32_t hash_name(const char *name, size_t bytes) {
    uint32_t hash = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < bytes; i++) hash = (hash ^ (uint8_t)name[i]) * 16777619u;
    return hash;
}

TI_API tir_recorder *tir_new(uint32_t boundaries, const uint8_t *dtype_sizes, uint32_t dtypes) {
    if (dtypes != TIR_DTYPES) return NULL;
    tir_recorder *r = calloc(1, sizeof *r);
    if (r == NULL) return NULL;
    memcpy(r->dtype_size, dtype_sizes, TIR_DTYPES);
    uint32_t slots = 16;
    while (slots < 2u * boundaries + 1u) slots *= 2;
    r->boundaries = calloc(boundaries == 0 ? 1 : boundaries, sizeof *r->boundaries);
    r->table = malloc(slots * sizeof *r->table);
    if (r->boundaries == NULL || r->table == NULL) {
        free(r->boundaries);
        free(r->table);
        free(r);
        return NULL;
    }
    for (uint32_t i = 0; i < slots; i++) r->table[i] = -1;
    r->table_mask = slots - 1;
    r->boundary_count = boundaries;
    r->last_boundary = TIR_NO_BOUNDARY;
    return r;
}

TI_API void tir_free(tir_recorder *r) {
    if (r == NULL) return;
    for (uint32_t i = 0; i < r->boundary_count; i++) {
        free(r->boundaries[i].name);
        free(r->boundaries[i].stage);
    }
    free(r->boundaries);
    free(r->table);
    free(r->log);
    free(r);
}

/*
 * Catalogue boundary `index` (UTF-8 name and stage). `lookup` 0: the boundary is not looked up
 * by name here (its name or stage is one the host's checks refuse in a frame), so its records
 * always go to the fallback. Returns 0, or -1 (out of memory, bad index).
 */
TI_API int tir_set_boundary(tir_recorder *r, uint32_t index, const char *name, uint32_t name_bytes, const char *stage,
                            uint32_t stage_bytes, uint32_t keep, uint32_t lookup) {
    if (index >= r->boundary_count) return -1;
    tir_boundary *b = &r->boundaries[index];
    b->name = malloc(name_bytes + 1u);
    b->stage = malloc(stage_bytes + 1u);
    if (b->name == NULL || b->stage == NULL) return -1;
    memcpy(b->name, name, name_bytes);
    b->name[name_bytes] = '\0';
    memcpy(b->stage, stage, stage_bytes);
    b->stage[stage_bytes] = '\0';
    b->name_bytes = name_bytes;
    b->stage_bytes = stage_bytes;
    b->keep = keep;
    if (!lookup) return 0;
    uint32_t slot = hash_name(name, name_bytes) & r->table_mask;
    while (r->table[slot] >= 0) slot = (slot + 1u) & r->table_mask;
    r->table[slot] = (int32_t)index;
    return 0;
}

/* Which boundaries a windowed capture keeps before its window (the pass-sharded gate). */
TI_API void tir_set_keep(tir_recorder *r, uint32_t index, uint32_t keep) {
    if (index < r->boundary_count) r->boundaries[index].keep = keep;
}

TI_API void tir_set_callbacks(tir_recorder *r, ti_record_fn fallback, tir_service_fn service) {
    r->fallback = fallback;
    r->service = service;
}

/* The crumb's 16 bytes (NULL: none) and the capture pool's 64-byte control block (NULL: none). */
TI_API void tir_set_shared(tir_recorder *r, void *crumb, void *control) {
    r->crumb = crumb;
    r->signals = control;
    r->positions = control;
}

TI_API void tir_set_ring(tir_recorder *r, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head, uint32_t seq,
                         uint64_t woken, uint64_t wake_bytes) {
    r->ring = (uint8_t *)ring;
    r->capacity = capacity;
    r->base = base;
    r->head = head;
    r->seq = seq;
    r->woken = woken;
    r->wake_bytes = wake_bytes;
}

/*
 * The pass so far, in one call, as doubles (all below 2^53): records taken, bytes, the last
 * boundary's index (-1: none), the ring's head, entry sequence number and head at the last wake,
 * and the bytes of the log.
 */
TI_API void tir_pass_state(const tir_recorder *r, double *out) {
    out[0] = r->records;
    out[1] = (double)r->bytes;
    out[2] = r->last_boundary;
    out[3] = (double)r->head;
    out[4] = r->seq;
    out[5] = (double)r->woken;
    out[6] = (double)r->log_bytes;
}

TI_API uint64_t tir_ring_head(const tir_recorder *r) { return r->head; }
TI_API uint32_t tir_ring_seq(const tir_recorder *r) { return r->seq; }
TI_API uint64_t tir_ring_woken(const tir_recorder *r) { return r->woken; }

/* A pass begins: records of pass `index` are taken; `capturing` 1: into the ring (set before). */
TI_API void tir_begin_pass(tir_recorder *r, uint32_t index, uint32_t kind, uint32_t capturing, uint32_t window_from) {
    r->active = 1;
    r->stopped = 0;
    r->capturing = capturing != 0;
    r->pass_index = index;
    r->pass_kind = kind;
    r->window_from = window_from;
    r->generation += 1;
    r->records = 0;
    r->captured = 0;
    r->bytes = 0;
    r->last_boundary = TIR_NO_BOUNDARY;
    r->log_bytes = 0;
}

TI_API void tir_end_pass(tir_recorder *r) { r->active = 0; }

static uint64_t round8(uint64_t bytes) { return (bytes + 7u) & ~(uint64_t)7u; }

/* Whether an entry of `length` bytes can go at the head now, contiguous and into free room. */
static int fits(const tir_recorder *r, uint64_t length) {
    if (r->ring == NULL || length > r->capacity) return 0;
    if (__atomic_load_n(&r->signals[SIGNAL_FAILED], __ATOMIC_ACQUIRE) != 0) return 0;
    uint64_t offset = (r->head - r->base) % r->capacity;
    if (offset + length > r->capacity) return 0;
    uint64_t tail = (uint64_t)__atomic_load_n(&r->positions[POSITION_TAIL], __ATOMIC_ACQUIRE);
    return r->capacity - (r->head - tail) >= length;
}

/*
 * A pass entry (BEGIN_PASS, END_PASS) at the ring's head, whole and published, as the host's
 * CapturePool writes one: header with magic 0, payload, magic last, then the head. It never waits,
 * wraps or calls the host: 0 written, or TIR_ENTRY_DEFERRED when it does not fit now (the host,
 * which can wait for the writer and wrap, writes it instead). The writer is not woken here (a
 * worker blocked in Atomics.wait is woken only from JavaScript): the host wakes it at the pass's
 * end, and the next frame wakes it when enough was published since the last wake.
 */
static int put_pass_entry(tir_recorder *r, uint32_t kind, const void *payload, uint32_t bytes) {
    const uint64_t length = ENTRY_HEADER_BYTES + round8(bytes);
    if (bytes > PASS_ENTRY_MAX || !fits(r, length)) return TIR_ENTRY_DEFERRED;
    uint8_t *at = r->ring + (r->head - r->base) % r->capacity;
    const uint32_t entry[4] = {0u, kind, r->seq, bytes};
    memcpy(at, entry, sizeof entry);
    memcpy(at + ENTRY_HEADER_BYTES, payload, bytes);
    __atomic_store_n((uint32_t *)at, ENTRY_MAGIC, __ATOMIC_RELEASE);
    r->seq += 1;
    r->head += length;
    __atomic_store_n(&r->positions[POSITION_HEAD], (int64_t)r->head, __ATOMIC_RELEASE);
    return 0;
}

/*
 * The host's calls per pass, so its engine thread makes one call at each pass boundary instead
 * of several. tir_open_pass: the crumb and control block (tir_set_shared), the ring when capturing
 * (`ring` 0: none, the ring arguments unused; tir_set_ring), then tir_begin_pass; with
 * `begin_entry` 1 (capturing) it also writes the pass's BEGIN_PASS entry into the ring and
 * publishes it. Returns 0, or TIR_ENTRY_DEFERRED when that entry did not fit now: the pass is
 * open, and the host writes the entry and hands the ring back (tir_set_ring) before the engine
 * runs. tir_close_pass: tir_end_pass, the pass's state (tir_pass_state) into `state`, and the log
 * from byte `from` on into `log` (up to `capacity` bytes); returns the log's bytes from `from`,
 * which may exceed `capacity` (then nothing is copied: the host grows its buffer and calls
 * tir_log_copy).
 */
TI_API int tir_open_pass(tir_recorder *r, uintptr_t crumb, uintptr_t control, uintptr_t ring, uint64_t capacity, uint64_t base,
                         uint64_t head, uint32_t seq, uint64_t woken, uint64_t wake_bytes, uint32_t index, uint32_t kind,
                         uint32_t window_from, uint32_t begin_entry) {
    tir_set_shared(r, (void *)crumb, (void *)control);
    if (ring != 0) tir_set_ring(r, ring, capacity, base, head, seq, woken, wake_bytes);
    tir_begin_pass(r, index, kind, ring != 0, window_from);
    if (ring == 0 || !begin_entry) return 0;
    const uint32_t payload[2] = {index, kind};
    return put_pass_entry(r, ENTRY_KIND_BEGIN_PASS, payload, sizeof payload);
}

TI_API uint64_t tir_close_pass(tir_recorder *r, double *state, void *log, uint64_t from, uint64_t capacity) {
    tir_end_pass(r);
    tir_pass_state(r, state);
    const uint64_t bytes = from >= r->log_bytes ? 0 : r->log_bytes - from;
    if (bytes > 0 && bytes <= capacity) memcpy(log, r->log + from, bytes);
    return bytes;
}

/*
 * After tir_close_pass: the pass's END_PASS entry (pass `index`, then the output mode's
 * `mode_bytes` of UTF-8; 0: none, the pass failed) into the ring, published, when the host's
 * producer is where the recorder left the ring (`ring`, `head`, `seq`: the host did not move or
 * remap it since).
 * Fills `state` as tir_pass_state (the ring's new head and sequence number). 0 written, or
 * TIR_ENTRY_DEFERRED (the host writes it).
 */
TI_API int tir_put_end_pass(tir_recorder *r, uint32_t index, const uint8_t *mode, uint32_t mode_bytes, uintptr_t ring, uint64_t head,
                            uint32_t seq, double *state) {
    int result = TIR_ENTRY_DEFERRED;
    if (r->ring != NULL && (uintptr_t)r->ring == ring && r->head == head && r->seq == seq && mode_bytes <= PASS_ENTRY_MAX - 4u) {
        uint8_t payload[PASS_ENTRY_MAX];
        memcpy(payload, &index, 4);
        if (mode_bytes > 0) memcpy(payload + 4, mode, mode_bytes);
        result = put_pass_entry(r, ENTRY_KIND_END_PASS, payload, 4u + mode_bytes);
    }
    tir_pass_state(r, state);
    return result;
}

/* The host asked the engine to stop (its fallback or service failed): nothing more is taken. */
TI_API void tir_stop(tir_recorder *r) { r->stopped = 1; }

TI_API uint32_t tir_records(const tir_recorder *r) { return r->records; }
TI_API uint32_t tir_captured(const tir_recorder *r) { return r->captured; }
TI_API uint64_t tir_bytes(const tir_recorder *r) { return r->bytes; }
TI_API int32_t tir_last_boundary(const tir_recorder *r) { return r->last_boundary; }
/* Whether boundary `index` was captured in this pass already (the host's duplicate check). */
TI_API uint32_t tir_seen(const tir_recorder *r, uint32_t index) {
    return index < r->boundary_count && r->boundaries[index].seen_pass == r->generation;
}
TI_API uint64_t tir_log_bytes(const tir_recorder *r) { return r->log_bytes; }
/* Copies bytes [from, from + bytes) of the pass's log (clipped to what it holds) to `target`. */
TI_API void tir_log_copy(const tir_recorder *r, void *target, uint64_t from, uint64_t bytes) {
    if (from >= r->log_bytes) return;
    if (bytes > r->log_bytes - from) bytes = r->log_bytes - from;
    if (bytes > 0) memcpy(target, r->log + from, bytes);
}

static int32_t find(const tir_recorder *r, const char *name) {
    size_t bytes = strlen(name);
    uint32_t slot = hash_name(name, bytes) & r->table_mask;
    for (;;) {
        int32_t index = r->table[slot];
        if (index < 0) return -1;
        const tir_boundary *b = &r->boundaries[index];
        if (b->name_bytes == bytes && memcmp(b->name, name, bytes) == 0) return index;
        slot = (slot + 1u) & r->table_mask;
    }
}

static int log_record(tir_recorder *r, int32_t index, uint32_t dtype, uint32_t rank, const int64_t *shape, uint64_t byte_length) {
    size_t need = 24u + 8u * rank;
    /* (the log's buffer comes from realloc: 8-byte entries stay aligned for the doubles) */
    if (r->log_bytes + need > r->log_capacity) {
        size_t capacity = r->log_capacity == 0 ? 4096 : r->log_capacity;
        while (capacity < r->log_bytes + need) capacity *= 2;
        uint8_t *grown = realloc(r->log, capacity);
        if (grown == NULL) return -1;
        r->log = grown;
        r->log_capacity = capacity;
    }
    uint8_t *at = r->log + r->log_bytes;
    uint32_t words[4] = {(uint32_t)index, dtype, rank, 0};
    memcpy(at, words, 16);
    double numbers[1 + TI_MAX_RANK];
    numbers[0] = (double)byte_length;
    for (uint32_t axis = 0; axis < rank; axis++) numbers[1 + axis] = (double)shape[axis];
    memcpy(at + 16, numbers, 8u * (1u + rank));
    r->log_bytes += need;
    return 0;
}

/* Release stores (plain stores on x86): the crumb is read after the engine died, or by the host
 * thread with Atomics.load, which sees the sequence after the fields before it. */
static void mark_crumb(tir_recorder *r, int32_t index) {
    if (r->crumb == NULL) return;
    r->crumb_sequence += 1;
    __atomic_store_n(&r->crumb[CRUMB_PASS], (int32_t)r->pass_index, __ATOMIC_RELEASE);
    __atomic_store_n(&r->crumb[CRUMB_BOUNDARY], index, __ATOMIC_RELEASE);
    __atomic_store_n(&r->crumb[CRUMB_COUNT], (int32_t)(r->records + 1u), __ATOMIC_RELEASE);
    __atomic_store_n(&r->crumb[CRUMB_SEQUENCE], r->crumb_sequence, __ATOMIC_RELEASE);
}

/* Copies a strided record into row-major order at `out` (the span was checked to lie inside the data). */
static void gather(uint8_t *out, const uint8_t *src, size_t size, uint32_t rank, const int64_t *shape, const int64_t *strides) {
    if (rank == 0) {
        memcpy(out, src, size);
        return;
    }
    int64_t index[TI_MAX_RANK] = {0};
    const uint64_t inner = (uint64_t)shape[rank - 1];
    const uint64_t inner_step = (uint64_t)strides[rank - 1] * size;
    for (;;) {
        uint64_t offset = 0;
        for (uint32_t axis = 0; axis + 1 < rank; axis++) offset += (uint64_t)index[axis] * (uint64_t)strides[axis] * size;
        const uint8_t *row = src + offset;
        if (inner_step == size) {
            memcpy(out, row, inner * size);
            out += inner * size;
        } else {
            for (uint64_t i = 0; i < inner; i++, out += size) memcpy(out, row + i * inner_step, size);
        }
        uint32_t axis = rank - 1;
        for (;;) {
            if (axis == 0) return;
            axis -= 1;
            if (++index[axis] < shape[axis]) break;
            index[axis] = 0;
        }
    }
}

/* One frame entry into the ring. 0, or 1 when the host's service failed (the capture cannot go on). */
static int put_frame(tir_recorder *r, const ti_record *rec, const tir_boundary *b, size_t size, int row_major, uint64_t byte_length,
                     const int64_t *strides) {
    const uint32_t rank = rec->rank;
    const uint64_t header_bytes = FRAME_FIXED_BYTES + 16u * rank + b->name_bytes + b->stage_bytes;
    const uint64_t payload = header_bytes + byte_length;
    const uint64_t length = ENTRY_HEADER_BYTES + round8(payload);
    if (!fits(r, length)) {
        if (r->service == NULL || r->service(TIR_SERVICE_ROOM, length) != 0) return 1;
    }
    uint8_t *at = r->ring + (r->head - r->base) % r->capacity;
    const uint32_t entry[4] = {0u, ENTRY_KIND_FRAME, r->seq, (uint32_t)payload};
    memcpy(at, entry, sizeof entry); /* magic 0 first: an old entry it lies over is no longer whole */
    uint8_t *frame = at + ENTRY_HEADER_BYTES;
    const uint32_t fixed[6] = {FRAME_MAGIC, 0u, r->pass_index, r->captured, (uint32_t)byte_length, (uint32_t)(byte_length >> 32)};
    memcpy(frame, fixed, sizeof fixed);
    frame[24] = (uint8_t)rec->dtype;
    frame[25] = (uint8_t)rank;
    const uint16_t text[3] = {(uint16_t)b->name_bytes, (uint16_t)b->stage_bytes, 0u};
    memcpy(frame + 26, text, sizeof text);
    uint8_t *cursor = frame + FRAME_FIXED_BYTES;
    if (rank > 0) {
        memcpy(cursor, rec->shape, 8u * rank);
        memcpy(cursor + 8u * rank, strides, 8u * rank);
    }
    cursor += 16u * rank;
    memcpy(cursor, b->name, b->name_bytes);
    cursor += b->name_bytes;
    memcpy(cursor, b->stage, b->stage_bytes);
    cursor += b->stage_bytes;
    if (byte_length > 0) {
        if (row_major) memcpy(cursor, rec->data, byte_length);
        else gather(cursor, rec->data, size, rank, rec->shape, strides);
    }
    __atomic_store_n((uint32_t *)at, ENTRY_MAGIC, __ATOMIC_RELEASE); /* whole now */
    r->seq += 1;
    r->head += length;
    /* Release: the writer, seeing the head, sees the entry before it. (A stale tail read by fits()
     * only sends the recorder to the host for room, which waits properly.) */
    __atomic_store_n(&r->positions[POSITION_HEAD], (int64_t)r->head, __ATOMIC_RELEASE);
    if (r->head - r->woken >= r->wake_bytes) {
        if (r->service == NULL || r->service(TIR_SERVICE_WAKE, 0) != 0) return 1;
    }
    return 0;
}

enum take_result { TAKEN, FORWARD, STOP };

/*
 * The record, as the JavaScript path takes it (same checks, same order). `forced` >= 0: the host
 * resolved the boundary itself (tir_take_as); otherwise it is looked up by name.
 */
static enum take_result take(tir_recorder *r, const ti_record *rec, int32_t forced) {
    /* RecordReader.read */
    if (rec->name == NULL || rec->rank > TI_MAX_RANK || (rec->rank > 0 && rec->shape == NULL)) return FORWARD;
    /* takeRecord */
    if (rec->pass_index != r->pass_index || rec->pass_kind != r->pass_kind) return FORWARD;
    const int32_t index = forced >= 0 ? forced : find(r, rec->name);
    if (index < 0 || (uint32_t)index >= r->boundary_count) return FORWARD;
    if (rec->dtype >= TIR_DTYPES) return FORWARD;
    const uint32_t rank = rec->rank;
    double count = 1.0;
    for (uint32_t axis = 0; axis < rank; axis++) {
        if (rec->shape[axis] < 0) return FORWARD;
        count *= (double)rec->shape[axis];
    }
    const size_t size = r->dtype_size[rec->dtype];
    const double length = count * (double)size;
    if (!(length <= SAFE_INTEGER)) return FORWARD; /* also NaN: an infinite extent product times 0 */
    int64_t strides[TI_MAX_RANK];
    int row_major = 1;
    double span = count == 0.0 ? 0.0 : 1.0;
    double contiguous = 1.0;
    for (uint32_t k = rank; k-- > 0;) {
        const double extent = (double)rec->shape[k];
        double stride = contiguous;
        if (rec->strides != NULL) {
            if (rec->strides[k] < 0) return FORWARD;
            stride = (double)rec->strides[k];
            if (extent != 1.0 && stride != contiguous) row_major = 0;
        }
        if (rec->strides == NULL && contiguous > SAFE_INTEGER) return FORWARD; /* (only with an extent of 0) */
        strides[k] = rec->strides != NULL ? rec->strides[k] : (int64_t)contiguous;
        if (count > 0.0) span += (extent - 1.0) * stride;
        contiguous *= extent;
    }
    if (count == 0.0) row_major = 1;
    const double span_bytes = row_major ? length : span * (double)size;
    if ((double)rec->byte_length < span_bytes) return FORWARD;
    const uint64_t byte_length = (uint64_t)length;

    mark_crumb(r, index);
    if (log_record(r, index, rec->dtype, rank, rec->shape, byte_length) != 0) return FORWARD;

    tir_boundary *b = &r->boundaries[index];
    const int captured = r->capturing && !(r->pass_index < r->window_from && !b->keep);
    if (captured) {
        /* poolRecord (checkCaptureRecord): extents and strides safe integers, a boundary captured
         * twice in the pass, data NULL */
        for (uint32_t axis = 0; axis < rank; axis++) {
            if ((double)rec->shape[axis] > SAFE_INTEGER || (double)strides[axis] > SAFE_INTEGER) return FORWARD;
        }
        if (b->seen_pass == r->generation) return FORWARD;
        if (byte_length > 0 && rec->data == NULL) return FORWARD;
        if (put_frame(r, rec, b, size, row_major, byte_length, strides) != 0) return STOP;
        r->captured += 1;
        b->seen_pass = r->generation;
    }
    r->records += 1;
    r->bytes += byte_length;
    r->last_boundary = index;
    return TAKEN;
}

/* The ti_record_fn the host registers (behind the record guard), with the recorder as `user`. */
TI_API int tir_record(void *user, const ti_record *rec) {
    tir_recorder *r = user;
    if (r == NULL || !r->active || r->stopped || rec == NULL) return 1;
    switch (take(r, rec, -1)) {
    case TAKEN:
        return 0;
    case STOP:
        r->stopped = 1;
        return 1;
    case FORWARD:
        break;
    }
    /* A record the checks stop (or that needs the host's own reading): the host's callback decides. */
    if (r->fallback == NULL || r->fallback(NULL, rec) != 0) {
        r->stopped = 1;
        return 1;
    }
    return 0;
}

/* From the fallback: take `rec` as boundary `index`. 0 taken; TIR_REFUSED; -1 the capture failed. */
TI_API int tir_take_as(tir_recorder *r, const ti_record *rec, int32_t index) {
    switch (take(r, rec, index)) {
    case TAKEN:
        return 0;
    case STOP:
        return -1;
    case FORWARD:
        break;
    }
    return TIR_REFUSED;
}

/* The address of `p` (the host's shared memory: a typed array koffi passes zero-copy). */
TI_API uintptr_t tir_address_of(void *p) { return (uintptr_t)p; }

/* tir_record as a value (the function pointer the host hands to the record guard). */
TI_API ti_record_fn tir_record_fn(void) { return tir_record; }
