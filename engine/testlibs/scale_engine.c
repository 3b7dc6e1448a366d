/*
 * scale_engine.c — a synthetic trace ABI 1 engine with the boundary catalogue and the tensor
 * shapes of the real LFM2.5-Audio 1.5B, for the scale benchmarks (`npm run bench -- scale`) and
 * the tests that need real-model-sized records. It computes nothing: every value is a cheap
 * hash, so a trace of many GB is produced at the speed of memory and the benchmarks measure
 * the tool, not a model.
 *
 * Dimensions (the real model; tests/scale/scale-model.ts holds the same table for the reference
 * writer): backbone LFM2 1.2B, hidden 2048, 16 layers, attention at layers 2 5 8 10 12 14 (10
 * double-gated short-conv blocks + 6 GQA blocks), 32 query / 8 KV heads of 64, vocabulary
 * 65,536; Depthformer 1024 wide, 6 layers, 8 codebooks of 2,049 codes; FastConformer encoder
 * d_model 512, 17 blocks, 128 mel features; detokenizer width 512, 8 layers, 6 positions per
 * code frame, 1920 PCM samples per frame.
 *
 * Inputs: `prompt_tokens` (i32 [N], required) and `pcm_in` (f32 [L], optional: then the prefill
 * also runs the frontend, encoder and adapter over R = ceil(F / 8) rows, F = 1 + floor(ceil(2L/3)
 * / 160), and the prefill consumes T = N + R positions). Passes: the prefill (output text), then
 * decodes of one position each, interleaved as upstream: 6 text, 12 audio, repeated.
 * Option `scale.kv_cache` (0/1, default 0): every attention layer also records its whole K and V
 * cache after the append ([K, 8, 64], K = positions so far), the records that make a long decode
 * run large.
 *
 * Values: row `pos` of boundary `b` is a xorshift32 stream seeded by (prompt hash, b, pos), each
 * value in [0, 1) (f32; bf16 values in [1, 2): 7 random mantissa bits); a boundary without a position axis uses the pass
 * index as `pos`. So a KV cache is exactly the concatenation of the appends so far, and the
 * reference writer recomputes every value independently from the same rule.
 */
#include "trace_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIDDEN 2048
#define LAYERS 16
#define KV_HEADS 8
#define HEAD_DIM 64
#define VOCAB 65536
#define DEPTH_WIDTH 1024
#define DEPTH_LAYERS 6
#define CODEBOOKS 8
#define CODES 2049
#define MELS 128
#define ENC_WIDTH 512
#define ENC_BLOCKS 17
#define DETOK_WIDTH 512
#define DETOK_LAYERS 8
#define DETOK_POSITIONS 6
#define DETOK_SPECTRUM 1282
#define PCM_PER_FRAME 1920
#define TEXT_RUN 6
#define AUDIO_RUN 12

static const int attn_layer[LAYERS] = {0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0};

/* How a boundary's row count is found for a pass. */
enum rows_kind { ROWS_T, ROWS_FIXED, ROWS_F, ROWS_R, ROWS_KV };
enum emit_kind { EMIT_EVERY, EMIT_AUDIO_IN, EMIT_TEXT, EMIT_AUDIO };

typedef struct boundary {
    char name[48];
    const char *stage;
    uint32_t dtype;
    enum rows_kind rows;
    int64_t fixed_rows; /* ROWS_FIXED: the leading extent; 0: no leading row axis */
    int64_t cols[2];    /* trailing extents (cols[1] == 0: one trailing axis) */
    enum emit_kind emit;
    int kv_cache; /* only with scale.kv_cache=1 */
} boundary;

#define MAX_BOUNDARIES 512
static boundary table[MAX_BOUNDARIES];
static int table_size;
static char description[96 * 1024];

static void add(const char *name, const char *stage, uint32_t dtype, enum rows_kind rows, int64_t fixed_rows, int64_t c0, int64_t c1,
                enum emit_kind emit, int kv_cache) {
    boundary *b = &table[table_size++];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->stage = stage;
    b->dtype = dtype;
    b->rows = rows;
    b->fixed_rows = fixed_rows;
    b->cols[0] = c0;
    b->cols[1] = c1;
    b->emit = emit;
    b->kv_cache = kv_cache;
}

