/*
 * safetensors reader: 8-byte little-endian header length, a JSON header mapping tensor names
 * to { dtype, shape, data_offsets }, then the data. The header is validated completely before
 * any tensor is read (known dtype, non-negative shape, offsets inside the file, byte span equal
 * to dtype x shape, no two tensors overlapping), and every message names the file and tensor.
 */
#ifndef TI_SAFETENSORS_H
#define TI_SAFETENSORS_H

#include <stdint.h>
#include <stdio.h>

#include "errors.h"
#include "trace_abi.h"

typedef struct st_tensor {
    char *name;
    ti_dtype dtype;
    uint32_t rank;
    int64_t shape[TI_MAX_RANK];
    uint64_t begin; /* offsets relative to the start of the data section */
    uint64_t end;
} st_tensor;

typedef struct st_file {
    char *path;
    const char *role; /* "weights file", "inputs file": prefixes every message */
    FILE *stream;
    uint64_t data_start; /* 8 + header length */
    uint64_t data_size;
    st_tensor *tensors; /* in header order */
    size_t count;
} st_file;

/* Opens and validates path; on failure the file is closed and err says why (IO or FORMAT). */
ti_status st_open(st_file *file, const char *path, const char *role, errbuf *err);
void st_close(st_file *file);

const st_tensor *st_find(const st_file *file, const char *name);

/* Reads the tensor's bytes (end - begin of them) into dst. */
ti_status st_read(const st_file *file, const st_tensor *tensor, void *dst, errbuf *err);

/* Size in bytes of one element, 0 for an unknown dtype. */
size_t dtype_size(uint32_t dtype);
/* "F32", "I32", ... as safetensors spells them; NULL for an unknown dtype. */
const char *dtype_st_name(uint32_t dtype);
/* "f32", "i32", ... as the ABI's describe() spells them; "?" for an unknown dtype. */
const char *dtype_abi_name(uint32_t dtype);

/* One tensor a weights table expects: its name, its F32 shape and where the loaded pointer goes. */
typedef struct st_expected {
    char name[64];
    uint32_t rank;
    int64_t shape[TI_MAX_RANK];
    float **slot;
} st_expected;

/*
 * Loads a weights table from path: checks every expected tensor's presence, dtype (F32) and shape
 * before allocating anything (the first problem is named together with the file), then reads
 * them, in table order, into one arena (*arena, released with free()) and points each slot into
 * it. On failure *arena is NULL or must still be freed by the caller, like the slots it holds.
 */
ti_status st_load_f32_table(const char *path, const st_expected *items, size_t count, float **arena, errbuf *err);

/* "[2, 64]" into buf (for messages). */
const char *format_shape(char *buf, size_t capacity, uint32_t rank, const int64_t *shape);

#endif
