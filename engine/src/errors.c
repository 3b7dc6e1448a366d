#include "errors.h"

#include <stdarg.h>
#include <stdio.h>

ti_status err_fail(errbuf *err, ti_status status, const char *fmt, ...) {
    if (err != NULL && err->text != NULL && err->capacity > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err->text, err->capacity, fmt, args);
        va_end(args);
    }
    return status;
}

void err_clear(errbuf *err) {
    if (err != NULL && err->text != NULL && err->capacity > 0) err->text[0] = '\0';
}
