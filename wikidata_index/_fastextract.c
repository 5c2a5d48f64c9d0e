/*
 * wikidata_index._fastextract: the ingest's hot loop in C.
 *
 * extract_chunk() walks the lines of one chunk of a Wikidata JSON dump, validates each record as
 * strict JSON (UTF-8 included) in one pass, and appends the rows of the index tables straight into
 * Arrow-layout column buffers, so no Python object is made per value.
 *
 * It is a fast path, not a second definition of the format: a record is taken here only when it
 * has the usual shape, and then its rows are exactly what wikidata_index.extract (the Python
 * extraction, over pysimdjson) gives. Anything unusual -- invalid JSON, lexemes, envelopes,
 * redirects, escaped keys, duplicate keys that matter, odd snaks, deep nesting, numbers that a
 * double cannot hold -- is handed back as a line span, and the Python path decides what it is.
 * tests/wikidata_index/test_fastextract.py checks the two paths against each other.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* --------------------------------------------------------------------------------- buffers */

typedef struct {
    uint8_t *p;
    Py_ssize_t len, cap;
} Buf;

static int buf_reserve(Buf *b, Py_ssize_t extra) {
    if (b->len + extra <= b->cap)
        return 0;
    Py_ssize_t cap = b->cap ? b->cap : 1024;
    while (cap < b->len + extra)
        cap *= 2;
    uint8_t *np = PyMem_Realloc(b->p, (size_t)cap);
    if (np == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->p = np;
    b->cap = cap;
    return 0;
}

static int buf_put(Buf *b, const void *src, Py_ssize_t n) {
    if (buf_reserve(b, n) < 0)
        return -1;
    if (n)
        memcpy(b->p + b->len, src, (size_t)n);
    b->len += n;
    return 0;
}

static void buf_free(Buf *b) {
    PyMem_Free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

/* --------------------------------------------------------------------------------- columns */

enum { K_STR = 0, K_I32 = 1, K_BOOL = 2 };

typedef struct {
    int kind;
    Py_ssize_t n;     /* rows */
    Py_ssize_t nulls; /* null rows (strings only) */
    Buf data;         /* utf-8 bytes, int32 values or one byte per bool */
    Buf offs;         /* int32 offsets, n + 1 of them (strings) */
    Buf valid;        /* one byte per row, 1 = valid (strings) */
} Col;

/* Tables and columns in wikidata_index.schema order (entities without popularity). Python
 * checks this layout against STAGE_SCHEMAS before using the module. */
enum { T_ENTITIES, T_NAMES, T_TYPES, T_SUBCLASSES, T_EDGES, T_PROPERTIES, T_CONSTRAINTS, T_DEMONYMS, T_GENDERS,
       N_TABLES };
static const char *TABLE_NAMES[N_TABLES] = {"entities", "names", "types", "subclasses", "edges",
                                            "properties", "property_constraints", "demonyms", "genders"};
static const int TABLE_NCOLS[N_TABLES] = {6, 5, 3, 3, 3, 3, 4, 6, 3};
static const char *COL_NAMES[N_TABLES][6] = {
    {"id", "type", "label", "description", "sitelinks", "enwiki"},
    {"id", "lang", "name", "is_label", "folded"},
    {"id", "class", "rank"},
    {"id", "superclass", "rank"},
    {"subject", "property", "object"},
    {"id", "datatype", "label"},
    {"property", "constraint_type", "class", "relation"},
    {"id", "lang", "text", "rank", "form", "folded"},
    {"id", "gender", "rank"},
};
static const int COL_KINDS[N_TABLES][6] = {
    {K_STR, K_STR, K_STR, K_STR, K_I32, K_STR},
    {K_STR, K_STR, K_STR, K_BOOL, K_STR},
    {K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR, K_STR, K_STR, K_STR},
    {K_STR, K_STR, K_STR},
};
#define MAX_COLS 48 /* at least the sum of TABLE_NCOLS (36) */

typedef struct {
    Col cols[N_TABLES][6];
} Tables;

typedef struct {
    Py_ssize_t n, nulls, dlen;
} ColMark;

static int tables_init(Tables *t) {
    memset(t, 0, sizeof(*t));
    for (int i = 0; i < N_TABLES; i++)
        for (int j = 0; j < TABLE_NCOLS[i]; j++) {
            Col *c = &t->cols[i][j];
            c->kind = COL_KINDS[i][j];
            if (c->kind == K_STR) {
                int32_t zero = 0;
                if (buf_put(&c->offs, &zero, 4) < 0)
                    return -1;
            }
        }
    return 0;
}

static void tables_free(Tables *t) {
    for (int i = 0; i < N_TABLES; i++)
        for (int j = 0; j < TABLE_NCOLS[i]; j++) {
            buf_free(&t->cols[i][j].data);
            buf_free(&t->cols[i][j].offs);
            buf_free(&t->cols[i][j].valid);
        }
}

/* A record's rows are appended as they are found; a record that falls back is rolled back. */
static void tables_mark(Tables *t, ColMark *m) {
    int k = 0;
    for (int i = 0; i < N_TABLES; i++)
        for (int j = 0; j < TABLE_NCOLS[i]; j++, k++) {
            m[k].n = t->cols[i][j].n;
            m[k].nulls = t->cols[i][j].nulls;
            m[k].dlen = t->cols[i][j].data.len;
        }
}

static void tables_rollback(Tables *t, const ColMark *m) {
    int k = 0;
    for (int i = 0; i < N_TABLES; i++)
        for (int j = 0; j < TABLE_NCOLS[i]; j++, k++) {
            Col *c = &t->cols[i][j];
            c->n = m[k].n;
            c->nulls = m[k].nulls;
            c->data.len = m[k].dlen;
            if (c->kind == K_STR) {
                c->offs.len = (c->n + 1) * 4;
                c->valid.len = c->n;
            }
        }
}

typedef struct {
    const uint8_t *s;
    Py_ssize_t n;
} Str;

static int col_str(Col *c, const uint8_t *s, Py_ssize_t n) {
    if (c->data.len + n > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "column data over 2 GiB in one chunk; use smaller chunks");
        return -1;
    }
    if (buf_put(&c->data, s, n) < 0)
        return -1;
    int32_t end = (int32_t)c->data.len;
    uint8_t one = 1;
    if (buf_put(&c->offs, &end, 4) < 0 || buf_put(&c->valid, &one, 1) < 0)
        return -1;
    c->n++;
    return 0;
}

static int col_s(Col *c, Str v) { return col_str(c, v.s, v.n); }

static int col_null(Col *c) {
    int32_t end = (int32_t)c->data.len;
    uint8_t zero = 0;
    if (buf_put(&c->offs, &end, 4) < 0 || buf_put(&c->valid, &zero, 1) < 0)
        return -1;
    c->n++;
    c->nulls++;
    return 0;
}

static int col_opt(Col *c, const Str *v) { return v ? col_s(c, *v) : col_null(c); }

static int col_i32(Col *c, int32_t v) {
    if (buf_put(&c->data, &v, 4) < 0)
        return -1;
    c->n++;
    return 0;
}

static int col_bool(Col *c, int v) {
    uint8_t b = (uint8_t)(v != 0);
    if (buf_put(&c->data, &b, 1) < 0)
        return -1;
    c->n++;
    return 0;
}

/* ------------------------------------------------------------------------------ JSON scanning */

/* Return codes: OK; FALL = not handled here (invalid or unusual: the Python path decides);
 * ERR = a Python exception is set. */
#define OK 0
#define FALL 1
#define ERR (-1)
#define TRY(x)                \
    do {                      \
        int _r = (x);         \
        if (_r != OK)         \
            return _r;        \
    } while (0)

#define MAX_DEPTH 128
#define MAX_ID_DIGITS 15 /* extract.py's MAX_ID_DIGITS */

typedef struct {
    const uint8_t *p, *end;
    int depth;
    Buf *arena; /* decoded strings of the current record; reserved up front, never moved */
} Cur;

static inline void ws(Cur *c) {
    while (c->p < c->end) {
        uint8_t ch = *c->p;
        if (ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t')
            c->p++;
        else
            break;
    }
}

static inline int hexval(uint8_t ch) {
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

static inline int read_u4(const uint8_t *p, const uint8_t *end, uint32_t *out) {
    if (end - p < 4)
        return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0)
            return -1;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* One UTF-8 sequence starting at a byte >= 0x80; its length, or 0 if invalid (overlong forms,
 * surrogates and code points past U+10FFFF are invalid, as in simdjson). */
static inline int utf8_len(const uint8_t *p, const uint8_t *end) {
    uint8_t b0 = p[0];
    Py_ssize_t left = end - p;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        return (left >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
        if (left < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80)
            return 0;
        if (b0 == 0xE0 && p[1] < 0xA0)
            return 0;
        if (b0 == 0xED && p[1] > 0x9F)
            return 0;
        return 3;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
        if (left < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
            return 0;
        if (b0 == 0xF0 && p[1] < 0x90)
            return 0;
        if (b0 == 0xF4 && p[1] > 0x8F)
            return 0;
        return 4;
    }
    return 0;
}

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

/* A string at c->p (which is '"'): validated and skipped. raw = the bytes between the quotes;
 * *esc = whether it holds escapes. */
static int scan_string(Cur *c, Str *raw, int *esc) {
    const uint8_t *p = c->p + 1, *end = c->end;
    const uint8_t *start = p;
    int has_esc = 0;
    for (;;) {
#ifdef __SSE2__
        /* Sixteen plain ASCII bytes at a time. A signed compare with 0x20 flags control bytes
         * and bytes >= 0x80 (negative as int8) at once. */
        while (end - p >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)p);
            __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                       _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)));
            int mask = _mm_movemask_epi8(hit);
            if (mask) {
                p += __builtin_ctz((unsigned)mask);
                break;
            }
            p += 16;
        }
#else
        /* Eight plain ASCII bytes at a time: no quote, backslash, control byte or high bit. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            uint64_t q = w ^ (ONES * '"');
            uint64_t b = w ^ (ONES * '\\');
            uint64_t special = ((q - ONES) & ~q) | ((b - ONES) & ~b) | (w - ONES * 0x20) | w;
            if (special & HIGHS)
                break;
            p += 8;
        }
#endif
        if (p >= end)
            return FALL;
        uint8_t ch = *p;
        if (ch == '"')
            break;
        if (ch == '\\') {
            has_esc = 1;
            if (p + 1 >= end)
                return FALL;
            uint8_t e = p[1];
            if (e == 'u') {
                uint32_t u;
                if (read_u4(p + 2, end, &u) < 0)
                    return FALL;
                p += 6;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    uint32_t lo;
                    if (end - p < 6 || p[0] != '\\' || p[1] != 'u' || read_u4(p + 2, end, &lo) < 0 ||
                        lo < 0xDC00 || lo > 0xDFFF)
                        return FALL;
                    p += 6;
                } else if (u >= 0xDC00 && u <= 0xDFFF) {
                    return FALL;
                }
                continue;
            }
            if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't') {
                p += 2;
                continue;
            }
            return FALL;
        }
        if (ch < 0x20)
            return FALL;
        if (ch < 0x80) {
            p++;
            continue;
        }
        /* A run of multi-byte characters (Cyrillic, CJK, ...) stays in this loop. */
        do {
            int n = utf8_len(p, end);
            if (n == 0)
                return FALL;
            p += n;
        } while (p < end && *p >= 0x80);
    }
    raw->s = start;
    raw->n = p - start;
    *esc = has_esc;
    c->p = p + 1;
    return OK;
}

