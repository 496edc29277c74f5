/* The loader's compiled scanner: prove call lines canonical and cut them into columns, in one pass.
 *
 * A line is accepted only when it is, byte for byte, a JSON object of this exact shape (the writer's
 * key order, compact separators, optional members in their places):
 *
 *   {["identity":{"capture_id":"U","event_id":"U"},]"ts":"T","session":"S","seq":N,"server":"S",
 *    "method":"S"[,"tool":"S"][,"args":V][,"latency_ms":N],"outcome":"S"[,"error":V],
 *    "shim_self_us":N,"kind":"S"[,"ext":V]}\n
 *
 * where S is a string with no backslash and no control byte, U a lowercase UUID, T the strict timestamp
 * YYYY-MM-DDTHH:MM:SS.mmmZ of a real calendar day (year 0001-9999), N an unsigned 64-bit integer with no
 * sign, fraction, exponent or leading zero, and V one JSON value delimited structurally (strings without
 * backslashes; the caller parses V itself, so a V that is not valid JSON is refused there).  The whole
 * line must be valid UTF-8.  Such a line parses to exactly the values cut out here; every other line is
 * left to the reference reader.  Nothing here interprets or sanitises a value: the caller maps each
 * distinct value through the reference sanitiser.
 *
 * newlines(data) -> bytes: the int64 positions of every newline (memchr), for the chunk scanner.
 *
 * scan_calls(data, ends, skip, alloc) -> (ok, buffers)
 *   data: the chunk (complete lines, each ending in '\n'); ends: int64 newline positions; skip: one
 *   uint8 per line, nonzero for lines never to accept.  The scan runs without the GIL, then calls
 *   alloc(sizes) once for a list of writable buffers of at least those sizes (the caller allocates them
 *   where it likes: the loader uses Arrow's memory pool) and fills them, again without the GIL.
 *   ok: bytes, one uint8 per line.  buffers, for the accepted rows only, in line order: "seq",
 *   "latency_ms", "shim_self_us" (uint64), "ts" (int64 ms since the epoch, UTC); the validity masks
 *   "identity", "tool", "args", "latency", "error", "ext" (uint8); then for each string field an int32
 *   Arrow offsets buffer and a data buffer: "capture_id", "event_id", "session", "server", "method",
 *   "tool", "outcome", "kind", "args", "error", "ext".  Absent values have length 0 and validity 0.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

enum { F_CAP, F_EVT, F_SESSION, F_SERVER, F_METHOD, F_TOOL, F_OUTCOME, F_KIND, F_ARGS, F_ERROR, F_EXT, NSTR };
enum { I_SEQ, I_LAT, I_SHIM, NINT };
enum { V_ID, V_TOOL, V_ARGS, V_LAT, V_ERROR, V_EXT, NVALID };

typedef struct {
    const uint8_t *p;   /* next byte */
    const uint8_t *end; /* the line's newline */
} Cur;

typedef struct {
    int32_t start[NSTR]; /* chunks are under 2 GiB (checked) */
    int32_t len[NSTR];
    uint64_t ints[NINT];
    int64_t ts;
    uint8_t valid[NVALID];
} Row;

#define LIT(c, s) lit((c), (s), sizeof(s) - 1)

static int lit(Cur *c, const char *s, size_t n) {
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0) return 0;
    c->p += n;
    return 1;
}

/* A string body up to (not including) its closing quote, which is consumed. */
static int str_body(Cur *c, const uint8_t *base, Row *row, int field) {
    const uint8_t *q = c->p;
    while (q < c->end && *q != '"') {
        if (*q == '\\' || *q < 0x20) return 0;
        q++;
    }
    if (q >= c->end) return 0;
    row->start[field] = (int32_t)(c->p - base);
    row->len[field] = (int32_t)(q - c->p);
    c->p = q + 1;
    return 1;
}

