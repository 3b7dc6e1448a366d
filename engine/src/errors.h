/*
 * Error reporting shared by every module: a borrowed, caller-owned message buffer.
 * Every failure path formats one message that names the file and the field, tensor or input
 * at fault, so the host can show it verbatim.
 */
#ifndef TI_ERRORS_H
#define TI_ERRORS_H

#include <stddef.h>

#include "trace_abi.h"

typedef struct errbuf {
    char *text;      /* NUL-terminated message, truncated to capacity */
    size_t capacity; /* 0 means "discard the message" */
} errbuf;

/* Formats the message into err and returns status, so call sites read `return err_fail(...)`. */
ti_status err_fail(errbuf *err, ti_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears the message (a successful call leaves "" behind). */
void err_clear(errbuf *err);

#endif
