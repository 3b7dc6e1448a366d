#include "catalogue.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static catalogue g_catalogue; /* written once under g_catalogue_once, read-only afterwards */
static pthread_once_t g_catalogue_once = PTHREAD_ONCE_INIT;
static bool g_catalogue_ok;

static const char *const sampler_field_names[SAMP_FIELDS] = {
    "scaled", "order", "threshold", "kept", "max", "sum", "prefix", "prng_before", "target", "prng_after", "token",
};

static const char *const sampler_docs[SAMP_FIELDS] = {
    "float64 logits, divided by the temperature unless greedy (temperature <= 0 or top_k == 1); NaN becomes -inf",
    "indices sorted by scaled descending, ties by ascending index",
    "scaled value of the k-th entry of order (k = 1 when greedy, else top_k clamped to [1, N], <= 0 meaning N)",
    "1 where scaled >= threshold and scaled != -inf (ties at the threshold are kept)",
    "scaled[order[0]] when anything is kept, else -inf",
    "sum of the kept weights exp(scaled - max) (1 per +inf entry when max is +inf), accumulated in index order",
    "running sums of the kept weights in index order",
    "PRNG state [seed, counter] before the draw",
    "u * sum, with u the SplitMix64 uniform draw (0 when greedy)",
    "PRNG state [seed, counter] after the draw",
    "smallest kept index whose prefix exceeds target; else the largest kept index; else order[0]. Injectable "
    "(teacher forcing)",
};

static bnd_desc *add(catalogue *c, const char *stage, ti_dtype dtype, uint32_t rank, int64_t d0, int64_t d1,
                     int64_t d2, bnd_emit emit, bool injectable, const char *doc, int *id_out) {
    /* The count is fixed by construction; the spare slot only keeps a miscount from writing
     * out of bounds, and build() then reports the catalogue as unusable. */
    bnd_desc *b = c->count < CAT_COUNT ? &c->entries[c->count] : &c->spare;
    *id_out = c->count < CAT_COUNT ? c->count : 0;
    c->count++;
    b->stage = stage;
    b->dtype = dtype;
    b->rank = rank;
    b->shape[0] = d0;
    b->shape[1] = d1;
    b->shape[2] = d2;
    b->emit = emit;
    b->injectable = injectable;
    b->doc = doc;
    return b;
}

bnd_desc *catalogue_add(catalogue *c, const char *stage, ti_dtype dtype, uint32_t rank, int64_t d0, int64_t d1,
                        int64_t d2, bnd_emit emit, bool injectable, const char *doc, int *id_out) {
    return add(c, stage, dtype, rank, d0, d1, d2, emit, injectable, doc, id_out);
}

static void add_sampler(catalogue *c, const char *prefix, const char *stage, int n, bnd_emit emit, int *ids) {
    static const ti_dtype dtypes[SAMP_FIELDS] = {TI_F64, TI_I32, TI_F64, TI_BOOL, TI_F64, TI_F64,
                                                 TI_F64, TI_U64, TI_F64, TI_U64,  TI_I32};
    static const int vector_field[SAMP_FIELDS] = {1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0};
    for (int f = 0; f < SAMP_FIELDS; f++) {
        int64_t len = vector_field[f] ? n : (f == SAMP_PRNG_BEFORE || f == SAMP_PRNG_AFTER) ? 2 : 1;
        bnd_desc *b = add(c, stage, dtypes[f], 1, len, 0, 0, emit, f == SAMP_TOKEN, sampler_docs[f], &ids[f]);
        snprintf(b->name, sizeof b->name, "%s.%s", prefix, sampler_field_names[f]);
    }
}

