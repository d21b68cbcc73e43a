# cython: language_level=3
"""Unicode normalization as HF tokenizers does it, and where a str may change under NFC.

`normalize` / `lowercase` give HF's NFC/NFD/NFKC/NFKD (Unicode 9.0, the tables of its
unicode-normalization-alignments crate) and Lowercase (Unicode 17), with the input character
each output character aligns to, from fastbpe's own tables (_normalize_tables.h, made by
tools/gen_normalization_tables.py): results do not depend on this Python's unicodedata.

Text to tokenize is almost always NFC already.  `nfc_spans` finds, in one GIL-free pass, the
spans NFC may change, from a table (`nfc_stability_table`) that marks every code point that
is not a stable starter (combining class != 0, may compose with the one before, changes on
its own); a text without one is NFC as it is, and otherwise only those spans need
normalizing."""
from libc.stdint cimport uint8_t, uint16_t, uint32_t, int32_t, int64_t, uint64_t
from libc.string cimport memcmp, memcpy
from libc.stdlib cimport malloc, realloc, free

from fastbpe._memory cimport xrealloc
from fastbpe._str_units cimport PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH, code_point

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object u)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)


cdef uint8_t ZEROS_512[0x200]   # static: all zero


cdef inline Py_ssize_t stable_run(int kind, const void* data, Py_ssize_t n, const uint8_t* table,
                                   Py_ssize_t table_size, Py_ssize_t i, uint64_t low) noexcept nogil:
    """The first unit at or after i that is not a stable starter (table 0), or n: one loop a
    kind, without code_point's dispatch or a bound test where the table covers every unit
    (~30 instructions a CJK or Cyrillic character through find_spans' loop, ~4 here).  Four
    units a step, their table values or'ed, and four below `low` (a mask of the high bits of
    each unit, 0 for none: ASCII or below U+0200) by one word test: the rest of an English
    str after its first curly quote (the whole str is UCS-2) was ~4 instructions a unit."""
    cdef const uint16_t* d2
    cdef const uint32_t* d4
    cdef uint64_t w
    if kind == 2 and table_size >= 0x10000:
        d2 = <const uint16_t*>data
        while i + 4 <= n:
            memcpy(&w, d2 + i, 8)
            if (low != 0 and (w & low) == 0) or (table[d2[i]] | table[d2[i + 1]] | table[d2[i + 2]] | table[d2[i + 3]]) == 0:
                i += 4
            else:
                break
        while i < n and table[d2[i]] == 0:
            i += 1
    elif kind == 4 and table_size >= 0x110000:     # (a str's code points are below 0x110000)
        d4 = <const uint32_t*>data
        while i + 4 <= n and (table[d4[i]] | table[d4[i + 1]] | table[d4[i + 2]] | table[d4[i + 3]]) == 0:
            i += 4
        while i < n and table[d4[i]] == 0:
            i += 1
    elif kind == 1 and table_size >= 0x100:
        while i < n and table[(<const uint8_t*>data)[i]] == 0:
            i += 1
    else:
        while i < n and code_point(kind, data, i) < table_size and table[code_point(kind, data, i)] == 0:
            i += 1
    return i


