/*
 * ti_describe(): the engine's self-description, generated once per process from the same tables
 * the engine runs on (catalogue, inputs, options), so the document cannot drift from the code.
 */
#include <pthread.h>
#include <string.h>

#include "catalogue.h"
#include "describe.h"
#include "inputs.h"
#include "json.h"
#include "model.h"
#include "options.h"
#include "safetensors.h"
#include "session.h"

#ifndef TI_BUILD_ID
#define TI_BUILD_ID "unknown"
#endif

#define TI_ENGINE_NAME "ti-reference-lfm2.5-audio"
#define TI_ENGINE_VERSION "0.1.0"

static char g_describe[96 * 1024]; /* written once under g_describe_once, read-only afterwards */
static pthread_once_t g_describe_once = PTHREAD_ONCE_INIT;

/* Part 2 (docs/reference-model-audio.md) and the meaning of every shape symbol. */
static void write_audio_model(json_writer *w) {
    jw_raw(w, "\"audio\":{\"spec\":\"docs/reference-model-audio.md\",\"pcm_in_rate\":24000,\"frontend_rate\":16000,");
    jw_printf(w, "\"n_fft\":%d,\"hop\":%d,\"mels\":%d,\"encoder_width\":%d,\"encoder_blocks\":%d,", A_NFFT, A_HOP,
              A_NMEL, A_ED, A_EBLOCKS);
    jw_printf(w, "\"encoder_heads\":%d,\"encoder_ffn_width\":%d,\"subsampling\":8,\"adapter_width\":%d,", A_EH,
              A_EFF, A_AD_HIDDEN);
    jw_printf(w, "\"detok_width\":%d,\"detok_layers\":[\"conv\",\"conv\",\"attn\",\"conv\"],", A_DW);
    jw_printf(w, "\"detok_window\":%d,\"detok_positions_per_frame\":%d,\"istft\":{\"n_fft\":%d,\"hop\":%d},",
              A_DWINDOW, A_DREPEAT, A_ISTFT_N, A_ISTFT_HOP);
    jw_printf(w, "\"pcm_per_frame\":%d,\"pcm_first_frame\":%d},", A_PCM, A_PCM_FIRST);
    jw_raw(w, "\"shape_symbols\":{\"T\":\"positions consumed by the pass (prompt length in prefill, 1 in decode)\","
              "\"L\":\"samples of pcm_in (24 kHz)\",\"L16\":\"samples after resampling to 16 kHz: ceil(2 L / 3)\","
              "\"F\":\"frontend frames: 1 + floor(L16 / 160)\","
              "\"R\":\"audio-in rows: rows of audio_in_embeds, or encoder steps = adapter rows ceil(F / 8) with "
              "pcm_in\",\"P\":\"encoder relative positions: 2 R - 1\"},");
}

static void write_model(json_writer *w) {
    jw_raw(w, "\"model\":{\"name\":\"tiny-lfm2.5-audio\",\"spec\":\"docs/reference-model.md\",");
    jw_printf(w, "\"width\":%d,\"layers\":[", M_D);
    for (int l = 0; l < M_LAYERS; l++) jw_printf(w, "%s\"%s\"", l ? "," : "", model_layer_is_attn(l) ? "attn" : "conv");
    jw_printf(w, "],\"query_heads\":%d,\"kv_heads\":%d,\"head_dim\":%d,\"ffn_width\":%d,", M_NQ, M_NKV, M_HD, M_FF);
    jw_printf(w, "\"text_vocab\":%d,\"codebooks\":%d,\"codes_per_codebook\":%d,\"end_of_audio\":%d,", M_VT, M_NCB,
              M_VCB, M_EOA);
    jw_printf(w, "\"depth_width\":%d,\"depth_layers\":%d,\"depth_query_heads\":%d,\"depth_kv_heads\":%d,", M_DD,
              M_DLAYERS, M_DNQ, M_DNKV);
    jw_printf(w, "\"depth_head_dim\":%d,\"depth_ffn_width\":%d,\"rms_eps\":1e-05,", M_HD, M_DFF);
    jw_raw(w, "\"backbone_rope\":{\"style\":\"rotate_half\",\"theta\":1000000},");
    jw_raw(w, "\"depth_rope\":{\"style\":\"interleaved_pairs\",\"theta\":1000000},");
    write_audio_model(w);
    jw_printf(w, "\"compute_dtype\":\"f32\",\"sampler_dtype\":\"f64\",\"max_positions_default\":%d}",
              TI_DEFAULT_MAX_POSITIONS);
}