/* The catalogue, in emission order within a pass. */
static void build_table(void) {
    char name[48];
    add("frontend.features", "frontend", TI_BF16, ROWS_F, 0, MELS, 0, EMIT_AUDIO_IN, 0);
    add("encoder.subsampling", "encoder", TI_F32, ROWS_R, 0, ENC_WIDTH, 0, EMIT_AUDIO_IN, 0);
    for (int i = 0; i < ENC_BLOCKS; i++) {
        snprintf(name, sizeof name, "encoder.b%d.out", i);
        add(name, "encoder", TI_F32, ROWS_R, 0, ENC_WIDTH, 0, EMIT_AUDIO_IN, 0);
    }
    add("adapter.out", "adapter", TI_F32, ROWS_R, 0, HIDDEN, 0, EMIT_AUDIO_IN, 0);
    add("backbone.embed", "backbone", TI_F32, ROWS_T, 0, HIDDEN, 0, EMIT_EVERY, 0);
    for (int l = 0; l < LAYERS; l++) {
        if (attn_layer[l]) {
            snprintf(name, sizeof name, "backbone.l%d.k_append", l);
            add(name, "backbone", TI_F32, ROWS_T, 0, KV_HEADS, HEAD_DIM, EMIT_EVERY, 0);
            snprintf(name, sizeof name, "backbone.l%d.v_append", l);
            add(name, "backbone", TI_F32, ROWS_T, 0, KV_HEADS, HEAD_DIM, EMIT_EVERY, 0);
            snprintf(name, sizeof name, "backbone.l%d.kv_len", l);
            add(name, "backbone", TI_I32, ROWS_FIXED, 0, 1, 0, EMIT_EVERY, 0);
            snprintf(name, sizeof name, "backbone.l%d.k_cache", l);
            add(name, "backbone", TI_F32, ROWS_KV, 0, KV_HEADS, HEAD_DIM, EMIT_EVERY, 1);
            snprintf(name, sizeof name, "backbone.l%d.v_cache", l);
            add(name, "backbone", TI_F32, ROWS_KV, 0, KV_HEADS, HEAD_DIM, EMIT_EVERY, 1);
        } else {
            snprintf(name, sizeof name, "backbone.l%d.conv_carry", l);
            add(name, "backbone", TI_F32, ROWS_FIXED, 2, HIDDEN, 0, EMIT_EVERY, 0);
        }
        snprintf(name, sizeof name, "backbone.l%d.mixer_out", l);
        add(name, "backbone", TI_F32, ROWS_T, 0, HIDDEN, 0, EMIT_EVERY, 0);
        snprintf(name, sizeof name, "backbone.l%d.out", l);
        add(name, "backbone", TI_F32, ROWS_T, 0, HIDDEN, 0, EMIT_EVERY, 0);
    }
    add("backbone.final_norm", "backbone", TI_F32, ROWS_T, 0, HIDDEN, 0, EMIT_EVERY, 0);
    add("backbone.logits", "backbone", TI_F32, ROWS_FIXED, 0, VOCAB, 0, EMIT_EVERY, 0);
    add("sampler.text.token", "sampler", TI_I32, ROWS_FIXED, 0, 1, 0, EMIT_TEXT, 0);
    add("depth.in", "depthformer", TI_F32, ROWS_FIXED, CODEBOOKS, DEPTH_WIDTH, 0, EMIT_AUDIO, 0);
    for (int c = 0; c < CODEBOOKS; c++) {
        snprintf(name, sizeof name, "depth.cb%d.in", c);
        add(name, "depthformer", TI_F32, ROWS_FIXED, 0, DEPTH_WIDTH, 0, EMIT_AUDIO, 0);
        for (int l = 0; l < DEPTH_LAYERS; l++) {
            snprintf(name, sizeof name, "depth.cb%d.l%d.out", c, l);
            add(name, "depthformer", TI_F32, ROWS_FIXED, 0, DEPTH_WIDTH, 0, EMIT_AUDIO, 0);
        }
        snprintf(name, sizeof name, "depth.cb%d.logits", c);
        add(name, "depthformer", TI_F32, ROWS_FIXED, 0, CODES, 0, EMIT_AUDIO, 0);
        snprintf(name, sizeof name, "depth.cb%d.token", c);
        add(name, "sampler", TI_I32, ROWS_FIXED, 0, 1, 0, EMIT_AUDIO, 0);
    }
    add("detok.embed", "detokenizer", TI_F32, ROWS_FIXED, DETOK_POSITIONS, DETOK_WIDTH, 0, EMIT_AUDIO, 0);
    for (int l = 0; l < DETOK_LAYERS; l++) {
        snprintf(name, sizeof name, "detok.l%d.out", l);
        add(name, "detokenizer", TI_F32, ROWS_FIXED, DETOK_POSITIONS, DETOK_WIDTH, 0, EMIT_AUDIO, 0);
    }
    add("detok.spectrum", "detokenizer", TI_F32, ROWS_FIXED, DETOK_POSITIONS, DETOK_SPECTRUM, 0, EMIT_AUDIO, 0);
    add("detok.pcm", "detokenizer", TI_F32, ROWS_FIXED, 0, PCM_PER_FRAME, 0, EMIT_AUDIO, 0);
}

