/*
 * recorder_driver.c — the engine host's C recorder (host-recorder/ti_recorder.c) under ASan +
 * UBSan, without the host: this driver plays the host (a small ring it drains itself when the
 * recorder asks for room, a fallback that counts the records handed over) and feeds records:
 * row-major and strided ones (their frames checked byte for byte in the ring, across wraps), and
 * each contract violation (handed over, nothing written, the crumb and counters as the host
 * expects). Prints "recorder-driver: N checks, F failed"; exit status 1 when a check failed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_abi.h"

typedef struct tir_recorder tir_recorder;
typedef int (*tir_service_fn)(int op, uint64_t bytes);
tir_recorder *tir_new(uint32_t boundaries, const uint8_t *dtype_sizes, uint32_t dtypes);
void tir_free(tir_recorder *r);
int tir_set_boundary(tir_recorder *r, uint32_t index, const char *name, uint32_t name_bytes, const char *stage, uint32_t stage_bytes,
                     uint32_t keep, uint32_t lookup);
void tir_set_callbacks(tir_recorder *r, ti_record_fn fallback, tir_service_fn service);
void tir_set_shared(tir_recorder *r, uintptr_t crumb, uintptr_t control);
void tir_set_ring(tir_recorder *r, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head, uint32_t seq, uint64_t woken,
                  uint64_t wake_bytes);
uint64_t tir_ring_head(const tir_recorder *r);
void tir_pass_state(const tir_recorder *r, double *out);
uint32_t tir_ring_seq(const tir_recorder *r);
uint64_t tir_ring_woken(const tir_recorder *r);
void tir_begin_pass(tir_recorder *r, uint32_t index, uint32_t kind, uint32_t capturing, uint32_t window_from);
void tir_end_pass(tir_recorder *r);
int tir_open_pass(tir_recorder *r, uintptr_t crumb, uintptr_t control, uintptr_t ring, uint64_t capacity, uint64_t base, uint64_t head,
                  uint32_t seq, uint64_t woken, uint64_t wake_bytes, uint32_t index, uint32_t kind, uint32_t window_from, uint32_t begin_entry);
uint64_t tir_close_pass(tir_recorder *r, double *state, void *log, uint64_t from, uint64_t capacity);
int tir_put_end_pass(tir_recorder *r, uint32_t index, const uint8_t *mode, uint32_t mode_bytes, uintptr_t ring, uint64_t head, uint32_t seq,
                     double *state);
uint32_t tir_records(const tir_recorder *r);
uint32_t tir_captured(const tir_recorder *r);
uint64_t tir_bytes(const tir_recorder *r);
int32_t tir_last_boundary(const tir_recorder *r);
uint64_t tir_log_bytes(const tir_recorder *r);
void tir_log_copy(const tir_recorder *r, void *target, uint64_t from, uint64_t bytes);
int tir_take_as(tir_recorder *r, const ti_record *rec, int32_t index);
ti_record_fn tir_record_fn(void);

static int checks, failed;
#define CHECK(cond)                                                                                                    \
    do {                                                                                                               \
        checks++;                                                                                                      \
        if (!(cond)) {                                                                                                 \
            failed++;                                                                                                  \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                                                             \
        }                                                                                                              \
    } while (0)

/* The host's side: a ring it drains whenever the recorder asks for room, wrapping as the pool does. */
#define CAPACITY 1024u
static uint8_t *ring;
static int64_t control[8];
static int32_t crumb[4];
static tir_recorder *recorder;
static uint64_t head, base, woken;
static uint32_t seq;
static int rooms, wakes, forwarded;

static int service(int op, uint64_t bytes) {
    head = tir_ring_head(recorder);
    seq = tir_ring_seq(recorder);
    woken = tir_ring_woken(recorder);
    if (op == 1) {
        rooms++;
        if (bytes > CAPACITY) return 1; /* the driver's ring does not grow: the capture fails */
        uint64_t offset = (head - base) % CAPACITY;
        if (offset + bytes > CAPACITY) head += CAPACITY - offset; /* wrap */
        control[4] = (int64_t)head; /* the writer applied everything */
    } else {
        wakes++;
        woken = head;
    }
    tir_set_ring(recorder, (uintptr_t)ring, CAPACITY, base, head, seq, woken, 512);
    return 0;
}

