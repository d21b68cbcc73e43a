# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""C parsers for vocabulary files: `.tiktoken` (`base64(token) rank` per line) and the merges
list of a tokenizer.json.

Parsing 200k lines with Python's base64 takes most of the time of loading an encoding, and
a tokenizer.json's 150k merges took 0.2 s in a Python loop; these do it in one pass, with
strict validation and the entry's number in errors.
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from libc.stdint cimport uint8_t, int64_t, uint64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memchr, memcmp, memcpy, memset
from cpython.dict cimport PyDict_Next
from cpython.object cimport PyObject
from cpython.sequence cimport PySequence_Fast, PySequence_Fast_GET_ITEM, PySequence_Fast_GET_SIZE
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE, PyTuple_New, PyTuple_SET_ITEM

from fastbpe._byte_alphabet cimport alphabet_byte
from fastbpe._hash cimport probe
from fastbpe._str_units cimport PyUnicode_KIND, PyUnicode_DATA, code_point

import array

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(object o)
    Py_ssize_t PyUnicode_FindChar(object s, Py_UCS4 ch, Py_ssize_t start, Py_ssize_t end, int direction) except -2
    Py_ssize_t PyUnicode_GET_LENGTH(object s)
    bint PyUnicode_CheckExact(object o)
    bint PyList_CheckExact(object o)
    dict _PyDict_NewPresized(Py_ssize_t minused)
    int PyDict_SetItem(object d, object key, object value) except -1
    Py_ssize_t PyList_GET_SIZE(object o)
    PyObject* PyList_GET_ITEM(object o, Py_ssize_t i)
    bint PyLong_CheckExact(object o)
    long long PyLong_AsLongLong(object o) except? -1
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow) except? -1

cdef signed char B64[256]


cdef void _init_b64() noexcept:
    cdef int i
    cdef bytes alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for i in range(256):
        B64[i] = -1
    for i in range(64):
        B64[alphabet[i]] = i


_init_b64()


cdef Py_ssize_t _b64_decode(const uint8_t* s, Py_ssize_t n, uint8_t* out) noexcept nogil:
    """Strict base64 (with '=' padding to a multiple of 4); the decoded length, or -1."""
    cdef Py_ssize_t i, o = 0, pad = 0
    cdef unsigned int acc
    cdef int v, k
    if n == 0 or n % 4 != 0:
        return -1
    if s[n - 1] == 61:
        pad = 2 if s[n - 2] == 61 else 1
    i = 0
    while i < n:
        acc = 0
        for k in range(4):
            if i + k >= n - pad:
                v = 0
            else:
                v = B64[s[i + k]]
                if v < 0:
                    return -1
            acc = (acc << 6) | <unsigned int>v
        out[o] = <uint8_t>(acc >> 16)
        out[o + 1] = <uint8_t>(acc >> 8)
        out[o + 2] = <uint8_t>acc
        o += 3
        i += 4
    return o - pad


def parse_tiktoken(const uint8_t[::1] data, str source="<bytes>"):
    """The tokens of a `.tiktoken` file as a list indexed by rank (None for unused ranks).

    ValueError, naming the line, for a malformed line, bad base64, a bad or repeated rank,
    or an empty file."""
    cdef Py_ssize_t n = data.shape[0], pos = 0, line_start, sp, end, lineno = 0
    cdef Py_ssize_t n_lines = 0, i, count = 0, dlen
    cdef int64_t rank, max_rank = -1
    cdef const uint8_t* s = &data[0] if n else NULL
    cdef uint8_t buf[1024]
    cdef list tokens = []
    cdef list ranks_seen
    cdef object token
    # first pass: the largest rank, so the result list can be sized once
    entries = []
    while pos < n:
        line_start = pos
        while pos < n and s[pos] != 10:
            pos += 1
        end = pos
        pos += 1
        lineno += 1
        if end > line_start and s[end - 1] == 13:
            end -= 1
        if end == line_start:
            continue
        sp = line_start
        while sp < end and s[sp] != 32:
            sp += 1
        if sp == end or sp == line_start or sp + 1 == end:
            raise ValueError(f"{source}:{lineno}: expected 'base64 rank', got {bytes(s[line_start:end])[:60]!r}")
        if sp - line_start > 1360:
            raise ValueError(f"{source}:{lineno}: token longer than 1 KiB")
        dlen = _b64_decode(s + line_start, sp - line_start, buf)
        if dlen <= 0:
            raise ValueError(f"{source}:{lineno}: bad base64 {bytes(s[line_start:sp])[:60]!r}")
        rank = 0
        for i in range(sp + 1, end):
            if s[i] < 48 or s[i] > 57 or rank > 0x7FFFFFFF:
                raise ValueError(f"{source}:{lineno}: bad rank {bytes(s[sp + 1:end])[:30]!r}")
            rank = rank * 10 + (s[i] - 48)
        if rank > 0x7FFFFFFF:
            raise ValueError(f"{source}:{lineno}: bad rank {bytes(s[sp + 1:end])[:30]!r}")
        entries.append((rank, PyBytes_FromStringAndSize(<char*>buf, dlen), lineno))
        if rank > max_rank:
            max_rank = rank
    if not entries:
        raise ValueError(f"{source}: no tokens")
    if max_rank > 16 * len(entries) + 65536:
        raise ValueError(f"{source}: ranks are too sparse (largest {max_rank} for {len(entries)} tokens)")
    tokens = [None] * (max_rank + 1)
    for rank, token, lineno in entries:
        if tokens[rank] is not None:
            raise ValueError(f"{source}:{lineno}: rank {rank} appears twice")
        tokens[rank] = token
    return tokens


