#include "records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

/* The boundary's shape in this pass (T and the audio symbols F, R, L16, P substituted) and its element count. */
static uint64_t pass_shape(const pass_ctx *p, const bnd_desc *b, int64_t *shape) {
    uint64_t count = 1;
    for (uint32_t i = 0; i < b->rank; i++) {
        shape[i] = catalogue_dim(b->shape[i], p->T, p->s->inputs.pcm_len);
        count *= (uint64_t)shape[i];
    }
    return count;
}

/* The pending injection of boundary `id` must have this pass's shape (its T-dependent dims are
 * only known now); checked before anything is recorded, so a misfit fails the pass cleanly. */
static ti_status check_injection(pass_ctx *p, int id, const int64_t *shape, uint64_t bytes) {
    const injection *inj = p->s->injections[id];
    const bnd_desc *b = &p->cat->entries[id];
    for (uint32_t i = 0; i < b->rank; i++) {
        if (inj->shape[i] != shape[i]) {
            char got[128], want[128];
            return err_fail(&p->err, TI_ERR_SHAPE, "injection %s: shape %s does not fit pass %u (T = %lld): expected %s",
                           b->name, format_shape(got, sizeof got, inj->rank, inj->shape), p->index,
                           (long long)p->T, format_shape(want, sizeof want, b->rank, shape));
        }
    }
    if (inj->byte_length != bytes)
        return err_fail(&p->err, TI_ERR_INTERNAL, "injection %s: %llu bytes, expected %llu", b->name,
                       (unsigned long long)inj->byte_length, (unsigned long long)bytes);
    return TI_OK;
}

static ti_status emit_record(pass_ctx *p, int id, const void *data, const int64_t *shape, uint64_t bytes) {
    ti_session *s = p->s;
    const bnd_desc *b = &p->cat->entries[id];
    if (s->record_fn == NULL || !s->wanted[id]) return TI_OK;
    int64_t strides[BND_MAX_RANK] = {0};
    int64_t stride = 1;
    for (int i = (int)b->rank - 1; i >= 0; i--) {
        strides[i] = stride;
        stride *= shape[i];
    }
    ti_record record = {
        .pass_index = p->index,
        .pass_kind = (uint32_t)p->kind,
        .name = b->name,
        .dtype = (uint32_t)b->dtype,
        .rank = b->rank,
        .shape = shape,
        .strides = strides,
        .data = data,
        .byte_length = bytes,
    };
    int verdict = s->record_fn(s->record_user, &record);
    if (verdict != 0)
        return err_fail(&p->err, TI_ERR_ABORTED, "pass %u: the record callback returned %d at boundary %s; pass aborted",
                       p->index, verdict, b->name);
    return TI_OK;
}

ti_status rec_boundary(pass_ctx *p, int id, void *data) {
    const bnd_desc *b = &p->cat->entries[id];
    int64_t shape[BND_MAX_RANK] = {0};
    uint64_t bytes = pass_shape(p, b, shape) * dtype_size(b->dtype);
    const injection *inj = p->s->injections[id];
    if (inj != NULL) {
        ti_status status = check_injection(p, id, shape, bytes);
        if (status != TI_OK) return status;
    }
    /* The record is always what the engine computed; an injection only replaces what flows on. */
    ti_status status = emit_record(p, id, data, shape, bytes);
    if (status != TI_OK) return status;
    if (inj != NULL) memcpy(data, inj->data, bytes);
    return TI_OK;
}

ti_status rec_sampler(pass_ctx *p, const int *ids, sampler_result *r) {
    void *fields[SAMP_FIELDS] = {
        [SAMP_SCALED] = r->scaled, [SAMP_ORDER] = r->order,   [SAMP_THRESHOLD] = &r->threshold,
        [SAMP_KEPT] = r->kept,     [SAMP_MAX] = &r->max,      [SAMP_SUM] = &r->sum,
        [SAMP_PREFIX] = r->prefix, [SAMP_PRNG_BEFORE] = r->prng_before, [SAMP_TARGET] = &r->target,
        [SAMP_PRNG_AFTER] = r->prng_after, [SAMP_TOKEN] = &r->token,
    };
    for (int f = 0; f < SAMP_FIELDS; f++) {
        ti_status status = rec_boundary(p, ids[f], fields[f]);
        if (status != TI_OK) return status;
    }
    return TI_OK;
}

