#include "catalogue_audio.h"

#include "audio_model.h"

int64_t catalogue_dim(int64_t dim, int64_t T, int64_t pcm_len) {
    switch (dim) {
    case BND_T: return T;
    case BND_F: return audio_frames(pcm_len);
    case BND_R: return audio_rows(pcm_len);
    case BND_L16: return audio_l16(pcm_len);
    case BND_P: return 2 * audio_rows(pcm_len) - 1;
    default: return dim;
    }
}

const char *catalogue_symbol(int64_t dim) {
    switch (dim) {
    case BND_T: return "T";
    case BND_F: return "F";
    case BND_R: return "R";
    case BND_L16: return "L16";
    case BND_P: return "P";
    default: return NULL;
    }
}

#define IN EMIT_PREFILL_AUDIO_IN
#define FRAME EMIT_AUDIO_FRAME

void catalogue_add_audio_in(cat_builder *builder, cat_audio_ids *ids) {
    int *fe = ids->fe, *enc = ids->enc, *ad = ids->ad;
    fe[FE_RESAMPLED] = cat_add(builder, "frontend", TI_F32, 1, BND_L16, 0, 0, IN, false,
            "pcm_in resampled 24 kHz -> 16 kHz as torchaudio.functional.resample with its defaults (a 2-phase "
            "windowed-sinc kernel of 23 taps, sinc_interp_hann, lowpass_filter_width 6, rolloff 0.99): "
            "y[2j + p] = sum_i kernel[p][i] x[3j + i - 10] (zeros outside the input); L16 = ceil(2 L / 3) "
            "with L = len(pcm_in)",
            "frontend.resampled");
    fe[FE_PREEMPH] = cat_add(builder, "frontend", TI_F32, 1, BND_L16, 0, 0, IN, false,
            "pre-emphasis y[t] = x[t] - 0.97 x[t-1] (x[-1] = 0) of frontend.resampled",
            "frontend.preemph");
    fe[FE_FRAMES] = cat_add(builder, "frontend", TI_F32, 2, BND_F, A_NFFT, 0, IN, false,
            "centred frames: the pre-emphasised signal padded by 256 zeros on both sides, frame f = samples "
            "[160 f, 160 f + 512) times frontend.window; F = 1 + floor(L16 / 160)",
            "frontend.frames");
    fe[FE_POWER] = cat_add(builder, "frontend", TI_F32, 2, BND_F, A_NBINS, 0, IN, false,
            "power spectrum Re^2 + Im^2 of the 512-point DFT of each frame, bins 0..256",
            "frontend.power");
    fe[FE_MEL] = cat_add(builder, "frontend", TI_F32, 2, BND_F, A_NMEL, 0, IN, false,
            "Slaney mel energies frontend.mel_fb . power (32 mels)",
            "frontend.mel");
    fe[FE_LOG_MEL] = cat_add(builder, "frontend", TI_F32, 2, BND_F, A_NMEL, 0, IN, false, "log(mel + 2^-24)",
            "frontend.log_mel");
    fe[FE_MEAN] = cat_add(builder, "frontend", TI_F32, 1, A_NMEL, 0, 0, IN, false,
            "per-mel mean of log_mel over the first N = F - 1 = floor(L16 / 160) frames",
            "frontend.mean");
    fe[FE_STD] = cat_add(builder, "frontend", TI_F32, 1, A_NMEL, 0, 0, IN, false,
            "per-mel sqrt(sum (x - mean)^2 / (N - 1)) + 1e-5 over the same N frames",
            "frontend.std");
    fe[FE_FEATURES] = cat_add(builder, "frontend", TI_BF16, 2, BND_F, A_NMEL, 0, IN, true,
            "(log_mel - mean) / std for frames 0..N-1, zeros for the last frame N, rounded to bf16 (nearest "
            "even, NaN stays NaN); the encoder's input. Injectable",
            "frontend.features");
    fe[FE_VALID_FRAMES] = cat_add(builder, "frontend", TI_I32, 1, 1, 0, 0, IN, false,
            "valid frames of frontend.features: F",
            "frontend.valid_frames");
    enc[ENC_SUBSAMPLING] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, true,
            "dw-striding x8 subsampling of the features image [1, F, 32]: conv 3x3/2 + ReLU, twice depthwise "
            "3x3/2 + pointwise 1x1 + ReLU, flattened channel-major [R, 8*4], Linear(32 -> 32); R = ceil(F / 8). "
            "Injectable",
            "encoder.subsampling");
    enc[ENC_POS_EMB] = cat_add(builder, "encoder", TI_F32, 2, BND_P, A_ED, 0, IN, false,
            "relative positional encoding, P = 2R - 1 rows: row i is r = R - 1 - i, (sin, cos)(r d_j) pairs "
            "with d_j = exp(-2j ln(10000) / 32)",
            "encoder.pos_emb");
    enc[ENC_B0_FFN1] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false, "block 0: x + 0.5 FFN1(LN x)",
            "encoder.b0.ffn1");
    enc[ENC_B0_ATTN_PROBS] = cat_add(builder, "encoder", TI_F32, 3, A_EH, BND_R, BND_R, IN, false,
            "block 0: rel-pos attention probabilities softmax_j((ac + bd) / sqrt(8)) with pos_bias_u / "
            "pos_bias_v and rel_shift bd[h][i][j] = bd_full[h][i][R - 1 - i + j]",
            "encoder.b0.attn_probs");
    enc[ENC_B0_ATTN] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false, "block 0: x + MHSA(LN x)",
            "encoder.b0.attn");
    enc[ENC_B0_CONV_GLU] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false,
            "block 0 conv module: GLU a * sigmoid(b) of pw1(LN x)",
            "encoder.b0.conv_glu");
    enc[ENC_B0_CONV_BN] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false,
            "block 0 conv module: depthwise conv k9 (symmetric zero padding 4/4) + bias, then BatchNorm (eval)",
            "encoder.b0.conv_bn");
    enc[ENC_B0_CONV] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false,
            "block 0: x + pw2(SiLU(conv_bn))",
            "encoder.b0.conv");
    enc[ENC_B0_FFN2] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, false, "block 0: x + 0.5 FFN2(LN x)",
            "encoder.b0.ffn2");
    enc[ENC_B0_OUT] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, true,
            "block 0 output LN_out(x). Injectable",
            "encoder.b0.out");
    enc[ENC_B1_OUT] = cat_add(builder, "encoder", TI_F32, 2, BND_R, A_ED, 0, IN, true,
            "block 1 output LN_out(x). Injectable",
            "encoder.b1.out");
    ad[AD_OUT] = cat_add(builder, "adapter", TI_F32, 2, BND_R, A_AD_HIDDEN, 0, IN, true,
            "adapter LayerNorm -> Linear(32 -> 64) -> erf GELU -> Linear(64 -> 64): the R audio-in rows that "
            "fill the prompt's -1 positions in order. Injectable",
            "adapter.out");
    ad[AD_VALID_ROWS] = cat_add(builder, "adapter", TI_I32, 1, 1, 0, 0, IN, false, "valid rows of adapter.out: R",
            "adapter.valid_rows");
}