static const char *const EMIT_NAMES[] = {"every_pass", "prefill_audio_in", "text_out", "audio_out"};
static const char *dtype_name(uint32_t dtype) { return dtype == TI_BF16 ? "bf16" : dtype == TI_I32 ? "i32" : "f32"; }
static const char *rows_symbol(enum rows_kind rows) { return rows == ROWS_T ? "\"T\"" : rows == ROWS_F ? "\"F\"" : rows == ROWS_R ? "\"R\"" : "\"K\""; }

static void build_description(void) {
    size_t at = 0;
#define PUT(...) at += (size_t)snprintf(description + at, sizeof description - at, __VA_ARGS__)
    PUT("{\"abi_version\":1,\"engine\":{\"name\":\"scale\",\"version\":\"0.1.0\",\"build_id\":\"testlib\"},"
        "\"model\":{\"name\":\"synthetic LFM2.5-Audio 1.5B shapes\",\"width\":%d,\"layers\":[", HIDDEN);
    for (int l = 0; l < LAYERS; l++) PUT("%s\"%s\"", l ? "," : "", attn_layer[l] ? "attn" : "conv");
    PUT("],\"query_heads\":32,\"kv_heads\":%d,\"head_dim\":%d,\"text_vocab\":%d,\"codebooks\":%d,\"codes_per_codebook\":%d,"
        "\"depth_width\":%d,\"depth_layers\":%d,\"encoder_width\":%d,\"encoder_blocks\":%d,\"mels\":%d,"
        "\"detok_width\":%d,\"detok_layers\":%d,\"pcm_per_frame\":%d,"
        "\"shape_symbols\":{\"T\":\"positions consumed by the pass\",\"F\":\"frontend frames\",\"R\":\"encoder rows ceil(F / 8)\","
        "\"K\":\"KV positions after the append\"}},",
        KV_HEADS, HEAD_DIM, VOCAB, CODEBOOKS, CODES, DEPTH_WIDTH, DEPTH_LAYERS, ENC_WIDTH, ENC_BLOCKS, MELS, DETOK_WIDTH, DETOK_LAYERS, PCM_PER_FRAME);
    PUT("\"inputs\":[{\"name\":\"prompt_tokens\",\"dtype\":\"i32\",\"shape\":[\"N\"],\"required\":true,\"doc\":\"seeds the values\"},"
        "{\"name\":\"pcm_in\",\"dtype\":\"f32\",\"shape\":[\"L\"],\"required\":false,\"doc\":\"24 kHz audio: its length sizes the encoder\"}],"
        "\"boundaries\":[");
    for (int i = 0; i < table_size; i++) {
        const boundary *b = &table[i];
        PUT("%s{\"name\":\"%s\",\"stage\":\"%s\",\"dtype\":\"%s\",\"shape\":[", i ? "," : "", b->name, b->stage, dtype_name(b->dtype));
        int first = 1;
        if (b->rows != ROWS_FIXED) {
            PUT("%s", rows_symbol(b->rows));
            first = 0;
        } else if (b->fixed_rows > 0) {
            PUT("%lld", (long long)b->fixed_rows);
            first = 0;
        }
        PUT("%s%lld", first ? "" : ",", (long long)b->cols[0]);
        if (b->cols[1] > 0) PUT(",%lld", (long long)b->cols[1]);
        PUT("],\"emit\":\"%s\",\"injectable\":false,\"doc\":\"synthetic values%s\"}", EMIT_NAMES[b->emit],
            b->kv_cache ? " (recorded only with scale.kv_cache=1)" : "");
    }
    PUT("],\"options\":[{\"name\":\"scale.kv_cache\",\"type\":\"int\",\"default\":0,"
        "\"doc\":\"1: every attention layer also records its whole K and V cache each pass\"}]}");
#undef PUT
}

TI_API uint32_t ti_abi_version(void) { return TI_ABI_VERSION; }
TI_API const char *ti_describe(void) {
    if (table_size == 0) {
        build_table();
        build_description();
    }
    return description;
}

