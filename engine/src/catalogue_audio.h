/*
 * The part-2 boundaries of the catalogue (docs/reference-model-audio.md): the audio-in stages
 * (frontend, encoder, adapter; emit prefill_audio_in, before backbone.embed) and the
 * detokenizer (emit audio_frame, after depth.codes), with the shape symbols their extents use.
 */
#ifndef TI_CATALOGUE_AUDIO_H
#define TI_CATALOGUE_AUDIO_H

#include <stdint.h>

#include "catalogue_builder.h"

/* Shape symbols besides BND_T (-1, positions of the pass); all follow from L = len(pcm_in). */
#define BND_F (-2)   /* F = 1 + floor(L16 / 160), frontend frames */
#define BND_R (-3)   /* R = ceil(F / 8), encoder steps = adapter rows */
#define BND_L16 (-4) /* L16 = ceil(2 L / 3), samples after resampling to 16 kHz */
#define BND_P (-5)   /* P = 2 R - 1, relative positions of the encoder */

enum { FE_RESAMPLED, FE_PREEMPH, FE_FRAMES, FE_POWER, FE_MEL, FE_LOG_MEL, FE_MEAN, FE_STD, FE_FEATURES,
       FE_VALID_FRAMES, FE_FIELDS };
enum { ENC_SUBSAMPLING, ENC_POS_EMB, ENC_B0_FFN1, ENC_B0_ATTN_PROBS, ENC_B0_ATTN, ENC_B0_CONV_GLU, ENC_B0_CONV_BN,
       ENC_B0_CONV, ENC_B0_FFN2, ENC_B0_OUT, ENC_B1_OUT, ENC_FIELDS };
enum { AD_OUT, AD_VALID_ROWS, AD_FIELDS };
enum { DT_EMBED, DT_L0_OUT, DT_FINAL_NORM = DT_L0_OUT + 4, DT_SPECTRAL, DT_COMPLEX, DT_PCM, DT_OLA, DT_ENVELOPE,
       DT_FRAME_STATUS, DT_FIELDS };
/* detok.frame_status values: what the detokenizer did with an audio pass's frame. */
enum { FRAME_DECODED = 0, FRAME_END_OF_AUDIO = 1, FRAME_REFUSED = 2 };

#define CAT_AUDIO_IN_COUNT (FE_FIELDS + ENC_FIELDS + AD_FIELDS)
#define CAT_AUDIO_COUNT (CAT_AUDIO_IN_COUNT + DT_FIELDS)

typedef struct cat_audio_ids {
    int fe[FE_FIELDS];
    int enc[ENC_FIELDS];
    int ad[AD_FIELDS];
    int dt[DT_FIELDS];
} cat_audio_ids;

/* Appends the frontend, encoder and adapter boundaries (called before backbone.embed), CAT_AUDIO_IN_COUNT of them. */
void catalogue_add_audio_in(cat_builder *builder, cat_audio_ids *ids);
/* Appends detok.frame_status and the detokenizer boundaries (called after depth.codes), DT_FIELDS of them. */
void catalogue_add_detok(cat_builder *builder, cat_audio_ids *ids);

/* The value of a shape entry in a pass with T positions and an input of pcm_len samples. */
int64_t catalogue_dim(int64_t dim, int64_t T, int64_t pcm_len);
/* The symbol a negative shape entry stands for ("T", "F", "R", "L16", "P"), NULL for a fixed extent. */
const char *catalogue_symbol(int64_t dim);

#endif