static int u64(Cur *c, uint64_t *out) {
    const uint8_t *q = c->p;
    uint64_t v = 0;
    if (q >= c->end || *q < '0' || *q > '9') return 0;
    if (*q == '0') {
        c->p = q + 1;
        *out = 0;
        return c->p >= c->end || *c->p < '0' || *c->p > '9';
    }
    while (q < c->end && *q >= '0' && *q <= '9') {
        uint64_t d = (uint64_t)(*q - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
        q++;
    }
    c->p = q;
    *out = v;
    return 1;
}

static int digits(const uint8_t *p, int n, int *out) {
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return 1;
}

static int64_t days_from_civil(int64_t y, int m, int d) {
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* The strict timestamp and its closing quote. */
static int timestamp(Cur *c, int64_t *out) {
    static const int dim[13] = {0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const uint8_t *p = c->p;
    int y, mo, d, h, mi, s, ms;
    if (c->end - p < 25 || p[4] != '-' || p[7] != '-' || p[10] != 'T' || p[13] != ':' || p[16] != ':' ||
        p[19] != '.' || p[23] != 'Z' || p[24] != '"')
        return 0;
    if (!digits(p, 4, &y) || !digits(p + 5, 2, &mo) || !digits(p + 8, 2, &d) || !digits(p + 11, 2, &h) ||
        !digits(p + 14, 2, &mi) || !digits(p + 17, 2, &s) || !digits(p + 20, 3, &ms))
        return 0;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || s > 59) return 0;
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (d > dim[mo] + (mo == 2 && leap)) return 0;
    *out = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000 + (int64_t)s * 1000 + ms;
    c->p = p + 25;
    return 1;
}

static int is_hex(uint8_t ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'); }

static int uuid_form(const uint8_t *p, int32_t n) {
    if (n != 36) return 0;
    for (int i = 0; i < 36; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (p[i] != '-') return 0;
        } else if (!is_hex(p[i])) {
            return 0;
        }
    }
    return 1;
}

/* One JSON value, delimited structurally: a container to its matching close, a string to its quote, a
 * scalar up to the next ',' or '}'.  The caller validates the text as JSON. */
static int value(Cur *c, const uint8_t *base, Row *row, int field) {
    const uint8_t *q = c->p, *e = c->end;
    if (q >= e) return 0;
    if (*q == '{' || *q == '[') {
        int64_t depth = 0;
        while (q < e) {
            uint8_t ch = *q++;
            if (ch == '"') {
                while (q < e && *q != '"') {
                    if (*q == '\\') return 0;
                    q++;
                }
                if (q >= e) return 0;
                q++;
            } else if (ch == '{' || ch == '[') {
                depth++;
            } else if (ch == '}' || ch == ']') {
                if (--depth == 0) break;
            } else if (ch == '\\') {
                return 0;
            }
        }
        if (depth != 0) return 0;
    } else if (*q == '"') {
        q++;
        while (q < e && *q != '"') {
            if (*q == '\\') return 0;
            q++;
        }
        if (q >= e) return 0;
        q++;
    } else {
        while (q < e && *q != ',' && *q != '}') {
            if (*q == '\\' || *q == '"' || *q == '{' || *q == '[') return 0;
            q++;
        }
    }
    row->start[field] = (int32_t)(c->p - base);
    row->len[field] = (int32_t)(q - c->p);
    c->p = q;
    return row->len[field] > 0;
}

/* Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static int utf8_ok(const uint8_t *p, const uint8_t *e) {
    while (p < e) {
        while (e - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (w & 0x8080808080808080ULL) break;
            p += 8;
        }
        if (p >= e) break;
        uint8_t b = *p;
        if (b < 0x80) {
            p++;
        } else if (b >= 0xC2 && b <= 0xDF) {
            if (e - p < 2 || (p[1] & 0xC0) != 0x80) return 0;
            p += 2;
        } else if (b >= 0xE0 && b <= 0xEF) {
            if (e - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
            if (b == 0xE0 && p[1] < 0xA0) return 0;
            if (b == 0xED && p[1] > 0x9F) return 0;
            p += 3;
        } else if (b >= 0xF0 && b <= 0xF4) {
            if (e - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80)
                return 0;
            if (b == 0xF0 && p[1] < 0x90) return 0;
            if (b == 0xF4 && p[1] > 0x8F) return 0;
            p += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

static int parse_line(const uint8_t *base, const uint8_t *line, const uint8_t *nl, Row *row) {
    Cur c = {line, nl};
    memset(row, 0, sizeof(*row));
    if (!utf8_ok(line, nl) || !LIT(&c, "{")) return 0;
    if (LIT(&c, "\"identity\":{\"capture_id\":\"")) {
        if (!str_body(&c, base, row, F_CAP) || !LIT(&c, ",\"event_id\":\"") ||
            !str_body(&c, base, row, F_EVT) || !LIT(&c, "},"))
            return 0;
        if (!uuid_form(base + row->start[F_CAP], row->len[F_CAP]) ||
            !uuid_form(base + row->start[F_EVT], row->len[F_EVT]))
            return 0;
        row->valid[V_ID] = 1;
    }
    if (!LIT(&c, "\"ts\":\"") || !timestamp(&c, &row->ts) || !LIT(&c, ",\"session\":\"") ||
        !str_body(&c, base, row, F_SESSION) || !LIT(&c, ",\"seq\":") || !u64(&c, &row->ints[I_SEQ]) ||
        !LIT(&c, ",\"server\":\"") || !str_body(&c, base, row, F_SERVER) || !LIT(&c, ",\"method\":\"") ||
        !str_body(&c, base, row, F_METHOD))
        return 0;
    if (LIT(&c, ",\"tool\":\"")) {
        if (!str_body(&c, base, row, F_TOOL)) return 0;
        row->valid[V_TOOL] = 1;
    }
    if (LIT(&c, ",\"args\":")) {
        if (!value(&c, base, row, F_ARGS)) return 0;
        row->valid[V_ARGS] = 1;
    }
    if (LIT(&c, ",\"latency_ms\":")) {
        if (!u64(&c, &row->ints[I_LAT])) return 0;
        row->valid[V_LAT] = 1;
    }
    if (!LIT(&c, ",\"outcome\":\"") || !str_body(&c, base, row, F_OUTCOME)) return 0;
    if (LIT(&c, ",\"error\":")) {
        if (!value(&c, base, row, F_ERROR)) return 0;
        row->valid[V_ERROR] = 1;
    }
    if (!LIT(&c, ",\"shim_self_us\":") || !u64(&c, &row->ints[I_SHIM]) || !LIT(&c, ",\"kind\":\"") ||
        !str_body(&c, base, row, F_KIND))
        return 0;
    if (LIT(&c, ",\"ext\":")) {
        if (!value(&c, base, row, F_EXT)) return 0;
        row->valid[V_EXT] = 1;
    }
    if (!LIT(&c, "}")) return 0;
    return c.p == nl;
}

typedef struct {
    Py_ssize_t n, rows;
    Row *parsed;        /* one per line */
    uint8_t *ok;        /* one per line */
    int64_t total[NSTR];
} Scan;

static void scan_lines(Scan *s, const uint8_t *data, const int64_t *ends, const uint8_t *skip) {
    int64_t prev = -1;
    s->rows = 0;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        const uint8_t *line = data + prev + 1, *nl = data + ends[i];
        Row *row = &s->parsed[s->rows];
        prev = ends[i];
        s->ok[i] = 0;
        if (skip[i] || !parse_line(data, line, nl, row)) continue;
        s->ok[i] = 1;
        for (int f = 0; f < NSTR; f++) s->total[f] += row->len[f];
        s->rows++;
    }
}

