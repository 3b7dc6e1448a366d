#include "sampler.h"

#include <math.h>

/* True when index a must come before index b in `order`. */
static bool ranks_before(const sampler_result *r, int32_t a, int32_t b, bool ties_descending) {
    if (r->scaled[a] != r->scaled[b]) return r->scaled[a] > r->scaled[b];
    return ties_descending ? a > b : a < b;
}

/* Insertion sort: stable, exact, no NaN left to confuse it, and N <= 160. */
static void sort_order(sampler_result *r, bool ties_descending) {
    for (int i = 0; i < r->n; i++) r->order[i] = i;
    for (int i = 1; i < r->n; i++) {
        int32_t v = r->order[i];
        int j = i - 1;
        while (j >= 0 && ranks_before(r, v, r->order[j], ties_descending)) {
            r->order[j + 1] = r->order[j];
            j--;
        }
        r->order[j + 1] = v;
    }
}

void sampler_run(const float *logits, int n, float temperature, int32_t top_k, prng_state *prng,
                 const sampler_perturb *perturb, sampler_result *out) {
    out->n = n;
    /* 1. scaled */
    bool greedy = temperature <= 0.0f || top_k == 1;
    for (int i = 0; i < n; i++) {
        double s = greedy ? (double)logits[i] : (double)logits[i] / (double)temperature;
        out->scaled[i] = isnan(s) ? -INFINITY : s;
    }
    /* 2. order */
    sort_order(out, perturb->tie_order_reversed);
    /* 3. threshold */
    int k = greedy ? 1 : (top_k <= 0 || top_k > n) ? n : top_k;
    out->threshold = out->scaled[out->order[k - 1]];
    /* 4. kept */
    bool any_kept = false;
    for (int i = 0; i < n; i++) {
        out->kept[i] = out->scaled[i] >= out->threshold && out->scaled[i] != -INFINITY;
        any_kept = any_kept || out->kept[i];
    }
    /* 5. max */
    out->max = any_kept ? out->scaled[out->order[0]] : -INFINITY;
    /* 6. weights, sum and prefix; sequential in index order (the perturbation walks `order`). */
    double weight[SAMPLER_MAX_N];
    for (int i = 0; i < n; i++) {
        if (!out->kept[i])
            weight[i] = 0.0;
        else if (out->max == INFINITY)
            weight[i] = out->scaled[i] == INFINITY ? 1.0 : 0.0;
        else
            weight[i] = exp(out->scaled[i] - out->max);
    }
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += weight[i];
    out->sum = sum;
    double running = 0.0;
    if (perturb->walk_sorted) {
        for (int r = 0; r < n; r++) {
            running += weight[out->order[r]];
            out->prefix[out->order[r]] = running;
        }
    } else {
        for (int i = 0; i < n; i++) {
            running += weight[i];
            out->prefix[i] = running;
        }
    }
    /* 7. draw */
    out->prng_before[0] = prng->seed;
    out->prng_before[1] = prng->counter;
    double u = greedy ? 0.0 : prng_uniform(prng, perturb->prng_double_advance);
    out->target = u * out->sum;
    out->prng_after[0] = prng->seed;
    out->prng_after[1] = prng->counter;
    /* 8. token */
    int32_t token = -1, last_kept = -1;
    for (int step = 0; step < n; step++) {
        int i = perturb->walk_sorted ? out->order[step] : step;
        if (!out->kept[i]) continue;
        last_kept = i;
        if (token < 0 && out->prefix[i] > out->target) token = i;
    }
    if (token < 0) token = last_kept >= 0 ? last_kept : out->order[0];
    out->token = token;
}
