#include "inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audio_model.h"
#include "model.h"
#include "safetensors.h"

static const input_desc input_table[INPUT_COUNT] = {
    [INPUT_PROMPT_TOKENS] = {"prompt_tokens", TI_I32, 1, {-1, 0}, {"T", NULL}, true,
                             "prompt of T >= 1 positions: text ids in [0, 160), -1 marks an audio-in position that "
                             "takes the next audio_in_embeds row"},
    [INPUT_AUDIO_IN_EMBEDS] = {"audio_in_embeds", TI_F32, 2, {-1, M_D}, {"R", NULL}, false,
                               "audio-in rows, one per -1 in prompt_tokens, in order; required when the prompt "
                               "has -1 (R must equal the number of -1)"},
    [INPUT_GEN_CONFIG] = {"gen_config", TI_I32, 1, {3, 0}, {NULL, NULL}, false,
                          "[text_run, audio_run, start_mode] (runs >= 1, mode 0 text / 1 audio); default [6, 12, "
                          "0]"},
    [INPUT_TEMPERATURE] = {"sampler_temperature", TI_F32, 1, {2, 0}, {NULL, NULL}, false,
                           "[text, audio] sampling temperature (<= 0 means greedy); default [0.8, 0.9]"},
    [INPUT_TOP_K] = {"sampler_top_k", TI_I32, 1, {2, 0}, {NULL, NULL}, false,
                     "[text, audio] top-k (1 means greedy, <= 0 means all); default [20, 8]"},
    [INPUT_SEED] = {"seed", TI_U64, 1, {1, 0}, {NULL, NULL}, false,
                    "seed of the SplitMix64 counter PRNG; default [0]"},
    [INPUT_PCM_IN] = {"pcm_in", TI_F32, 1, {-1, 0}, {"L", NULL}, false,
                      "mono PCM at 24 kHz (L samples, nominally in [-1, 1]); when given, the prompt's -1 positions take "
                      "the adapter's R rows (R = ceil(F / 8), F = 1 + floor(L16 / 160), L16 = ceil(2 L / 3); R must "
                      "equal the number of -1; L >= 479 so that N = F - 1 >= 2) and audio_in_embeds must not be set"},
};

const input_desc *inputs_table(void) { return input_table; }

void inputs_init(engine_inputs *in) {
    memset(in, 0, sizeof *in);
    in->gen_config[0] = 6;
    in->gen_config[1] = 12;
    in->gen_config[2] = 0;
    in->temperature[0] = 0.8f;
    in->temperature[1] = 0.9f;
    in->top_k[0] = 20;
    in->top_k[1] = 8;
    in->seed = 0;
}

void inputs_free(engine_inputs *in) {
    free(in->prompt);
    free(in->audio_in);
    free(in->pcm);
    in->prompt = NULL;
    in->audio_in = NULL;
    in->pcm = NULL;
}

/* Replaces *slot with a fresh copy of data (so a failed call leaves the old value in place). */
static ti_status copy_into(void **slot, const void *data, uint64_t bytes, const char *name, errbuf *err) {
    void *copy = malloc(bytes ? bytes : 1);
    if (copy == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "input %s: out of memory (%llu bytes)", name,
                                     (unsigned long long)bytes);
    if (bytes) memcpy(copy, data, bytes);
    free(*slot);
    *slot = copy;
    return TI_OK;
}

