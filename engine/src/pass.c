/*
 * One pass end to end: backbone, then the output of the current mode (text sampler or
 * Depthformer), the generation schedule, the state boundaries, and the commit.
 */
#include <stdlib.h>
#include <string.h>

#include "audio_in.h"
#include "backbone.h"
#include "depthformer.h"
#include "detokenizer.h"
#include "records.h"
#include "sampler.h"
#include "session.h"

/*
 * The schedule of liquid-audio's LFM2AudioModel.generate_interleaved: `left` counts down the
 * outputs of the current modality (decremented at the start of every pass, pass_run). After a
 * text token: <|im_end|> ends generation (the token is not embedded); <|text_end|> sets
 * text_done; the run switches to audio when the countdown reaches 0 or text is done. After an
 * audio frame: at 0 (text not done) the run switches to text; a frame whose code 0 is EOA feeds
 * back every code as EOA and switches to text without resetting the countdown.
 */
static void schedule_after_output(gen_state *g, const engine_inputs *in, int32_t mode) {
    if (mode == MODE_TEXT) {
        if (g->last_token == TOKEN_IM_END) {
            g->ended = true;
            return;
        }
        if (g->last_token == TOKEN_TEXT_END) g->text_done = true;
        if (g->left == 0 || g->text_done) {
            g->next_mode = MODE_AUDIO;
            g->left = in->gen_config[1];
        }
        return;
    }
    if (g->left == 0 && !g->text_done) {
        g->next_mode = MODE_TEXT;
        g->left = in->gen_config[0];
    }
    if (g->last_codes[0] == M_EOA) {
        for (int k = 0; k < M_NCB; k++) g->last_codes[k] = M_EOA;
        g->next_mode = MODE_TEXT;
    }
}

/* What the detokenizer does with a frame: upstream refuses codes >= 2048 (here EOA) anywhere. */
static int32_t frame_status(const int32_t *codes) {
    if (codes[0] == M_EOA) return FRAME_END_OF_AUDIO;
    for (int k = 1; k < M_NCB; k++)
        if (codes[k] >= M_EOA) return FRAME_REFUSED;
    return FRAME_DECODED;
}

static ti_status produce_output(pass_ctx *p, const float *hlast, float *logits) {
    ti_session *s = p->s;
    gen_state *g = &p->next;
    int32_t mode = g->next_mode;
    if (mode == MODE_TEXT) {
        sampler_perturb perturb = {s->options.on[OPT_SAMPLER_WALK_SORTED], s->options.on[OPT_TIE_ORDER_REVERSED],
                                   s->options.on[OPT_PRNG_DOUBLE_ADVANCE]};
        sampler_result result;
        sampler_run(logits, M_VT, s->inputs.temperature[0], s->inputs.top_k[0], &g->prng, &perturb, &result);
        ti_status status = rec_sampler(p, p->cat->text_sampler, &result);
        if (status != TI_OK) return status;
        g->last_token = result.token;
    } else {
        ti_status status = depthformer_run(p, hlast, g->last_codes);
        int32_t frame = frame_status(g->last_codes);
        if (status == TI_OK) status = rec_boundary(p, p->cat->audio.dt[DT_FRAME_STATUS], &frame);
        /* Only a frame of 8 ordinary codes is detokenized. */
        if (status == TI_OK && frame == FRAME_DECODED) status = detok_run(p, g->last_codes);
        if (status != TI_OK) return status;
    }
    g->last_output = mode;
    schedule_after_output(g, &s->inputs, mode);
    return TI_OK;
}

static ti_status check_capacity(pass_ctx *p) {
    ti_session *s = p->s;
    /* The last cache slot this pass writes (decode under the KV perturbation writes one further). */
    int64_t end = p->next.cursor + p->T;
    if (p->kind == TI_PASS_DECODE && s->options.on[OPT_KV_POSITION_OFF_BY_ONE]) end += 1;
    if (end > s->max_positions)
        return err_fail(&p->err, TI_ERR_STATE,
                       "pass %u: %lld positions would exceed max_positions %lld (config key \"max_positions\")",
                       p->index, (long long)end, (long long)s->max_positions);
    return TI_OK;
}

