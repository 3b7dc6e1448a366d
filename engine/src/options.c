#include "options.h"

#include <string.h>

static const option_desc option_table[OPT_COUNT] = {
    [OPT_DEPTH_IN_TRANSPOSED] = {"perturb.depth_in_transposed",
                                 "Layout bug: the depth.linear output is stored column-major ([32, 8] memory order) "
                                 "but read and declared as row-major [8, 32], so every codebook gets scrambled "
                                 "inputs. First shows at depth.in (transposed layout) on the first audio pass."},
    [OPT_SAMPLER_WALK_SORTED] = {"perturb.sampler_walk_sorted",
                                 "Reduction-order bug: the prefix sums and the draw walk follow the descending "
                                 "order instead of index order (sum is unchanged). First shows at "
                                 "sampler.text.prefix / depth.cb{i}.sampler.prefix of the first sampler call; "
                                 "the token changes only when the walk lands differently."},
    [OPT_KV_POSITION_OFF_BY_ONE] = {"perturb.kv_position_off_by_one",
                                    "KV cursor bug: decode passes rotate and append keys/values at position "
                                    "cursor + 1 (leaving a zero slot at the cursor). First shows at "
                                    "backbone.l2.k_append in pass 1 (the first decode); prefill is unaffected."},
    [OPT_CONV_CARRY_OFF_BY_ONE] = {"perturb.conv_carry_off_by_one",
                                   "ShortConv cache bug: the carry keeps the Bx columns one step too early "
                                   "(t-3, t-2 instead of t-2, t-1). First shows at backbone.l0.conv_carry in "
                                   "pass 0."},
    [OPT_DEPTH_KV_NOT_RESET] = {"perturb.depth_kv_not_reset",
                                "Skipped state reset: the Depthformer KV cache is not cleared between frames, so "
                                "codebook i also attends to every earlier frame's entries. First shows in the "
                                "second audio pass at depth.cb0.l0.out."},
    [OPT_TIE_ORDER_REVERSED] = {"perturb.tie_order_reversed",
                                "Tie-order bug: equal scaled logits are ordered by descending index instead of "
                                "ascending. First shows at the first sampler order holding a tie (the text "
                                "logits always do: embed_tokens rows 64..127 come in equal pairs)."},
    [OPT_PRNG_DOUBLE_ADVANCE] = {"perturb.prng_double_advance",
                                 "PRNG bug: each uniform() advances the counter twice and uses the second value. "
                                 "First shows at the target of the first stochastic (non-greedy) sampler call."},
    [OPT_CARRY_INIT_NEGATIVE_ZERO] = {"perturb.carry_init_negative_zero",
                                      "Signed-zero bug: the ShortConv carry starts as -0.0 instead of +0.0. Shows "
                                      "only in the 1-token prefill case, at backbone.l0.conv_carry row 0 of pass 0 "
                                      "(a signed zero, visible where signed zeros must match)."},
    [OPT_NAN_TO_ZERO] = {"perturb.nan_to_zero",
                         "NaN-scrubbing bug: modality assembly replaces NaN with 0 in audio-in rows. First shows "
                         "at backbone.embed of pass 0 in a case whose audio_in_embeds hold a NaN."},
    [OPT_AUDIO_EMBED_MEAN] = {"perturb.audio_embed_mean",
                              "Embedding bug: an audio frame's backbone embedding is the mean over the 8 codebooks "
                              "instead of the sum. First shows at backbone.embed of the pass after an audio frame."},
    [OPT_BACKBONE_ROPE_INTERLEAVED] = {"perturb.backbone_rope_interleaved",
                                       "RoPE convention bug: the backbone uses interleaved-pair RoPE instead of "
                                       "rotate-half. First shows at backbone.l2.k_append in pass 0."},
    [OPT_LOGITS_BF16_TRUNCATE] = {"perturb.logits_bf16_truncate",
                                  "Storage bug: backbone logits go through bf16 by truncation (low 16 bits "
                                  "dropped) instead of staying float32. First shows at backbone.logits in pass 0."},
    [OPT_FRONTEND_PERIODIC_WINDOW] = {"perturb.frontend_periodic_window",
                                      "Window bug: the analysis window is a periodic Hann of 400 "
                                      "(0.5 - 0.5 cos(2 pi i / 400)) instead of the symmetric frontend.window "
                                      "(/ 399). First shows at frontend.frames in pass 0 of a case with pcm_in."},
    [OPT_FRONTEND_BIASED_STD] = {"perturb.frontend_biased_std",
                                 "Statistics bug: the per-mel standard deviation divides by N instead of N - 1. "
                                 "First shows at frontend.std in pass 0 of a case with pcm_in."},
    [OPT_FEATURES_BF16_TRUNCATE] = {"perturb.features_bf16_truncate",
                                    "Storage bug: the normalised features go to bf16 by truncation instead of "
                                    "round-to-nearest-even. First shows at frontend.features in pass 0 of a case "
                                    "with pcm_in."},
    [OPT_REL_SHIFT_OFF_BY_ONE] = {"perturb.rel_shift_off_by_one",
                                  "rel_shift bug: bd[h][i][j] reads bd_full[h][i][R - i + j] (one relative position "
                                  "too far; the one index past the end reads 0) instead of R - 1 - i + j. First "
                                  "shows at encoder.b0.attn_probs in pass 0 of a case with pcm_in."},
    [OPT_CONFORMER_CAUSAL_CONV] = {"perturb.conformer_causal_conv",
                                   "Padding bug: the conformer's depthwise k9 conv pads causally (8 left, 0 right) "
                                   "instead of symmetrically (4/4). First shows at encoder.b0.conv_bn (conv_glu is "
                                   "before the depthwise conv) in pass 0 of a case with pcm_in."},
    [OPT_DETOK_EMBED_SUM] = {"perturb.detok_embed_sum",
                             "Embedding bug: the detokenizer's fused code embedding is the sum over the 8 "
                             "codebooks instead of the mean. First shows at detok.embed of the first detokenized "
                             "(non-EOA audio) frame."},
    [OPT_SKIP_ENVELOPE_DIVISION] = {"perturb.skip_envelope_division",
                                    "ISTFT bug: the overlap-added PCM is not divided by the window^2 envelope. "
                                    "First shows at detok.pcm of the first detokenized frame."},
    [OPT_OLA_STATE_RESET] = {"perturb.ola_state_reset",
                             "Streaming-state bug: the pending overlap-add and envelope (detok.ola, "
                             "detok.envelope) are zeroed between passes instead of carried. First shows at "
                             "detok.pcm of the second detokenized frame."},
};

const option_desc *options_table(void) { return option_table; }

ti_status options_set(engine_options *options, const char *key, const char *value, errbuf *err) {
    int id = -1;
    for (int i = 0; i < OPT_COUNT; i++)
        if (strcmp(option_table[i].name, key) == 0) id = i;
    if (id < 0) return err_fail(err, TI_ERR_UNKNOWN_NAME, "option %s: unknown option (see ti_describe().options)", key);
    bool on;
    if (strcmp(value, "1") == 0 || strcmp(value, "true") == 0 || strcmp(value, "on") == 0) {
        on = true;
    } else if (strcmp(value, "0") == 0 || strcmp(value, "false") == 0 || strcmp(value, "off") == 0) {
        on = false;
    } else {
        return err_fail(err, TI_ERR_INVALID_ARGUMENT,
                       "option %s: value \"%s\" is not a bool (use 1/0, true/false or on/off)", key, value);
    }
    options->on[id] = on;
    return TI_OK;
}