static int fallback(void *user, const ti_record *rec) {
    (void)user;
    (void)rec;
    forwarded++;
    return 1; /* the host stops the pass */
}

static const uint8_t DTYPE_SIZES[14] = {4, 2, 2, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 8};

/* The frame the last record put in the ring: where its entry starts. */
static const uint8_t *last_entry(uint64_t length) { return ring + (tir_ring_head(recorder) - length - base) % CAPACITY; }

static ti_record record_of(const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape, const int64_t *strides, const void *data,
                           uint64_t byte_length) {
    ti_record r = {1, 1, name, dtype, rank, shape, strides, data, byte_length};
    return r;
}

int main(void) {
    ring = calloc(1, CAPACITY);
    recorder = tir_new(3, DTYPE_SIZES, 14);
    CHECK(recorder != NULL);
    CHECK(tir_set_boundary(recorder, 0, "a.rows", 6, "stage", 5, 0, 1) == 0);
    CHECK(tir_set_boundary(recorder, 1, "b.mix", 5, "stage", 5, 0, 1) == 0);
    CHECK(tir_set_boundary(recorder, 2, "c.long", 6, "stage", 5, 0, 0) == 0); /* not looked up by name */
    tir_set_callbacks(recorder, fallback, service);
    tir_set_shared(recorder, (uintptr_t)crumb, (uintptr_t)control);
    tir_set_ring(recorder, (uintptr_t)ring, CAPACITY, 0, 0, 0, 0, 512);
    ti_record_fn take = tir_record_fn();

    float rows[2][3] = {{1, 2, 3}, {4, 5, 6}};
    const int64_t shape23[2] = {2, 3}, shape32[2] = {3, 2};
    const int64_t transposed[2] = {1, 3}; /* rows read as a 3 x 2 column-major view */

    /* A pass of valid records, round after round: frames wrap the 1 KiB ring. */
    for (uint32_t round = 0; round < 12; round++) {
        tir_begin_pass(recorder, 1, 1, 1, 0);
        ti_record a = record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows);
        CHECK(take(recorder, &a) == 0);
        /* frame: 16 entry + 32 fixed + 32 shape/strides + 6 name + 5 stage + 24 data = 115 payload -> 16 + 104 */
        const uint64_t length_a = 16u + ((32u + 32u + 6u + 5u + 24u + 7u) & ~7u);
        const uint8_t *entry = last_entry(length_a);
        uint32_t words[4];
        memcpy(words, entry, 16);
        CHECK(words[0] == 0x45504954u && words[1] == 2u && words[3] == 32u + 32u + 6u + 5u + 24u);
        CHECK(memcmp(entry + 16 + 32 + 32 + 11, rows, sizeof rows) == 0);
        int64_t strides_a[2];
        memcpy(strides_a, entry + 16 + 32 + 16, 16);
        CHECK(strides_a[0] == 3 && strides_a[1] == 1); /* contiguous strides written out */
        CHECK(crumb[0] == 1 && crumb[1] == 0 && crumb[2] == 1);

        ti_record b = record_of("b.mix", TI_F32, 2, shape32, transposed, rows, sizeof rows);
        CHECK(take(recorder, &b) == 0);
        const uint64_t length_b = 16u + ((32u + 32u + 5u + 5u + 24u + 7u) & ~7u);
        entry = last_entry(length_b);
        float gathered[6];
        memcpy(gathered, entry + 16 + 32 + 32 + 10, sizeof gathered);
        const float expected[6] = {1, 4, 2, 5, 3, 6};
        CHECK(memcmp(gathered, expected, sizeof expected) == 0);
        uint32_t fixed[4];
        memcpy(fixed, entry + 16, 16);
        CHECK(fixed[0] == 0x4d524654u && fixed[1] == 0u && fixed[2] == 1u && fixed[3] == 1u); /* crc 0, pass 1, seq 1 */
        CHECK(tir_records(recorder) == 2 && tir_captured(recorder) == 2 && tir_bytes(recorder) == 48 && tir_last_boundary(recorder) == 1);
        CHECK(tir_log_bytes(recorder) == 2u * (24u + 16u));
        uint8_t log[40];
        memset(log, 0xee, sizeof log);
        tir_log_copy(recorder, log, 40, 80); /* the second record's entry, clipped */
        uint32_t logged[3];
        memcpy(logged, log, sizeof logged);
        CHECK(logged[0] == 1u && logged[1] == TI_F32 && logged[2] == 2u);
        double numbers[3];
        memcpy(numbers, log + 16, sizeof numbers);
        CHECK(numbers[0] == 24.0 && numbers[1] == 3.0 && numbers[2] == 2.0); /* byte length, shape [3, 2] */
        double state[7];
        tir_pass_state(recorder, state);
        CHECK(state[0] == 2.0 && state[1] == 48.0 && state[2] == 1.0 && state[3] == (double)tir_ring_head(recorder) && state[6] == 80.0);
        tir_end_pass(recorder);
    }
    CHECK(rooms > 0);  /* the ring wrapped */
    CHECK(wakes > 0);  /* and the writer was woken every 512 bytes */
    CHECK(control[3] == (int64_t)tir_ring_head(recorder)); /* the head is published */

    /* The host's one call per pass boundary: open (shared memory, ring, pass) and close (end, state, log). */
    {
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, (uintptr_t)ring, CAPACITY, base, tir_ring_head(recorder),
                            tir_ring_seq(recorder), tir_ring_woken(recorder), 512, 2, 1, 0, 0) == 0);
        ti_record a = record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows);
        a.pass_index = 2;
        CHECK(take(recorder, &a) == 0 && crumb[0] == 2);
        double state[7];
        uint8_t log[40];
        CHECK(tir_close_pass(recorder, state, log, 0, 8) == 40); /* too small: nothing copied, the length told */
        CHECK(tir_close_pass(recorder, state, log, 0, sizeof log) == 40);
        uint32_t logged[3];
        memcpy(logged, log, sizeof logged);
        CHECK(logged[0] == 0u && logged[1] == TI_F32 && logged[2] == 2u);
        CHECK(state[0] == 1.0 && state[1] == 24.0 && state[2] == 0.0 && state[6] == 40.0);
        CHECK(tir_close_pass(recorder, state, log, 40, sizeof log) == 0);
        CHECK(take(recorder, &a) == 1); /* closed: nothing more is taken */
    }

    /* The pass's BEGIN_PASS and END_PASS entries, written and published by the recorder itself. */
    {
        uint64_t at = tir_ring_head(recorder);
        if ((at - base) % CAPACITY + 24u > CAPACITY) at += CAPACITY - (at - base) % CAPACITY; /* the host wrapped */
        control[4] = (int64_t)at; /* the writer applied everything */
        const uint32_t first = tir_ring_seq(recorder);
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, (uintptr_t)ring, CAPACITY, base, at, first, at, 512, 3, 1, 0, 1) == 0);
        uint32_t words[6];
        memcpy(words, ring + (at - base) % CAPACITY, sizeof words);
        CHECK(words[0] == 0x45504954u && words[1] == 1u && words[2] == first && words[3] == 8u && words[4] == 3u && words[5] == 1u);
        CHECK(tir_ring_head(recorder) == at + 24u && tir_ring_seq(recorder) == first + 1u && control[3] == (int64_t)(at + 24u));
        ti_record a = record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows);
        a.pass_index = 3;
        CHECK(take(recorder, &a) == 0);
        double state[7];
        uint8_t log[64];
        CHECK(tir_close_pass(recorder, state, log, 0, sizeof log) == 40);
        const uint64_t closed = tir_ring_head(recorder);
        const uint32_t closed_seq = tir_ring_seq(recorder);
        control[4] = (int64_t)closed;
        /* The host moved the ring since (another head, another ring): not written, the host writes it. */
        CHECK(tir_put_end_pass(recorder, 3, (const uint8_t *)"text", 4, (uintptr_t)ring, closed + 8u, closed_seq, state) == 1);
        CHECK(tir_put_end_pass(recorder, 3, (const uint8_t *)"text", 4, (uintptr_t)ring + 8u, closed, closed_seq, state) == 1);
        /* A mode longer than the host's pass entry holds: the host names it. */
        static const uint8_t long_mode[253];
        CHECK(tir_put_end_pass(recorder, 3, long_mode, sizeof long_mode, (uintptr_t)ring, closed, closed_seq, state) == 1);
        CHECK(tir_ring_head(recorder) == closed && control[3] == (int64_t)closed);
        CHECK(tir_put_end_pass(recorder, 3, (const uint8_t *)"text", 4, (uintptr_t)ring, closed, closed_seq, state) == 0);
        const uint8_t *end = ring + (closed - base) % CAPACITY;
        memcpy(words, end, 20);
        CHECK(words[0] == 0x45504954u && words[1] == 3u && words[2] == closed_seq && words[3] == 8u && words[4] == 3u);
        CHECK(memcmp(end + 20, "text", 4) == 0);
        CHECK(state[3] == (double)(closed + 24u) && state[4] == (double)(closed_seq + 1u) && control[3] == (int64_t)(closed + 24u));
        /* A failed pass: no mode. */
        CHECK(tir_put_end_pass(recorder, 3, NULL, 0, (uintptr_t)ring, closed + 24u, closed_seq + 1u, state) == 0);
        memcpy(words, ring + (closed + 24u - base) % CAPACITY, 16);
        CHECK(words[1] == 3u && words[3] == 4u && state[3] == (double)(closed + 48u)); /* 16 + 4 padded to 8 */

        /* Entries that do not fit now are left to the host, nothing written: the ring full... */
        uint64_t h = tir_ring_head(recorder);
        const uint32_t s = tir_ring_seq(recorder);
        control[4] = (int64_t)(h - CAPACITY + 16u);
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, (uintptr_t)ring, CAPACITY, base, h, s, h, 512, 4, 1, 0, 1) == 1);
        CHECK(tir_ring_head(recorder) == h && tir_ring_seq(recorder) == s && control[3] == (int64_t)(closed + 48u));
        CHECK(tir_put_end_pass(recorder, 4, NULL, 0, (uintptr_t)ring, h, s, state) == 1 && tir_ring_head(recorder) == h);
        /* ...the entry would cross the ring's end (the host wraps)... */
        control[4] = (int64_t)h;
        const uint64_t near_end = h + (CAPACITY - (h - base) % CAPACITY) - 16u;
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, (uintptr_t)ring, CAPACITY, base, near_end, s, h, 512, 4, 1, 0, 1) == 1);
        CHECK(tir_ring_head(recorder) == near_end);
        /* ...the writer failed (the host throws its failure). */
        int32_t *signals = (int32_t *)control;
        signals[2] = 1;
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, (uintptr_t)ring, CAPACITY, base, h, s, h, 512, 4, 1, 0, 1) == 1);
        CHECK(tir_put_end_pass(recorder, 4, NULL, 0, (uintptr_t)ring, h, s, state) == 1 && tir_ring_head(recorder) == h);
        signals[2] = 0;
        /* Not capturing: no entry, nothing to write. */
        CHECK(tir_open_pass(recorder, (uintptr_t)crumb, (uintptr_t)control, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 1) == 0);
        CHECK(tir_ring_head(recorder) == h);
        tir_end_pass(recorder);
        tir_set_ring(recorder, (uintptr_t)ring, CAPACITY, base, h, s, h, 512);
    }

    /* Each violation is handed over, nothing is written, the pass stops. */
    const int64_t negative[2] = {-1, 3}, negative_strides[2] = {3, -1}, nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    const int64_t huge[2] = {(int64_t)1 << 52, 4}, overflow[2] = {(int64_t)1 << 33, (int64_t)1 << 31};
    ti_record bad[] = {
        record_of(NULL, TI_F32, 2, shape23, NULL, rows, sizeof rows),
        record_of("a.rows", TI_F32, 9, nine, nine, rows, sizeof rows),
        record_of("a.rows", TI_F32, 2, NULL, NULL, rows, sizeof rows),
        record_of("nope", TI_F32, 2, shape23, NULL, rows, sizeof rows),
        record_of("c.long", TI_F32, 2, shape23, NULL, rows, sizeof rows), /* not looked up: the host decides */
        record_of("a.rows", 99, 2, shape23, NULL, rows, sizeof rows),
        record_of("a.rows", TI_F32, 2, negative, NULL, rows, sizeof rows),
        record_of("a.rows", TI_F32, 2, huge, NULL, rows, UINT64_MAX),
        record_of("a.rows", TI_F32, 2, overflow, NULL, rows, 0),
        record_of("a.rows", TI_F32, 2, shape23, negative_strides, rows, sizeof rows),
        record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows - 1),
        record_of("a.rows", TI_F32, 2, shape23, NULL, NULL, sizeof rows),
    };
    bad[0].pass_index = 1;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tir_begin_pass(recorder, 1, 1, 1, 0);
        const uint64_t before = tir_ring_head(recorder);
        forwarded = 0;
        CHECK(take(recorder, &bad[i]) == 1);
        CHECK(forwarded == 1);
        CHECK(tir_ring_head(recorder) == before);
        CHECK(tir_records(recorder) == 0);
        ti_record good = record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows);
        CHECK(take(recorder, &good) == 1); /* stopped: nothing more is taken */
        CHECK(forwarded == 1);
        tir_end_pass(recorder);
    }
    /* A record of another pass, or kind; a boundary twice; then the host's own resolution of a name. */
    tir_begin_pass(recorder, 1, 1, 1, 0);
    forwarded = 0;
    ti_record other = record_of("a.rows", TI_F32, 2, shape23, NULL, rows, sizeof rows);
    other.pass_index = 2;
    CHECK(take(recorder, &other) == 1 && forwarded == 1);
    tir_begin_pass(recorder, 1, 1, 1, 0);
    other.pass_index = 1;
    other.pass_kind = 0;
    CHECK(take(recorder, &other) == 1 && forwarded == 2);
    tir_begin_pass(recorder, 1, 1, 1, 0);
    other.pass_kind = 1;
    CHECK(take(recorder, &other) == 0);
    CHECK(take(recorder, &other) == 1 && forwarded == 3); /* a.rows twice in the pass */
    tir_begin_pass(recorder, 1, 1, 1, 0);
    ti_record long_name = record_of("c.long", TI_F32, 2, shape23, NULL, rows, sizeof rows);
    CHECK(tir_take_as(recorder, &long_name, 2) == 0 && tir_last_boundary(recorder) == 2);
    /* Outside the record window (pass 1 < 3, c.long not kept): checked and counted, not captured. */
    tir_begin_pass(recorder, 1, 1, 1, 3);
    const uint64_t before = tir_ring_head(recorder);
    CHECK(take(recorder, &other) == 0 && tir_ring_head(recorder) == before && tir_records(recorder) == 1 && tir_captured(recorder) == 0);
    /* A record larger than the ring: the host cannot make room, the pass stops without the fallback. */
    static float large[512];
    const int64_t shape_large[1] = {512};
    tir_begin_pass(recorder, 1, 1, 1, 0);
    forwarded = 0;
    ti_record big = record_of("a.rows", TI_F32, 1, shape_large, NULL, large, sizeof large);
    CHECK(take(recorder, &big) == 1 && forwarded == 0 && tir_records(recorder) == 0);
    tir_end_pass(recorder);
    /* No pass: refused. */
    CHECK(take(recorder, &other) == 1);

    tir_free(recorder);
    free(ring);
    printf("recorder-driver: %d checks, %d failed\n", checks, failed);
    return failed == 0 ? 0 : 1;
}
