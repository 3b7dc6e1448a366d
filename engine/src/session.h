/*
 * The session: weights, inputs, options, recording setup and the committed generation state.
 * A pass works on a staged copy of the state (pass_ctx) and commits it only when every boundary
 * was emitted, so a failed or aborted pass leaves the session exactly as it was before the pass.
 */
#ifndef TI_SESSION_H
#define TI_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "catalogue.h"
#include "inputs.h"
#include "model.h"
#include "options.h"
#include "prng.h"
#include "trace_abi.h"

#define TI_ERROR_CAPACITY 1024
#define TI_DEFAULT_MAX_POSITIONS 4096
#define TI_MAX_MAX_POSITIONS (1 << 20)

enum { MODE_TEXT = 0, MODE_AUDIO = 1, OUTPUT_NONE = -1 };
/* Text ids the schedule acts on (liquid-audio generate_interleaved). */
enum { TOKEN_IM_END = 7, TOKEN_TEXT_END = 130 };


/* A host tensor waiting to replace a boundary on the next pass (row-major copy). */
typedef struct injection {
    uint32_t rank;
    int64_t shape[BND_MAX_RANK];
    void *data;
    uint64_t byte_length;
} injection;

/* Everything a pass advances; staged per pass and committed at its end. */
typedef struct gen_state {
    bool prefilled;
    uint32_t passes_run;
    int64_t cursor;      /* positions consumed */
    int32_t next_mode;   /* MODE_TEXT / MODE_AUDIO: the output the next pass produces */
    int32_t left;        /* outputs left in the current modality (upstream's modality_left) */
    bool text_done;      /* <|text_end|> was sampled: audio only from here */
    bool ended;          /* <|im_end|> was sampled: no further pass */
    int32_t last_output; /* OUTPUT_NONE, MODE_TEXT or MODE_AUDIO */
    int32_t last_token;
    int32_t last_codes[M_NCB]; /* the frame the next pass embeds (all EOA after an EOA code 0) */
    prng_state prng;
    int64_t kv_len[M_LAYERS];
    int64_t depth_kv_len; /* 0 between frames unless perturb.depth_kv_not_reset */
    float carry[M_LAYERS][M_CARRY * M_D]; /* conv layers only; row 0 older */
    detok_state detok;                    /* the detokenizer's carried state (audio_model.h) */
} gen_state;

struct ti_session {
    char last_error[TI_ERROR_CAPACITY];
    char state_json[320];
    const catalogue *cat;
    model_weights weights;
    int64_t max_positions;
    engine_inputs inputs;
    engine_options options;
    ti_record_fn record_fn;
    void *record_user;
    bool wanted[CAT_COUNT];
    injection *injections[CAT_COUNT];
    gen_state state; /* committed */
    bool in_pass;    /* a pass is running: the record callback must not re-enter the session */
    /* Attention KV caches [max_positions][M_NKV * M_HD] for the attention layers (NULL otherwise).
     * Slots past state.kv_len may hold a failed pass's writes; they are never read. */
    float *k_cache[M_LAYERS];
    float *v_cache[M_LAYERS];
    /* Depthformer caches [depth_capacity][M_HD] per block. */
    float *depth_k[M_DLAYERS];
    float *depth_v[M_DLAYERS];
    int64_t depth_capacity;
};

typedef struct pass_ctx {
    ti_session *s;
    const catalogue *cat;
    uint32_t index;
    ti_pass_kind kind;
    int64_t T;
    gen_state next; /* staged state, committed when the pass succeeds */
    errbuf err;
    /* Prefill: the rows the prompt's -1 positions take (inputs.audio_in, or the adapter's output
     * when pcm_in is given); owned by the pass. */
    const float *audio_in_rows;
} pass_ctx;

/* Fresh state before prefill (counter 0, empty caches, zero carries). */
void session_initial_state(const ti_session *s, gen_state *state);

/* Runs one pass (prefill or decode) transactionally. */
ti_status pass_run(ti_session *s, ti_pass_kind kind);

void session_clear_injections(ti_session *s);

#endif
