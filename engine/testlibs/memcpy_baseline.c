/* The capture benchmark's baseline (tests/bench/capture-overhead.bench.ts), not an engine: a memcpy
 * of each record's bytes, the records' own sizes in order, from a warm source into a destination
 * cycled through as the capture pool's ring is, in C with one call for them all. The benchmark's
 * other baseline calls memcpy once per record through koffi, which adds a foreign call's cost to
 * every record: for small records that is most of what it measures. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Copies `laps` times the `count` records of sizes[i] bytes from `src` into `dst` (`dst_size` bytes,
 * wrapping to its start when a record would not fit). Returns the bytes copied. */
__attribute__((visibility("default"))) uint64_t memcpy_baseline(uint8_t *dst, uint64_t dst_size, const uint8_t *src,
                                                                const double *sizes, uint64_t count, uint64_t laps) {
    uint64_t offset = 0, copied = 0;
    for (uint64_t lap = 0; lap < laps; lap++) {
        for (uint64_t i = 0; i < count; i++) {
            const uint64_t bytes = (uint64_t)sizes[i];
            if (offset + bytes > dst_size) offset = 0;
            memcpy(dst + offset, src, bytes);
            offset += bytes;
            copied += bytes;
        }
    }
    return copied;
}
