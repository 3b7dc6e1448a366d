/*
 * The boundary catalogue of docs/reference-model.md, enumerated per layer and per codebook in
 * execution order. Built once per process (pthread_once) and read-only afterwards; the pass
 * code addresses entries through the id tables so it never looks names up while running.
 */
#ifndef TI_CATALOGUE_H
#define TI_CATALOGUE_H

#include <stdbool.h>
#include <stdint.h>

#include "catalogue_audio.h"
#include "catalogue_builder.h"
#include "model.h"
#include "trace_abi.h"

/* Fields of one sampler call, in emission order. */
enum {
    SAMP_SCALED, SAMP_ORDER, SAMP_THRESHOLD, SAMP_KEPT, SAMP_MAX, SAMP_SUM, SAMP_PREFIX,
    SAMP_PRNG_BEFORE, SAMP_TARGET, SAMP_PRNG_AFTER, SAMP_TOKEN, SAMP_FIELDS
};

/* Per backbone layer; conv layers use CONV_CARRY, attention layers K/V_APPEND and KV_LEN. */
enum { LAYER_CONV_CARRY, LAYER_K_APPEND, LAYER_V_APPEND, LAYER_KV_LEN, LAYER_MIXER_OUT, LAYER_OUT, LAYER_FIELDS };

/* Per codebook: in, l0.out, l1.out, logits, sampler.* (SAMP_FIELDS of them), feedback. */
enum { CB_IN, CB_L0_OUT, CB_L1_OUT, CB_LOGITS, CB_SAMPLER, CB_FEEDBACK = CB_SAMPLER + SAMP_FIELDS, CB_FIELDS };

#define CAT_COUNT (1 + 4 * 3 + 2 * 5 + 2 + SAMP_FIELDS + 1 + M_NCB * CB_FIELDS + 1 + 2 + CAT_AUDIO_COUNT)

typedef struct catalogue {
    bnd_desc entries[CAT_COUNT];
    int count;
    /* ids (indices into entries); -1 where a layer has no such boundary */
    int embed;
    int layer[M_LAYERS][LAYER_FIELDS];
    int final_norm;
    int logits;
    int text_sampler[SAMP_FIELDS];
    int depth_in;
    int cb[M_NCB][CB_FIELDS];
    int codes;
    int gen_state;
    int gen_prng;
    cat_audio_ids audio; /* frontend, encoder, adapter, detokenizer */
} catalogue;

/* The process-wide catalogue; NULL only if its one-time construction failed (never expected). */
const catalogue *catalogue_get(void);

/* Index of a boundary by name, or -1. */
int catalogue_find(const catalogue *cat, const char *name);

/* "every_pass", "prefill", "text_out", "audio_out", "prefill_audio_in", "audio_frame" */
const char *catalogue_emit_name(bnd_emit emit);

#endif
