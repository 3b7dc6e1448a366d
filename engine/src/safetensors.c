#include "safetensors.h"

#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "json.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors data is little-endian; this reader copies it as-is and needs a little-endian host"
#endif

/* A header larger than this is refused before it is allocated: real headers are kilobytes. */
#define ST_MAX_HEADER (100u * 1024u * 1024u)

static const struct {
    const char *st_name;
    const char *abi_name;
    size_t size;
} dtype_table[] = {
    [TI_F32] = {"F32", "f32", 4},   [TI_F16] = {"F16", "f16", 2},  [TI_BF16] = {"BF16", "bf16", 2},
    [TI_F64] = {"F64", "f64", 8},   [TI_I8] = {"I8", "i8", 1},     [TI_I16] = {"I16", "i16", 2},
    [TI_I32] = {"I32", "i32", 4},   [TI_I64] = {"I64", "i64", 8},  [TI_U8] = {"U8", "u8", 1},
    [TI_U16] = {"U16", "u16", 2},   [TI_U32] = {"U32", "u32", 4},  [TI_U64] = {"U64", "u64", 8},
    [TI_BOOL] = {"BOOL", "bool", 1}, [TI_C64] = {"C64", "c64", 8},
};
#define DTYPE_COUNT (sizeof dtype_table / sizeof dtype_table[0])

size_t dtype_size(uint32_t dtype) { return dtype < DTYPE_COUNT ? dtype_table[dtype].size : 0; }

const char *dtype_st_name(uint32_t dtype) {
    return dtype < DTYPE_COUNT ? dtype_table[dtype].st_name : NULL;
}

const char *dtype_abi_name(uint32_t dtype) {
    return dtype < DTYPE_COUNT ? dtype_table[dtype].abi_name : "?";
}

const char *format_shape(char *buf, size_t capacity, uint32_t rank, const int64_t *shape) {
    size_t n = 0;
    if (capacity == 0) return buf;
    n += (size_t)snprintf(buf, capacity, "[");
    for (uint32_t i = 0; i < rank && n < capacity; i++)
        n += (size_t)snprintf(buf + n, capacity - n, i ? ", %lld" : "%lld", (long long)shape[i]);
    if (n < capacity) snprintf(buf + n, capacity - n, "]");
    return buf;
}

static int dtype_from_st_name(const char *name) {
    for (size_t i = 0; i < DTYPE_COUNT; i++)
        if (strcmp(dtype_table[i].st_name, name) == 0) return (int)i;
    return -1;
}

void st_close(st_file *file) {
    if (file->stream != NULL) fclose(file->stream);
    for (size_t i = 0; i < file->count; i++) free(file->tensors[i].name);
    free(file->tensors);
    free(file->path);
    memset(file, 0, sizeof *file);
}

/* Validates one header entry into *t; the caller has set t->name. */
static ti_status parse_entry(st_file *file, const json_value *entry, st_tensor *t, errbuf *err) {
    const char *p = file->path, *r = file->role, *n = t->name;
    if (entry->type != JSON_OBJECT)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: header entry is not an object", r, p, n);
    const json_value *dtype = json_member(entry, "dtype");
    const json_value *shape = json_member(entry, "shape");
    const json_value *offsets = json_member(entry, "data_offsets");
    if (dtype == NULL || dtype->type != JSON_STRING)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: field dtype is missing or not a string", r, p, n);
    int code = dtype_from_st_name(dtype->string);
    if (code < 0)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: unknown dtype \"%s\"", r, p, n, dtype->string);
    t->dtype = (ti_dtype)code;
    if (shape == NULL || shape->type != JSON_ARRAY)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: field shape is missing or not an array", r, p, n);
    if (shape->count > TI_MAX_RANK)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: rank %zu exceeds %d", r, p, n, shape->count,
                       TI_MAX_RANK);
    t->rank = (uint32_t)shape->count;
    uint64_t bytes = dtype_size(t->dtype);
    for (size_t i = 0; i < shape->count; i++) {
        const json_value *d = &shape->items[i];
        if (d->type != JSON_NUMBER || !d->is_integer || d->integer < 0)
            return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: shape[%zu] is not a non-negative integer", r,
                           p, n, i);
        t->shape[i] = d->integer;
        if (d->integer != 0 && bytes > UINT64_MAX / (uint64_t)d->integer)
            return err_fail(err, TI_ERR_FORMAT, "%s %s: tensor %s: shape overflows 64 bits", r, p, n);
        bytes *= (uint64_t)d->integer;
    }
    if (offsets == NULL || offsets->type != JSON_ARRAY || offsets->count != 2 ||
        offsets->items[0].type != JSON_NUMBER || !offsets->items[0].is_integer ||
        offsets->items[1].type != JSON_NUMBER || !offsets->items[1].is_integer ||
        offsets->items[0].integer < 0 || offsets->items[1].integer < offsets->items[0].integer)
        return err_fail(err, TI_ERR_FORMAT,
                       "%s %s: tensor %s: field data_offsets must be [begin, end] with 0 <= begin <= end", r, p,
                       n);
    t->begin = (uint64_t)offsets->items[0].integer;
    t->end = (uint64_t)offsets->items[1].integer;
    if (t->end > file->data_size)
        return err_fail(err, TI_ERR_FORMAT,
                       "%s %s: tensor %s: data_offsets [%llu, %llu] run past the end of the data section "
                       "(%llu bytes)",
                       r, p, n, (unsigned long long)t->begin, (unsigned long long)t->end,
                       (unsigned long long)file->data_size);
    if (t->end - t->begin != bytes) {
        char sbuf[128];
        return err_fail(err, TI_ERR_FORMAT,
                       "%s %s: tensor %s: data_offsets span %llu bytes but %s %s needs %llu", r, p, n,
                       (unsigned long long)(t->end - t->begin), dtype->string,
                       format_shape(sbuf, sizeof sbuf, t->rank, t->shape), (unsigned long long)bytes);
    }
    return TI_OK;
}

