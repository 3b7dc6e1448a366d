#include "prng.h"

static double splitmix_draw(prng_state *prng) {
    prng->counter += 1;
    uint64_t z = prng->seed + prng->counter * UINT64_C(0x9E3779B97F4A7C15); /* wraps mod 2^64 by design */
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

double prng_uniform(prng_state *prng, bool double_advance) {
    double u = splitmix_draw(prng);
    if (double_advance) u = splitmix_draw(prng);
    return u;
}
