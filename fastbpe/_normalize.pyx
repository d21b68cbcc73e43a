# cython: language_level=3
"""Normalizer programs: a sequence of HF normalizer steps run in C over a str, with or without
the alignment HF keeps (each output character's span in the input).

A program is a list of ops (fastbpe/normalize.py builds it from named steps): a Unicode form
(NFC/NFD/NFKC/NFKD, only the spans its stability table flags are normalized: _nfc.find_spans),
Lowercase, Replace of a literal or of runs of a character class, a class's members padded
(BertNormalizer's " c "), Prepend, Strip, StripAccents, ByteLevel.  Every op reads the
current text (the input str in place, then a UCS-4 buffer), and either says "unchanged" after
a read-only scan (most text under most ops: nothing is copied, and a text no op changes comes
back as the same str object) or writes its output with, for each output character, the index
of the input character whose span it takes (-1: the empty span where the text starts).
Composing those indexes op after op gives HF's alignment, as NormalizedText does in Python
(hf/normalized.py, the reference the tests compare with).

Everything between taking the str's code units and making the result str runs without the
GIL; `normalize_batch` does a whole list in one GIL-free section."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memchr, memcpy, memset

from fastbpe._memory cimport xrealloc
from fastbpe._normalize_buf cimport (Buf, View, buf_free, copy_same, put, reserve, unit_t, view_ascii,
                                     view_class_skip)
from fastbpe._str_units cimport PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, code_point
from fastbpe._nfc cimport (Item, Items, TABLE_SIZE, decompose, find_spans, is_combining_mark,
                           lower_of, recompose)
from fastbpe._normalize_case cimport op_lowercase, replace_run_lower

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object u)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)


cdef enum:
    OP_FORM = 1          # arg: 0 NFC, 1 NFD, 2 NFKC, 3 NFKD; table: the form's stability table
    OP_LOWERCASE = 2
    OP_REPLACE = 3       # pattern (a literal; empty: an empty match at every position) -> content
    OP_PREPEND = 4       # content; arg 1: not before a text starting with content's first character
    OP_STRIP = 5         # arg: bit 1 left, bit 2 right
    OP_STRIP_ACCENTS = 6
    OP_BYTELEVEL = 7
    OP_REPLACE_RUN = 8   # a regex that is one class repeated 1..run_max times (`\\s+`) -> content
    OP_PAD_CLASS = 9     # each member c of a class -> content c content (BertNormalizer's " c ")
    SPAN_GAP = 8         # spans a form may change closer than this are normalized together


cdef inline bint is_whitespace(uint32_t c) noexcept nogil:
    """Rust's char::is_whitespace (Unicode White_Space), which HF's Strip uses."""
    if c < 0x80:
        return c == 32 or 9 <= c <= 13
    return (c == 0x85 or c == 0xA0 or c == 0x1680 or 0x2000 <= c <= 0x200A or c == 0x2028
            or c == 0x2029 or c == 0x202F or c == 0x205F or c == 0x3000)


# -- the ops: each returns 0 (v unchanged, out untouched) or 1 (out holds the result) ------

cdef int op_form(const Op* op, View v, Buf* out) except -1 nogil:
    """HF's NFC/NFD/NFKC/NFKD: only the spans the form's table flags are decomposed (and
    recomposed); each starts and ends before a stable starter, so they normalize apart from
    the rest, and their characters' sources follow the crate's changes as in _nfc.finish."""
    cdef Py_ssize_t* spans = NULL
    cdef Py_ssize_t count, s, k, start, end, length, done = 0, p
    cdef bint compat = op.arg >= 2, composes = op.arg == 0 or op.arg == 2, same, changed = False
    cdef Items dec, comp
    cdef Items* items
    if view_ascii(v):
        return 0
    count = find_spans(v.kind, v.data, v.n, op.table, TABLE_SIZE, SPAN_GAP, &spans)
    if count < 0:
        with gil:
            raise MemoryError()
    if count == 0:
        return 0
    dec.items = comp.items = NULL
    dec.cap = comp.cap = 0
    try:
        for s in range(count):
            start, end = spans[2 * s], spans[2 * s + 1]
            length = end - start
            dec.n = comp.n = 0
            decompose(v.kind, <const char*>v.data + start * v.kind, length, compat, &dec)
            items = &dec
            if composes:
                recompose(&dec, &comp)
                items = &comp
            same = items.n == length
            if same:
                for k in range(length):
                    if items.items[k].change != 0 or items.items[k].ch != code_point(v.kind, v.data, start + k):
                        same = False
                        break
            if same:
                continue
            if not changed:
                changed = True
                out.n = 0
            copy_same(out, v, done, start)
            reserve(out, out.n + items.n)
            p = start
            for k in range(items.n):
                if out.aligned:
                    if items.items[k].change > 0:
                        out.src[out.n] = p - 1
                    else:
                        out.src[out.n] = p if p < v.n else v.n - 1
                        p += 1 - items.items[k].change
                out.ch[out.n] = items.items[k].ch
                out.n += 1
            done = end
        if changed:
            copy_same(out, v, done, v.n)
    finally:
        free(spans)
        free(dec.items)
        free(comp.items)
    return 1 if changed else 0


cdef Py_ssize_t find_literal(View v, Py_ssize_t at, const Op* op) noexcept nogil:
    """The first occurrence of the op's literal (length m >= 1) in v at or after `at`, or -1:
    Knuth-Morris-Pratt over the op's failure table (linear whatever the literal and the
    text), jumping to the next first character with memchr on Latin-1 text."""
    cdef const uint32_t* pattern = op.pattern
    cdef const Py_ssize_t* fail = op.fail
    cdef Py_ssize_t i = at, q = 0, m = op.pattern_n
    cdef uint32_t first = pattern[0], c
    cdef const uint8_t* d1 = <const uint8_t*>v.data
    cdef const void* hit
    if v.kind == 1 and first > 0xFF:
        return -1
    while i < v.n:
        if q == 0 and v.kind == 1:
            hit = memchr(d1 + i, first, v.n - i)
            if hit == NULL:
                return -1
            i = <const uint8_t*>hit - d1
        c = code_point(v.kind, v.data, i)
        while q > 0 and c != pattern[q]:
            q = fail[q - 1]
        if c == pattern[q]:
            q += 1
            if q == m:
                return i - m + 1
        i += 1
    return -1


cdef int put_content(Buf* out, const Op* op, Py_ssize_t src) except -1 nogil:
    cdef Py_ssize_t k
    reserve(out, out.n + op.content_n)
    for k in range(op.content_n):
        out.ch[out.n] = op.content[k]
        if out.aligned:
            out.src[out.n] = src
        out.n += 1
    return 0


cdef int op_replace(const Op* op, View v, Buf* out) except -1 nogil:
    """HF's Replace with a literal: its leftmost non-overlapping occurrences become content,
    whose characters take the span of the match's last character (inserted after the removed
    ones); an empty literal matches, empty, at every position of a non-empty text."""
    cdef Py_ssize_t at = 0, hit
    if v.n == 0:
        return 0
    out.n = 0
    if op.pattern_n == 0:
        for at in range(v.n + 1):
            put_content(out, op, at - 1)
            if at < v.n:
                put(out, code_point(v.kind, v.data, at), at)
        return 1
    hit = find_literal(v, 0, op)
    if hit < 0:
        return 0
    while hit >= 0:
        copy_same(out, v, at, hit)
        put_content(out, op, hit + op.pattern_n - 1)
        at = hit + op.pattern_n
        hit = find_literal(v, at, op)
    copy_same(out, v, at, v.n)
    return 1


cdef int op_replace_run(const Op* op, View v, Buf* out) except -1 nogil:
    """HF's Replace with a regex that is one class repeated (`\\s+`, `" {2,}"`): its leftmost
    greedy matches (runs of members, cut every run_max; a run or a run's rest shorter than
    op.arg, the least count, is no match) become content, aligned as a literal's.  A match of
    one character that is the content (CLIP's single spaces) changes nothing, not even its
    span: a text with only such matches is unchanged (no copy)."""
    cdef Py_ssize_t i = 0, at = 0, j
    cdef bint changed = False
    cdef const uint64_t* ascii = <const uint64_t*>op.ascii
    while True:
        i = view_class_skip(v, i, v.n, ascii, op.index, op.blocks, True)
        if i == v.n:
            break
        j = view_class_skip(v, i + 1, i + op.run_max if op.run_max < v.n - i else v.n, ascii, op.index,
                            op.blocks, False)
        if j - i < op.arg or (j == i + 1 and op.content_n == 1 and code_point(v.kind, v.data, i) == op.content[0]):
            i = j
            continue
        if not changed:
            changed = True
            out.n = 0
        copy_same(out, v, at, i)
        put_content(out, op, j - 1)
        at = i = j
    if not changed:
        return 0
    copy_same(out, v, at, v.n)
    return 1


cdef int op_pad_class(const Op* op, View v, Buf* out) except -1 nogil:
    """HF's BertNormalizer handle_chinese_chars: each member c of the class becomes content, c,
    content (" c "), all three taking c's span (HF's transform: the first replaces c, the other
    two are inserted after it)."""
    cdef Py_ssize_t at = 0
    cdef const uint64_t* ascii = <const uint64_t*>op.ascii
    cdef Py_ssize_t i = view_class_skip(v, 0, v.n, ascii, op.index, op.blocks, True)
    if i == v.n:
        return 0
    out.n = 0
    while i < v.n:
        copy_same(out, v, at, i)
        put_content(out, op, i)
        put(out, code_point(v.kind, v.data, i), i)
        put_content(out, op, i)
        at = i + 1
        i = view_class_skip(v, at, v.n, ascii, op.index, op.blocks, True)
    copy_same(out, v, at, v.n)
    return 1


cdef int op_prepend(const Op* op, View v, Buf* out) except -1 nogil:
    """HF's Prepend: on a non-empty text, content first, taking the first character's span
    (arg 1, ByteLevel's add_prefix_space: unless the text starts with content's first character)."""
    if v.n == 0 or op.content_n == 0:
        return 0
    if op.arg == 1 and code_point(v.kind, v.data, 0) == op.content[0]:
        return 0
    out.n = 0
    put_content(out, op, 0)
    copy_same(out, v, 0, v.n)
    return 1


cdef int op_strip(const Op* op, View v, Buf* out) except -1 nogil:
    cdef Py_ssize_t start = 0, end = v.n
    if op.arg & 1:
        while start < end and is_whitespace(code_point(v.kind, v.data, start)):
            start += 1
    if op.arg & 2:
        while end > start and is_whitespace(code_point(v.kind, v.data, end - 1)):
            end -= 1
    if start == 0 and end == v.n:
        return 0
    out.n = 0
    copy_same(out, v, start, end)
    return 1


cdef int op_strip_accents(View v, Buf* out) except -1 nogil:
    """HF's StripAccents: combining marks removed; the others keep their spans."""
    cdef Py_ssize_t i = 0
    cdef uint32_t c
    while i < v.n and not is_combining_mark(code_point(v.kind, v.data, i)):
        i += 1
    if i == v.n:
        return 0
    out.n = 0
    copy_same(out, v, 0, i)
    for i in range(i, v.n):
        c = code_point(v.kind, v.data, i)
        if not is_combining_mark(c):
            put(out, c, i)
    return 1