static int compare_begin(const void *a, const void *b) {
    const st_tensor *x = *(const st_tensor *const *)a, *y = *(const st_tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : (x->end > y->end);
}

static ti_status check_overlaps(st_file *file, errbuf *err) {
    if (file->count < 2) return TI_OK;
    st_tensor **sorted = malloc(file->count * sizeof *sorted);
    if (sorted == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "%s %s: out of memory", file->role, file->path);
    size_t m = 0;
    for (size_t i = 0; i < file->count; i++)
        if (file->tensors[i].end > file->tensors[i].begin) sorted[m++] = &file->tensors[i];
    qsort(sorted, m, sizeof *sorted, compare_begin);
    ti_status status = TI_OK;
    for (size_t i = 1; i < m; i++) {
        if (sorted[i]->begin < sorted[i - 1]->end) {
            status = err_fail(err, TI_ERR_FORMAT, "%s %s: tensors %s [%llu, %llu] and %s [%llu, %llu] overlap",
                             file->role, file->path, sorted[i - 1]->name,
                             (unsigned long long)sorted[i - 1]->begin, (unsigned long long)sorted[i - 1]->end,
                             sorted[i]->name, (unsigned long long)sorted[i]->begin,
                             (unsigned long long)sorted[i]->end);
            break;
        }
    }
    free(sorted);
    return status;
}

static ti_status parse_header(st_file *file, errbuf *err) {
    const char *p = file->path, *r = file->role;
    unsigned char len_bytes[8];
    if (fseeko(file->stream, 0, SEEK_END) != 0)
        return err_fail(err, TI_ERR_IO, "%s %s: cannot seek", r, p);
    off_t size = ftello(file->stream);
    if (size < 0 || fseeko(file->stream, 0, SEEK_SET) != 0)
        return err_fail(err, TI_ERR_IO, "%s %s: cannot determine the file size", r, p);
    if (size < 8)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: %lld bytes is too short for the 8-byte header length", r, p,
                       (long long)size);
    if (fread(len_bytes, 1, 8, file->stream) != 8)
        return err_fail(err, TI_ERR_IO, "%s %s: cannot read the header length", r, p);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = (header_len << 8) | len_bytes[i];
    if (header_len > (uint64_t)size - 8)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: header length %llu runs past the end of the file (%lld bytes)",
                       r, p, (unsigned long long)header_len, (long long)size);
    if (header_len > ST_MAX_HEADER)
        return err_fail(err, TI_ERR_FORMAT, "%s %s: header length %llu exceeds the %u-byte limit", r, p,
                       (unsigned long long)header_len, ST_MAX_HEADER);
    char *text = malloc(header_len ? header_len : 1);
    if (text == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "%s %s: out of memory for the header", r, p);
    if (fread(text, 1, header_len, file->stream) != header_len) {
        free(text);
        return err_fail(err, TI_ERR_IO, "%s %s: cannot read the %llu-byte header", r, p,
                       (unsigned long long)header_len);
    }
    char msg[160];
    json_value *root = json_parse(text, header_len, msg, sizeof msg);
    free(text);
    if (root == NULL) return err_fail(err, TI_ERR_FORMAT, "%s %s: header: %s", r, p, msg);
    ti_status status = TI_OK;
    if (root->type != JSON_OBJECT) {
        status = err_fail(err, TI_ERR_FORMAT, "%s %s: header is not a JSON object", r, p);
        goto done;
    }
    file->data_start = 8 + header_len;
    file->data_size = (uint64_t)size - file->data_start;
    file->tensors = calloc(root->count ? root->count : 1, sizeof *file->tensors);
    if (file->tensors == NULL) {
        status = err_fail(err, TI_ERR_OUT_OF_MEMORY, "%s %s: out of memory", r, p);
        goto done;
    }
    for (size_t i = 0; i < root->count; i++) {
        if (strcmp(root->keys[i], "__metadata__") == 0) continue; /* free-form strings; not ours */
        st_tensor *t = &file->tensors[file->count];
        t->name = strdup(root->keys[i]);
        if (t->name == NULL) {
            status = err_fail(err, TI_ERR_OUT_OF_MEMORY, "%s %s: out of memory", r, p);
            goto done;
        }
        file->count++;
        status = parse_entry(file, &root->items[i], t, err);
        if (status != TI_OK) goto done;
    }
    status = check_overlaps(file, err);