static ti_status run_pass_body(pass_ctx *p) {
    ti_status status = check_capacity(p);
    if (status != TI_OK) return status;
    p->next.left -= 1; /* the countdown moves at the start of every pass, as upstream */
    float *x = malloc((size_t)p->T * M_D * sizeof(float));
    if (x == NULL) return err_fail(&p->err, TI_ERR_OUT_OF_MEMORY, "pass %u: out of memory", p->index);
    float logits[M_VT];
    /* Prefill with pcm_in: frontend, encoder and adapter make the rows of the -1 positions. */
    float *adapter_rows = NULL;
    p->audio_in_rows = p->s->inputs.audio_in;
    if (p->kind == TI_PASS_PREFILL && p->s->inputs.pcm != NULL) {
        status = audio_in_run(p, &adapter_rows);
        p->audio_in_rows = adapter_rows;
    }
    if (status == TI_OK) status = backbone_run(p, x, logits);
    free(adapter_rows);
    if (status == TI_OK) status = produce_output(p, x + (p->T - 1) * M_D, logits);
    free(x);
    if (status != TI_OK) return status;

    gen_state *g = &p->next;
    g->cursor += p->T;
    g->passes_run += 1;
    g->prefilled = true;
    int32_t state_vec[GEN_STATE_LEN] = {(int32_t)g->cursor, g->next_mode, g->left, g->text_done ? 1 : 0,
                                        g->ended ? 1 : 0, (int32_t)g->passes_run};
    status = rec_boundary(p, p->cat->gen_state, state_vec);
    if (status != TI_OK) return status;
    uint64_t prng_vec[2] = {g->prng.seed, g->prng.counter};
    return rec_boundary(p, p->cat->gen_prng, prng_vec);
}

ti_status pass_run(ti_session *s, ti_pass_kind kind) {
    pass_ctx *p = calloc(1, sizeof *p);
    if (p == NULL) {
        errbuf err = {s->last_error, sizeof s->last_error};
        return err_fail(&err, TI_ERR_OUT_OF_MEMORY, "out of memory for a pass");
    }
    p->s = s;
    p->cat = s->cat;
    p->kind = kind;
    p->err.text = s->last_error;
    p->err.capacity = sizeof s->last_error;
    ti_status status = TI_OK;
    if (kind == TI_PASS_PREFILL) {
        if (s->state.prefilled)
            status = err_fail(&p->err, TI_ERR_STATE, "prefill: already run for this session; call ti_reset first");
        if (status == TI_OK) status = inputs_check_prefill(&s->inputs, s->max_positions, &p->err);
        if (status == TI_OK) {
            session_initial_state(s, &p->next);
            p->T = s->inputs.prompt_len;
        }
    } else {
        if (!s->state.prefilled) status = err_fail(&p->err, TI_ERR_STATE, "decode: no prefill has run (call ti_prefill)");
        else if (s->state.ended)
            status = err_fail(&p->err, TI_ERR_STATE,
                             "decode: generation ended at pass %u (token %d, <|im_end|>); call ti_reset to start again",
                             s->state.passes_run - 1, TOKEN_IM_END);
        p->next = s->state;
        p->T = 1;
    }
    if (status != TI_OK) {
        free(p);
        return status;
    }
    p->index = kind == TI_PASS_PREFILL ? 0 : s->state.passes_run;
    s->in_pass = true;
    status = run_pass_body(p);
    s->in_pass = false;
    if (status == TI_OK) s->state = p->next;
    /* Injections belong to one pass, whether it completed or not. */
    session_clear_injections(s);
    free(p);
    return status;
}
