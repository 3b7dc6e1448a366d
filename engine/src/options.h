/*
 * Engine options. Every option is a deliberate perturbation: a real change to the computation
 * of the kind a porting bug makes, off by default, so the gate can prove it sees each one at
 * the boundary where it first shows.
 */
#ifndef TI_OPTIONS_H
#define TI_OPTIONS_H

#include <stdbool.h>

#include "errors.h"

typedef enum opt_id {
    OPT_DEPTH_IN_TRANSPOSED,
    OPT_SAMPLER_WALK_SORTED,
    OPT_KV_POSITION_OFF_BY_ONE,
    OPT_CONV_CARRY_OFF_BY_ONE,
    OPT_DEPTH_KV_NOT_RESET,
    OPT_TIE_ORDER_REVERSED,
    OPT_PRNG_DOUBLE_ADVANCE,
    OPT_CARRY_INIT_NEGATIVE_ZERO,
    OPT_NAN_TO_ZERO,
    OPT_AUDIO_EMBED_MEAN,
    OPT_BACKBONE_ROPE_INTERLEAVED,
    OPT_LOGITS_BF16_TRUNCATE,
    /* part 2 (docs/reference-model-audio.md) */
    OPT_FRONTEND_PERIODIC_WINDOW,
    OPT_FRONTEND_BIASED_STD,
    OPT_FEATURES_BF16_TRUNCATE,
    OPT_REL_SHIFT_OFF_BY_ONE,
    OPT_CONFORMER_CAUSAL_CONV,
    OPT_DETOK_EMBED_SUM,
    OPT_SKIP_ENVELOPE_DIVISION,
    OPT_OLA_STATE_RESET,
    OPT_COUNT
} opt_id;

typedef struct engine_options {
    bool on[OPT_COUNT];
} engine_options;

typedef struct option_desc {
    const char *name;
    const char *doc;
} option_desc;

const option_desc *options_table(void); /* OPT_COUNT entries */

/* Parses "1"/"0"/"true"/"false"/"on"/"off"; unknown key -> UNKNOWN_NAME, bad value -> INVALID_ARGUMENT. */
ti_status options_set(engine_options *options, const char *key, const char *value, errbuf *err);

#endif
