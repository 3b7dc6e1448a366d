/*
 * A small JSON reader (for safetensors headers and the session config) and writer (for
 * ti_describe and ti_session_state). The engine owns this instead of taking a dependency:
 * the inputs it reads are small and the writer only needs strings, integers and doubles.
 */
#ifndef TI_JSON_H
#define TI_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
    json_type type;
    bool boolean;
    double number;
    /* Integral numbers (no fraction, no exponent) that fit int64 are also kept exactly here,
     * because safetensors offsets may exceed 2^53. */
    bool is_integer;
    int64_t integer;
    char *string;              /* decoded UTF-8, NUL-terminated (a \u0000 escape is refused) */
    size_t count;              /* number of array items or object members */
    struct json_value *items;  /* array items, or object member values */
    char **keys;               /* object member names, parallel to items */
} json_value;

/*
 * Parses text[0..length). On failure returns NULL and writes a message with the byte offset
 * to msg. Duplicate object keys are refused (a header with two entries for one tensor is
 * ambiguous). Nesting deeper than 64 levels is refused (bounded recursion).
 */
json_value *json_parse(const char *text, size_t length, char *msg, size_t msg_capacity);
void json_free(json_value *value);

/* Member of an object by name, or NULL (also when value is not an object). */
const json_value *json_member(const json_value *object, const char *key);

/* Growable output buffer. Allocation failure is sticky (`failed`) and checked once at the end. */
typedef struct json_writer {
    char *text;
    size_t length;
    size_t capacity;
    bool failed;
} json_writer;

void jw_init(json_writer *w);
void jw_free(json_writer *w);
void jw_raw(json_writer *w, const char *text);
void jw_printf(json_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jw_string(json_writer *w, const char *text); /* quoted and escaped */

#endif
