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

static void add_sampler(cat_builder *builder, const char *prefix, const char *stage, int n, bnd_emit emit, int *ids) {
    static const ti_dtype dtypes[SAMP_FIELDS] = {TI_F64, TI_I32, TI_F64, TI_BOOL, TI_F64, TI_F64,
                                                 TI_F64, TI_U64, TI_F64, TI_U64,  TI_I32};
    static const int vector_field[SAMP_FIELDS] = {1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0};
    for (int f = 0; f < SAMP_FIELDS; f++) {
        int64_t len = vector_field[f] ? n : (f == SAMP_PRNG_BEFORE || f == SAMP_PRNG_AFTER) ? 2 : 1;
        ids[f] = cat_add(builder, stage, dtypes[f], 1, len, 0, 0, emit, f == SAMP_TOKEN, sampler_docs[f], "%s.%s", prefix,
                         sampler_field_names[f]);
    }
}

static void build(catalogue *c) {
    memset(c, 0, sizeof *c);
    memset(c->layer, -1, sizeof c->layer);
    cat_builder builder = {c->entries, CAT_COUNT, 0};
    catalogue_add_audio_in(&builder, &c->audio); /* frontend.*, encoder.*, adapter.* come before backbone.embed */
    c->embed = cat_add(&builder, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
            "modality assembly: embed_tokens[id] for text ids, the next audio_in_embeds row for -1; in decode the "
            "previous output (a text token's row, or the sum over codebooks k=0..7 of "
            "audio_embedding[code_k + 33k])",
            "backbone.embed");
    for (int l = 0; l < M_LAYERS; l++) {
        int *ids = c->layer[l];
        if (model_layer_is_attn(l)) {
            ids[LAYER_K_APPEND] = cat_add(&builder, "backbone", TI_F32, 3, BND_T, M_NKV, M_HD, EMIT_EVERY_PASS, false,
                    "keys appended to this layer's cache by the pass (after per-head k_norm and rotate-half RoPE "
                    "at the absolute position)",
                    "backbone.l%d.k_append", l);
            ids[LAYER_V_APPEND] = cat_add(&builder, "backbone", TI_F32, 3, BND_T, M_NKV, M_HD, EMIT_EVERY_PASS, false,
                    "values appended to this layer's cache by the pass",
                    "backbone.l%d.v_append", l);
            ids[LAYER_KV_LEN] = cat_add(&builder, "backbone", TI_I32, 1, 1, 0, 0, EMIT_EVERY_PASS, false,
                    "length of this layer's KV cache after the append",
                    "backbone.l%d.kv_len", l);
        } else {
            ids[LAYER_CONV_CARRY] = cat_add(&builder, "backbone", TI_F32, 2, M_CARRY, M_D, 0, EMIT_EVERY_PASS, false,
                    "ShortConv carry after the pass: the last two Bx columns in time order (row 0 older), taken "
                    "across the previous carry when the pass has fewer than 2 positions",
                    "backbone.l%d.conv_carry", l);
        }
        ids[LAYER_MIXER_OUT] = cat_add(&builder, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, false,
                "h = x + Op(RMSNorm(x, operator_norm))",
                "backbone.l%d.mixer_out", l);
        ids[LAYER_OUT] = cat_add(&builder, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
                "layer output h + SwiGLU(RMSNorm(h, ffn_norm)); injectable (layer isolation)",
                "backbone.l%d.out", l);
    }
    c->final_norm = cat_add(&builder, "backbone", TI_F32, 2, BND_T, M_D, 0, EMIT_EVERY_PASS, true,
            "RMSNorm(x, embedding_norm) over all positions of the pass",
            "backbone.final_norm");
    c->logits = cat_add(&builder, "backbone", TI_F32, 1, M_VT, 0, 0, EMIT_EVERY_PASS, true,
            "tied text logits of the last position: embed_tokens . final_norm[T-1], one row reduction per id",
            "backbone.logits");
    add_sampler(&builder, "sampler.text", "sampler", M_VT, EMIT_TEXT_OUT, c->text_sampler);
    c->depth_in = cat_add(&builder, "depthformer", TI_F32, 2, M_NCB, M_DD, 0, EMIT_AUDIO_OUT, true,
            "depth.linear(final_norm[T-1]) + bias viewed as [8, 32]: row i is codebook i's input",
            "depth.in");
    for (int i = 0; i < M_NCB; i++) {
        int *ids = c->cb[i];
        char prefix[32];
        snprintf(prefix, sizeof prefix, "depth.cb%d", i);
        ids[CB_IN] = cat_add(&builder, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, true,
                "codebook input depth.in[i] + depth.embeddings.{i-1}[code_{i-1}] (+0 for i = 0)",
                "%s.in", prefix);
        ids[CB_L0_OUT] = cat_add(&builder, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false,
                "Depthformer block 0 output (interleaved-pair RoPE at position i, KV over codebooks 0..i)",
                "%s.l0.out", prefix);
        ids[CB_L1_OUT] = cat_add(&builder, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false,
                "Depthformer block 1 output",
                "%s.l1.out", prefix);
        ids[CB_LOGITS] = cat_add(&builder, "depthformer", TI_F32, 1, M_VCB, 0, 0, EMIT_AUDIO_OUT, true,
                "tied code logits: depth.embeddings.{i} . RMSNorm(h, depth.norms.{i}), one row reduction per code",
                "%s.logits", prefix);
        char sampler_prefix[40];
        snprintf(sampler_prefix, sizeof sampler_prefix, "%s.sampler", prefix);
        add_sampler(&builder, sampler_prefix, "sampler", M_VCB, EMIT_AUDIO_OUT, &ids[CB_SAMPLER]);
        ids[CB_FEEDBACK] = cat_add(&builder, "depthformer", TI_F32, 1, M_DD, 0, 0, EMIT_AUDIO_OUT, false,
                "depth.embeddings.{i}[code_i], the feedback added to the next codebook's input",
                "%s.feedback", prefix);
    }
    c->codes = cat_add(&builder, "depthformer", TI_I32, 1, M_NCB, 0, 0, EMIT_AUDIO_OUT, false,
            "the frame's 8 codes (code 32 in codebook 0 is end-of-audio)",
            "depth.codes");
    catalogue_add_detok(&builder, &c->audio); /* detok.frame_status and detok.* after depth.codes, before gen.state */
    c->gen_state = cat_add(&builder, "state", TI_I32, 1, GEN_STATE_LEN, 0, 0, EMIT_EVERY_PASS, false,
            "[cursor, next_mode (0 text, 1 audio), modality_left, text_done, ended, passes_run] after the pass",
            "gen.state");
    c->gen_prng = cat_add(&builder, "state", TI_U64, 1, 2, 0, 0, EMIT_EVERY_PASS, false,
            "PRNG state [seed, counter] after the pass",
            "gen.prng");
    /* Exactly CAT_COUNT entries, or the catalogue is unusable (an add past the end wrote nothing). */
    g_catalogue_ok = (builder.count == CAT_COUNT);
    c->count = builder.count < CAT_COUNT ? builder.count : CAT_COUNT;
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