/* Output buffers, in the order of the sizes handed to alloc(): seq, latency_ms, shim_self_us, ts (8 bytes
 * per row); the validity masks (identity, tool, args, latency, error, ext; 1 byte per row); then per string
 * field (capture_id, event_id, session, server, method, tool, outcome, kind, args, error, ext)
 * its int32 offsets (rows + 1) and its data. */
enum { NOUT = NINT + 1 + NVALID + 2 * NSTR };

static void sizes_of(const Scan *s, Py_ssize_t *sizes) {
    int k = 0;
    for (int i = 0; i <= NINT; i++) sizes[k++] = s->rows * 8;
    for (int i = 0; i < NVALID; i++) sizes[k++] = s->rows;
    for (int f = 0; f < NSTR; f++) {
        sizes[k++] = (s->rows + 1) * 4;
        sizes[k++] = (Py_ssize_t)s->total[f];
    }
}

static void fill(const Scan *s, const uint8_t *data, Py_buffer *out) {
    uint64_t *ints[NINT];
    int64_t *ts = out[NINT].buf;
    uint8_t *valid[NVALID];
    int32_t *off[NSTR];
    char *dst[NSTR];
    for (int k = 0; k < NINT; k++) ints[k] = out[k].buf;
    for (int k = 0; k < NVALID; k++) valid[k] = out[NINT + 1 + k].buf;
    for (int f = 0; f < NSTR; f++) {
        off[f] = out[NINT + 1 + NVALID + 2 * f].buf;
        dst[f] = out[NINT + 1 + NVALID + 2 * f + 1].buf;
        off[f][0] = 0;
    }
    for (Py_ssize_t r = 0; r < s->rows; r++) {
        const Row *row = &s->parsed[r];
        for (int k = 0; k < NINT; k++) ints[k][r] = row->ints[k];
        ts[r] = row->ts;
        for (int k = 0; k < NVALID; k++) valid[k][r] = row->valid[k];
        for (int f = 0; f < NSTR; f++) {
            memcpy(dst[f], data + row->start[f], (size_t)row->len[f]);
            dst[f] += row->len[f];
            off[f][r + 1] = off[f][r] + row->len[f];
        }
    }
}

