/*
 * Dimensions, weights and carried state of part 2 of the tiny LFM2.5-Audio
 * (docs/reference-model-audio.md): frontend, FastConformer encoder, adapter, detokenizer.
 */
#ifndef TI_AUDIO_MODEL_H
#define TI_AUDIO_MODEL_H

#include <stdint.h>

#include "errors.h"

enum {
    /* frontend */
    A_RS_ORIG = 3,      /* resampler ratio 24 kHz : 16 kHz after the gcd, 3 : 2 */
    A_RS_NEW = 2,
    A_RS_LOWPASS = 6,   /* torchaudio's lowpass_filter_width default */
    A_RS_WIDTH = 10,    /* ceil(6 * 3 / (2 * 0.99)) */
    A_TAPS = 2 * A_RS_WIDTH + A_RS_ORIG, /* 23 kernel taps per phase (2 phases) */
    A_NFFT = 512,       /* analysis frame and DFT length */
    A_NBINS = 257,      /* power spectrum bins 0..256 */
    A_HOP = 160,        /* frame hop at 16 kHz */
    A_PAD = 256,        /* centring pad on each side */
    A_NMEL = 32,
    /* encoder */
    A_SUB_CH = 8,       /* subsampling channels */
    A_SUB_MEL = 4,      /* mel extent after three halvings (32 -> 4) */
    A_ED = 32,          /* encoder width */
    A_EH = 4,           /* encoder heads */
    A_EHD = 8,          /* encoder head dim */
    A_EFF = 128,        /* encoder FFN width */
    A_EBLOCKS = 2,
    A_CONV_K = 9,       /* conformer depthwise kernel */
    /* adapter */
    A_AD_HIDDEN = 64,
    /* detokenizer */
    A_DW = 32,          /* detokenizer width */
    A_DLAYERS = 4,      /* operator types [conv, conv, attn, conv] */
    A_DNQ = 2,
    A_DNKV = 1,
    A_DHD = 16,
    A_DFF = 64,
    A_DEMBED_ROWS = 257, /* code_k + 32 k, k = 0..7, code <= 32 */
    A_DCODE_OFFSET = 32,
    A_DREPEAT = 6,      /* positions per code frame */
    A_DWINDOW = 30,     /* sliding window: i sees j when 0 <= i - j < 30 */
    A_DKV_KEEP = 29,    /* positions the KV cache keeps between frames */
    A_DBINS = 641,      /* n_fft / 2 + 1 */
    A_DSPEC = 2 * 641,  /* head output: log-magnitude then phase */
    A_ISTFT_N = 1280,
    A_ISTFT_HOP = 320,
    A_ISTFT_TRIM = 480,  /* (n_fft - hop) / 2 */
    A_PENDING = 960,     /* n_fft - hop: samples still open after a frame */
    A_PCM = 1920,        /* hop x 6: PCM samples per frame (first frame: 1440 valid) */
    A_PCM_FIRST = 1440
};

#define A_DTHETA 1e6f /* the LFM2 configuration default rope_theta */

/* Detokenizer layer l is attention when this is true, ShortConv otherwise. */
static inline int audio_detok_layer_is_attn(int l) { return l == 2; }

/* Derived extents of an input of L samples at 24 kHz (see the spec's frontend). */
static inline int64_t audio_l16(int64_t L) { return (2 * L + 2) / 3; }          /* ceil(2L / 3) */
static inline int64_t audio_frames(int64_t L) { return 1 + audio_l16(L) / A_HOP; } /* F */
static inline int64_t audio_rows(int64_t L) { return (audio_frames(L) + 7) / 8; } /* R = ceil(F / 8) */

typedef struct enc_block_w {
    float *ffn1_norm_w, *ffn1_norm_b, *ffn1_l1_w, *ffn1_l1_b, *ffn1_l2_w, *ffn1_l2_b;
    float *attn_norm_w, *attn_norm_b;
    float *q_w, *q_b, *k_w, *k_b, *v_w, *v_b, *out_w, *out_b;
    float *pos_w;               /* [32, 32], no bias */
    float *pos_bias_u, *pos_bias_v; /* [4, 8] */
    float *conv_norm_w, *conv_norm_b;
    float *pw1_w, *pw1_b;       /* [64, 32], [64] */
    float *dw_w, *dw_b;         /* [32, 9], [32] */
    float *bn_w, *bn_b, *bn_mean, *bn_var;
    float *pw2_w, *pw2_b;       /* [32, 32], [32] */
    float *ffn2_norm_w, *ffn2_norm_b, *ffn2_l1_w, *ffn2_l1_b, *ffn2_l2_w, *ffn2_l2_b;
    float *out_norm_w, *out_norm_b;
} enc_block_w;

typedef struct detok_layer_w {
    float *operator_norm, *ffn_norm; /* [32] */
    float *w1, *w3;                  /* [64, 32] */
    float *w2;                       /* [32, 64] */
    float *in_proj, *conv, *conv_out; /* conv: [96, 32], [32, 3], [32, 32] */
    float *q_proj, *k_proj, *v_proj, *attn_out; /* attn: [32, 32], [16, 32], [16, 32], [32, 32] */
    float *q_norm, *k_norm;          /* [16] */
} detok_layer_w;

typedef struct audio_weights {
    float *arena;
    float *window; /* [512] */
    float *mel_fb; /* [32, 257] */
    float *conv0_w, *conv0_b;       /* [8, 1, 3, 3], [8] */
    float *dw_w[2], *dw_b[2];       /* conv1_dw, conv2_dw: [8, 1, 3, 3], [8] */
    float *pw_w[2], *pw_b[2];       /* conv1_pw, conv2_pw: [8, 8, 1, 1], [8] */
    float *sub_out_w, *sub_out_b;   /* [32, 32], [32] */
    enc_block_w blocks[A_EBLOCKS];
    float *ad_norm_w, *ad_norm_b;   /* [32] */
    float *ad_l1_w, *ad_l1_b;       /* [64, 32], [64] */
    float *ad_l2_w, *ad_l2_b;       /* [64, 64], [64] */
    float *detok_embed;             /* [257, 32] */
    detok_layer_w detok[A_DLAYERS];
    float *detok_norm;              /* [32] */
    float *head_w, *head_b;         /* [1282, 32], [1282] */
    float *detok_window;            /* [1280] */
} audio_weights;

/* The detokenizer's state carried from one audio frame to the next (staged with the pass). */
typedef struct detok_state {
    int64_t positions;                     /* M: detokenizer positions run so far (6 per frame) */
    float carry[A_DLAYERS][2 * A_DW];      /* ShortConv carries (conv layers), row 0 older */
    int32_t kv_len;                        /* cached positions, <= 29, oldest first */
    float k[A_DKV_KEEP * A_DHD];
    float v[A_DKV_KEEP * A_DHD];
    float ola[A_PENDING];                  /* pending overlap-add, samples [320 M, 320 M + 960) */
    float env[A_PENDING];                  /* pending window^2 envelope, same samples */
} detok_state;

/* Loads and validates every part-2 tensor of the weights file; names the file and tensor on failure. */
ti_status audio_weights_load(audio_weights *w, const char *path, errbuf *err);
void audio_weights_free(audio_weights *w);

#endif