ti_status inputs_set(engine_inputs *in, const char *name, uint32_t dtype, uint32_t rank, const int64_t *shape,
                     const void *data, uint64_t byte_length, errbuf *err) {
    int id = -1;
    for (int i = 0; i < INPUT_COUNT; i++)
        if (strcmp(input_table[i].name, name) == 0) id = i;
    if (id < 0)
        return err_fail(err, TI_ERR_UNKNOWN_NAME,
                       "input %s: unknown input (known: prompt_tokens, audio_in_embeds, gen_config, "
                       "sampler_temperature, sampler_top_k, seed, pcm_in)",
                       name);
    const input_desc *d = &input_table[id];
    char got[160], want[64];
    if (rank > 0 && shape == NULL)
        return err_fail(err, TI_ERR_INVALID_ARGUMENT, "input %s: shape is NULL for rank %u", name, rank);
    format_shape(got, sizeof got, rank < TI_MAX_RANK ? rank : TI_MAX_RANK, shape);
    {
        size_t n = 0;
        n += (size_t)snprintf(want, sizeof want, "[");
        for (uint32_t i = 0; i < d->rank; i++) {
            if (d->dims[i] < 0)
                n += (size_t)snprintf(want + n, sizeof want - n, i ? ", %s" : "%s", d->symbols[i]);
            else
                n += (size_t)snprintf(want + n, sizeof want - n, i ? ", %lld" : "%lld", (long long)d->dims[i]);
        }
        snprintf(want + n, sizeof want - n, "]");
    }
    if (dtype != d->dtype)
        return err_fail(err, TI_ERR_SHAPE, "input %s: dtype %s, expected %s", name, dtype_abi_name(dtype),
                       dtype_abi_name(d->dtype));
    if (rank != d->rank)
        return err_fail(err, TI_ERR_SHAPE, "input %s: shape %s has rank %u, expected %s", name, got, rank, want);
    /* Element counts are bounded while multiplying, so a hostile shape cannot wrap the byte count. */
    const uint64_t max_count = (uint64_t)1 << 40;
    uint64_t count = 1;
    for (uint32_t i = 0; i < rank; i++) {
        bool bad = shape[i] < 0 || (d->dims[i] >= 0 && shape[i] != d->dims[i]);
        if (bad) return err_fail(err, TI_ERR_SHAPE, "input %s: shape %s, expected %s", name, got, want);
        if (shape[i] > 0 && count > max_count / (uint64_t)shape[i])
            return err_fail(err, TI_ERR_SHAPE, "input %s: shape %s is too large", name, got);
        count *= (uint64_t)shape[i];
    }
    if (id == INPUT_PROMPT_TOKENS && shape[0] < 1)
        return err_fail(err, TI_ERR_SHAPE, "input %s: shape %s, expected T >= 1 positions", name, got);
    uint64_t bytes = count * dtype_size(d->dtype);
    if (byte_length != bytes)
        return err_fail(err, TI_ERR_SHAPE, "input %s: byte_length %llu, expected %llu for %s %s", name,
                       (unsigned long long)byte_length, (unsigned long long)bytes, dtype_abi_name(dtype), got);
    if (bytes > 0 && data == NULL)
        return err_fail(err, TI_ERR_INVALID_ARGUMENT, "input %s: data is NULL", name);

    switch (id) {
    case INPUT_PROMPT_TOKENS: {
        const int32_t *tokens = data;
        for (int64_t i = 0; i < shape[0]; i++) {
            int32_t t;
            memcpy(&t, &tokens[i], sizeof t); /* host buffers need not be aligned */
            if (t < -1 || t >= M_VT)
                return err_fail(err, TI_ERR_INVALID_ARGUMENT,
                               "input %s: element %lld is %d, expected a text id in [0, %d) or -1 (audio-in)", name,
                               (long long)i, (int)t, M_VT);
        }
        ti_status s = copy_into((void **)&in->prompt, data, bytes, name, err);
        if (s == TI_OK) in->prompt_len = shape[0];
        return s;
    }
    case INPUT_AUDIO_IN_EMBEDS: {
        /* NaN and infinities are legitimate test inputs: they are carried, not refused. */
        ti_status s = copy_into((void **)&in->audio_in, data, bytes, name, err);
        if (s == TI_OK) in->audio_rows = shape[0];
        return s;
    }
    case INPUT_GEN_CONFIG: {
        int32_t v[3];
        memcpy(v, data, sizeof v);
        if (v[0] < 1)
            return err_fail(err, TI_ERR_INVALID_ARGUMENT, "input %s: element 0 (text_run) is %d, expected >= 1", name,
                           (int)v[0]);
        if (v[1] < 1)
            return err_fail(err, TI_ERR_INVALID_ARGUMENT, "input %s: element 1 (audio_run) is %d, expected >= 1",
                           name, (int)v[1]);
        if (v[2] != 0 && v[2] != 1)
            return err_fail(err, TI_ERR_INVALID_ARGUMENT,
                           "input %s: element 2 (start_mode) is %d, expected 0 (text) or 1 (audio)", name, (int)v[2]);
        memcpy(in->gen_config, v, sizeof v);
        return TI_OK;
    }
    case INPUT_TEMPERATURE: memcpy(in->temperature, data, sizeof in->temperature); return TI_OK;
    case INPUT_TOP_K: memcpy(in->top_k, data, sizeof in->top_k); return TI_OK;
    case INPUT_SEED: memcpy(&in->seed, data, sizeof in->seed); return TI_OK;
    case INPUT_PCM_IN: {
        /* Like audio_in_embeds, NaN and infinities are carried, not refused. */
        ti_status s = copy_into((void **)&in->pcm, data, bytes, name, err);
        if (s == TI_OK) in->pcm_len = shape[0];
        return s;
    }
    default: return err_fail(err, TI_ERR_INTERNAL, "input %s: no handler", name);
    }
}

