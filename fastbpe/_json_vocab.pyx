# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""A tokenizer.json's model.vocab as `_tokenizer_json` reads it: the tokens' UTF-8 in a C
table (open addressing over an arena of the keys' bytes, and the keys in file order), not
a dict of 50k-150k str and int objects.  A load needs lookups (added tokens, the unk
token, a byte's forms), the byte-level bytes of every id (`token_bytes`) and the largest
id; the {token: id} dict, exactly as json.loads makes it (file order, a repeated key at its
first place with its last id), is made only when something asks for it (`to_dict`:
get_vocab, writing the file back, a char-level model).  The dict cost a fresh process
~35M instructions of Whisper's 490M (PyDict_SetItem with siphash, a str and an int a
token, freeing them at exit)."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.dict cimport PyDict_SetItem
from cpython.long cimport PyLong_FromLongLong
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcmp, memcpy

from fastbpe._byte_alphabet cimport alphabet_byte
from fastbpe._formats import bytelevel_token_bytes

cdef extern from "Python.h":
    dict _PyDict_NewPresized(Py_ssize_t minused)
    const char* PyUnicode_AsUTF8AndSize(object o, Py_ssize_t* size) except NULL
    void PyObject_GC_UnTrack(object o)
    object PyUnicode_New(Py_ssize_t size, uint32_t maxchar)
    void* PyUnicode_DATA(object o)
    void PyUnicode_WRITE(int kind, void* data, Py_ssize_t index, uint32_t value)
    int PyUnicode_KIND(object o)


# -- the table ----------------------------------------------------------------------------

cdef int table_init(Table* t, Py_ssize_t key_bytes) except -1:
    """An empty table for about key_bytes of JSON keys and ids (~20 bytes a token)."""
    cdef uint64_t cap = 16, i
    while cap < <uint64_t>(key_bytes // 8):   # about twice the tokens of a real file; grown if not
        cap *= 2
    t.mask, t.used, t.count = cap - 1, 0, 0
    t.cap = key_bytes + 16
    t.entries_cap = key_bytes // 16 + 16
    t.slots = <Slot*>malloc(cap * sizeof(Slot))
    t.arena = <uint8_t*>malloc(t.cap)
    t.entries = <Entry*>malloc(t.entries_cap * sizeof(Entry))
    if t.slots == NULL or t.arena == NULL or t.entries == NULL:
        raise MemoryError()
    for i in range(cap):
        t.slots[i].offset = -1
    return 0


cdef void table_free(Table* t) noexcept:
    free(t.slots)
    free(t.arena)
    free(t.entries)
    t.slots, t.arena, t.entries = NULL, NULL, NULL


cdef int _grow(Table* t) except -1:
    """Twice the slots, every key placed again."""
    cdef uint64_t cap = 2 * (t.mask + 1), i, j
    cdef Slot* slots = <Slot*>malloc(cap * sizeof(Slot))
    if slots == NULL:
        raise MemoryError()
    for i in range(cap):
        slots[i].offset = -1
    for i in range(t.mask + 1):
        if t.slots[i].offset >= 0:
            j = t.slots[i].hash & (cap - 1)
            while slots[j].offset >= 0:
                j = (j + 1) & (cap - 1)
            slots[j] = t.slots[i]
    free(t.slots)
    t.slots, t.mask = slots, cap - 1
    return 0


cdef Py_ssize_t _entry_at(const Table* t, int64_t offset) noexcept nogil:
    """The entry of the key at arena offset (entries are in arena order: a binary search)."""
    cdef Py_ssize_t lo = 0, hi = t.count - 1, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if t.entries[mid].offset < offset:
            lo = mid + 1
        else:
            hi = mid
    return lo


cdef int table_put(Table* t, const uint8_t* key, Py_ssize_t n, uint32_t tid) except -1:
    """Add key -> tid (a key seen before takes the later id and keeps its place, as a dict)."""
    cdef uint64_t h = _hash2(key, n, NULL, 0), i
    cdef uint8_t* grown
    cdef Entry* more
    if 2 * (t.count + 1) > <Py_ssize_t>(t.mask + 1):
        _grow(t)
    i = h & t.mask
    while t.slots[i].offset >= 0:
        if t.slots[i].hash == h and t.slots[i].length == n and memcmp(t.arena + t.slots[i].offset, key, n) == 0:
            t.slots[i].id = tid
            t.entries[_entry_at(t, t.slots[i].offset)].id = tid
            return 0
        i = (i + 1) & t.mask
    if t.used + n > t.cap:
        t.cap = 2 * t.cap + n
        grown = <uint8_t*>realloc(t.arena, t.cap)
        if grown == NULL:
            raise MemoryError()
        t.arena = grown
    if t.count == t.entries_cap:
        t.entries_cap *= 2
        more = <Entry*>realloc(t.entries, t.entries_cap * sizeof(Entry))
        if more == NULL:
            raise MemoryError()
        t.entries = more
    memcpy(t.arena + t.used, key, n)
    t.slots[i].hash, t.slots[i].offset, t.slots[i].length, t.slots[i].id = h, t.used, <uint32_t>n, tid
    t.entries[t.count].offset, t.entries[t.count].length, t.entries[t.count].id = t.used, <uint32_t>n, tid
    t.used += n
    t.count += 1
    return 0


# -- UTF-8 -> str, and the bytes of GPT-2's byte alphabet ---------------------------------------------------

cdef bint utf8_valid(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """Whether s[:n] is UTF-8 the codec decodes (no overlong form, no surrogate, <= U+10FFFF)."""
    cdef Py_ssize_t i = 0
    cdef uint8_t b, c1
    while i < n:
        b = s[i]
        if b < 0x80:
            i += 1
        elif 0xC2 <= b <= 0xDF:
            if i + 1 >= n or (s[i + 1] & 0xC0) != 0x80:
                return False
            i += 2
        elif 0xE0 <= b <= 0xEF:
            if i + 2 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80:
                return False
            c1 = s[i + 1]
            if (b == 0xE0 and c1 < 0xA0) or (b == 0xED and c1 >= 0xA0):   # overlong, a surrogate
                return False
            i += 3
        elif 0xF0 <= b <= 0xF4:
            if i + 3 >= n or (s[i + 1] & 0xC0) != 0x80 or (s[i + 2] & 0xC0) != 0x80 or (s[i + 3] & 0xC0) != 0x80:
                return False
            c1 = s[i + 1]
            if (b == 0xF0 and c1 < 0x90) or (b == 0xF4 and c1 >= 0x90):   # overlong, past U+10FFFF
                return False
            i += 4
        else:
            return False
    return True


cdef inline uint32_t bmp_char(const uint8_t* s, Py_ssize_t* i) noexcept nogil:
    """The character of valid UTF-8 at s[i[0]] of 1 to 3 bytes; i moved past it."""
    cdef uint8_t b = s[i[0]]
    if b < 0x80:
        i[0] += 1
        return b
    if b < 0xE0:
        i[0] += 2
        return ((b & 0x1F) << 6) | (s[i[0] - 1] & 0x3F)
    i[0] += 3
    return ((b & 0x0F) << 12) | ((s[i[0] - 2] & 0x3F) << 6) | (s[i[0] - 1] & 0x3F)


cdef object _utf8_str(const uint8_t* s, Py_ssize_t n):
    """The str of valid UTF-8 s[:n] (`utf8_valid`): one pass to size, one to fill (the
    codec's general path costs ~750 instructions a token of GPT-2's alphabet); four-byte
    characters go to the codec."""
    cdef Py_ssize_t i = 0, length = 0
    cdef uint32_t maxchar = 0, c
    while i < n:   # size
        if s[i] >= 0xF0:
            return PyUnicode_DecodeUTF8(<char*>s, n, NULL)
        c = bmp_char(s, &i)
        if c > maxchar:
            maxchar = c
        length += 1
    out = PyUnicode_New(length, maxchar)
    cdef int kind = PyUnicode_KIND(out)
    cdef void* data = PyUnicode_DATA(out)
    i = 0
    length = 0
    while i < n:   # fill
        PyUnicode_WRITE(kind, data, length, bmp_char(s, &i))
        length += 1
    return out


cdef Py_ssize_t _alphabet_bytes(const uint8_t* s, Py_ssize_t n, uint8_t* out) noexcept nogil:
    """The bytes valid UTF-8 s[:n] stands for in the byte-level alphabet, read strictly (every
    character must be in it), into out; their number, or -1."""
    cdef Py_ssize_t i = 0, o = 0
    cdef uint32_t c
    cdef uint8_t b
    cdef short v
    while i < n:
        b = s[i]
        if b < 0x80:
            c = b
            i += 1
        elif b < 0xE0:
            c = ((b & 0x1F) << 6) | (s[i + 1] & 0x3F)
            i += 2
        else:
            return -1   # U+0800 and above: outside the alphabet
        v = alphabet_byte(c)
        if v < 0:
            return -1
        out[o] = <uint8_t>v
        o += 1
    return o


# -- the vocabulary ------------------------------------------------------------------------

cdef class JsonVocab:
    """The {token: id} of a tokenizer.json as lookups over a C table (`_tokenizer_json`
    fills it); `to_dict()` makes the dict itself."""

    def __dealloc__(self):
        table_free(&self.t)

    cdef int64_t _lookup(self, token) except -2:
        cdef Py_ssize_t n
        cdef const char* p
        if not isinstance(token, str):
            return -1
        try:
            p = PyUnicode_AsUTF8AndSize(token, &n)
        except UnicodeEncodeError:   # a lone surrogate: no key holds one (utf8_valid)
            return -1
        return table_find(&self.t, <const uint8_t*>p, n, NULL, 0)

    def __len__(self):
        return self.t.count

    def __contains__(self, token):
        return self._lookup(token) >= 0

    def __getitem__(self, token):
        cdef int64_t i = self._lookup(token)
        if i < 0:
            raise KeyError(token)
        return i

    def get(self, token, default=None):
        cdef int64_t i = self._lookup(token)
        return default if i < 0 else i

    def items(self):
        return self.to_dict().items()

    def to_dict(self):
        """The {token: id} dict json.loads makes of the file's vocab."""
        cdef dict out = _PyDict_NewPresized(self.t.count)
        cdef Py_ssize_t k
        cdef const Entry* e
        for k in range(self.t.count):
            e = &self.t.entries[k]
            PyDict_SetItem(out, _utf8_str(self.t.arena + e.offset, e.length), PyLong_FromLongLong(e.id))
        return out

    def tokens_by_id(self):
        """[token or None by id], as `_formats.tokens_by_id` of the dict (a later key of an id
        wins): what an Encoding's tokens are read from, with no dict made."""
        cdef list out = [None] * (self.max_id + 1)
        cdef Py_ssize_t k
        cdef const Entry* e
        for k in range(self.t.count):
            e = &self.t.entries[k]
            out[e.id] = _utf8_str(self.t.arena + e.offset, e.length)
        return out

    def token_bytes(self, Py_ssize_t n_ids):
        """(bytes or None,) * n_ids, untracked: what `_formats.bytelevel_token_bytes(vocab,
        n_ids, True)` gives for the dict, from the table (a later key of an id wins when it
        has bytes, as that walk)."""
        cdef list out = [None] * n_ids
        cdef Py_ssize_t k, longest = 1, o
        cdef const Entry* e
        cdef uint8_t* buf
        for k in range(self.t.count):
            if self.t.entries[k].length > longest:
                longest = self.t.entries[k].length
        buf = <uint8_t*>malloc(longest)
        if buf == NULL:
            raise MemoryError()
        try:
            for k in range(self.t.count):
                e = &self.t.entries[k]
                if e.id >= n_ids:
                    raise ValueError(f"token id {e.id} is outside 0..{n_ids - 1}")
                o = _alphabet_bytes(self.t.arena + e.offset, e.length, buf)
                if o >= 0:
                    out[e.id] = PyBytes_FromStringAndSize(<char*>buf, o)
        finally:
            free(buf)
        t = tuple(out)
        PyObject_GC_UnTrack(t)
        return t


def strict_token_bytes(vocab, Py_ssize_t n_ids):
    """The byte-level bytes of every id of a vocabulary, read strictly: `JsonVocab.token_bytes`,
    or `_formats.bytelevel_token_bytes` of a dict."""
    if isinstance(vocab, JsonVocab):
        return (<JsonVocab>vocab).token_bytes(n_ids)
    return bytelevel_token_bytes(vocab, n_ids, True)
