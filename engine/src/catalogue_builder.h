/*
 * One entry of the boundary catalogue and the builder that appends entries in execution order.
 * The builder writes into a caller's array of fixed capacity: each add takes the entry's name
 * with its other fields, and an add beyond the capacity writes nothing and returns -1 while the
 * count still advances, so the caller's final count check (catalogue.c: count == CAT_COUNT)
 * reports the miscount.
 */
#ifndef TI_CATALOGUE_BUILDER_H
#define TI_CATALOGUE_BUILDER_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_abi.h"

/* A shape entry equal to BND_T stands for T, the positions consumed by the pass (the other
 * symbols, BND_F, BND_R, BND_L16, BND_P, are in catalogue_audio.h). */
#define BND_T (-1)
#define BND_MAX_RANK 3
#define BND_NAME_CAPACITY 48

/* EMIT_PREFILL_AUDIO_IN: the prefill of a session given pcm_in; EMIT_AUDIO_FRAME: a pass whose output
 * is an audio frame whose code 0 is not end-of-audio. */
typedef enum bnd_emit {
    EMIT_EVERY_PASS, EMIT_PREFILL, EMIT_TEXT_OUT, EMIT_AUDIO_OUT, EMIT_PREFILL_AUDIO_IN, EMIT_AUDIO_FRAME
} bnd_emit;

typedef struct bnd_desc {
    char name[BND_NAME_CAPACITY];
    const char *stage; /* "frontend", "encoder", "adapter", "backbone", "sampler", "depthformer", "detokenizer", "state" */
    ti_dtype dtype;
    uint32_t rank;
    int64_t shape[BND_MAX_RANK];
    bnd_emit emit;
    bool injectable;
    const char *doc;
} bnd_desc;

typedef struct cat_builder {
    bnd_desc *entries;
    int capacity;
    int count; /* entries added, the refused ones included */
} cat_builder;

/*
 * Appends the boundary named by name_fmt (printf-style) and returns its id (its index), or -1
 * when the builder is full. stage and doc must outlive the catalogue (string literals).
 */
int cat_add(cat_builder *builder, const char *stage, ti_dtype dtype, uint32_t rank, int64_t d0, int64_t d1, int64_t d2,
            bnd_emit emit, bool injectable, const char *doc, const char *name_fmt, ...)
    __attribute__((format(printf, 11, 12)));

#endif