/* Ask alloc(sizes) for the output buffers and take a writable view of each; 0 on error (set). */
static int take_outputs(PyObject *alloc, const Scan *s, PyObject **list, Py_buffer *out) {
    Py_ssize_t sizes[NOUT];
    sizes_of(s, sizes);
    PyObject *arg = PyList_New(NOUT);
    if (arg == NULL) return 0;
    for (int k = 0; k < NOUT; k++) {
        PyObject *v = PyLong_FromSsize_t(sizes[k]);
        if (v == NULL) {
            Py_DECREF(arg);
            return 0;
        }
        PyList_SET_ITEM(arg, k, v);
    }
    *list = PyObject_CallOneArg(alloc, arg);
    Py_DECREF(arg);
    if (*list == NULL) return 0;
    if (!PyList_Check(*list) || PyList_GET_SIZE(*list) != NOUT) {
        PyErr_SetString(PyExc_TypeError, "scan_calls: alloc must return a list with one buffer per size");
        return 0;
    }
    for (int k = 0; k < NOUT; k++) {
        if (PyObject_GetBuffer(PyList_GET_ITEM(*list, k), &out[k], PyBUF_WRITABLE) < 0) return 0;
        if (out[k].len < sizes[k]) {
            PyErr_SetString(PyExc_ValueError, "scan_calls: alloc returned a buffer smaller than asked");
            return 0;
        }
    }
    return 1;
}

static int check_args(const Py_buffer *data, const Py_buffer *ends, const Py_buffer *skip, Py_ssize_t n) {
    if (data->len >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "scan_calls: chunk must be smaller than 2 GiB");
        return 0;
    }
    if (ends->len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "scan_calls: ends must be int64");
        return 0;
    }
    if (skip->len != n) {
        PyErr_SetString(PyExc_ValueError, "scan_calls: skip must hold one byte per line");
        return 0;
    }
    const int64_t *e = (const int64_t *)ends->buf;
    int64_t prev = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (e[i] <= prev || e[i] >= data->len || ((const uint8_t *)data->buf)[e[i]] != '\n') {
            PyErr_SetString(PyExc_ValueError, "scan_calls: ends must be increasing newline positions");
            return 0;
        }
        prev = e[i];
    }
    return 1;
}

/* The per-line scratch is mapped directly, so freeing it never moves malloc's mmap threshold (which would
 * make later large allocations stick in the heap). */