static void write_inputs(json_writer *w) {
    const input_desc *table = inputs_table();
    jw_raw(w, "\"inputs\":[");
    for (int i = 0; i < INPUT_COUNT; i++) {
        const input_desc *d = &table[i];
        jw_raw(w, i ? ",{\"name\":" : "{\"name\":");
        jw_string(w, d->name);
        jw_printf(w, ",\"dtype\":\"%s\",\"shape\":[", dtype_abi_name(d->dtype));
        for (uint32_t k = 0; k < d->rank; k++) {
            if (k) jw_raw(w, ",");
            if (d->dims[k] < 0)
                jw_string(w, d->symbols[k]);
            else
                jw_printf(w, "%lld", (long long)d->dims[k]);
        }
        jw_printf(w, "],\"required\":%s,\"doc\":", d->required ? "true" : "false");
        jw_string(w, d->doc);
        jw_raw(w, "}");
    }
    jw_raw(w, "]");
}

static void write_boundaries(json_writer *w, const catalogue *cat) {
    jw_raw(w, "\"boundaries\":[");
    for (int i = 0; i < cat->count; i++) {
        const bnd_desc *b = &cat->entries[i];
        jw_raw(w, i ? ",\n{\"name\":" : "\n{\"name\":");
        jw_string(w, b->name);
        jw_printf(w, ",\"stage\":\"%s\",\"dtype\":\"%s\",\"shape\":[", b->stage, dtype_abi_name(b->dtype));
        for (uint32_t k = 0; k < b->rank; k++) {
            if (k) jw_raw(w, ",");
            if (b->shape[k] < 0) /* a symbol: T, F, R, L16, P (model.shape_symbols) */
                jw_string(w, catalogue_symbol(b->shape[k]));
            else
                jw_printf(w, "%lld", (long long)b->shape[k]);
        }
        jw_printf(w, "],\"emit\":\"%s\",\"injectable\":%s,\"doc\":", catalogue_emit_name(b->emit),
                  b->injectable ? "true" : "false");
        jw_string(w, b->doc);
        jw_raw(w, "}");
    }
    jw_raw(w, "]");
}

static void write_options(json_writer *w) {
    const option_desc *table = options_table();
    jw_raw(w, "\"options\":[");
    for (int i = 0; i < OPT_COUNT; i++) {
        jw_raw(w, i ? ",\n{\"name\":" : "\n{\"name\":");
        jw_string(w, table[i].name);
        jw_raw(w, ",\"type\":\"bool\",\"default\":false,\"doc\":");
        jw_string(w, table[i].doc);
        jw_raw(w, "}");
    }
    jw_raw(w, "]");
}

static void build_describe(void) {
    static const char fallback[] = "{\"abi_version\":1,\"error\":\"describe document could not be built\"}";
    const catalogue *cat = catalogue_get();
    json_writer w;
    jw_init(&w);
    jw_printf(&w, "{\"abi_version\":%u,\n\"engine\":{\"name\":", TI_ABI_VERSION);
    jw_string(&w, TI_ENGINE_NAME);
    jw_raw(&w, ",\"version\":");
    jw_string(&w, TI_ENGINE_VERSION);
    jw_raw(&w, ",\"build_id\":");
    jw_string(&w, TI_BUILD_ID);
    jw_raw(&w, "},\n");
    write_model(&w);
    jw_raw(&w, ",\n");
    write_inputs(&w);
    jw_raw(&w, ",\n");
    if (cat != NULL) write_boundaries(&w, cat);
    jw_raw(&w, ",\n");
    write_options(&w);
    jw_raw(&w, "}\n");
    if (cat == NULL || w.failed || w.length + 1 > sizeof g_describe)
        memcpy(g_describe, fallback, sizeof fallback);
    else
        memcpy(g_describe, w.text, w.length + 1);
    jw_free(&w);
}

const char *describe_document(void) {
    pthread_once(&g_describe_once, build_describe);
    return g_describe;
}