done:
    json_free(root);
    return status;
}

ti_status st_open(st_file *file, const char *path, const char *role, errbuf *err) {
    memset(file, 0, sizeof *file);
    file->role = role;
    file->path = strdup(path);
    if (file->path == NULL) return err_fail(err, TI_ERR_OUT_OF_MEMORY, "%s %s: out of memory", role, path);
    file->stream = fopen(path, "rb");
    if (file->stream == NULL) {
        ti_status s = err_fail(err, TI_ERR_IO, "%s %s: cannot open for reading", role, path);
        st_close(file);
        return s;
    }
    ti_status status = parse_header(file, err);
    if (status != TI_OK) st_close(file);
    return status;
}

const st_tensor *st_find(const st_file *file, const char *name) {
    for (size_t i = 0; i < file->count; i++)
        if (strcmp(file->tensors[i].name, name) == 0) return &file->tensors[i];
    return NULL;
}

ti_status st_read(const st_file *file, const st_tensor *tensor, void *dst, errbuf *err) {
    uint64_t n = tensor->end - tensor->begin;
    if (n == 0) return TI_OK;
    if (fseeko(file->stream, (off_t)(file->data_start + tensor->begin), SEEK_SET) != 0 ||
        fread(dst, 1, n, file->stream) != n)
        return err_fail(err, TI_ERR_IO, "%s %s: tensor %s: cannot read %llu bytes at offset %llu", file->role,
                       file->path, tensor->name, (unsigned long long)n,
                       (unsigned long long)(file->data_start + tensor->begin));
    return TI_OK;
}

static size_t expected_count(const st_expected *e) {
    size_t n = 1;
    for (uint32_t i = 0; i < e->rank; i++) n *= (size_t)e->shape[i];
    return n;
}

ti_status st_load_f32_table(const char *path, const st_expected *items, size_t count, float **arena, errbuf *err) {
    st_file file;
    ti_status status = st_open(&file, path, "weights file", err);
    if (status != TI_OK) return status;
    /* Check every tensor's presence, dtype and shape before allocating anything. */
    size_t total = 0;
    for (size_t i = 0; i < count && status == TI_OK; i++) {
        const st_expected *e = &items[i];
        const st_tensor *t = st_find(&file, e->name);
        char want[96], got[128];
        format_shape(want, sizeof want, e->rank, e->shape);
        if (t == NULL) {
            status = err_fail(err, TI_ERR_FORMAT, "weights file %s: missing tensor %s (expected F32 %s)", path,
                             e->name, want);
            break;
        }
        if (t->dtype != TI_F32) {
            status = err_fail(err, TI_ERR_FORMAT, "weights file %s: tensor %s has dtype %s, expected F32", path,
                             e->name, dtype_st_name(t->dtype));
            break;
        }
        int same = t->rank == e->rank;
        for (uint32_t k = 0; same && k < e->rank; k++) same = t->shape[k] == e->shape[k];
        if (!same)
            status = err_fail(err, TI_ERR_FORMAT, "weights file %s: tensor %s has shape %s, expected %s", path,
                             e->name, format_shape(got, sizeof got, t->rank, t->shape), want);
        total += expected_count(e);
    }
    if (status == TI_OK) {
        *arena = malloc(total * sizeof(float));
        if (*arena == NULL) status = err_fail(err, TI_ERR_OUT_OF_MEMORY, "weights file %s: out of memory", path);
    }
    size_t offset = 0;
    for (size_t i = 0; i < count && status == TI_OK; i++) {
        const st_expected *e = &items[i];
        *e->slot = *arena + offset;
        status = st_read(&file, st_find(&file, e->name), *e->slot, err);
        offset += expected_count(e);
    }
    st_close(&file);
    return status;
}