static Row *scratch_map(Py_ssize_t n, size_t *bytes) {
    *bytes = sizeof(Row) * (size_t)(n > 0 ? n : 1);
    void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

static PyObject *scan_calls(PyObject *self, PyObject *args) {
    PyObject *data_obj, *ends_obj, *skip_obj, *alloc, *ok = NULL, *list = NULL, *res = NULL;
    Py_buffer data = {0}, ends = {0}, skip = {0}, out[NOUT];
    Scan s = {0};
    size_t scratch = 0;
    (void)self;
    memset(out, 0, sizeof(out));
    if (!PyArg_ParseTuple(args, "OOOO:scan_calls", &data_obj, &ends_obj, &skip_obj, &alloc)) return NULL;
    if (PyObject_GetBuffer(data_obj, &data, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(ends_obj, &ends, PyBUF_SIMPLE) < 0) goto done;
    if (PyObject_GetBuffer(skip_obj, &skip, PyBUF_SIMPLE) < 0) goto done;
    s.n = ends.len / 8;
    if (!check_args(&data, &ends, &skip, s.n)) goto done;
    ok = PyBytes_FromStringAndSize(NULL, s.n);
    if (ok == NULL) goto done;
    s.parsed = scratch_map(s.n, &scratch);
    if (s.parsed == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    s.ok = (uint8_t *)PyBytes_AS_STRING(ok);
    Py_BEGIN_ALLOW_THREADS
    scan_lines(&s, data.buf, ends.buf, skip.buf);
    Py_END_ALLOW_THREADS
    if (!take_outputs(alloc, &s, &list, out)) goto done;
    Py_BEGIN_ALLOW_THREADS
    fill(&s, data.buf, out);
    Py_END_ALLOW_THREADS
    res = PyTuple_Pack(2, ok, list);
done:
    for (int k = 0; k < NOUT; k++)
        if (out[k].obj != NULL) PyBuffer_Release(&out[k]);
    if (s.parsed != NULL) munmap(s.parsed, scratch);
    Py_XDECREF(list);
    Py_XDECREF(ok);
    if (skip.obj != NULL) PyBuffer_Release(&skip);
    if (ends.obj != NULL) PyBuffer_Release(&ends);
    PyBuffer_Release(&data);
    return res;
}

/* Count the newlines of [base, e) with memchr, at most max of them; store their offsets when pos is not
 * NULL (max bounds the writes even if another thread changes the bytes between two passes). */
static Py_ssize_t find_newlines(const uint8_t *base, const uint8_t *e, int64_t *pos, Py_ssize_t max) {
    Py_ssize_t count = 0;
    const uint8_t *p = base, *nl;
    while (count < max && p < e && (nl = memchr(p, '\n', (size_t)(e - p))) != NULL) {
        if (pos != NULL) pos[count] = nl - base;
        count++;
        p = nl + 1;
    }
    return count;
}

/* newlines(data) -> bytes: the int64 positions of every '\n' in data (counted, then written: two memchr
 * passes without the GIL, one exact allocation). */
static PyObject *newlines(PyObject *self, PyObject *arg) {
    Py_buffer data = {0};
    PyObject *out = NULL;
    Py_ssize_t count;
    (void)self;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *base = data.buf, *e = base + data.len;
    Py_BEGIN_ALLOW_THREADS
    count = find_newlines(base, e, NULL, PY_SSIZE_T_MAX);
    Py_END_ALLOW_THREADS
    out = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (out != NULL) {
        int64_t *pos = (int64_t *)PyBytes_AS_STRING(out);
        Py_ssize_t written;
        Py_BEGIN_ALLOW_THREADS
        written = find_newlines(base, e, pos, count);
        Py_END_ALLOW_THREADS
        if (written != count) {
            Py_SETREF(out, NULL);
            PyErr_SetString(PyExc_RuntimeError, "newlines: the buffer changed while it was scanned");
        }
    }
    PyBuffer_Release(&data);
    return out;
}

static PyMethodDef METHODS[] = {
    {"newlines", newlines, METH_O, "newlines(data) -> bytes: int64 positions of every newline."},
    {"scan_calls", scan_calls, METH_VARARGS,
     "scan_calls(data, ends, skip, alloc) -> (ok, buffers): canonical call lines cut into columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {
    PyModuleDef_HEAD_INIT, "_canon", "Compiled canonical-line scanner for the loader.", -1, METHODS,
};

PyMODINIT_FUNC PyInit__canon(void) { return PyModule_Create(&MODULE); }