# ---------------------------------------------------------------------------------------
# {token str: id} as a C table whose probes read slices of other str in place: the merges
# "a b" are looked up as a, b and a+b without making those three str for a dict


cdef struct VocabSlot:
    uint64_t hash
    PyObject* key            # the vocab's str (borrowed: the dict keeps it alive); NULL: free
    int64_t id


cdef struct Span:            # code points [start, end) of a str
    PyObject* s
    Py_ssize_t start
    Py_ssize_t end


cdef inline uint64_t _span_hash(const Span* spans, int n_spans) noexcept:
    cdef uint64_t h = 0xCBF29CE484222325ULL
    cdef int k, kind
    cdef const void* data
    cdef Py_ssize_t i
    for k in range(n_spans):
        kind = PyUnicode_KIND(<object>spans[k].s)
        data = PyUnicode_DATA(<object>spans[k].s)
        for i in range(spans[k].start, spans[k].end):
            h = (h ^ code_point(kind, data, i)) * 0x100000001B3ULL
    return h ^ (h >> 29)


cdef inline bint _span_equal(object key, const Span* spans, int n_spans) noexcept:
    cdef int kind = PyUnicode_KIND(key), k, skind
    cdef const void* data = PyUnicode_DATA(key)
    cdef const void* sdata
    cdef Py_ssize_t i, j = 0, total = 0
    for k in range(n_spans):
        total += spans[k].end - spans[k].start
    if total != PyUnicode_GET_LENGTH(key):
        return False
    for k in range(n_spans):
        skind = PyUnicode_KIND(<object>spans[k].s)
        sdata = PyUnicode_DATA(<object>spans[k].s)
        for i in range(spans[k].start, spans[k].end):
            if code_point(skind, sdata, i) != code_point(kind, data, j):
                return False
            j += 1
    return True


cdef class _VocabIndex:
    cdef VocabSlot* slots
    cdef uint64_t mask

    def __cinit__(self, dict vocab):
        cdef uint64_t cap = 16, i, h
        cdef Span sp
        while cap < 2 * <uint64_t>len(vocab) + 2:
            cap *= 2
        self.slots = <VocabSlot*>calloc(cap, sizeof(VocabSlot))
        if self.slots == NULL:
            raise MemoryError()
        self.mask = cap - 1
        for key, value in vocab.items():
            if not PyUnicode_CheckExact(key):
                raise TypeError("vocabulary keys must be str")
            sp.s = <PyObject*>key
            sp.start = 0
            sp.end = PyUnicode_GET_LENGTH(key)
            h = _span_hash(&sp, 1)
            i = h & self.mask
            while self.slots[i].key != NULL:
                i = (i + 1) & self.mask
            self.slots[i].hash = h
            self.slots[i].key = <PyObject*>key
            self.slots[i].id = PyLong_AsLongLong(value)

    def __dealloc__(self):
        free(self.slots)

    cdef int64_t find(self, const Span* spans, int n_spans) noexcept:
        """The id of the str the spans make up, or -1."""
        cdef uint64_t h = _span_hash(spans, n_spans)
        cdef uint64_t i = h & self.mask
        while self.slots[i].key != NULL:
            if self.slots[i].hash == h and _span_equal(<object>self.slots[i].key, spans, n_spans):
                return self.slots[i].id
            i = (i + 1) & self.mask
        return -1


