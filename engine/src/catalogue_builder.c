#include "catalogue_builder.h"

#include <stdarg.h>
#include <stdio.h>

int cat_add(cat_builder *builder, const char *stage, ti_dtype dtype, uint32_t rank, int64_t d0, int64_t d1, int64_t d2,
            bnd_emit emit, bool injectable, const char *doc, const char *name_fmt, ...) {
    int id = builder->count++;
    if (id >= builder->capacity) return -1;
    bnd_desc *b = &builder->entries[id];
    va_list args;
    va_start(args, name_fmt);
    vsnprintf(b->name, sizeof b->name, name_fmt, args);
    va_end(args);
    b->stage = stage;
    b->dtype = dtype;
    b->rank = rank;
    b->shape[0] = d0;
    b->shape[1] = d1;
    b->shape[2] = d2;
    b->emit = emit;
    b->injectable = injectable;
    b->doc = doc;
    return id;
}
