/*
 * The float64 sampler of docs/reference-model.md ("Sampler"), every intermediate kept so each can
 * be recorded as a boundary. Shared by the text sampler (N = 160) and the per-codebook audio
 * sampler (N = 33).
 */
#ifndef TI_SAMPLER_H
#define TI_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "model.h"
#include "prng.h"

#define SAMPLER_MAX_N M_VT

typedef struct sampler_result {
    int n;
    double scaled[SAMPLER_MAX_N];
    int32_t order[SAMPLER_MAX_N];
    double threshold;
    uint8_t kept[SAMPLER_MAX_N];
    double max;
    double sum;
    double prefix[SAMPLER_MAX_N];
    uint64_t prng_before[2];
    double target;
    uint64_t prng_after[2];
    int32_t token;
} sampler_result;

typedef struct sampler_perturb {
    bool walk_sorted;        /* perturb.sampler_walk_sorted */
    bool tie_order_reversed; /* perturb.tie_order_reversed */
    bool prng_double_advance; /* perturb.prng_double_advance */
} sampler_perturb;

/* One sampler call over logits[0..n) (n <= SAMPLER_MAX_N); advances prng when not greedy. */
void sampler_run(const float *logits, int n, float temperature, int32_t top_k, prng_state *prng,
                 const sampler_perturb *perturb, sampler_result *out);

#endif
