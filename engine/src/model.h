/*
 * Dimensions and weights of the tiny LFM2.5-Audio model (docs/reference-model.md).
 */
#ifndef TI_MODEL_H
#define TI_MODEL_H

#include <stdbool.h>

#include "audio_model.h"
#include "errors.h"

enum {
    M_D = 64,       /* backbone width */
    M_LAYERS = 6,   /* operator types [conv, conv, attn, conv, attn, conv] */
    M_NQ = 4,       /* backbone query heads */
    M_NKV = 2,      /* backbone KV heads (query head h uses KV head h / 2) */
    M_HD = 16,      /* head dim (backbone and Depthformer) */
    M_FF = 128,     /* backbone SwiGLU hidden width */
    M_VT = 160,     /* text vocabulary */
    M_NCB = 8,      /* audio codebooks */
    M_VA = 32,      /* codes per codebook; code 32 is end-of-audio */
    M_VCB = 33,     /* entries per codebook (codes + EOA) */
    M_EOA = 32,
    M_DD = 32,      /* Depthformer width */
    M_DLAYERS = 2,
    M_DNQ = 2,
    M_DNKV = 1,
    M_DFF = 64,
    M_CONV_K = 3,   /* ShortConv kernel; the carry holds K - 1 = 2 columns */
    M_CARRY = 2
};

#define M_EPS 1e-5f
/* gen.state: [cursor, next_mode, modality_left, text_done, ended, passes_run]. */
enum { GEN_STATE_LEN = 6 };

#define M_BACKBONE_THETA 1e6f
#define M_DEPTH_THETA 1e6f /* liquid-audio model/transformer.py: MHA default theta */

/* Layer l is attention when this is true, ShortConv otherwise. */
static inline bool model_layer_is_attn(int l) { return l == 2 || l == 4; }

typedef struct backbone_layer_w {
    float *operator_norm; /* [64] */
    float *ffn_norm;      /* [64] */
    float *w1, *w3;       /* [128, 64] */
    float *w2;            /* [64, 128] */
    /* conv layers */
    float *in_proj;  /* [192, 64] */
    float *conv;     /* [64, 3] */
    float *conv_out; /* [64, 64] */
    /* attention layers */
    float *q_proj;         /* [64, 64] */
    float *k_proj, *v_proj; /* [32, 64] */
    float *attn_out;       /* [64, 64] */
    float *q_norm, *k_norm; /* [16] */
} backbone_layer_w;

typedef struct depth_layer_w {
    float *operator_norm, *ffn_norm; /* [32] */
    float *q_proj;                   /* [32, 32] */
    float *k_proj, *v_proj;          /* [16, 32] */
    float *out_proj;                 /* [32, 32] */
    float *q_norm, *k_norm;          /* [16] */
    float *w1, *w3;                  /* [64, 32] */
    float *w2;                       /* [32, 64] */
} depth_layer_w;

typedef struct model_weights {
    float *arena; /* one allocation holding every tensor below */
    float *embed_tokens;    /* [160, 64] */
    float *audio_embedding; /* [264, 64] */
    backbone_layer_w layers[M_LAYERS];
    float *embedding_norm; /* [64], the final norm */
    float *depth_linear_w; /* [256, 64] */
    float *depth_linear_b; /* [256] */
    float *depth_embeddings[M_NCB]; /* [33, 32] */
    depth_layer_w depth_layers[M_DLAYERS];
    float *depth_norms[M_NCB]; /* [32] */
    audio_weights audio; /* part 2 (docs/reference-model-audio.md), its own arena */
} model_weights;

/* Loads and validates every tensor (part 1, then part 2); names the file and the tensor on failure. */
ti_status weights_load(model_weights *w, const char *path, errbuf *err);
void weights_free(model_weights *w);

#endif