#include "testlib_status.h"

struct ti_session {
    uint32_t seed;
    int have_tokens;
    int64_t tokens;
    int64_t pcm_samples; /* 0: no pcm_in */
    int kv_cache;
    uint32_t passes_run;
    int64_t cursor;
    const char *last_output;
    void *buffer;
    size_t capacity;
    ti_record_fn fn;
    void *user;
    char error[256];
    char state[160];
};

#include "testlib_recording.h"

TI_API ti_status ti_open(const char *config_json, const char *weights_path, ti_session **out, char *err, size_t err_capacity) {
    (void)config_json;
    (void)weights_path;
    if (out == NULL) return TI_ERR_INVALID_ARGUMENT;
    ti_describe();
    *out = calloc(1, sizeof **out);
    if (*out == NULL) {
        if (err != NULL && err_capacity > 0) snprintf(err, err_capacity, "out of memory");
        return TI_ERR_OUT_OF_MEMORY;
    }
    return TI_OK;
}

TI_API void ti_close(ti_session *s) {
    if (s == NULL) return;
    free(s->buffer);
    free(s);
}

TI_API ti_status ti_set_input(ti_session *s, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape, const void *data,
                              uint64_t byte_length) {
    if (s == NULL || name == NULL || (rank > 0 && shape == NULL)) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run != 0) return testlib_fail(s, TI_ERR_STATE, "inputs are set before the prefill");
    if (strcmp(name, "pcm_in") == 0) {
        if (dtype != TI_F32 || rank != 1 || shape[0] < 1 || byte_length != (uint64_t)shape[0] * 4u || data == NULL)
            return testlib_fail(s, TI_ERR_SHAPE, "input pcm_in must be f32 [L] with L >= 1");
        s->pcm_samples = shape[0];
        return TI_OK;
    }
    if (strcmp(name, "prompt_tokens") != 0) return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "unknown input (prompt_tokens, pcm_in)");
    if (dtype != TI_I32 || rank != 1 || shape[0] < 1 || byte_length != (uint64_t)shape[0] * 4u || data == NULL)
        return testlib_fail(s, TI_ERR_SHAPE, "input prompt_tokens must be i32 [N] with N >= 1");
    uint32_t seed = 2166136261u;
    const int32_t *tokens = data;
    for (int64_t i = 0; i < shape[0]; i++) seed = (seed ^ (uint32_t)tokens[i]) * 16777619u;
    s->seed = seed;
    s->tokens = shape[0];
    s->have_tokens = 1;
    return TI_OK;
}

TI_API ti_status ti_set_option(ti_session *s, const char *key, const char *value) {
    if (s == NULL || key == NULL || value == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (strcmp(key, "scale.kv_cache") != 0) return testlib_fail(s, TI_ERR_UNKNOWN_NAME, "unknown option (scale.kv_cache)");
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) return testlib_fail(s, TI_ERR_INVALID_ARGUMENT, "scale.kv_cache takes 0 or 1");
    s->kv_cache = value[0] == '1';
    return TI_OK;
}

/* The value rule (tests/scale/scale-model.ts implements the same): one xorshift32 stream per row. */
static uint32_t row_seed(uint32_t seed, uint32_t boundary_index, uint32_t pos) {
    uint32_t h = seed ^ (boundary_index * 0x9e3779b9u) ^ (pos * 0x85ebca6bu);
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h == 0 ? 1u : h;
}

static void fill_rows(void *out, uint32_t dtype, uint32_t seed, uint32_t boundary_index, int64_t first_pos, int64_t rows, int64_t width) {
    for (int64_t r = 0; r < rows; r++) {
        uint32_t h = row_seed(seed, boundary_index, (uint32_t)(first_pos + r));
        for (int64_t j = 0; j < width; j++) {
            h ^= h << 13;
            h ^= h >> 17;
            h ^= h << 5;
            const int64_t at = r * width + j;
            if (dtype == TI_I32) {
                ((int32_t *)out)[at] = (int32_t)(h % 65536u);
            } else if (dtype == TI_BF16) {
                ((uint16_t *)out)[at] = (uint16_t)(0x3f80u | ((h >> 9) & 0x7fu)); /* [1, 2) */
            } else {
                ((float *)out)[at] = (float)(h >> 8) * (1.0f / 16777216.0f);
            }
        }
    }
}

static int64_t frontend_frames(const ti_session *s) {
    const int64_t l16 = (2 * s->pcm_samples + 2) / 3;
    return 1 + l16 / 160;
}