cdef inline bint _str_pair(object m):
    """m is the list form of a merge, [a, b] (or (a, b) as frozen_merges keeps it), of str."""
    return (PyList_CheckExact(m) or type(m) is tuple) and len(m) == 2 \
        and PyUnicode_CheckExact(m[0]) and PyUnicode_CheckExact(m[1])


def hf_merge_rows(merges, dict vocab, Py_ssize_t n_prefix, tuple token_bytes=None):
    """A tokenizer.json's merges ("a b" strings or [a, b] lists) as an (m, 3) int64 array of
    (left, right, merged) ids, in rank order (merges: a list, or frozen_merges' tuple); a pair listed again takes the later place (as
    HF's map).  merged = vocab[a + b[n_prefix:]] (continuing_subword_prefix).  ValueError
    naming the merge when one is not two tokens or uses a token not in the vocabulary.
    With token_bytes (a byte-level model's bytes by id), a merge with a token that has no
    bytes is left out: it can never apply to bytes.  Returns an array.array('q') of the
    3m ids, row after row (BPETable.from_merges reads it; no numpy on the loading path)."""
    merges = PySequence_Fast(merges, "tokenizer.json: model.merges must be a list")
    cdef Py_ssize_t m = PySequence_Fast_GET_SIZE(merges), k, sp
    cdef int64_t* rows = <int64_t*>malloc((3 * m + 3) * sizeof(int64_t))
    if rows == NULL:
        raise MemoryError()
    cdef object entry, a, b, merged, missing
    cdef long long ia, ib, ic
    cdef _VocabIndex index = _VocabIndex(vocab)
    cdef Span spans[2]
    cdef object a_str, b_str
    cdef Py_ssize_t a0, a1, b0, b1
    try:
        for k in range(m):
            entry = <object>PySequence_Fast_GET_ITEM(merges, k)
            a_str = None
            if PyUnicode_CheckExact(entry):
                sp = PyUnicode_FindChar(entry, 32, 0, PyUnicode_GET_LENGTH(entry), 1)
                if sp >= 0 and PyUnicode_FindChar(entry, 32, sp + 1, PyUnicode_GET_LENGTH(entry), 1) < 0:
                    a_str = b_str = entry
                    a0, a1, b0, b1 = 0, sp, sp + 1, PyUnicode_GET_LENGTH(entry)
            elif _str_pair(entry):
                a_str, b_str = entry
                a0, a1, b0, b1 = 0, PyUnicode_GET_LENGTH(a_str), 0, PyUnicode_GET_LENGTH(b_str)
            if a_str is None:
                raise ValueError(f"tokenizer.json: merge {k} ({entry!r}) is not two tokens")
            spans[0].s = <PyObject*>a_str
            spans[0].start, spans[0].end = a0, a1
            ia = index.find(spans, 1)
            spans[1].s = <PyObject*>b_str
            spans[1].start, spans[1].end = b0, b1
            ib = index.find(&spans[1], 1)
            spans[1].start = min(b0 + n_prefix, b1)   # a + b[n_prefix:]
            ic = index.find(spans, 2)
            if ia < 0 or ib < 0 or ic < 0 or ia > 0xFFFFFFFFLL or ib > 0xFFFFFFFFLL:
                a = a_str[a0:a1]
                b = b_str[b0:b1]
                merged = a + b[n_prefix:]
                missing = a if ia < 0 else b if ib < 0 else merged
                raise ValueError(f"tokenizer.json: merge {k} ({a!r}, {b!r}) uses {missing!r}, "
                                 "which is not in the vocabulary")
            rows[3 * k] = ia
            rows[3 * k + 1] = ib
            rows[3 * k + 2] = ic
        return _kept_rows(rows, m, token_bytes)
    finally:
        free(rows)