cdef Py_ssize_t find_spans(int kind, const void* data, Py_ssize_t n, const uint8_t* table,
                           Py_ssize_t table_size, Py_ssize_t gap, Py_ssize_t** spans) noexcept nogil:
    """Spans [start, end) (pairs in *spans, malloc'ed; the count returned, -1 when out of
    memory) that NFC may change.  table[cp]: 0 for a stable starter (a boundary: NFC never
    looks across the place before it), UNSTABLE, or the combining class of a mark that is
    otherwise stable.  Between two boundaries, text whose marks come in non-decreasing
    combining class and with no UNSTABLE code point passes the quick check: NFC keeps it.
    Every other stretch between boundaries is a span; spans less than `gap` apart are
    joined (fewer calls to normalize)."""
    cdef Py_ssize_t i = 0, boundary = 0, count = 0, cap = 0
    cdef Py_ssize_t* out = NULL
    cdef Py_ssize_t* grown
    cdef uint32_t c
    cdef uint8_t v, prev = 0
    cdef uint64_t w
    # the word-at-a-time skips need table[c] == 0 below U+0200 (NFC, NFD has accented
    # Latin letters there), else below U+0080 (every form: ASCII is stable)
    cdef bint low_stable = table_size >= 0x200 and memcmp(table, ZEROS_512, 0x200) == 0
    cdef bint skips = low_stable or (table_size >= 0x80 and memcmp(table, ZEROS_512, 0x80) == 0)
    if kind == 1 and low_stable:
        spans[0] = NULL
        return 0
    cdef Py_ssize_t per_word = 8 // kind
    cdef uint64_t high_bits
    if low_stable:
        high_bits = 0xFE00FE00FE00FE00ULL if kind == 2 else 0xFFFFFE00FFFFFE00ULL
    else:
        high_bits = (0x8080808080808080ULL if kind == 1 else
                     0xFF80FF80FF80FF80ULL if kind == 2 else 0xFFFFFF80FFFFFF80ULL)
    while i < n:
        # runs of stable starters (below U+0200 or U+0080) a word at a time: most text is such runs
        if skips:   # a word is 8 Latin-1, 4 UCS-2 or 2 UCS-4 units; mask: the bits of U+0200 (U+0080) and up
            while i + per_word <= n:
                memcpy(&w, <const char*>data + i * kind, 8)
                if w & high_bits:
                    break
                i += per_word
                boundary = i - 1
                prev = 0
        if i >= n:
            break
        c = code_point(kind, data, i)
        v = table[c] if c < table_size else UNSTABLE
        if v == 0:
            i = stable_run(kind, data, n, table, table_size, i + 1, high_bits if skips else 0)
            boundary = i - 1
            prev = 0
            continue
        if v != UNSTABLE and v >= prev:
            prev = v
            i += 1
            continue
        # a span from the last boundary to the next one
        i += 1
        while i < n:
            c = code_point(kind, data, i)
            if c < table_size and table[c] == 0:
                break
            i += 1
        prev = 0
        if count > 0 and boundary - out[2 * count - 1] < gap:
            out[2 * count - 1] = i
            continue
        if count == cap:
            cap = 2 * cap + 8
            grown = <Py_ssize_t*>realloc(out, 2 * cap * sizeof(Py_ssize_t))
            if grown == NULL:
                free(out)
                spans[0] = NULL
                return -1
            out = grown
        out[2 * count] = boundary
        out[2 * count + 1] = i
        count += 1
    spans[0] = out
    return count


def nfc_spans(str text, const uint8_t[::1] unstable, Py_ssize_t gap=8):
    """The spans of text that NFC may change, as a list of (start, end); [] when the text is
    NFC as it is.  `unstable` is the table find_spans reads (code points past its end count
    as UNSTABLE)."""
    if unstable.shape[0] == 0:
        raise ValueError("nfc_spans needs a table of the unstable code points")
    if PyUnicode_IS_ASCII(text):
        return []
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), count, k
    cdef Py_ssize_t* spans = NULL
    with nogil:
        count = find_spans(kind, data, n, &unstable[0], unstable.shape[0], gap, &spans)
    if count < 0:
        raise MemoryError()
    try:
        return [(spans[2 * k], spans[2 * k + 1]) for k in range(count)]
    finally:
        free(spans)



# ---------------------------------------------------------------------------------------
# Normalization as HF tokenizers does it (the unicode-normalization-alignments crate on
# Unicode 9.0 tables; Lowercase on Unicode 17): the normalized text, and for each of its
# characters the input character whose span it takes.  Tables: _normalize_tables.h, made by
# tools/gen_normalization_tables.py, so results do not depend on this Python's unicodedata.

cdef extern from "_normalize_tables.h":
    const uint8_t fb_ccc_index[4352]
    const uint8_t fb_ccc_blocks[]
    const uint8_t fb_decomp_index[4352]
    const uint16_t fb_decomp_blocks[]
    const uint32_t fb_decomp_entries[][4]
    const uint32_t fb_decomp_pool[]
    int FB_N_COMPOSE
    const uint64_t fb_compose_keys[]
    const uint32_t fb_compose_values[]
    const uint8_t fb_lower_index[4352]
    const uint16_t fb_lower_blocks[]
    const uint32_t fb_lower_entries[][2]
    const uint32_t fb_lower_pool[]
    const uint8_t fb_mark_index[4352]
    const uint8_t fb_mark_blocks[]
    const char* FB_NORM_UNICODE_VERSION