cdef uint32_t BYTE_CHAR[256]    # GPT-2's byte -> printable character (formats/bytelevel.py)


cdef void init_byte_chars() noexcept:
    cdef int b, extra = 0
    for b in range(256):
        if 33 <= b <= 126 or 161 <= b <= 172 or 174 <= b <= 255:
            BYTE_CHAR[b] = b
        else:
            BYTE_CHAR[b] = 256 + extra
            extra += 1


init_byte_chars()


cdef int op_bytelevel(View v, Buf* out) except -1 nogil:
    """HF's ByteLevel normalizer: every character becomes its UTF-8 bytes in the byte-level
    alphabet (surrogates as their 3-byte form), each taking the character's span."""
    cdef Py_ssize_t i = 0
    cdef int nb, k
    cdef uint32_t c
    while i < v.n and 33 <= code_point(v.kind, v.data, i) <= 126:
        i += 1
    if i == v.n:
        return 0
    out.n = 0
    copy_same(out, v, 0, i)
    for i in range(i, v.n):
        c = code_point(v.kind, v.data, i)
        nb = 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
        put(out, BYTE_CHAR[c if nb == 1 else ((0xF00 >> nb) & 0xFF) | (c >> (6 * (nb - 1)))], i)
        for k in range(nb - 2, -1, -1):   # the continuation bytes, high bits first
            put(out, BYTE_CHAR[0x80 | ((c >> (6 * k)) & 0x3F)], i)
    return 1


