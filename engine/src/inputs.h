/*
 * The engine's named inputs: declaration table (for describe and validation) and the session's
 * copies. Per-input checks (dtype, rank, shape, byte length, value ranges) run in ti_set_input;
 * cross-input checks (audio-in marker count against audio_in_embeds rows) run at prefill.
 */
#ifndef TI_INPUTS_H
#define TI_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "errors.h"

typedef struct input_desc {
    const char *name;
    uint32_t dtype;
    uint32_t rank;
    int64_t dims[2];        /* -1 where the dimension is symbolic */
    const char *symbols[2]; /* symbol names for the symbolic dimensions */
    bool required;
    const char *doc;
} input_desc;

enum { INPUT_PROMPT_TOKENS, INPUT_AUDIO_IN_EMBEDS, INPUT_GEN_CONFIG, INPUT_TEMPERATURE, INPUT_TOP_K, INPUT_SEED,
       INPUT_PCM_IN, INPUT_COUNT };

const input_desc *inputs_table(void); /* INPUT_COUNT entries */

typedef struct engine_inputs {
    int32_t *prompt; /* [T], NULL until set */
    int64_t prompt_len;
    float *audio_in; /* [R, 64], NULL until set */
    int64_t audio_rows;
    int32_t gen_config[3]; /* text_run, audio_run, start_mode */
    float temperature[2];  /* text, audio */
    int32_t top_k[2];
    uint64_t seed;
    float *pcm; /* pcm_in [L] at 24 kHz, NULL until set (docs/reference-model-audio.md) */
    int64_t pcm_len;
} engine_inputs;

void inputs_init(engine_inputs *in); /* defaults of the optional inputs */
void inputs_free(engine_inputs *in);

ti_status inputs_set(engine_inputs *in, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape,
                     const void *data, uint64_t byte_length, errbuf *err);

/* Cross-input checks before a prefill. */
ti_status inputs_check_prefill(const engine_inputs *in, int64_t max_positions, errbuf *err);

#endif