static void build(catalogue *c) {
    memset(c, 0, sizeof *c);
    memset(c->layer, -1, sizeof c->layer);
    bnd_desc *b;
    catalogue_add_audio_in(c); /* frontend.*, encoder.*, adapter.* come before backbone.embed */
    b = add(c, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
            "modality assembly: embed_tokens[id] for text ids, the next audio_in_embeds row for -1; in decode the "
            "previous output (a text token's row, or the sum over codebooks k=0..7 of "
            "audio_embedding[code_k + 33k])",
            &c->embed);
    snprintf(b->name, sizeof b->name, "backbone.embed");
    for (int l = 0; l < M_LAYERS; l++) {
        int *ids = c->layer[l];
        if (model_layer_is_attn(l)) {
            b = add(c, "backbone", TI_F32, 3, BND_T, M_NKV, M_HD, EMIT_EVERY_PASS, false,
                    "keys appended to this layer's cache by the pass (after per-head k_norm and rotate-half RoPE "
                    "at the absolute position)",
                    &ids[LAYER_K_APPEND]);
            snprintf(b->name, sizeof b->name, "backbone.l%d.k_append", l);
            b = add(c, "backbone", TI_F32, 3, BND_T, M_NKV, M_HD, EMIT_EVERY_PASS, false,
                    "values appended to this layer's cache by the pass", &ids[LAYER_V_APPEND]);
            snprintf(b->name, sizeof b->name, "backbone.l%d.v_append", l);
            b = add(c, "backbone", TI_I32, 1, 1, 0, 0, EMIT_EVERY_PASS, false,
                    "length of this layer's KV cache after the append", &ids[LAYER_KV_LEN]);
            snprintf(b->name, sizeof b->name, "backbone.l%d.kv_len", l);
        } else {
            b = add(c, "backbone", TI_F32, 2, M_CARRY, M_D, 0, EMIT_EVERY_PASS, false,
                    "ShortConv carry after the pass: the last two Bx columns in time order (row 0 older), taken "
                    "across the previous carry when the pass has fewer than 2 positions",
                    &ids[LAYER_CONV_CARRY]);
            snprintf(b->name, sizeof b->name, "backbone.l%d.conv_carry", l);
        }
        b = add(c, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, false,
                "h = x + Op(RMSNorm(x, operator_norm))", &ids[LAYER_MIXER_OUT]);
        snprintf(b->name, sizeof b->name, "backbone.l%d.mixer_out", l);
        b = add(c, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
                "layer output h + SwiGLU(RMSNorm(h, ffn_norm)); injectable (layer isolation)", &ids[LAYER_OUT]);
        snprintf(b->name, sizeof b->name, "backbone.l%d.out", l);
    }
    b = add(c, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
            "RMSNorm(x, embedding_norm) over all positions of the pass", &c->final_norm);
    snprintf(b->name, sizeof b->name, "backbone.final_norm");
    b = add(c, "backbone", TI_F32, 1, M_VT, 0, 0, EMIT_EVERY_PASS, true,
            "tied text logits of the last position: embed_tokens . final_norm[T-1], one row reduction per id",
            &c->logits);
    snprintf(b->name, sizeof b->name, "backbone.logits");
    add_sampler(c, "sampler.text", "sampler", M_VT, EMIT_TEXT_OUT, c->text_sampler);
    b = add(c, "depthformer", TI_F32, 2, M_NCB, M_DD, 0, EMIT_AUDIO_OUT, true,
            "depth.linear(final_norm[T-1]) + bias viewed as [8, 32]: row i is codebook i's input", &c->depth_in);
    snprintf(b->name, sizeof b->name, "depth.in");
    for (int i = 0; i < M_NCB; i++) {
        int *ids = c->cb[i];
        char prefix[32];
        snprintf(prefix, sizeof prefix, "depth.cb%d", i);
        b = add(c, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, true,
                "codebook input depth.in[i] + depth.embeddings.{i-1}[code_{i-1}] (+0 for i = 0)", &ids[CB_IN]);
        snprintf(b->name, sizeof b->name, "%s.in", prefix);
        b = add(c, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false,
                "Depthformer block 0 output (interleaved-pair RoPE at position i, KV over codebooks 0..i)",
                &ids[CB_L0_OUT]);
        snprintf(b->name, sizeof b->name, "%s.l0.out", prefix);
        b = add(c, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false, "Depthformer block 1 output",
                &ids[CB_L1_OUT]);
        snprintf(b->name, sizeof b->name, "%s.l1.out", prefix);
        b = add(c, "depthformer", TI_F32, 1, M_VCB, 0, 0, EMIT_AUDIO_OUT, true,
                "tied code logits: depth.embeddings.{i} . RMSNorm(h, depth.norms.{i}), one row reduction per code",
                &ids[CB_LOGITS]);
        snprintf(b->name, sizeof b->name, "%s.logits", prefix);
        char sampler_prefix[40];
        snprintf(sampler_prefix, sizeof sampler_prefix, "%s.sampler", prefix);
        add_sampler(c, sampler_prefix, "sampler", M_VCB, EMIT_AUDIO_OUT, &ids[CB_SAMPLER]);
        b = add(c, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false,
                "depth.embeddings.{i}[code_i], the feedback added to the next codebook's input", &ids[CB_FEEDBACK]);
        snprintf(b->name, sizeof b->name, "%s.feedback", prefix);
    }
    b = add(c, "depthformer", TI_I32, 1, M_NCB, 0, 0, EMIT_AUDIO_OUT, false,
            "the frame's 8 codes (code 32 in codebook 0 is end-of-audio)", &c->codes);
    snprintf(b->name, sizeof b->name, "depth.codes");
    catalogue_add_detok(c); /* detok.frame_status and detok.* after depth.codes, before gen.state */
    b = add(c, "state", TI_I32, 1, GEN_STATE_LEN, 0, 0, EMIT_EVERY_PASS, false,
            "[cursor, next_mode (0 text, 1 audio), modality_left, text_done, ended, passes_run] after the pass",
            &c->gen_state);
    snprintf(b->name, sizeof b->name, "gen.state");
    b = add(c, "state", TI_U64, 1, 2, 0, 0, EMIT_EVERY_PASS, false, "PRNG state [seed, counter] after the pass",
            &c->gen_prng);
    snprintf(b->name, sizeof b->name, "gen.prng");
    g_catalogue_ok = (c->count == CAT_COUNT);
    if (c->count > CAT_COUNT) c->count = CAT_COUNT;
}

static void build_once(void) { build(&g_catalogue); }

const catalogue *catalogue_get(void) {
    pthread_once(&g_catalogue_once, build_once);
    return g_catalogue_ok ? &g_catalogue : NULL;
}

int catalogue_find(const catalogue *cat, const char *name) {
    for (int i = 0; i < cat->count; i++)
        if (strcmp(cat->entries[i].name, name) == 0) return i;
    return -1;
}

const char *catalogue_emit_name(bnd_emit emit) {
    switch (emit) {
    case EMIT_EVERY_PASS: return "every_pass";
    case EMIT_PREFILL: return "prefill";
    case EMIT_TEXT_OUT: return "text_out";
    case EMIT_AUDIO_OUT: return "audio_out";
    case EMIT_PREFILL_AUDIO_IN: return "prefill_audio_in";
    case EMIT_AUDIO_FRAME: return "audio_frame";
    }
    return "every_pass";
}