cdef int apply_op(const Op* op, View v, Buf* out) except -1 nogil:
    if op.kind == OP_FORM:
        return op_form(op, v, out)
    if op.kind == OP_LOWERCASE:
        return op_lowercase(v, out)
    if op.kind == OP_REPLACE:
        return op_replace(op, v, out)
    if op.kind == OP_REPLACE_RUN:
        return op_replace_run(op, v, out)
    if op.kind == OP_PAD_CLASS:
        return op_pad_class(op, v, out)
    if op.kind == OP_PREPEND:
        return op_prepend(op, v, out)
    if op.kind == OP_STRIP:
        return op_strip(op, v, out)
    if op.kind == OP_STRIP_ACCENTS:
        return op_strip_accents(v, out)
    if op.kind == OP_BYTELEVEL:
        return op_bytelevel(v, out)
    return 0


cdef int run_ops(const Op* ops, int n_ops, View text, Buf* bufs) except -2 nogil:
    """Every op in turn: the index (0 or 1) of the buffer holding the result, or -1 when no
    op changed the text.  With bufs[].aligned, the result's start/end are each character's
    original span (composed from each op's sources; the input is its own alignment)."""
    cdef int cur = -1, nxt, j = 0, r
    cdef View v = text
    cdef Buf* o
    cdef Buf* prev
    cdef Py_ssize_t k, s
    cdef int64_t origin
    while j < n_ops:
        nxt = 0 if cur != 0 else 1
        o = &bufs[nxt]
        o.n = 0
        if ops[j].then_lower:   # Replace(`\s+` -> " ") then Lowercase (CLIP's): one pass
            r = replace_run_lower(v, <const uint64_t*>ops[j].ascii, ops[j].index, ops[j].blocks, ops[j].run_max,
                                  ops[j].lower_content, o)
            j += 2
        else:
            r = apply_op(&ops[j], v, o)
            j += 1
        if r == 0:
            continue
        if o.aligned:
            if cur < 0:
                for k in range(o.n):
                    s = o.src[k]
                    o.start[k] = s if s >= 0 else 0
                    o.end[k] = s + 1 if s >= 0 else 0
            else:
                prev = &bufs[cur]
                origin = prev.start[0] if prev.n > 0 else 0
                for k in range(o.n):
                    s = o.src[k]
                    if s >= 0:
                        o.start[k] = prev.start[s]
                        o.end[k] = prev.end[s]
                    else:
                        o.start[k] = o.end[k] = origin
        cur = nxt
        v.kind = 4
        v.data = o.ch
        v.n = o.n
    return cur