/* The decoded text of a string already validated by scan_string. The arena is reserved once per
 * record and never moves (earlier results point into it); a record that would need more falls
 * back. Decoding never makes a string longer. */
static int decode(Cur *c, Str raw, int esc, Str *res) {
    if (!esc) {
        *res = raw;
        return OK;
    }
    Buf *a = c->arena;
    if (a->len + raw.n > a->cap)
        return FALL;
    uint8_t *out = a->p + a->len, *o = out;
    const uint8_t *p = raw.s, *end = raw.s + raw.n;
    while (p < end) {
        if (*p != '\\') {
            *o++ = *p++;
            continue;
        }
        uint8_t e = p[1];
        p += 2;
        switch (e) {
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            uint32_t u = 0;
            read_u4(p, end, &u);
            p += 4;
            if (u >= 0xD800 && u <= 0xDBFF) {
                uint32_t lo = 0xDC00;
                read_u4(p + 2, end, &lo);
                p += 6;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (u < 0x80) {
                *o++ = (uint8_t)u;
            } else if (u < 0x800) {
                *o++ = (uint8_t)(0xC0 | (u >> 6));
                *o++ = (uint8_t)(0x80 | (u & 0x3F));
            } else if (u < 0x10000) {
                *o++ = (uint8_t)(0xE0 | (u >> 12));
                *o++ = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
                *o++ = (uint8_t)(0x80 | (u & 0x3F));
            } else {
                *o++ = (uint8_t)(0xF0 | (u >> 18));
                *o++ = (uint8_t)(0x80 | ((u >> 12) & 0x3F));
                *o++ = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
                *o++ = (uint8_t)(0x80 | (u & 0x3F));
            }
            break;
        }
        default: *o++ = e; /* '"', '\\', '/' */
        }
    }
    a->len += o - out;
    res->s = out;
    res->n = o - out;
    return OK;
}

/* A number, validated against the JSON grammar. simdjson refuses integers past 64 bits and
 * floats that overflow a double (1e309), and takes any number of digits otherwise (coordinate
 * precisions like 0.0002777777777777778 are common). Taken here: integers of up to 18 digits, and
 * floats whose integer digits plus exponent stay at or below 300; the rest falls back. */
