#include "json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64

typedef struct parser {
    const char *text;
    size_t length;
    size_t pos;
    char *msg;
    size_t msg_capacity;
    bool failed;
} parser;

static void parse_error(parser *p, const char *what) {
    if (p->failed) return;
    p->failed = true;
    if (p->msg != NULL && p->msg_capacity > 0)
        snprintf(p->msg, p->msg_capacity, "invalid JSON at byte %zu: %s", p->pos, what);
}

static void skip_ws(parser *p) {
    while (p->pos < p->length) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static bool expect_literal(parser *p, const char *literal) {
    size_t n = strlen(literal);
    if (p->length - p->pos < n || memcmp(p->text + p->pos, literal, n) != 0) {
        parse_error(p, "unexpected token");
        return false;
    }
    p->pos += n;
    return true;
}

/* Grows *items (elements of elem_size) to hold at least need elements; malloc/free only. */
static bool grow(void **items, size_t *capacity, size_t need, size_t elem_size) {
    if (need <= *capacity) return true;
    size_t new_capacity = *capacity ? *capacity * 2 : 8;
    while (new_capacity < need) new_capacity *= 2;
    if (new_capacity > SIZE_MAX / elem_size) return false;
    void *fresh = malloc(new_capacity * elem_size);
    if (fresh == NULL) return false;
    if (*items != NULL) {
        memcpy(fresh, *items, *capacity * elem_size);
        free(*items);
    }
    *items = fresh;
    *capacity = new_capacity;
    return true;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool read_hex4(parser *p, unsigned *out) {
    if (p->length - p->pos < 4) {
        parse_error(p, "truncated \\u escape");
        return false;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p->text[p->pos + (size_t)i]);
        if (d < 0) {
            parse_error(p, "bad \\u escape");
            return false;
        }
        v = v * 16u + (unsigned)d;
    }
    p->pos += 4;
    *out = v;
    return true;
}

/* Parses a string starting at the opening quote; returns a malloc'd decoded copy. */
static char *parse_string(parser *p) {
    p->pos++; /* opening quote */
    /* The decoded form is never longer than the encoded one (a \uXXXX escape of 6 bytes
     * yields at most 3 bytes, a surrogate pair of 12 bytes yields 4). */
    size_t start = p->pos;
    size_t end = start;
    while (end < p->length && p->text[end] != '"') {
        if (p->text[end] == '\\') end++;
        end++;
    }
    if (end >= p->length) {
        parse_error(p, "unterminated string");
        return NULL;
    }
    char *out = malloc(end - start + 1);
    if (out == NULL) {
        parse_error(p, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (p->pos < end) {
        unsigned char c = (unsigned char)p->text[p->pos];
        if (c < 0x20) {
            parse_error(p, "control character in string");
            free(out);
            return NULL;
        }
        if (c != '\\') {
            out[n++] = (char)c;
            p->pos++;
            continue;
        }
        p->pos++;
        char e = p->text[p->pos++];
        switch (e) {
        case '"': out[n++] = '"'; break;
        case '\\': out[n++] = '\\'; break;
        case '/': out[n++] = '/'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'n': out[n++] = '\n'; break;
        case 'r': out[n++] = '\r'; break;
        case 't': out[n++] = '\t'; break;
        case 'u': {
            unsigned cp;
            if (!read_hex4(p, &cp)) {
                free(out);
                return NULL;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                unsigned low;
                if (p->length - p->pos < 2 || p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u') {
                    parse_error(p, "unpaired surrogate");
                    free(out);
                    return NULL;
                }
                p->pos += 2;
                if (!read_hex4(p, &low) || low < 0xDC00 || low > 0xDFFF) {
                    parse_error(p, "unpaired surrogate");
                    free(out);
                    return NULL;
                }
                cp = 0x10000u + ((cp - 0xD800u) << 10) + (low - 0xDC00u);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                parse_error(p, "unpaired surrogate");
                free(out);
                return NULL;
            }
            if (cp == 0) {
                parse_error(p, "\\u0000 in string");
                free(out);
                return NULL;
            }
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else if (cp < 0x10000) {
                out[n++] = (char)(0xE0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[n++] = (char)(0xF0 | (cp >> 18));
                out[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        default:
            parse_error(p, "bad escape");
            free(out);
            return NULL;
        }
    }
    p->pos = end + 1; /* closing quote */
    out[n] = '\0';
    return out;
}

static bool parse_number(parser *p, json_value *v) {
    size_t start = p->pos;
    bool integral = true;
    if (p->pos < p->length && p->text[p->pos] == '-') p->pos++;
    if (p->pos >= p->length || p->text[p->pos] < '0' || p->text[p->pos] > '9') {
        parse_error(p, "bad number");
        return false;
    }
    if (p->text[p->pos] == '0') {
        p->pos++;
    } else {
        while (p->pos < p->length && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->length && p->text[p->pos] == '.') {
        integral = false;
        p->pos++;
        if (p->pos >= p->length || p->text[p->pos] < '0' || p->text[p->pos] > '9') {
            parse_error(p, "bad number");
            return false;
        }
        while (p->pos < p->length && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') p->pos++;
    }
    if (p->pos < p->length && (p->text[p->pos] == 'e' || p->text[p->pos] == 'E')) {
        integral = false;
        p->pos++;
        if (p->pos < p->length && (p->text[p->pos] == '+' || p->text[p->pos] == '-')) p->pos++;
        if (p->pos >= p->length || p->text[p->pos] < '0' || p->text[p->pos] > '9') {
            parse_error(p, "bad number");
            return false;
        }
        while (p->pos < p->length && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') p->pos++;
    }
    /* strtod/strtoll need a NUL-terminated copy: the input buffer is not terminated. */
    char buf[64];
    size_t n = p->pos - start;
    if (n >= sizeof buf) {
        parse_error(p, "number too long");
        return false;
    }
    memcpy(buf, p->text + start, n);
    buf[n] = '\0';
    v->type = JSON_NUMBER;
    v->number = strtod(buf, NULL);
    if (integral) {
        errno = 0;
        long long i = strtoll(buf, NULL, 10);
        if (errno == 0) {
            v->is_integer = true;
            v->integer = (int64_t)i;
        }
    }
    return true;
}

static bool parse_value(parser *p, json_value *v, int depth);

static bool parse_array(parser *p, json_value *v, int depth) {
    p->pos++; /* [ */
    v->type = JSON_ARRAY;
    size_t capacity = 0;
    skip_ws(p);
    if (p->pos < p->length && p->text[p->pos] == ']') {
        p->pos++;
        return true;
    }
    for (;;) {
        if (!grow((void **)&v->items, &capacity, v->count + 1, sizeof(json_value))) {
            parse_error(p, "out of memory");
            return false;
        }
        json_value *item = &v->items[v->count];
        memset(item, 0, sizeof *item);
        v->count++;
        if (!parse_value(p, item, depth + 1)) return false;
        skip_ws(p);
        if (p->pos >= p->length) {
            parse_error(p, "unterminated array");
            return false;
        }
        char c = p->text[p->pos++];
        if (c == ']') return true;
        if (c != ',') {
            p->pos--;
            parse_error(p, "expected ',' or ']'");
            return false;
        }
    }
}

static bool parse_object(parser *p, json_value *v, int depth) {
    p->pos++; /* { */
    v->type = JSON_OBJECT;
    size_t capacity = 0, key_capacity = 0;
    skip_ws(p);
    if (p->pos < p->length && p->text[p->pos] == '}') {
        p->pos++;
        return true;
    }
    for (;;) {
        skip_ws(p);
        if (p->pos >= p->length || p->text[p->pos] != '"') {
            parse_error(p, "expected a member name");
            return false;
        }
        if (!grow((void **)&v->items, &capacity, v->count + 1, sizeof(json_value)) ||
            !grow((void **)&v->keys, &key_capacity, v->count + 1, sizeof(char *))) {
            parse_error(p, "out of memory");
            return false;
        }
        json_value *item = &v->items[v->count];
        memset(item, 0, sizeof *item);
        v->keys[v->count] = NULL;
        v->count++;
        size_t key_pos = p->pos;
        char *key = parse_string(p);
        if (key == NULL) return false;
        v->keys[v->count - 1] = key;
        for (size_t i = 0; i + 1 < v->count; i++) {
            if (strcmp(v->keys[i], key) == 0) {
                p->pos = key_pos;
                parse_error(p, "duplicate member name");
                return false;
            }
        }
        skip_ws(p);
        if (p->pos >= p->length || p->text[p->pos] != ':') {
            parse_error(p, "expected ':'");
            return false;
        }
        p->pos++;
        if (!parse_value(p, item, depth + 1)) return false;
        skip_ws(p);
        if (p->pos >= p->length) {
            parse_error(p, "unterminated object");
            return false;
        }
        char c = p->text[p->pos++];
        if (c == '}') return true;
        if (c != ',') {
            p->pos--;
            parse_error(p, "expected ',' or '}'");
            return false;
        }
    }
}

static bool parse_value(parser *p, json_value *v, int depth) {
    if (depth > JSON_MAX_DEPTH) {
        parse_error(p, "nesting too deep");
        return false;
    }
    skip_ws(p);
    if (p->pos >= p->length) {
        parse_error(p, "unexpected end of input");
        return false;
    }
    char c = p->text[p->pos];
    switch (c) {
    case '{': return parse_object(p, v, depth);
    case '[': return parse_array(p, v, depth);
    case '"':
        v->type = JSON_STRING;
        v->string = parse_string(p);
        return v->string != NULL;
    case 't':
        v->type = JSON_BOOL;
        v->boolean = true;
        return expect_literal(p, "true");
    case 'f':
        v->type = JSON_BOOL;
        return expect_literal(p, "false");
    case 'n':
        v->type = JSON_NULL;
        return expect_literal(p, "null");
    default: return parse_number(p, v);
    }
}

static void free_contents(json_value *v) {
    if (v->items != NULL) {
        for (size_t i = 0; i < v->count; i++) free_contents(&v->items[i]);
        free(v->items);
    }
    if (v->keys != NULL) {
        for (size_t i = 0; i < v->count; i++) free(v->keys[i]);
        free(v->keys);
    }
    free(v->string);
}

json_value *json_parse(const char *text, size_t length, char *msg, size_t msg_capacity) {
    parser p = {text, length, 0, msg, msg_capacity, false};
    json_value *root = calloc(1, sizeof *root);
    if (root == NULL) {
        if (msg != NULL && msg_capacity > 0) snprintf(msg, msg_capacity, "out of memory");
        return NULL;
    }
    if (parse_value(&p, root, 0)) {
        skip_ws(&p);
        if (p.pos != p.length) parse_error(&p, "trailing characters after the document");
    }
    if (p.failed) {
        json_free(root);
        return NULL;
    }
    return root;
}

void json_free(json_value *value) {
    if (value == NULL) return;
    free_contents(value);
    free(value);
}

const json_value *json_member(const json_value *object, const char *key) {
    if (object == NULL || object->type != JSON_OBJECT) return NULL;
    for (size_t i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) return &object->items[i];
    return NULL;
}

void jw_init(json_writer *w) { memset(w, 0, sizeof *w); }

void jw_free(json_writer *w) {
    free(w->text);
    memset(w, 0, sizeof *w);
}

static void jw_append(json_writer *w, const char *text, size_t n) {
    if (w->failed) return;
    if (!grow((void **)&w->text, &w->capacity, w->length + n + 1, 1)) {
        w->failed = true;
        return;
    }
    memcpy(w->text + w->length, text, n);
    w->length += n;
    w->text[w->length] = '\0';
}

void jw_raw(json_writer *w, const char *text) { jw_append(w, text, strlen(text)); }

void jw_printf(json_writer *w, const char *fmt, ...) {
    char buf[256];
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, args);
    va_end(args);
    if (n < 0 || (size_t)n >= sizeof buf) {
        w->failed = true; /* only short scalars go through here */
        return;
    }
    jw_append(w, buf, (size_t)n);
}

void jw_string(json_writer *w, const char *text) {
    jw_append(w, "\"", 1);
    for (const char *c = text; *c != '\0'; c++) {
        unsigned char u = (unsigned char)*c;
        if (u == '"' || u == '\\') {
            char esc[2] = {'\\', (char)u};
            jw_append(w, esc, 2);
        } else if (u < 0x20) {
            char esc[8];
            snprintf(esc, sizeof esc, "\\u%04x", u);
            jw_append(w, esc, 6);
        } else {
            jw_append(w, c, 1);
        }
    }
    jw_append(w, "\"", 1);
}