cdef class Program:
    """A compiled normalizer program.  Program(ops), each op a tuple:
    ("form", 0..3 for NFC/NFD/NFKC/NFKD, its stability table as bytes), ("lowercase",),
    ("replace", literal, content), ("replace_run", ascii_lo, ascii_hi, block index (uint16
    bytes), blocks (bytes), run_max, content[, run_min]), ("pad_class", ascii_lo, ascii_hi, block index, blocks,
    content), ("prepend", content[, unless_first]), ("strip", left, right),
    ("strip_accents",), ("bytelevel",)."""

    def __cinit__(self, ops):
        ops = list(ops)
        self.keep = []
        self.ops = <Op*>malloc((len(ops) + 1) * sizeof(Op))
        if self.ops == NULL:
            raise MemoryError()
        memset(self.ops, 0, (len(ops) + 1) * sizeof(Op))
        self.n_ops = 0
        self.ascii_stable = True
        cdef const uint32_t* seq
        cdef Op* op
        for spec in ops:
            self._add(tuple(spec))
            op = &self.ops[self.n_ops - 1]
            if op.kind not in (OP_FORM, OP_STRIP_ACCENTS) and not (op.kind == OP_PAD_CLASS and op.ascii[0] == 0
                                                                   and op.ascii[1] == 0):
                self.ascii_stable = False
        for j in range(self.n_ops - 1):
            op = &self.ops[j]
            if op.kind == OP_REPLACE_RUN and op.arg == 1 and op.content_n == 1 and self.ops[j + 1].kind == OP_LOWERCASE:
                m = lower_of(op.content[0], &seq)
                if m <= 1:
                    op.then_lower, op.lower_content = True, seq[0] if m == 1 else op.content[0]

    def __dealloc__(self):
        free(self.ops)

    cdef const unsigned int* _chars(self, str s, Py_ssize_t* n) except? NULL:
        data = s.encode("utf-32-le", "surrogatepass")
        self.keep.append(data)
        n[0] = len(s)
        return <const unsigned int*><const char*>data

    cdef const Py_ssize_t* _failure_table(self, const unsigned int* pattern, Py_ssize_t m) except? NULL:
        """KMP's table: fail[q] = the longest proper border of pattern[0:q+1]."""
        table = bytearray(max(m, 1) * sizeof(Py_ssize_t))
        self.keep.append(table)
        cdef Py_ssize_t* fail = <Py_ssize_t*><char*>table
        cdef Py_ssize_t q, k = 0
        fail[0] = 0
        for q in range(1, m):
            while k > 0 and pattern[q] != pattern[k]:
                k = fail[k - 1]
            if pattern[q] == pattern[k]:
                k += 1
            fail[q] = k
        return fail

    cdef int _add(self, tuple spec) except -1:
        cdef Op* op = &self.ops[self.n_ops]
        cdef const uint8_t[::1] table
        cdef bytes index, blocks
        name = spec[0]
        if name == "form":
            form, data = spec[1], spec[2]
            if not 0 <= form <= 3 or not isinstance(data, bytes) or len(data) != TABLE_SIZE:
                raise ValueError("a form op needs 0..3 and its stability table")
            self.keep.append(data)
            op.kind, op.arg, op.table = OP_FORM, form, <const unsigned char*><const char*>data
        elif name == "lowercase":
            op.kind = OP_LOWERCASE
        elif name == "replace":
            op.kind = OP_REPLACE
            op.pattern = self._chars(spec[1], &op.pattern_n)
            op.fail = self._failure_table(op.pattern, op.pattern_n)
            op.content = self._chars(spec[2], &op.content_n)
        elif name == "replace_run" or name == "pad_class":
            if name == "pad_class":
                lo, hi, index_b, blocks_b, content = spec[1:]
                run_max = run_min = 1
            else:
                lo, hi, index_b, blocks_b, run_max, content = spec[1:7]
                run_min = spec[7] if len(spec) > 7 else 1
            index, blocks = bytes(index_b), bytes(blocks_b)
            if len(index) != 2 * 4352 or len(blocks) % 32 or max(memoryview(index).cast("H"), default=0) * 32 >= len(blocks) or not 1 <= run_min <= run_max:
                raise ValueError(f"a {name} op needs a class table (pattern_program's) and 1 <= run_min <= run_max")
            self.keep += [index, blocks]
            op.kind, op.run_max = OP_PAD_CLASS if name == "pad_class" else OP_REPLACE_RUN, run_max
            op.arg = run_min   # (the least run a match of OP_REPLACE_RUN takes)
            op.ascii[0], op.ascii[1] = lo, hi
            op.index = <const unsigned short*><const char*>index
            op.blocks = <const unsigned char*><const char*>blocks
            op.content = self._chars(content, &op.content_n)
        elif name == "prepend":
            op.kind, op.arg = OP_PREPEND, 1 if len(spec) > 2 and spec[2] else 0
            op.content = self._chars(spec[1], &op.content_n)
        elif name == "strip":
            op.kind, op.arg = OP_STRIP, (1 if spec[1] else 0) | (2 if spec[2] else 0)
        elif name == "strip_accents":
            op.kind = OP_STRIP_ACCENTS
        elif name == "bytelevel":
            op.kind = OP_BYTELEVEL
        else:
            raise ValueError(f"unknown normalizer op {name!r}")
        self.n_ops += 1
        return 0

    cpdef str normalize(self, str text):
        """The normalized text (text itself when no op changes it)."""
        cdef View v
        cdef Buf bufs[2]
        cdef int r
        if self.ascii_stable and PyUnicode_IS_ASCII(text):
            return text
        memset(bufs, 0, sizeof(bufs))
        v.kind, v.data, v.n = PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)
        try:
            with nogil:
                r = run_ops(self.ops, self.n_ops, v, bufs)
            if r < 0:
                return text
            return PyUnicode_FromKindAndData(4, bufs[r].ch, bufs[r].n)
        finally:
            buf_free(&bufs[0])
            buf_free(&bufs[1])

    def normalize_aligned(self, str text):
        """(normalized, starts, ends): starts/ends are int64 bytes, character k of the result
        coming from text[starts[k]:ends[k]] (HF's alignment); (text, None, None) when no op
        changes text (every character its own span)."""
        cdef View v
        cdef Buf bufs[2]
        cdef int r
        memset(bufs, 0, sizeof(bufs))
        bufs[0].aligned = bufs[1].aligned = True
        v.kind, v.data, v.n = PyUnicode_KIND(text), PyUnicode_DATA(text), PyUnicode_GET_LENGTH(text)
        try:
            with nogil:
                r = run_ops(self.ops, self.n_ops, v, bufs)
            if r < 0:
                return text, None, None
            n = bufs[r].n
            return (PyUnicode_FromKindAndData(4, bufs[r].ch, n),
                    (<char*>bufs[r].start)[:n * sizeof(int64_t)] if n else b"",
                    (<char*>bufs[r].end)[:n * sizeof(int64_t)] if n else b"")
        finally:
            buf_free(&bufs[0])
            buf_free(&bufs[1])

    def normalize_batch(self, list texts):
        """normalize of each str of texts, the ops of all of them in one GIL-free section
        (threads normalize their shares in parallel)."""
        cdef Py_ssize_t m = len(texts), i, total = 0
        cdef View* views = <View*>malloc((m + 1) * sizeof(View))
        cdef Py_ssize_t* offsets = <Py_ssize_t*>malloc((m + 1) * sizeof(Py_ssize_t))
        cdef uint32_t* pool = NULL
        cdef Py_ssize_t pool_cap = 0
        cdef Buf bufs[2]
        cdef int r
        cdef tuple kept = tuple(texts)   # the strs stay alive while the GIL is released
        memset(bufs, 0, sizeof(bufs))
        if views == NULL or offsets == NULL:
            free(views)
            free(offsets)
            raise MemoryError()
        try:
            for i in range(m):
                t = kept[i]
                if type(t) is not str:
                    raise TypeError(f"expected str, not {type(t).__name__}")
                views[i].kind, views[i].data, views[i].n = PyUnicode_KIND(t), PyUnicode_DATA(t), PyUnicode_GET_LENGTH(t)
            with nogil:
                for i in range(m):
                    r = run_ops(self.ops, self.n_ops, views[i], bufs)
                    if r < 0:
                        offsets[i] = -1
                        continue
                    if total + bufs[r].n > pool_cap:
                        pool_cap = 2 * pool_cap if 2 * pool_cap > total + bufs[r].n else total + bufs[r].n
                        pool = <uint32_t*>xrealloc(pool, pool_cap * sizeof(uint32_t) + 4)
                    memcpy(pool + total, bufs[r].ch, bufs[r].n * sizeof(uint32_t))
                    offsets[i] = total
                    total += bufs[r].n
                    views[i].n = bufs[r].n      # the result's length from here on
            out = []
            for i in range(m):
                if offsets[i] < 0:
                    out.append(kept[i])
                else:
                    out.append(PyUnicode_FromKindAndData(4, pool + offsets[i], views[i].n))
            return out
        finally:
            free(views)
            free(offsets)
            free(pool)
            buf_free(&bufs[0])
            buf_free(&bufs[1])