void catalogue_add_detok(cat_builder *builder, cat_audio_ids *ids) {
    int *dt = ids->dt;
    dt[DT_FRAME_STATUS] = cat_add(builder, "detokenizer", TI_I32, 1, 1, 0, 0, EMIT_AUDIO_OUT, false,
            "what the detokenizer does with the frame: 0 decoded, 1 end of audio (code 0 is EOA: not "
            "decoded), 2 refused (an EOA code in codebook 1..7: not decoded, as upstream refuses codes "
            ">= 2048)",
            "detok.frame_status");
    dt[DT_EMBED] = cat_add(builder, "detokenizer", TI_F32, 1, A_DW, 0, 0, FRAME, true,
            "mean over codebooks k = 0..7 of detok.embed[code_k + 32 k] (summed in k order from +0.0, times "
            "0.125). Injectable",
            "detok.embed");
    for (int l = 0; l < A_DLAYERS; l++) {
        dt[DT_L0_OUT + l] = cat_add(builder, "detokenizer", TI_F32, 2, A_DREPEAT, A_DW, 0, FRAME, true,
                audio_detok_layer_is_attn(l)
                ? "detokenizer attention layer output over the frame's 6 positions (2 query / 1 KV heads, "
                "RoPE theta 1e6 at the absolute detokenizer position, sliding window 30). Injectable"
                : "detokenizer ShortConv layer output over the frame's 6 positions (carry across frames). "
                "Injectable",
                "detok.l%d.out", l);
    }
    dt[DT_FINAL_NORM] = cat_add(builder, "detokenizer", TI_F32, 2, A_DREPEAT, A_DW, 0, FRAME, false,
            "RMSNorm(x, detok.norm)",
            "detok.final_norm");
    dt[DT_SPECTRAL] = cat_add(builder, "detokenizer", TI_F32, 2, A_DREPEAT, A_DSPEC, 0, FRAME, true,
            "detok.head (Linear 32 -> 1282 + bias): log-magnitude [0, 641) then phase [641, 1282). Injectable",
            "detok.spectral");
    dt[DT_COMPLEX] = cat_add(builder, "detokenizer", TI_C64, 2, A_DREPEAT, A_DBINS, 0, FRAME, false,
            "polar spectrum exp(logmag) (cos(phase) + i sin(phase))",
            "detok.complex");
    dt[DT_PCM] = cat_add(builder, "detokenizer", TI_F32, 1, A_PCM, 0, 0, FRAME, false,
            "the frame's final PCM ola / envelope (ISTFT n_fft 1280, hop 320, first 480 samples trimmed): 1440 "
            "valid samples on the first detokenized frame, 1920 after; zeros past the valid length",
            "detok.pcm");
    dt[DT_OLA] = cat_add(builder, "detokenizer", TI_F32, 1, A_PENDING, 0, 0, FRAME, false,
            "pending overlap-add after the frame: samples [320 M, 320 M + 960), M = positions so far",
            "detok.ola");
    dt[DT_ENVELOPE] = cat_add(builder, "detokenizer", TI_F32, 1, A_PENDING, 0, 0, FRAME, false,
            "pending window^2 envelope after the frame, same samples as detok.ola",
            "detok.envelope");
}