def kept_merge_rows(rows, tuple token_bytes=None):
    """hf_merge_rows' rows from a merge list already looked up (an array.array('q') of
    (left, right, merged) per merge in file order, `_tokenizer_json.vocab_and_merge_rows`):
    the same clean-up, a new array."""
    cdef const int64_t[::1] view = rows
    cdef Py_ssize_t n = view.shape[0]
    if n % 3:
        raise ValueError("merge rows must be (left, right, merged) triples")
    cdef int64_t* copy = <int64_t*>malloc((n + 3) * sizeof(int64_t))
    if copy == NULL:
        raise MemoryError()
    try:
        if n:
            memcpy(copy, &view[0], n * sizeof(int64_t))
        return _kept_rows(copy, n // 3, token_bytes)
    finally:
        free(copy)


cdef object _kept_rows(int64_t* rows, Py_ssize_t m, tuple token_bytes):
    """The rows that stay, as an array.array('q'): a pair listed again keeps only its later
    place (as HF's map), and with token_bytes (byte-level) a merge with a token that has no
    bytes is left out.  rows (3m ids) is used as scratch."""
    cdef Py_ssize_t k, kept, cap, slot
    cdef uint64_t key, mask
    cdef uint64_t* keys
    cdef int64_t* where
    cdef int shift = 60
    cap = 16
    while cap < 2 * m + 2:
        cap *= 2
        shift -= 1
    mask = <uint64_t>(cap - 1)
    keys = <uint64_t*>malloc(cap * sizeof(uint64_t))
    where = <int64_t*>malloc(cap * sizeof(int64_t))
    try:
        if keys == NULL or where == NULL:
            raise MemoryError()
        memset(keys, 0xFF, cap * sizeof(uint64_t))
        for k in range(m):
            # a pair seen before: that earlier row is dropped (the later place wins)
            key = (<uint64_t>rows[3 * k] << 32) | <uint64_t>rows[3 * k + 1]
            # the product's top bits: its bits 17.. hashed the right id alone (left's low 2 bits),
            # so pairs sharing a right token clustered: 111 probes a merge on Phi-3's 61k
            slot = <Py_ssize_t>probe(keys, 1, mask, (key * 0x9E3779B97F4A7C15ULL) >> shift, key,
                                     0xFFFFFFFFFFFFFFFFULL)
            if keys[slot] == key:
                rows[3 * where[slot]] = -1
            keys[slot] = key
            where[slot] = k
        # keep the rows that stay: not an earlier place of a repeated pair, and (byte-level)
        # no token without bytes
        kept = 0
        for k in range(m):
            if rows[3 * k] < 0:
                continue
            if token_bytes is not None and not (_has_bytes(token_bytes, rows[3 * k])
                                                and _has_bytes(token_bytes, rows[3 * k + 1])
                                                and _has_bytes(token_bytes, rows[3 * k + 2])):
                continue
            if kept != k:
                rows[3 * kept] = rows[3 * k]
                rows[3 * kept + 1] = rows[3 * k + 1]
                rows[3 * kept + 2] = rows[3 * k + 2]
            kept += 1
        out = array.array("q")
        out.frombytes(PyBytes_FromStringAndSize(<char*>rows, 3 * kept * sizeof(int64_t)))
        return out
    finally:
        free(keys)
        free(where)


cdef inline bint _has_bytes(tuple token_bytes, int64_t t):
    return t < PyTuple_GET_SIZE(token_bytes) and <object>PyTuple_GET_ITEM(token_bytes, t) is not None


def bytelevel_token_bytes(dict vocab, Py_ssize_t n_ids, bint strict=False):
    """(bytes or None,) * n_ids, untracked (see _untracked): the bytes each byte-level token of vocab ({token: id}, ids
    below n_ids) stands for, exactly as formats.bytelevel.token_bytes: None for a token
    with a character above U+00FF outside the alphabet, and for ids no token has.  strict:
    None also for a character below U+0100 outside the alphabet (HF's ByteLevel never makes
    one: a raw " " beside "Ġ", as HF's trainer leaves from added tokens, is no byte 0x20)."""
    cdef list out = [None] * n_ids
    cdef Py_ssize_t n, j, i, pos = 0
    cdef Py_UCS4 c
    cdef short b
    cdef bytes buf
    cdef char* d
    cdef PyObject* key
    cdef PyObject* value
    cdef int kind
    cdef const void* data
    while PyDict_Next(vocab, &pos, &key, &value):
        token = <object>key
        i = <object>value
        if not 0 <= i < n_ids:
            raise ValueError(f"token id {i} is outside 0..{n_ids - 1}")
        if not PyUnicode_CheckExact(token):
            raise TypeError("vocabulary keys must be str")
        n = PyUnicode_GET_LENGTH(token)
        kind = PyUnicode_KIND(token)
        data = PyUnicode_DATA(token)
        buf = PyBytes_FromStringAndSize(NULL, n)
        d = <char*>buf
        for j in range(n):
            c = code_point(kind, data, j)
            # below U+0100 a character is its own byte (as str.translate leaves the ones
            # outside the alphabet and latin-1 encodes them: formats.bytelevel.token_bytes)
            b = <short>c if c < 0x100 and not strict else alphabet_byte(c)
            if b < 0:
                break
            d[j] = <char>b
        else:
            out[i] = buf
    return _untracked(tuple(out))


def ids_to_tokens(dict vocab):
    """{id: token} of vocab ({token: id}), made at its final size in one C loop (a later token
    of the same id wins, as dict(zip(ids, tokens))): the dict(zip(...)) it replaces grew
    through a dozen resizes, ~500 instructions a token with its freeing."""
    cdef dict out = _PyDict_NewPresized(len(vocab))
    cdef Py_ssize_t pos = 0
    cdef PyObject* key
    cdef PyObject* value
    while PyDict_Next(vocab, &pos, &key, &value):
        PyDict_SetItem(out, <object>value, <object>key)
    return out


def tokens_by_id(dict vocab):
    """[token or None by id] of vocab ({token: id}, ids from 0 to 2**32-1 as checked_vocab
    leaves them; a later token of the same id wins, as in ids_to_tokens): two C loops, no
    hashing (what Encodings read tokens from)."""
    cdef Py_ssize_t pos = 0, n = 0, i
    cdef PyObject* key
    cdef PyObject* value
    while PyDict_Next(vocab, &pos, &key, &value):
        i = <object>value
        if i >= n:
            n = i + 1
    cdef list out = [None] * n
    pos = 0
    while PyDict_Next(vocab, &pos, &key, &value):
        out[<Py_ssize_t><object>value] = <object>key
    return out


def single_bytes(tuple token_bytes):
    """The bytes b for which some token is exactly bytes([b]) (token_bytes: bytes or None
    by id), sorted: `{t[0] for t in token_bytes if t is not None and len(t) == 1}` in C."""
    cdef bint seen[256]
    cdef Py_ssize_t i
    cdef object t
    memset(seen, 0, sizeof(seen))
    for i in range(PyTuple_GET_SIZE(token_bytes)):
        t = <object>PyTuple_GET_ITEM(token_bytes, i)
        if t is not None and len(<bytes>t) == 1:
            seen[(<bytes>t)[0]] = True
    return bytes([b for b in range(256) if seen[b]])


def untracked(t):
    """t (a tuple or a dict, or a subclass of one without __dict__, of str, bytes, int and
    None), no longer tracked by the garbage collector (see _untracked).  A dict stays
    untracked while only such keys and values are put in it (CPython tracks it again when a
    container goes in)."""
    if not isinstance(t, (tuple, dict)) or getattr(type(t), "__dictoffset__", 0):
        raise TypeError("untracked takes a tuple or a dict, or a subclass of one with __slots__ = ()")
    return _untracked(t)


cdef inline object _untracked(object t):
    """t, no longer tracked by the garbage collector: for a tuple of str, bytes, int and None
    (and such tuples), which can never be part of a cycle.  A large vocabulary's tuples
    would otherwise be walked by the first collection after loading (ms of the caller's
    time) before the collector drops them itself."""
    PyObject_GC_UnTrack(t)
    return t


def frozen_merges(merges):
    """A tokenizer.json's merges as a tuple of "a b" str and (a, b) tuples of str (the list
    form), untracked (see _untracked); TypeError for any other item."""
    merges = PySequence_Fast(merges, "merges must be a list")
    cdef Py_ssize_t n = PySequence_Fast_GET_SIZE(merges), k
    cdef tuple out = PyTuple_New(n)
    cdef object m
    for k in range(n):
        m = <object>PySequence_Fast_GET_ITEM(merges, k)
        if not PyUnicode_CheckExact(m):
            if not _str_pair(m):
                raise TypeError(f"merge {k} ({m!r}) is not two tokens")
            m = _untracked(tuple(m))
        Py_INCREF(m)
        PyTuple_SET_ITEM(out, k, m)
    return _untracked(out)


def checked_vocab(vocab):
    """vocab ({token str: id}) itself, once every id is an int from 0 to 2**32-1 (not a bool)
    and every token a str: the loop of tokenizer.json's model.vocab check, in C (150k
    entries).  ValueError naming the first bad entry as HF's loader words it."""
    cdef Py_ssize_t pos = 0
    cdef PyObject* key
    cdef PyObject* value
    cdef int overflow = 0
    if type(vocab) is not dict:
        raise ValueError("tokenizer.json: model.vocab must be an object {token: id}")
    while PyDict_Next(vocab, &pos, &key, &value):
        if not PyUnicode_CheckExact(<object>key) or not PyLong_CheckExact(<object>value) \
                or not 0 <= PyLong_AsLongLongAndOverflow(<object>value, &overflow) <= 0xFFFFFFFFLL or overflow:
            raise ValueError(f"tokenizer.json: model.vocab[{<object>key!r}] must be an id "
                             f"(an integer from 0 to 2**32-1), got {<object>value!r}")
    return vocab


def split_word_affixes(tuple raws, bytes prefix, bytes suffix, bytes start, bytes end, bytes marks):
    """hf/word_affixes' token forms in one C loop: for each token's bytes in raws (None: no
    token), (text, kernel) lists: text = the bytes without a leading prefix and a trailing
    suffix (None when nothing is left), kernel = start + text (a token without the prefix, when
    there is a prefix) + text + end (a token with the suffix), None when text holds a byte of
    marks (no text reaches it).  Each form is made once at its size (bytes concatenation and
    slicing cost CLIP's load ~45M instructions)."""
    cdef Py_ssize_t n = PyTuple_GET_SIZE(raws), i, k, lo, hi, size
    cdef Py_ssize_t np_ = len(prefix), ns = len(suffix), n_start = len(start), n_end = len(end)
    cdef list text = [None] * n, kernel = [None] * n
    cdef const char* p
    cdef const char* c_prefix = prefix
    cdef const char* c_suffix = suffix
    cdef const char* c_start = start
    cdef const char* c_end = end
    cdef char* d
    cdef bint starts, ends, marked, with_start
    cdef bint is_mark[256]
    cdef object item, core, form
    memset(is_mark, 0, sizeof(is_mark))
    for k in range(len(marks)):
        is_mark[<uint8_t>marks[k]] = True
    for i in range(n):
        item = <object>PyTuple_GET_ITEM(raws, i)
        if item is None:
            continue
        p = PyBytes_AS_STRING(item)
        lo, hi = 0, PyBytes_GET_SIZE(item)
        if hi == 0:
            continue
        starts = not (np_ and hi >= np_ and memcmp(p, c_prefix, np_) == 0)
        if not starts:
            lo = np_
        ends = ns and hi - lo >= ns and memcmp(p + hi - ns, c_suffix, ns) == 0
        if ends:
            hi -= ns
        if hi <= lo:
            continue
        core = item if lo == 0 and hi == PyBytes_GET_SIZE(item) else PyBytes_FromStringAndSize(p + lo, hi - lo)
        text[i] = core
        marked = False
        for k in range(lo, hi):
            if is_mark[<uint8_t>p[k]]:
                marked = True
                break
        if marked:
            continue
        with_start = np_ and starts
        if not with_start and not ends:
            form = core
        else:
            size = (n_start if with_start else 0) + (hi - lo) + (n_end if ends else 0)
            form = PyBytes_FromStringAndSize(NULL, size)
            d = PyBytes_AS_STRING(form)
            if with_start:
                memcpy(d, c_start, n_start)
                d += n_start
            memcpy(d, p + lo, hi - lo)
            if ends:
                memcpy(d + (hi - lo), c_end, n_end)
        kernel[i] = form
    return text, kernel


def first_unjoined_merge(rows, list kernel):
    """The index of the first (left, right, merged) row of rows (int64 ids, flat) whose merged
    token's kernel bytes are not its parts' joined, or -1 (hf/word_affixes' check)."""
    cdef const int64_t[::1] r = rows
    cdef Py_ssize_t m = r.shape[0] // 3, k, na, nb, n = PyList_GET_SIZE(kernel)
    cdef PyObject* a
    cdef PyObject* b
    cdef PyObject* c
    cdef PyObject* none = <PyObject*>None
    for k in range(m):
        if not (0 <= r[3 * k] < n and 0 <= r[3 * k + 1] < n and 0 <= r[3 * k + 2] < n):
            return k
        a = PyList_GET_ITEM(kernel, r[3 * k])
        b = PyList_GET_ITEM(kernel, r[3 * k + 1])
        c = PyList_GET_ITEM(kernel, r[3 * k + 2])
        if a == none or b == none or c == none:
            return k
        na, nb = PyBytes_GET_SIZE(<object>a), PyBytes_GET_SIZE(<object>b)
        if PyBytes_GET_SIZE(<object>c) != na + nb or memcmp(PyBytes_AS_STRING(<object>c), PyBytes_AS_STRING(<object>a), na) != 0 \
                or memcmp(PyBytes_AS_STRING(<object>c) + na, PyBytes_AS_STRING(<object>b), nb) != 0:
            return k
    return -1
