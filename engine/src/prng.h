/*
 * SplitMix64 over a counter (docs/reference-model.md, "PRNG"): state [seed, counter], so any
 * draw is reproducible from (seed, counter) and a pass can stage the counter and commit it only
 * when the pass succeeds.
 */
#ifndef TI_PRNG_H
#define TI_PRNG_H

#include <stdbool.h>
#include <stdint.h>

typedef struct prng_state {
    uint64_t seed;
    uint64_t counter;
} prng_state;

/* counter += 1, then the SplitMix64 finaliser of seed + counter * golden; (z >> 11) * 2^-53.
 * double_advance (perturbation) advances twice and returns the second value. */
double prng_uniform(prng_state *prng, bool double_advance);

#endif