NORMALIZATION_UNICODE_VERSION = FB_NORM_UNICODE_VERSION.decode()

cdef enum:
    S_BASE = 0xAC00
    L_BASE = 0x1100
    V_BASE = 0x1161
    T_BASE = 0x11A7
    L_COUNT = 19
    V_COUNT = 21
    T_COUNT = 28
    N_COUNT = 588       # V_COUNT * T_COUNT
    S_COUNT = 11172     # L_COUNT * N_COUNT

FORMS = {"NFC": 0, "NFD": 1, "NFKC": 2, "NFKD": 3}


cdef inline uint8_t ccc_of(uint32_t c) noexcept nogil:
    if c >= 0x110000:
        return 0
    return fb_ccc_blocks[(<Py_ssize_t>fb_ccc_index[c >> 8] << 8) | (c & 255)]


cdef inline int64_t compose_pair(uint32_t a, uint32_t b) noexcept nogil:
    """The primary composite of a and b, or -1."""
    cdef uint32_t s
    if L_BASE <= a < L_BASE + L_COUNT and V_BASE <= b < V_BASE + V_COUNT:
        return S_BASE + ((a - L_BASE) * V_COUNT + (b - V_BASE)) * T_COUNT
    if S_BASE <= a < S_BASE + S_COUNT and T_BASE < b < T_BASE + T_COUNT and (a - S_BASE) % T_COUNT == 0:
        return a + (b - T_BASE)
    if a >= 0x110000 or b >= 0x110000:
        return -1
    cdef uint64_t key = (<uint64_t>a << 21) | b
    cdef Py_ssize_t lo = 0, hi = FB_N_COMPOSE, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if fb_compose_keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    if lo < FB_N_COMPOSE and fb_compose_keys[lo] == key:
        return fb_compose_values[lo]
    return -1


cdef int items_push(Items* v, uint32_t ch, int32_t change, uint8_t ccc) except -1 nogil:
    if v.n == v.cap:
        v.cap = 2 * v.cap + 16
        v.items = <Item*>xrealloc(v.items, v.cap * sizeof(Item))
    v.items[v.n].ch = ch
    v.items[v.n].change = change
    v.items[v.n].ccc = ccc
    v.n += 1
    return 0


cdef void sort_marks(Item* a, Py_ssize_t n, Item* tmp) noexcept nogil:
    """Stable sort by combining class (HF sorts each run after a starter): insertion sort for
    short runs, merging for long ones (a hostile run of marks stays n log n)."""
    cdef Py_ssize_t i, j, width, lo, mid, hi, p, q, k
    cdef Item x
    if n < 32:
        for i in range(1, n):
            x = a[i]
            j = i
            while j > 0 and a[j - 1].ccc > x.ccc:
                a[j] = a[j - 1]
                j -= 1
            a[j] = x
        return
    width = 1
    while width < n:
        lo = 0
        while lo < n:
            mid = lo + width if lo + width < n else n
            hi = lo + 2 * width if lo + 2 * width < n else n
            p, q, k = lo, mid, lo
            while p < mid and q < hi:
                if a[q].ccc < a[p].ccc:
                    tmp[k] = a[q]
                    q += 1
                else:
                    tmp[k] = a[p]
                    p += 1
                k += 1
            while p < mid:
                tmp[k] = a[p]
                p += 1
                k += 1
            while q < hi:
                tmp[k] = a[q]
                q += 1
                k += 1
            lo = hi
        memcpy(a, tmp, n * sizeof(Item))
        width *= 2


cdef int sort_run(Items* out, Py_ssize_t run) except -1 nogil:
    """Put the marks out.items[run:] (after a starter) in canonical order."""
    cdef Py_ssize_t m = out.n - run
    if m <= 1:
        return 0
    cdef Item* tmp = <Item*>malloc(m * sizeof(Item))
    if tmp == NULL:
        with gil:
            raise MemoryError()
    sort_marks(&out.items[run], m, tmp)
    free(tmp)
    return 0