static ti_status scale_pass(ti_session *s, uint32_t kind) {
    const uint32_t pass = s->passes_run;
    /* Decode k (1-based) follows the interleave 6 text, 12 audio; the prefill's output is text. */
    const int audio = kind == TI_PASS_DECODE && ((pass - 1) % (TEXT_RUN + AUDIO_RUN)) >= TEXT_RUN;
    const int64_t frames = s->pcm_samples > 0 && kind == TI_PASS_PREFILL ? frontend_frames(s) : 0;
    const int64_t audio_rows = (frames + 7) / 8;
    const int64_t t = kind == TI_PASS_PREFILL ? s->tokens + audio_rows : 1;
    const int64_t kv = s->cursor + t;
    for (int i = 0; i < table_size; i++) {
        const boundary *b = &table[i];
        if (b->emit == EMIT_AUDIO_IN && frames == 0) continue;
        if (b->emit == EMIT_TEXT && audio) continue;
        if (b->emit == EMIT_AUDIO && !audio) continue;
        if (b->kv_cache && !s->kv_cache) continue;
        int64_t rows = b->fixed_rows, first_pos = pass;
        int has_rows = 1;
        switch (b->rows) {
        case ROWS_T: rows = t; first_pos = s->cursor; break;
        case ROWS_F: rows = frames; first_pos = 0; break;
        case ROWS_R: rows = audio_rows; first_pos = 0; break;
        case ROWS_KV: rows = kv; first_pos = 0; break;
        case ROWS_FIXED:
            has_rows = b->fixed_rows > 0;
            if (!has_rows) rows = 1;
            break;
        }
        const int64_t width = b->cols[0] * (b->cols[1] > 0 ? b->cols[1] : 1);
        const size_t element = b->dtype == TI_BF16 ? 2u : 4u;
        const size_t bytes = (size_t)(rows * width) * element;
        if (bytes > s->capacity) {
            void *grown = realloc(s->buffer, bytes);
            if (grown == NULL) return testlib_fail(s, TI_ERR_OUT_OF_MEMORY, "out of memory for a record");
            s->buffer = grown;
            s->capacity = bytes;
        }
        /* A cache's rows are the K or V appends of every pass so far: the append's stream. */
        const uint32_t stream = b->kv_cache ? (uint32_t)(i - 3) : (uint32_t)i;
        fill_rows(s->buffer, b->dtype, s->seed, stream, first_pos, rows, width);
        if (b->rows == ROWS_FIXED && strstr(b->name, "kv_len") != NULL) ((int32_t *)s->buffer)[0] = (int32_t)kv;
        if (s->fn == NULL) continue;
        int64_t shape[3];
        uint32_t rank = 0;
        if (has_rows) shape[rank++] = rows;
        shape[rank++] = b->cols[0];
        if (b->cols[1] > 0) shape[rank++] = b->cols[1];
        const ti_record r = {pass, kind, b->name, b->dtype, rank, shape, NULL, s->buffer, (uint64_t)bytes};
        if (s->fn(s->user, &r) != 0) return testlib_fail(s, TI_ERR_ABORTED, "the record callback stopped the pass");
    }
    s->cursor = kv;
    s->last_output = audio ? "audio" : "text";
    s->passes_run++;
    return TI_OK;
}

TI_API ti_status ti_prefill(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (!s->have_tokens) return testlib_fail(s, TI_ERR_STATE, "prefill needs the input prompt_tokens");
    if (s->passes_run != 0) return testlib_fail(s, TI_ERR_STATE, "prefill after prefill: call ti_reset first");
    return scale_pass(s, TI_PASS_PREFILL);
}

TI_API ti_status ti_decode(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    if (s->passes_run == 0) return testlib_fail(s, TI_ERR_STATE, "decode before prefill");
    return scale_pass(s, TI_PASS_DECODE);
}

TI_API ti_status ti_reset(ti_session *s) {
    if (s == NULL) return TI_ERR_INVALID_ARGUMENT;
    s->passes_run = 0;
    s->cursor = 0;
    s->last_output = NULL;
    return TI_OK;
}

TI_API const char *ti_session_state(ti_session *s) {
    if (s == NULL) return "{}";
    snprintf(s->state, sizeof s->state, "{\"passes_run\":%u,\"cursor\":%lld,\"last_output\":%s%s%s}", s->passes_run, (long long)s->cursor,
             s->last_output ? "\"" : "", s->last_output ? s->last_output : "null", s->last_output ? "\"" : "");
    return s->state;
}