ti_status rec_inject(ti_session *s, const char *boundary, uint32_t dtype, uint32_t rank, const int64_t *shape,
                     const void *data, uint64_t byte_length, errbuf *err) {
    int id = catalogue_find(s->cat, boundary);
    if (id < 0) return err_fail(err, TI_ERR_UNKNOWN_NAME, "injection %s: unknown boundary", boundary);
    const bnd_desc *b = &s->cat->entries[id];
    if (!b->injectable)
        return err_fail(err, TI_ERR_INVALID_ARGUMENT, "injection %s: boundary is not injectable", boundary);
    if (dtype != (uint32_t)b->dtype)
        return err_fail(err, TI_ERR_SHAPE, "injection %s: dtype %s, expected %s", boundary, dtype_abi_name(dtype),
                       dtype_abi_name(b->dtype));
    if (rank > 0 && shape == NULL)
        return err_fail(err, TI_ERR_INVALID_ARGUMENT, "injection %s: shape is NULL for rank %u", boundary, rank);
    char got[160];
    format_shape(got, sizeof got, rank < TI_MAX_RANK ? rank : TI_MAX_RANK, shape);
    if (rank != b->rank)
        return err_fail(err, TI_ERR_SHAPE, "injection %s: shape %s has rank %u, expected rank %u", boundary, got, rank,
                       b->rank);
    uint64_t count = 1;
    for (uint32_t i = 0; i < rank; i++) {
        bool fits = b->shape[i] < 0 ? (shape[i] >= 1 && shape[i] <= TI_MAX_MAX_POSITIONS) : shape[i] == b->shape[i];
        if (!fits) {
            char want[64];
            size_t n = (size_t)snprintf(want, sizeof want, "[");
            for (uint32_t j = 0; j < b->rank; j++) {
                if (b->shape[j] < 0) /* a symbol: T, F, R, L16, P */
                    n += (size_t)snprintf(want + n, sizeof want - n, j ? ", %s" : "%s", catalogue_symbol(b->shape[j]));
                else
                    n += (size_t)snprintf(want + n, sizeof want - n, j ? ", %lld" : "%lld", (long long)b->shape[j]);
            }
            snprintf(want + n, sizeof want - n, "]");
            return err_fail(err, TI_ERR_SHAPE, "injection %s: shape %s, expected %s", boundary, got, want);
        }
        count *= (uint64_t)shape[i];
    }
    uint64_t bytes = count * dtype_size(dtype);
    if (byte_length != bytes)
        return err_fail(err, TI_ERR_SHAPE, "injection %s: byte_length %llu, expected %llu for %s %s", boundary,
                       (unsigned long long)byte_length, (unsigned long long)bytes, dtype_abi_name(dtype), got);
    if (data == NULL) return err_fail(err, TI_ERR_INVALID_ARGUMENT, "injection %s: data is NULL", boundary);
    /* Injected tokens and codes index embedding tables downstream: refuse out-of-range ids now. */
    int32_t limit = 0;
    if (id == s->cat->text_sampler[SAMP_TOKEN]) limit = M_VT;
    for (int i = 0; i < M_NCB; i++)
        if (id == s->cat->cb[i][CB_SAMPLER + SAMP_TOKEN]) limit = M_VCB;
    if (limit > 0) {
        int32_t token;
        memcpy(&token, data, sizeof token);
        if (token < 0 || token >= limit)
            return err_fail(err, TI_ERR_INVALID_ARGUMENT, "injection %s: token %d is outside [0, %d)", boundary,
                           (int)token, (int)limit);
    }
    injection *inj = calloc(1, sizeof *inj);
    void *copy = malloc(bytes);
    if (inj == NULL || copy == NULL) {
        free(inj);
        free(copy);
        return err_fail(err, TI_ERR_OUT_OF_MEMORY, "injection %s: out of memory", boundary);
    }
    memcpy(copy, data, bytes);
    inj->rank = rank;
    for (uint32_t i = 0; i < rank; i++) inj->shape[i] = shape[i];
    inj->data = copy;
    inj->byte_length = bytes;
    if (s->injections[id] != NULL) {
        free(s->injections[id]->data);
        free(s->injections[id]);
    }
    s->injections[id] = inj;
    return TI_OK;
}