cdef int decompose(int kind, const void* data, Py_ssize_t n, bint compat, Items* out) except -1 nogil:
    """The crate's Decompositions: every character's full decomposition (first character
    change 0, the others 1), each run of marks after a starter stably sorted by class."""
    cdef Py_ssize_t i, k, run = 0, m
    cdef uint32_t c, s, entry, off, length
    cdef uint8_t cc
    cdef uint32_t buf[3]
    cdef const uint32_t* seq
    for i in range(n):
        c = code_point(kind, data, i)
        if c < 0x80:
            seq = &buf[0]
            buf[0] = c
            length = 1
        elif S_BASE <= c < S_BASE + S_COUNT:
            s = c - S_BASE
            buf[0] = L_BASE + s // N_COUNT
            buf[1] = V_BASE + (s % N_COUNT) // T_COUNT
            buf[2] = T_BASE + s % T_COUNT
            length = 3 if s % T_COUNT else 2
            seq = &buf[0]
        else:
            entry = fb_decomp_blocks[(<Py_ssize_t>fb_decomp_index[c >> 8] << 8) | (c & 255)] if c < 0x110000 else 0
            length = 0
            if entry:
                if compat and fb_decomp_entries[entry][3]:
                    off, length = fb_decomp_entries[entry][2], fb_decomp_entries[entry][3]
                elif fb_decomp_entries[entry][1]:
                    off, length = fb_decomp_entries[entry][0], fb_decomp_entries[entry][1]
            if length:
                seq = &fb_decomp_pool[off]
            else:
                seq = &buf[0]
                buf[0] = c
                length = 1
        for k in range(length):
            cc = ccc_of(seq[k])
            if cc == 0:
                sort_run(out, run)
                run = out.n
            items_push(out, seq[k], 0 if k == 0 else 1, cc)
    sort_run(out, run)
    return 0


cdef int recompose(Items* dec, Items* out) except -1 nogil:
    """The crate's Recompositions state machine over the decomposed items."""
    cdef Py_ssize_t i, k, blocked_start = 0
    cdef bint has = False
    cdef uint32_t comp_ch = 0, ch
    cdef int32_t comp_change = 0, change
    cdef int last_ccc = -1
    cdef uint8_t cc
    cdef int64_t r
    cdef Items blocked
    blocked.items = NULL
    blocked.n = blocked.cap = 0
    try:
        for i in range(dec.n):
            ch, change, cc = dec.items[i].ch, dec.items[i].change, dec.items[i].ccc
            if not has:
                if cc != 0:
                    items_push(out, ch, change, cc)
                    continue
                has, comp_ch, comp_change = True, ch, change
                continue
            if last_ccc < 0:
                r = compose_pair(comp_ch, ch)
                if r >= 0:
                    comp_ch, comp_change = <uint32_t>r, comp_change + change - 1
                    continue
                if cc == 0:
                    items_push(out, comp_ch, comp_change, 0)
                    comp_ch, comp_change = ch, change
                    continue
                items_push(&blocked, ch, change, cc)
                last_ccc = cc
            else:
                if last_ccc >= cc:
                    if cc == 0:   # purge: the composee, then the blocked marks
                        items_push(out, comp_ch, comp_change, 0)
                        for k in range(blocked.n):
                            items_push(out, blocked.items[k].ch, blocked.items[k].change, blocked.items[k].ccc)
                        blocked.n = 0
                        comp_ch, comp_change = ch, change
                        last_ccc = -1
                        continue
                    items_push(&blocked, ch, change, cc)
                    last_ccc = cc
                    continue
                r = compose_pair(comp_ch, ch)
                if r >= 0:
                    comp_ch, comp_change = <uint32_t>r, comp_change + change - 1
                    continue
                items_push(&blocked, ch, change, cc)
                last_ccc = cc
        if has:
            items_push(out, comp_ch, comp_change, 0)
        for k in range(blocked.n):
            items_push(out, blocked.items[k].ch, blocked.items[k].change, blocked.items[k].ccc)
    finally:
        free(blocked.items)
    return 0