static int scan_number(Cur *c) {
    const uint8_t *p = c->p, *end = c->end;
    Py_ssize_t int_digits = 0; /* integer-part digits, leading zero excluded */
    int is_float = 0;
    if (p < end && *p == '-')
        p++;
    if (p >= end)
        return FALL;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') {
            p++;
            int_digits++;
        }
    } else {
        return FALL;
    }
    if (p < end && *p == '.') {
        p++;
        is_float = 1;
        const uint8_t *f = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == f)
            return FALL;
    }
    long exp = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        is_float = 1;
        int neg = 0;
        if (p < end && (*p == '+' || *p == '-'))
            neg = *p++ == '-';
        int ex = 0;
        while (p < end && *p >= '0' && *p <= '9') {
            if (++ex > 4)
                return FALL;
            exp = exp * 10 + (*p++ - '0');
        }
        if (!ex)
            return FALL;
        if (neg)
            exp = -exp;
    }
    if (is_float ? int_digits + exp > 300 : int_digits > 18)
        return FALL;
    /* A number must end at a delimiter, or "1x" would pass. */
    if (p < end && !(*p == ',' || *p == '}' || *p == ']' || *p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        return FALL;
    c->p = p;
    return OK;
}

static int skip_value(Cur *c);

/* Walking a container: walk_open at its '{' or '[', then walk_next before each member, which sets
 * *more = 0 (and passes the closing bracket) when there is none; an object member starts with
 * walk_key. The grammar is checked here once: no trailing comma, no missing one. */
static int walk_open(Cur *c, uint8_t open) {
    if (c->p >= c->end || *c->p != open || ++c->depth > MAX_DEPTH)
        return FALL;
    c->p++;
    return OK;
}

static int walk_next(Cur *c, uint8_t close, int *first, int *more) {
    ws(c);
    if (c->p >= c->end)
        return FALL;
    if (*c->p == close) {
        c->p++;
        c->depth--;
        *more = 0;
        return OK;
    }
    if (!*first) {
        if (*c->p != ',')
            return FALL;
        c->p++;
        ws(c);
    }
    *first = 0;
    *more = 1;
    return OK;
}

/* A member's key and its colon; the cursor is left at the value. */
static int walk_key(Cur *c, Str *k, int *esc) {
    if (c->p >= c->end || *c->p != '"')
        return FALL;
    TRY(scan_string(c, k, esc));
    ws(c);
    if (c->p >= c->end || *c->p != ':')
        return FALL;
    c->p++;
    ws(c);
    return OK;
}

/* An array that must be empty ("[]", PHP's empty object), passed. */
static int empty_array(Cur *c) {
    int first = 1, more;
    TRY(walk_open(c, '['));
    TRY(walk_next(c, ']', &first, &more));
    return more ? FALL : OK;
}

static int skip_object(Cur *c) {
    int first = 1, more;
    TRY(walk_open(c, '{'));
    for (;;) {
        TRY(walk_next(c, '}', &first, &more));
        if (!more)
            return OK;
        Str k;
        int esc;
        TRY(walk_key(c, &k, &esc));
        TRY(skip_value(c));
    }
}

static int skip_array(Cur *c) {
    int first = 1, more;
    TRY(walk_open(c, '['));
    for (;;) {
        TRY(walk_next(c, ']', &first, &more));
        if (!more)
            return OK;
        TRY(skip_value(c));
    }
}

static int lit(Cur *c, const char *word, Py_ssize_t n) {
    if (c->end - c->p < n || memcmp(c->p, word, (size_t)n) != 0)
        return FALL;
    c->p += n;
    return OK;
}

/* Any value at c->p (no leading whitespace), validated and skipped. */
static int skip_value(Cur *c) {
    if (c->p >= c->end)
        return FALL;
    switch (*c->p) {
    case '{': return skip_object(c);
    case '[': return skip_array(c);
    case '"': {
        Str s;
        int esc;
        return scan_string(c, &s, &esc);
    }
    case 't': return lit(c, "true", 4);
    case 'f': return lit(c, "false", 5);
    case 'n': return lit(c, "null", 4);
    default: return scan_number(c);
    }
}

/* ------------------------------------------------------------------ objects with wanted keys */

/* Positions of the values of wanted keys in one object (NULL = absent). Every value is
 * validated. A wanted key seen twice, or any escaped key, falls back: pysimdjson takes the first
 * of duplicate keys and decodes escaped ones, and neither is worth doing here. */
typedef struct {
    const uint8_t **pos;
    const char *const *keys;
    const Py_ssize_t *lens;
    int nkeys;
    Py_ssize_t members;
} Capture;

static int capture_object(Cur *c, Capture *cap) {
    for (int i = 0; i < cap->nkeys; i++)
        cap->pos[i] = NULL;
    cap->members = 0;
    int first = 1, more;
    TRY(walk_open(c, '{'));
    for (;;) {
        TRY(walk_next(c, '}', &first, &more));
        if (!more)
            return OK;
        Str k;
        int esc;
        TRY(walk_key(c, &k, &esc));
        if (esc)
            return FALL;
        for (int i = 0; i < cap->nkeys; i++)
            if (k.n == cap->lens[i] && memcmp(k.s, cap->keys[i], (size_t)k.n) == 0) {
                if (cap->pos[i] != NULL)
                    return FALL;
                cap->pos[i] = c->p;
                break;
            }
        TRY(skip_value(c));
        cap->members++;
    }
}

/* A sub-cursor at a captured position (already validated once). */
static inline Cur at(const Cur *c, const uint8_t *pos) {
    Cur s = {pos, c->end, 0, c->arena};
    return s;
}

static inline int is_null(const uint8_t *pos) { return pos && *pos == 'n'; }

/* The string at pos, decoded; FALL if the value there is not a string. */
static int string_at(const Cur *c, const uint8_t *pos, Str *out) {
    if (!pos || *pos != '"')
        return FALL;
    Cur s = at(c, pos);
    Str raw;
    int esc;
    TRY(scan_string(&s, &raw, &esc));
    return decode(&s, raw, esc, out);
}

#define CAPTURE(name, ...)                                                              \
    static const char *const name##_keys[] = {__VA_ARGS__};                            \
    static Py_ssize_t name##_lens[sizeof(name##_keys) / sizeof(name##_keys[0])];       \
    enum { name##_n = sizeof(name##_keys) / sizeof(name##_keys[0]) }

CAPTURE(top, "id", "type", "labels", "descriptions", "aliases", "claims", "sitelinks", "datatype");
enum { TOP_ID, TOP_TYPE, TOP_LABELS, TOP_DESCRIPTIONS, TOP_ALIASES, TOP_CLAIMS, TOP_SITELINKS, TOP_DATATYPE };
CAPTURE(stmt, "rank", "mainsnak", "qualifiers");
CAPTURE(snak, "snaktype", "datavalue", "datatype");
CAPTURE(dv, "value", "type");
CAPTURE(val, "id");
CAPTURE(term, "value");
CAPTURE(quals, "P2308", "P2309");
CAPTURE(link, "title");
CAPTURE(enwiki, "enwiki");
CAPTURE(mono, "text", "language");
CAPTURE(formq, "P518");

static void init_lens(void) {
#define L(name)                                  \
    for (int i = 0; i < name##_n; i++)          \
        name##_lens[i] = (Py_ssize_t)strlen(name##_keys[i]);
    L(top) L(stmt) L(snak) L(dv) L(val) L(term) L(quals) L(link) L(enwiki) L(mono) L(formq)
#undef L
}

#define CAP(var, name, positions) Capture var = {positions, name##_keys, name##_lens, name##_n, 0}

/* ------------------------------------------------------------------------ record extraction */

typedef struct {
    Tables *t;
    PyObject *fold;       /* wikidata_index.names.fold, for names that are not ASCII */
    int nlangs;           /* requested languages, in order */
    const char **langs;   /* utf-8 */
    Py_ssize_t *lang_lens;
    int nwanted;          /* "en", "mul", then the requested languages that are neither */
    const char **wanted;
    Py_ssize_t *wanted_lens;
    int *lang_slot;       /* requested language -> index in wanted */
    Py_ssize_t novalue, somevalue; /* snak counts of the current record */
} Ctx;

/* labels / descriptions / aliases / sitelinks: absent, null, an empty array, or an object. */
enum { V_ABSENT, V_NULL, V_EMPTY, V_OBJECT };
typedef struct {
    int kind;
    Py_ssize_t members;
    const uint8_t **pos; /* per wanted language (or the one sitelinks key) */
} Terms;

static void terms_absent(Terms *out, int nkeys) {
    out->kind = V_ABSENT;
    out->members = 0;
    for (int i = 0; i < nkeys; i++)
        out->pos[i] = NULL;
}

/* The value at c->p, validated and passed. */
static int scan_terms(Cur *c, Terms *out, const char *const *keys, const Py_ssize_t *lens, int nkeys) {
    terms_absent(out, nkeys);
    if (c->p >= c->end)
        return FALL;
    if (*c->p == 'n') {
        out->kind = V_NULL;
        return lit(c, "null", 4);
    }
    if (*c->p == '[') { /* PHP writes an empty object as [] */
        out->kind = V_EMPTY;
        return empty_array(c);
    }
    Capture cap = {out->pos, keys, lens, nkeys, 0};
    TRY(capture_object(c, &cap));
    out->kind = V_OBJECT;
    out->members = cap.members;
    return OK;
}

/* extract._text: the "value" of a term entry; *has = 0 for absent or null. */
static int term_text(const Cur *c, const Terms *terms, int slot, Str *out, int *has) {
    *has = 0;
    if (terms->kind != V_OBJECT || terms->members == 0)
        return OK;
    const uint8_t *entry = terms->pos[slot];
    if (!entry || is_null(entry))
        return OK;
    const uint8_t *pos[term_n];
    CAP(cap, term, pos);
    Cur s = at(c, entry);
    TRY(capture_object(&s, &cap));
    if (!pos[0] || is_null(pos[0]))
        return OK;
    TRY(string_at(c, pos[0], out));
    *has = 1;
    return OK;
}

static inline int str_eq(Str a, const char *b) {
    Py_ssize_t n = (Py_ssize_t)strlen(b);
    return a.n == n && memcmp(a.s, b, (size_t)n) == 0;
}

static inline int is_ascii_ws(uint8_t ch) { return ch == ' ' || (ch >= 0x09 && ch <= 0x0D) || (ch >= 0x1C && ch <= 0x1F); }

/* extract.fold_name: ASCII names here (lower, split on whitespace, join with one space);
 * others through wikidata_index.names.fold. */
static int add_folded(Ctx *x, Col *col, Str name) {
    int ascii = 1;
    for (Py_ssize_t i = 0; i < name.n; i++)
        if (name.s[i] >= 0x80) {
            ascii = 0;
            break;
        }
    if (ascii) {
        Col *cc = col;
        if (buf_reserve(&cc->data, name.n) < 0)
            return ERR;
        uint8_t *o = cc->data.p + cc->data.len, *o0 = o;
        int pending = 0;
        for (Py_ssize_t i = 0; i < name.n; i++) {
            uint8_t ch = name.s[i];
            if (is_ascii_ws(ch)) {
                pending = (o != o0);
                continue;
            }
            if (pending) {
                *o++ = ' ';
                pending = 0;
            }
            *o++ = (ch >= 'A' && ch <= 'Z') ? (uint8_t)(ch + 32) : ch;
        }
        Py_ssize_t n = o - o0;
        /* col_str copies from the buffer's own tail: reserve made sure nothing moves */
        uint8_t *tmp = PyMem_Malloc((size_t)(n ? n : 1));
        if (!tmp) {
            PyErr_NoMemory();
            return ERR;
        }
        memcpy(tmp, o0, (size_t)n);
        int r = col_str(cc, tmp, n);
        PyMem_Free(tmp);
        return r < 0 ? ERR : OK;
    }
    PyObject *s = PyUnicode_DecodeUTF8((const char *)name.s, name.n, "strict");
    if (!s)
        return ERR;
    PyObject *f = PyObject_CallOneArg(x->fold, s);
    Py_DECREF(s);
    if (!f)
        return ERR;
    Py_ssize_t n;
    const char *u = PyUnicode_Check(f) ? PyUnicode_AsUTF8AndSize(f, &n) : NULL;
    if (!u) {
        Py_DECREF(f);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "fold() must return a str");
        return ERR;
    }
    int r = col_str(col, (const uint8_t *)u, n);
    Py_DECREF(f);
    return r < 0 ? ERR : OK;
}

static int add_name(Ctx *x, Str eid, int lang, Str name, int is_label) {
    Col *c = x->t->cols[T_NAMES];
    if (col_s(&c[0], eid) < 0 || col_str(&c[1], (const uint8_t *)x->langs[lang], x->lang_lens[lang]) < 0 ||
        col_s(&c[2], name) < 0 || col_bool(&c[3], is_label) < 0)
        return ERR;
    return add_folded(x, &c[4], name);
}

/* extract._snak_item for a qualifier snak. *has = 1 with the item id, or 0. */
static int qual_item(Ctx *x, const Cur *c, const uint8_t *pos, Str *out, int *has) {
    *has = 0;
    const uint8_t *sp[snak_n];
    CAP(scap, snak, sp);
    Cur s = at(c, pos);
    TRY(capture_object(&s, &scap));
    Str st;
    TRY(string_at(c, sp[0], &st));
    if (!str_eq(st, "value")) {
        if (str_eq(st, "novalue"))
            x->novalue++;
        else if (str_eq(st, "somevalue"))
            x->somevalue++;
        else
            return FALL;
        return OK;
    }
    if (!sp[1] || is_null(sp[1]))
        return OK;
    const uint8_t *dp[dv_n];
    CAP(dcap, dv, dp);
    Cur d = at(c, sp[1]);
    TRY(capture_object(&d, &dcap));
    Str ty;
    if (!dp[1] || *dp[1] != '"')
        return OK; /* a type that is absent or not a string is not "wikibase-entityid" */
    TRY(string_at(c, dp[1], &ty));
    if (!str_eq(ty, "wikibase-entityid"))
        return OK;
    if (!dp[0] || is_null(dp[0]))
        return FALL;
    const uint8_t *vp[val_n];
    CAP(vcap, val, vp);
    Cur v = at(c, dp[0]);
    TRY(capture_object(&v, &vcap));
    if (!vp[0] || is_null(vp[0]))
        return FALL; /* an old value with only entity-type + numeric-id */
    Str id;
    TRY(string_at(c, vp[0], &id));
    if (id.n && id.s[0] == 'Q') {
        *out = id;
        *has = 1;
    }
    return OK;
}

/* What one statement holds (positions of the values that matter). */
typedef struct {
    const uint8_t *rank, *qualifiers;
    const uint8_t *snaktype, *datavalue, *datatype;
} Stmt;

static int scan_statement(Cur *c, Stmt *st) {
    const uint8_t *pos[stmt_n];
    CAP(cap, stmt, pos);
    TRY(capture_object(c, &cap));
    st->rank = pos[0];
    st->qualifiers = pos[2];
    if (!pos[1] || *pos[1] != '{')
        return FALL;
    const uint8_t *sp[snak_n];
    CAP(scap, snak, sp);
    Cur s = at(c, pos[1]);
    TRY(capture_object(&s, &scap));
    st->snaktype = sp[0];
    st->datavalue = sp[1];
    st->datatype = sp[2];
    return OK;
}

static const Str NORMAL = {(const uint8_t *)"normal", 6};

/* The rows of one statement of an item-valued group (extract._item_statements). */
static int item_statement(Ctx *x, const Cur *c, Str eid, Str pid, const Stmt *st, int is_constraint, int target) {
    Str rank = NORMAL;
    if (st->rank && !is_null(st->rank)) {
        TRY(string_at(c, st->rank, &rank));
        if (rank.n == 0)
            rank = NORMAL;
    }
    Str obj;
    int has = 0;
    if (st->datavalue) {
        /* pysimdjson's pointer /mainsnak/datavalue/value/id, whatever the snaktype says */
        const uint8_t *dp[dv_n];
        CAP(dcap, dv, dp);
        Cur d = at(c, st->datavalue);
        TRY(capture_object(&d, &dcap));
        if (!dp[0] || *dp[0] != '{')
            return FALL;
        const uint8_t *vp[val_n];
        CAP(vcap, val, vp);
        Cur v = at(c, dp[0]);
        TRY(capture_object(&v, &vcap));
        TRY(string_at(c, vp[0], &obj));
        if (obj.n == 0)
            return FALL;
        has = obj.s[0] == 'Q';
    } else {
        Str stype;
        TRY(string_at(c, st->snaktype, &stype));
        if (str_eq(stype, "novalue"))
            x->novalue++;
        else if (str_eq(stype, "somevalue"))
            x->somevalue++;
        else
            return FALL;
    }
    int deprecated = str_eq(rank, "deprecated");
    if (is_constraint && !deprecated && has) {
        /* extract._constraint_rows: one row per P2308 class (or one without), P2309's first item */
        int nclasses = 0;
        Str relation;
        int has_rel = 0;
        const uint8_t *qp[quals_n] = {NULL, NULL};
        if (st->qualifiers && !is_null(st->qualifiers)) {
            CAP(qcap, quals, qp);
            Cur q = at(c, st->qualifiers);
            TRY(capture_object(&q, &qcap));
        }
        /* classes are written after the relation is known */
        Str class_ids[64];
        if (qp[0] && !is_null(qp[0])) {
            Cur a = at(c, qp[0]);
            int first = 1, more;
            TRY(walk_open(&a, '['));
            for (;;) {
                TRY(walk_next(&a, ']', &first, &more));
                if (!more)
                    break;
                if (nclasses >= 64)
                    return FALL;
                int hc;
                TRY(qual_item(x, c, a.p, &class_ids[nclasses], &hc));
                nclasses += hc;
                TRY(skip_value(&a));
            }
        }
        if (qp[1] && !is_null(qp[1])) {
            Cur a = at(c, qp[1]);
            int first = 1, more;
            TRY(walk_open(&a, '['));
            for (;;) {
                TRY(walk_next(&a, ']', &first, &more));
                if (!more)
                    break;
                TRY(qual_item(x, c, a.p, &relation, &has_rel));
                if (has_rel)
                    break; /* as extract._constraint_rows: later P2309 snaks are not read */
                TRY(skip_value(&a));
            }
        }
        Col *k = x->t->cols[T_CONSTRAINTS];
        for (int i = 0; i < (nclasses ? nclasses : 1); i++) {
            if (col_s(&k[0], eid) < 0 || col_s(&k[1], obj) < 0 ||
                col_opt(&k[2], nclasses ? &class_ids[i] : NULL) < 0 || col_opt(&k[3], has_rel ? &relation : NULL) < 0)
                return ERR;
        }
    }
    if (!has)
        return OK;
    if (target >= 0) {
        Col *tc = x->t->cols[target];
        if (col_s(&tc[0], eid) < 0 || col_s(&tc[1], obj) < 0 || col_s(&tc[2], rank) < 0)
            return ERR;
    }
    if (!deprecated) {
        Col *e = x->t->cols[T_EDGES];
        if (col_s(&e[0], eid) < 0 || col_s(&e[1], pid) < 0 || col_s(&e[2], obj) < 0)
            return ERR;
    }
    return OK;
}

/* The rows of one statement of a P1549 (demonym) group whose first main snak is monolingual text
 * (extract._demonym_statements): a row for a non-deprecated monolingual-text value with a non-empty
 * text in English or a requested language; form is the first item of the P518 qualifier. What the
 * Python path skips is skipped here where it is plain JSON to tell, and falls back otherwise. */
static int demonym_statement(Ctx *x, const Cur *c, Str eid, const Stmt *st) {
    Str rank = NORMAL;
    if (st->rank && !is_null(st->rank)) {
        TRY(string_at(c, st->rank, &rank));
        if (rank.n == 0)
            rank = NORMAL;
    }
    if (str_eq(rank, "deprecated"))
        return OK;
    if (!st->snaktype || is_null(st->snaktype))
        return OK;
    Str stype;
    TRY(string_at(c, st->snaktype, &stype));
    if (!str_eq(stype, "value"))
        return OK;
    if (!st->datavalue || is_null(st->datavalue))
        return OK;
    const uint8_t *dp[dv_n];
    CAP(dcap, dv, dp);
    Cur d = at(c, st->datavalue);
    TRY(capture_object(&d, &dcap)); /* a datavalue that is not an object falls back */
    if (!dp[1] || is_null(dp[1]))
        return OK;
    Str ty;
    TRY(string_at(c, dp[1], &ty));
    if (!str_eq(ty, "monolingualtext"))
        return OK;
    if (!dp[0] || *dp[0] != '{')
        return OK; /* a value that is not an object gives no row */
    const uint8_t *mp[mono_n];
    CAP(mcap, mono, mp);
    Cur m = at(c, dp[0]);
    TRY(capture_object(&m, &mcap));
    if (!mp[0] || *mp[0] != '"' || !mp[1] || *mp[1] != '"')
        return OK; /* text or language absent or not a string */
    Str text, lang;
    TRY(string_at(c, mp[0], &text));
    TRY(string_at(c, mp[1], &lang));
    if (text.n == 0)
        return OK;
    int wanted = str_eq(lang, "en");
    for (int i = 0; i < x->nlangs && !wanted; i++)
        wanted = lang.n == x->lang_lens[i] && memcmp(lang.s, x->langs[i], (size_t)lang.n) == 0;
    if (!wanted)
        return OK;
    Str form;
    int has_form = 0;
    if (st->qualifiers && !is_null(st->qualifiers)) {
        const uint8_t *qp[formq_n];
        CAP(qcap, formq, qp);
        Cur q = at(c, st->qualifiers);
        TRY(capture_object(&q, &qcap));
        if (qp[0] && !is_null(qp[0])) {
            Cur a = at(c, qp[0]);
            int first = 1, more;
            TRY(walk_open(&a, '['));
            for (;;) {
                TRY(walk_next(&a, ']', &first, &more));
                if (!more)
                    break;
                TRY(qual_item(x, c, a.p, &form, &has_form));
                if (has_form)
                    break; /* as extract._demonym_statements: later P518 snaks are not read */
                TRY(skip_value(&a));
            }
        }
    }
    Col *k = x->t->cols[T_DEMONYMS];
    if (col_s(&k[0], eid) < 0 || col_s(&k[1], lang) < 0 || col_s(&k[2], text) < 0 || col_s(&k[3], rank) < 0 ||
        col_opt(&k[4], has_form ? &form : NULL) < 0)
        return ERR;
    return add_folded(x, &k[5], text);
}

/* One claim group (the array of statements at c->p), validated and passed. It gives rows when its
 * first main snak has datatype wikibase-item, or when it is P1549 with datatype monolingualtext, as
 * extract.extract_entity decides. */
static int claim_group(Ctx *x, Cur *c, Str eid, Str pid, int is_property) {
    int first = 1, more, n = 0, is_item = 0, is_demonym = 0, is_constraint = 0, target = -1;
    TRY(walk_open(c, '['));
    for (;;) {
        TRY(walk_next(c, ']', &first, &more));
        if (!more)
            return OK;
        if (n++ && !is_item && !is_demonym) {
            TRY(skip_value(c)); /* no rows from this group: only validated */
            continue;
        }
        Stmt st;
        TRY(scan_statement(c, &st));
        if (n == 1) {
            Str datatype;
            TRY(string_at(c, st.datatype, &datatype));
            is_item = str_eq(datatype, "wikibase-item");
            int is_p2302 = str_eq(pid, "P2302");
            if (!is_item && is_p2302)
                return FALL;
            is_demonym = !is_item && str_eq(datatype, "monolingualtext") && str_eq(pid, "P1549");
            if (!is_item && !is_demonym)
                continue;
            /* P21 (sex or gender) rows have the shape of P31's: (id, value, rank), every rank */
            target = str_eq(pid, "P31") ? T_TYPES : str_eq(pid, "P279") ? T_SUBCLASSES
                   : str_eq(pid, "P21") ? T_GENDERS : -1;
            is_constraint = is_property && is_p2302;
        }
        if (is_demonym)
            TRY(demonym_statement(x, c, eid, &st));
        else
            TRY(item_statement(x, c, eid, pid, &st, is_constraint, target));
    }
}

/* The claims object: every group validated; item-valued groups (by the datatype of their first
 * main snak, as extract.extract_entity decides) give rows. */
static int do_claims(Ctx *x, Cur *cp, Str eid, int is_property) {
    Cur c = *cp;
    if (c.p >= c.end)
        return FALL;
    if (*c.p == 'n') {
        TRY(lit(&c, "null", 4));
    } else if (*c.p == '[') {
        TRY(empty_array(&c));
    } else {
        Str pids[512];
        int npids = 0, first = 1, more;
        TRY(walk_open(&c, '{'));
        for (;;) {
            TRY(walk_next(&c, '}', &first, &more));
            if (!more)
                break;
            Str pid;
            int esc;
            TRY(walk_key(&c, &pid, &esc));
            if (esc || npids >= 512)
                return FALL;
            for (int i = 0; i < npids; i++)
                if (pids[i].n == pid.n && memcmp(pids[i].s, pid.s, (size_t)pid.n) == 0)
                    return FALL;
            pids[npids++] = pid;
            TRY(claim_group(x, &c, eid, pid, is_property));
        }
    }
    *cp = c;
    return OK;
}

/* One record: REC_ITEM, REC_PROPERTY, FALL, or ERR. Rows are appended as found; the caller rolls
 * back a record that does not return 1 or 2. Each large value is scanned once: labels,
 * descriptions, aliases and sitelinks keep only the positions of the entries wanted, and claims
 * are turned into rows in the same pass when id and type came first (as in the dumps). */
#define REC_ITEM 10
#define REC_PROPERTY 11
static int record(Ctx *x, Buf *arena, const uint8_t *rec, Py_ssize_t len) {
    arena->len = 0;
    if (buf_reserve(arena, 2 * len + 64) < 0)
        return ERR;
    x->novalue = x->somevalue = 0;
    Cur c = {rec, rec + len, 0, arena};
    ws(&c);

    const uint8_t *tp[top_n];
    for (int i = 0; i < top_n; i++)
        tp[i] = NULL;
    const uint8_t *lab_pos[x->nwanted], *desc_pos[1], *alias_pos[x->nwanted], *site_pos[1];
    Terms labels = {V_ABSENT, 0, lab_pos}, descs = {V_ABSENT, 0, desc_pos};
    Terms aliases = {V_ABSENT, 0, alias_pos}, sites = {V_ABSENT, 0, site_pos};
    terms_absent(&labels, x->nwanted);
    terms_absent(&descs, 1);
    terms_absent(&aliases, x->nwanted);
    terms_absent(&sites, 1);
    Str eid = {NULL, 0}, etype = {NULL, 0};
    int kind = 0; /* 1 item, 2 property, once id and type are read and checked */
    int claims_done = 0, first = 1, more;

    TRY(walk_open(&c, '{'));
    for (;;) {
        TRY(walk_next(&c, '}', &first, &more));
        if (!more)
            break;
        Str k;
        int esc;
        TRY(walk_key(&c, &k, &esc));
        if (esc)
            return FALL;
        int hit = -1;
        for (int i = 0; i < top_n; i++)
            if (k.n == top_lens[i] && memcmp(k.s, top_keys[i], (size_t)k.n) == 0) {
                hit = i;
                break;
            }
        if (hit >= 0) {
            if (tp[hit] != NULL)
                return FALL;
            tp[hit] = c.p;
        }
        switch (hit) {
        case TOP_LABELS: TRY(scan_terms(&c, &labels, x->wanted, x->wanted_lens, x->nwanted)); break;
        case TOP_DESCRIPTIONS: TRY(scan_terms(&c, &descs, x->wanted, x->wanted_lens, 1)); break;
        case TOP_ALIASES: TRY(scan_terms(&c, &aliases, x->wanted, x->wanted_lens, x->nwanted)); break;
        case TOP_SITELINKS: TRY(scan_terms(&c, &sites, enwiki_keys, enwiki_lens, 1)); break;
        case TOP_CLAIMS:
            if (kind) {
                TRY(do_claims(x, &c, eid, kind == 2));
                claims_done = 1;
            } else {
                TRY(skip_value(&c));
            }
            break;
        default: TRY(skip_value(&c));
        }
        if (!kind && tp[TOP_ID] && tp[TOP_TYPE]) {
            TRY(string_at(&c, tp[TOP_ID], &eid));
            TRY(string_at(&c, tp[TOP_TYPE], &etype));
            if (str_eq(etype, "item"))
                kind = 1;
            else if (str_eq(etype, "property"))
                kind = 2;
            else
                return FALL; /* lexemes, mediainfo, ...: counted by the Python path */
            /* canonical ids only (Q1..Q999999999999999): "Q007", "Q0" or a 10,000-digit id go to the
               Python path, which counts them as malformed */
            if (eid.n < 2 || eid.n > 1 + MAX_ID_DIGITS || eid.s[0] != (kind == 1 ? 'Q' : 'P') || eid.s[1] == '0')
                return FALL;
            for (Py_ssize_t i = 1; i < eid.n; i++)
                if (eid.s[i] < '0' || eid.s[i] > '9')
                    return FALL;
        }
    }
    ws(&c);
    if (c.p != c.end || !kind || !tp[TOP_LABELS])
        return FALL;
    if (tp[TOP_CLAIMS] && !claims_done) {
        Cur cc = at(&c, tp[TOP_CLAIMS]);
        TRY(do_claims(x, &cc, eid, kind == 2));
    }

    Str en, mul, label = {NULL, 0}, desc, enwiki;
    int has_en, has_mul = 0, has_label, has_desc, has_enwiki = 0;
    TRY(term_text(&c, &labels, 0, &en, &has_en));
    if (has_en && en.n) {
        label = en;
        has_label = 1;
    } else {
        TRY(term_text(&c, &labels, 1, &mul, &has_mul));
        has_label = has_mul;
        label = mul;
    }
    TRY(term_text(&c, &descs, 0, &desc, &has_desc));
    if (sites.members > INT32_MAX)
        return FALL;
    if (sites.kind == V_OBJECT && sites.members) {
        const uint8_t *lp = site_pos[0];
        if (lp && !is_null(lp)) {
            if (*lp != '{')
                return FALL;
            const uint8_t *tpos[link_n];
            CAP(lcap, link, tpos);
            Cur l = at(&c, lp);
            TRY(capture_object(&l, &lcap));
            if (tpos[0] && !is_null(tpos[0])) {
                TRY(string_at(&c, tpos[0], &enwiki));
                has_enwiki = 1;
            }
        }
    }
    Str datatype;
    int has_datatype = 0;
    if (kind == 2 && tp[TOP_DATATYPE] && !is_null(tp[TOP_DATATYPE])) {
        TRY(string_at(&c, tp[TOP_DATATYPE], &datatype));
        has_datatype = 1;
    }

    /* names: per requested language, the label, then each alias not seen yet */
    int aliases_any = aliases.kind == V_OBJECT && aliases.members > 0;
    for (int li = 0; li < x->nlangs; li++) {
        int slot = x->lang_slot[li];
        Str lab = {NULL, 0};
        int has_lab;
        if (slot == 0) {
            lab = en;
            has_lab = has_en;
        } else {
            TRY(term_text(&c, &labels, slot, &lab, &has_lab));
        }
        Str seen[256];
        int nseen = 0;
        if (has_lab && lab.n) {
            seen[nseen++] = lab;
            TRY(add_name(x, eid, li, lab, 1));
        }
        if (!aliases_any)
            continue;
        const uint8_t *ep = alias_pos[slot];
        if (!ep || is_null(ep))
            continue;
        Cur a = at(&c, ep);
        int afirst = 1, amore;
        TRY(walk_open(&a, '['));
        for (;;) {
            TRY(walk_next(&a, ']', &afirst, &amore));
            if (!amore)
                break;
            const uint8_t *vp[term_n];
            CAP(vcap, term, vp);
            TRY(capture_object(&a, &vcap));
            if (!vp[0] || is_null(vp[0]))
                continue;
            Str name;
            TRY(string_at(&c, vp[0], &name));
            if (name.n == 0)
                continue;
            int dup = 0;
            for (int i = 0; i < nseen; i++)
                if (seen[i].n == name.n && memcmp(seen[i].s, name.s, (size_t)name.n) == 0) {
                    dup = 1;
                    break;
                }
            if (dup)
                continue;
            if (nseen >= 256)
                return FALL;
            seen[nseen++] = name;
            TRY(add_name(x, eid, li, name, 0));
        }
    }

    Col *e = x->t->cols[T_ENTITIES];
    Str ty = kind == 1 ? (Str){(const uint8_t *)"item", 4} : (Str){(const uint8_t *)"property", 8};
    if (col_s(&e[0], eid) < 0 || col_s(&e[1], ty) < 0 || col_opt(&e[2], has_label ? &label : NULL) < 0 ||
        col_opt(&e[3], has_desc ? &desc : NULL) < 0 ||
        col_i32(&e[4], sites.kind == V_OBJECT ? (int32_t)sites.members : 0) < 0 ||
        col_opt(&e[5], has_enwiki ? &enwiki : NULL) < 0)
        return ERR;
    if (kind == 2) {
        Col *p = x->t->cols[T_PROPERTIES];
        if (col_s(&p[0], eid) < 0 || col_opt(&p[1], has_datatype ? &datatype : NULL) < 0 ||
            col_opt(&p[2], has_label ? &label : NULL) < 0)
            return ERR;
    }
    return kind == 1 ? REC_ITEM : REC_PROPERTY;
}

/* --------------------------------------------------------------------------------- output */

static PyObject *bytes_of(const uint8_t *p, Py_ssize_t n) { return PyBytes_FromStringAndSize((const char *)(n ? p : (const uint8_t *)""), n); }

/* One byte per row -> an Arrow bitmap (least significant bit first). */
static PyObject *bitmap_of(const Buf *bytes, Py_ssize_t n) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    if (!out)
        return NULL;
    uint8_t *o = (uint8_t *)PyBytes_AS_STRING(out);
    memset(o, 0, (size_t)((n + 7) / 8));
    for (Py_ssize_t i = 0; i < n; i++)
        if (bytes->p[i])
            o[i >> 3] |= (uint8_t)(1u << (i & 7));
    return out;
}

/* (kind, length, null_count, validity bitmap or None, offsets or None, data) per column. */
static PyObject *column_out(Col *c) {
    PyObject *valid = NULL, *offs = NULL, *data = NULL;
    if (c->kind == K_STR) {
        if (c->nulls) {
            valid = bitmap_of(&c->valid, c->n);
            if (!valid)
                return NULL;
        }
        offs = bytes_of(c->offs.p, c->offs.len);
        data = bytes_of(c->data.p, c->data.len);
    } else if (c->kind == K_BOOL) {
        data = bitmap_of(&c->data, c->n);
    } else {
        data = bytes_of(c->data.p, c->data.len);
    }
    if ((c->kind == K_STR && !offs) || !data) {
        Py_XDECREF(valid);
        Py_XDECREF(offs);
        Py_XDECREF(data);
        return NULL;
    }
    static const char *kinds[] = {"string", "int32", "bool"};
    return Py_BuildValue("(snnNNN)", kinds[c->kind], c->n, c->nulls, valid ? valid : Py_NewRef(Py_None),
                         offs ? offs : Py_NewRef(Py_None), data);
}

static PyObject *tables_out(Tables *t) {
    PyObject *out = PyDict_New();
    if (!out)
        return NULL;
    for (int i = 0; i < N_TABLES; i++) {
        PyObject *cols = PyTuple_New(TABLE_NCOLS[i]);
        if (!cols) {
            Py_DECREF(out);
            return NULL;
        }
        for (int j = 0; j < TABLE_NCOLS[i]; j++) {
            PyObject *col = column_out(&t->cols[i][j]);
            if (!col) {
                Py_DECREF(cols);
                Py_DECREF(out);
                return NULL;
            }
            PyTuple_SET_ITEM(cols, j, col);
        }
        if (PyDict_SetItemString(out, TABLE_NAMES[i], cols) < 0) {
            Py_DECREF(cols);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(cols);
    }
    return out;
}

/* ------------------------------------------------------------------------------ the module */

static int stat_add(PyObject *stats, const char *key, Py_ssize_t n) {
    if (!n)
        return 0;
    PyObject *v = PyLong_FromSsize_t(n);
    if (!v)
        return -1;
    int r = PyDict_SetItemString(stats, key, v);
    Py_DECREF(v);
    return r;
}

static PyObject *extract_chunk(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer view;
    PyObject *langs_obj, *fold;
    if (!PyArg_ParseTuple(args, "y*OO:extract_chunk", &view, &langs_obj, &fold))
        return NULL;
    PyObject *result = NULL, *fallback = NULL, *langs = NULL;
    Tables *t = PyMem_Calloc(1, sizeof(Tables));
    Buf arena = {NULL, 0, 0};
    Ctx x;
    memset(&x, 0, sizeof(x));
    if (!t) {
        PyErr_NoMemory();
        goto done;
    }
    if (tables_init(t) < 0)
        goto done;
    langs = PySequence_Tuple(langs_obj);
    if (!langs)
        goto done;
    int nl = (int)PyTuple_GET_SIZE(langs);
    x.t = t;
    x.fold = fold;
    x.nlangs = nl;
    x.langs = PyMem_Calloc((size_t)nl + 1, sizeof(char *));
    x.lang_lens = PyMem_Calloc((size_t)nl + 1, sizeof(Py_ssize_t));
    x.lang_slot = PyMem_Calloc((size_t)nl + 1, sizeof(int));
    x.wanted = PyMem_Calloc((size_t)nl + 2, sizeof(char *));
    x.wanted_lens = PyMem_Calloc((size_t)nl + 2, sizeof(Py_ssize_t));
    if (!x.langs || !x.lang_lens || !x.lang_slot || !x.wanted || !x.wanted_lens) {
        PyErr_NoMemory();
        goto done;
    }
    x.wanted[0] = "en";
    x.wanted_lens[0] = 2;
    x.wanted[1] = "mul";
    x.wanted_lens[1] = 3;
    x.nwanted = 2;
    for (int i = 0; i < nl; i++) {
        PyObject *s = PyTuple_GET_ITEM(langs, i);
        if (!PyUnicode_Check(s)) {
            PyErr_SetString(PyExc_TypeError, "languages must be str");
            goto done;
        }
        x.langs[i] = PyUnicode_AsUTF8AndSize(s, &x.lang_lens[i]);
        if (!x.langs[i])
            goto done;
        int slot = -1;
        for (int j = 0; j < x.nwanted; j++)
            if (x.wanted_lens[j] == x.lang_lens[i] && memcmp(x.wanted[j], x.langs[i], (size_t)x.lang_lens[i]) == 0)
                slot = j;
        if (slot < 0) {
            slot = x.nwanted++;
            x.wanted[slot] = x.langs[i];
            x.wanted_lens[slot] = x.lang_lens[i];
        }
        x.lang_slot[i] = slot;
    }
    fallback = PyList_New(0);
    if (!fallback)
        goto done;

    const uint8_t *data = view.buf;
    Py_ssize_t n = view.len, start = 0, line = 1;
    Py_ssize_t records = 0, items = 0, props = 0, novalue = 0, somevalue = 0;
    ColMark marks[MAX_COLS];
    while (start < n) {
        const uint8_t *nlp = memchr(data + start, '\n', (size_t)(n - start));
        Py_ssize_t stop = nlp ? nlp - data : n;
        Py_ssize_t len = stop - start;
        const uint8_t *ln = data + start;
        Py_ssize_t rec_len = -1;
        /* the lines that etl.readers.iter_records would cut the same way; others go to Python */
        if (len >= 2 && ln[len - 2] == '}' && ln[len - 1] == ',')
            rec_len = len - 1;
        else if (len >= 2 && ln[0] == '{' && ln[len - 1] == '}')
            rec_len = len;
        int r = FALL;
        if (rec_len > 0) {
            tables_mark(t, marks);
            r = record(&x, &arena, ln, rec_len);
            if (r == ERR)
                goto done;
            if (r == FALL) {
                tables_rollback(t, marks);
            } else {
                records++;
                if (r == REC_ITEM)
                    items++;
                else
                    props++;
                novalue += x.novalue;
                somevalue += x.somevalue;
            }
        }
        int framing = (len == 0) || (len == 1 && (ln[0] == '[' || ln[0] == ']'));
        if (r == FALL && !framing) {
            PyObject *span = Py_BuildValue("(nnn)", line, start, stop);
            if (!span || PyList_Append(fallback, span) < 0) {
                Py_XDECREF(span);
                goto done;
            }
            Py_DECREF(span);
        }
        line++;
        start = stop + 1;
    }
    PyObject *stats = PyDict_New();
    if (!stats)
        goto done;
    if (stat_add(stats, "records", records) < 0 || stat_add(stats, "kept_item", items) < 0 ||
        stat_add(stats, "kept_property", props) < 0 || stat_add(stats, "snaks_novalue", novalue) < 0 ||
        stat_add(stats, "snaks_somevalue", somevalue) < 0) {
        Py_DECREF(stats);
        goto done;
    }
    PyObject *tables = tables_out(t);
    if (!tables) {
        Py_DECREF(stats);
        goto done;
    }
    result = Py_BuildValue("(NNOn)", tables, stats, fallback, line - 1);

done:
    Py_XDECREF(fallback);
    Py_XDECREF(langs);
    PyMem_Free((void *)x.langs);
    PyMem_Free(x.lang_lens);
    PyMem_Free(x.lang_slot);
    PyMem_Free((void *)x.wanted);
    PyMem_Free(x.wanted_lens);
    if (t) {
        tables_free(t);
        PyMem_Free(t);
    }
    buf_free(&arena);
    PyBuffer_Release(&view);
    return result;
}

static PyObject *layout(PyObject *Py_UNUSED(self), PyObject *Py_UNUSED(noargs)) {
    PyObject *out = PyDict_New();
    if (!out)
        return NULL;
    static const char *kinds[] = {"string", "int32", "bool"};
    for (int i = 0; i < N_TABLES; i++) {
        PyObject *cols = PyList_New(0);
        if (!cols) {
            Py_DECREF(out);
            return NULL;
        }
        for (int j = 0; j < TABLE_NCOLS[i]; j++) {
            PyObject *pair = Py_BuildValue("(ss)", COL_NAMES[i][j], kinds[COL_KINDS[i][j]]);
            if (!pair || PyList_Append(cols, pair) < 0) {
                Py_XDECREF(pair);
                Py_DECREF(cols);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(pair);
        }
        if (PyDict_SetItemString(out, TABLE_NAMES[i], cols) < 0) {
            Py_DECREF(cols);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(cols);
    }
    return out;
}

static PyMethodDef methods[] = {
    {"extract_chunk", extract_chunk, METH_VARARGS,
     "extract_chunk(data, languages, fold) -> (columns per table, stats, fallback line spans, lines)\n\n"
     "Rows of the usual records of one chunk of dump lines. fallback lists (line, start, end) of the\n"
     "lines left to the Python path; stats count only the records taken here."},
    {"layout", layout, METH_NOARGS, "layout() -> {table: [(column, kind), ...]} of the columns extract_chunk returns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastextract",
                                    "The ingest's hot loop in C (see wikidata_index/_fastextract.c).", -1, methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__fastextract(void) {
    init_lens();
    return PyModule_Create(&module);
}