/* pcm_in given: audio_in_embeds must not be, N >= 2, and the adapter's R rows fill the markers. */
static ti_status inputs_check_pcm(const engine_inputs *in, int64_t markers, int64_t max_positions, errbuf *err) {
    if (in->audio_in != NULL)
        return err_fail(err, TI_ERR_STATE,
                       "input audio_in_embeds: must not be set together with pcm_in (the adapter's rows fill the -1 "
                       "positions)");
    int64_t L = in->pcm_len, L16 = audio_l16(L), F = audio_frames(L), R = audio_rows(L);
    if (L16 / A_HOP < 2)
        return err_fail(err, TI_ERR_SHAPE,
                       "input pcm_in: %lld samples give L16 = %lld and N = floor(L16 / 160) = %lld normalisation "
                       "frames; at least 2 are required (L >= 479)",
                       (long long)L, (long long)L16, (long long)(L16 / A_HOP));
    if (markers != R)
        return err_fail(err, TI_ERR_SHAPE,
                       "input pcm_in: gives R = %lld adapter rows (L = %lld samples, F = %lld frames) but prompt_tokens "
                       "holds %lld audio-in markers (-1); they must be equal",
                       (long long)R, (long long)L, (long long)F, (long long)markers);
    if (in->prompt_len > max_positions)
        return err_fail(err, TI_ERR_STATE, "input prompt_tokens: %lld positions exceed max_positions %lld",
                       (long long)in->prompt_len, (long long)max_positions);
    return TI_OK;
}

ti_status inputs_check_prefill(const engine_inputs *in, int64_t max_positions, errbuf *err) {
    if (in->prompt == NULL)
        return err_fail(err, TI_ERR_STATE, "input prompt_tokens: required input is not set (call ti_set_input first)");
    int64_t markers = 0;
    for (int64_t i = 0; i < in->prompt_len; i++) markers += in->prompt[i] == -1;
    if (in->pcm != NULL) return inputs_check_pcm(in, markers, max_positions, err);
    int64_t rows = in->audio_in != NULL ? in->audio_rows : 0;
    if (markers != rows)
        return err_fail(err, TI_ERR_SHAPE,
                       "input audio_in_embeds: has %lld rows%s but prompt_tokens holds %lld audio-in markers (-1); "
                       "they must be equal",
                       (long long)rows, in->audio_in != NULL ? "" : " (not set)", (long long)markers);
    if (in->prompt_len > max_positions)
        return err_fail(err, TI_ERR_STATE, "input prompt_tokens: %lld positions exceed max_positions %lld",
                       (long long)in->prompt_len, (long long)max_positions);
    return TI_OK;
}