cdef object finish(str text, Items* out, bint identity_possible):
    """(normalized str, sources) from the items: sources[k] is the input character whose span
    character k takes, by HF's rule (a replacing character takes the next input character and
    an inserted one the previous; -1: before the first), as int64 bytes; (text, None) when
    nothing changed."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), k, p = 0
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef bint same = identity_possible and out.n == n
    if same:
        for k in range(n):
            if out.items[k].change != 0 or out.items[k].ch != code_point(kind, data, k):
                same = False
                break
    if same:
        return text, None
    cdef uint32_t* chars = <uint32_t*>malloc((out.n + 1) * sizeof(uint32_t))
    cdef int64_t* src = <int64_t*>malloc((out.n + 1) * sizeof(int64_t))
    if chars == NULL or src == NULL:
        free(chars)
        free(src)
        raise MemoryError()
    try:
        for k in range(out.n):
            chars[k] = out.items[k].ch
            if out.items[k].change > 0:
                src[k] = p - 1
            else:
                src[k] = p if p < n else n - 1
                p += 1 - out.items[k].change
        return (PyUnicode_FromKindAndData(4, chars, out.n),
                (<char*>src)[:out.n * sizeof(int64_t)])
    finally:
        free(chars)
        free(src)


def normalize(str text, str form):
    """HF's NFC/NFD/NFKC/NFKD of text: (normalized, sources or None), see finish()."""
    if form not in FORMS:
        raise ValueError(f"unknown normalization form {form!r}")
    cdef int f = FORMS[form]
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text)
    cdef Items dec, out
    if PyUnicode_IS_ASCII(text):
        return text, None
    dec.items = out.items = NULL
    dec.n = dec.cap = out.n = out.cap = 0
    try:
        with nogil:
            decompose(kind, data, n, f >= 2, &dec)
            if f == 0 or f == 2:
                recompose(&dec, &out)
        return finish(text, &out if (f == 0 or f == 2) else &dec, True)
    finally:
        free(dec.items)
        free(out.items)


cdef Py_ssize_t lower_of(uint32_t c, const uint32_t** seq) noexcept nogil:
    """Rust's char::to_lowercase of c: its length (0: c is its own lowercase), *seq its
    characters."""
    cdef uint32_t entry
    if c >= 0x110000:
        return 0
    entry = fb_lower_blocks[(<Py_ssize_t>fb_lower_index[c >> 8] << 8) | (c & 255)]
    if entry == 0:
        return 0
    seq[0] = &fb_lower_pool[fb_lower_entries[entry][0]]
    return fb_lower_entries[entry][1]


cdef bint is_combining_mark(uint32_t c) noexcept nogil:
    """General_Category M (Mn, Mc, Me) on Unicode 9.0: the crate's is_combining_mark, which
    HF's StripAccents removes."""
    if c >= 0x110000:
        return False
    return fb_mark_blocks[(<Py_ssize_t>fb_mark_index[c >> 8] << 8) | (c & 255)] != 0


def combining_mark_table():
    """bytes, one per code point: 1 for a combining mark (is_combining_mark)."""
    cdef bytearray table = bytearray(0x110000)
    cdef uint8_t* t = table
    cdef uint32_t cp
    with nogil:
        for cp in range(0x110000):
            t[cp] = is_combining_mark(cp)
    return bytes(table)


def lowercase(str text):
    """Rust's char::to_lowercase on every character (as HF's Lowercase): (lowered, sources
    or None); every character of a character's lowercase takes its span."""
    cdef int kind = PyUnicode_KIND(text)
    cdef const void* data = PyUnicode_DATA(text)
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), i, k, m
    cdef uint32_t c
    cdef const uint32_t* seq
    cdef Items out
    cdef bint changed = False
    out.items = NULL
    out.n = out.cap = 0
    try:
        with nogil:
            for i in range(n):
                c = code_point(kind, data, i)
                m = lower_of(c, &seq)
                if m == 0:
                    items_push(&out, c, 0, 0)
                    continue
                changed = True
                for k in range(m):
                    items_push(&out, seq[k], 0 if k == 0 else 1, 0)
        if not changed:
            return text, None
        return finish(text, &out, False)
    finally:
        free(out.items)


def nfc_stability_table(bint every_code_point=False):
    """stability_table("NFC"): the table nfc_spans reads."""
    return stability_table("NFC", every_code_point)


cdef void _zero_blocks(bint* zero_decomp, bint* zero_ccc) noexcept nogil:
    """Which blocks of the two-level tables hold only zeros (by block number, as the index
    arrays give it)."""
    cdef Py_ssize_t k, n_decomp = 0, n_ccc = 0
    for k in range(4352):
        n_decomp = max(n_decomp, fb_decomp_index[k] + 1)
        n_ccc = max(n_ccc, fb_ccc_index[k] + 1)
    for k in range(256):
        zero_decomp[k] = zero_ccc[k] = True
    for k in range(n_decomp * 256):
        if fb_decomp_blocks[k] != 0:
            zero_decomp[k >> 8] = False
    for k in range(n_ccc * 256):
        if fb_ccc_blocks[k] != 0:
            zero_ccc[k >> 8] = False


def stability_table(str form, bint every_code_point=False):
    """The table find_spans / nfc_spans read for a form, from the Unicode 9.0 tables: 0 for a
    stable starter (class 0, the form keeps it, composes with nothing before it), 255
    (UNSTABLE) for a code point the form may change or compose backwards, else the class of
    a mark the form keeps.

    For NFD/NFKD a code point changes when it has a decomposition of the form (or is a Hangul
    syllable).  For NFC/NFKC, a code point without one decomposes and recomposes to itself,
    so only the others go through decompose and recompose (~1 ms instead of ~19 ms, at the
    first encode of a file that normalizes with NFC); every_code_point=True sends all of
    them through (the tests compare the two); the second halves of composition pairs compose
    backwards."""
    if form not in FORMS:
        raise ValueError(f"unknown normalization form {form!r}")
    cdef int f = FORMS[form]
    cdef bint compat = f >= 2, composes = f == 0 or f == 2, decomposes
    cdef bytearray table = bytearray(0x110000)
    cdef uint8_t* t = table
    cdef uint32_t cp, k, entry
    cdef Items dec, out
    cdef uint32_t one[1]
    cdef uint32_t hi, lo
    cdef bint zero_decomp[256]
    cdef bint zero_ccc[256]
    dec.items = out.items = NULL
    dec.cap = out.cap = 0
    try:
        with nogil:
            _zero_blocks(zero_decomp, zero_ccc)
            for hi in range(0x1100):
                if not every_code_point and zero_decomp[fb_decomp_index[hi]] and not (
                        (S_BASE >> 8) <= hi <= ((S_BASE + S_COUNT - 1) >> 8)):
                    # nothing in these 256 code points decomposes: each entry is its class (0
                    # in most blocks); code point by code point below that cost ~40M
                    # instructions at a file's first encode (every_code_point: the long way)
                    if not zero_ccc[fb_ccc_index[hi]]:
                        for lo in range(256):
                            t[(hi << 8) | lo] = ccc_of((hi << 8) | lo)
                    continue
                for lo in range(256):
                    cp = (hi << 8) | lo
                    if 0xD800 <= cp < 0xE000:
                        t[cp] = 0
                        continue
                    if composes and not every_code_point and S_BASE <= cp < S_BASE + S_COUNT:
                        # a syllable decomposes and recomposes to itself, a starter (what
                        # composes backwards onto it, a trailing jamo, is marked below):
                        # its 11,172 round trips cost an NFC file's load ~9M instructions
                        t[cp] = 0
                        continue
                    entry = fb_decomp_blocks[(<Py_ssize_t>fb_decomp_index[cp >> 8] << 8) | (cp & 255)]
                    decomposes = (S_BASE <= cp < S_BASE + S_COUNT or
                                  (entry != 0 and (fb_decomp_entries[entry][1] != 0 or
                                                   (compat and fb_decomp_entries[entry][3] != 0))))
                    if not decomposes and not (every_code_point and composes):
                        t[cp] = ccc_of(cp)
                        continue
                    if not composes:
                        t[cp] = UNSTABLE
                        continue
                    one[0] = cp
                    dec.n = out.n = 0
                    decompose(4, one, 1, compat, &dec)
                    recompose(&dec, &out)
                    if out.n != 1 or out.items[0].ch != cp:
                        t[cp] = UNSTABLE
                    else:
                        t[cp] = ccc_of(cp)
            if composes:
                for k in range(FB_N_COMPOSE):   # second halves of pairs compose backwards
                    t[fb_compose_keys[k] & 0x1FFFFF] = UNSTABLE
                for cp in range(V_BASE, V_BASE + V_COUNT):
                    t[cp] = UNSTABLE
                for cp in range(T_BASE + 1, T_BASE + T_COUNT):
                    t[cp] = UNSTABLE
    finally:
        free(dec.items)
        free(out.items)
    return bytes(table)
