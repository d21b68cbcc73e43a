# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""SentencePiece's normalizer (normalizer.cc) over UTF-8, without the GIL: a `.model` file's
precompiled charsmap, `remove_extra_whitespaces`, `add_dummy_prefix`, `escape_whitespaces`
and `treat_whitespace_as_suffix`, user-defined symbols kept as they are.

The precompiled charsmap (NormalizerSpec.precompiled_charsmap, what `nmt_nfkc`, `nfkc_cf`
and the other rule names are compiled to at training) is a little-endian uint32 n, then n
bytes of a darts-clone double-array trie over UTF-8 strings, then the replacement strings,
each ending with a NUL.  A trie unit (uint32): bits 0-7 the label, bit 8 "has a leaf", bit 9
the offset's scale (shift by 8), bits 10-31 the offset; a leaf unit's bits 0-30 are the
value (the replacement's start in the strings).  At each point of the text the longest rule
that matches (of the first 32 matches, as SentencePiece keeps) replaces its bytes; a user-
defined symbol there is copied instead (the longest), and a character no rule matches is
copied.  Then spaces: with `remove_extra_whitespaces` leading, trailing and repeated spaces
(after the replacement) go; with `escape_whitespaces` each space becomes "▁"; the dummy "▁"
goes before a non-empty text (after it with `treat_whitespace_as_suffix`).

Every trie index is checked against the array and every value against the strings, so a
broken file cannot read outside them (SentencePiece does not check)."""
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport uint8_t, uint32_t
from libc.stdlib cimport free, malloc
from libc.string cimport memchr, memcmp, memcpy, memset

from fastbpe._memory cimport xrealloc
from fastbpe._utf8 cimport Utf8Text, utf8_text_check, utf8_text_close, utf8_text_convert, utf8_text_open

cdef enum:
    MAX_TRIE_RESULTS = 32       # normalizer.h's kMaxTrieResultsSize: later matches are not seen

cdef const uint8_t* META = <const uint8_t*>b"\xe2\x96\x81"


cdef inline Py_ssize_t utf8_len(const uint8_t* p, Py_ssize_t n) noexcept nogil:
    """The length of the valid UTF-8 character at p (n bytes left), 0 if it is not one
    (string_util::IsValidDecodeUTF8: shortest form, no surrogates, at most U+10FFFF)."""
    cdef uint8_t b = p[0]
    cdef uint32_t c
    if b < 0x80:
        return 1
    if b < 0xC2:
        return 0
    if b < 0xE0:
        return 2 if n >= 2 and (p[1] & 0xC0) == 0x80 else 0
    if b < 0xF0:
        if n < 3 or (p[1] & 0xC0) != 0x80 or (p[2] & 0xC0) != 0x80:
            return 0
        c = ((b & 0x0F) << 12) | ((p[1] & 0x3F) << 6) | (p[2] & 0x3F)
        return 3 if c >= 0x800 and not 0xD800 <= c <= 0xDFFF else 0
    if b < 0xF5 and n >= 4 and (p[1] & 0xC0) == 0x80 and (p[2] & 0xC0) == 0x80 and (p[3] & 0xC0) == 0x80:
        c = ((b & 0x07) << 18) | ((p[1] & 0x3F) << 12) | ((p[2] & 0x3F) << 6) | (p[3] & 0x3F)
        return 4 if 0x10000 <= c <= 0x10FFFF else 0
    return 0


cdef class SpmNormalizer:
    """One `.model` file's normalizer: `normalize(text)` is SentencePiece's normalized text."""
    cdef bytes blob                 # the charsmap (kept alive: units and strings point into it)
    cdef const uint32_t* units      # the trie (NULL: no charsmap)
    cdef Py_ssize_t n_units
    cdef const uint8_t* strings     # the replacements, NUL-ended
    cdef Py_ssize_t n_strings
    cdef uint32_t* units_copy       # the trie, aligned (and little-endian read) when the blob is not
    cdef bytes users_blob           # user-defined symbols' UTF-8, longest first, back to back
    cdef const uint8_t* users       # its bytes
    cdef Py_ssize_t* user_ends
    cdef Py_ssize_t n_users
    cdef uint8_t user_first[256]    # 1: some user-defined symbol starts with this byte
    cdef uint8_t plain[128 * 129]   # [a * 129 + b] 1: ASCII a followed by ASCII b (b = 128: the end) is
                                    # copied as it is (not a space, no user symbol or rule starts there)
    cdef readonly bint add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, whitespace_as_suffix

    def __cinit__(self):
        self.units_copy = NULL
        self.user_ends = NULL

    def __dealloc__(self):
        free(self.units_copy)
        free(self.user_ends)

    def __init__(self, bytes charsmap, users=(), bint add_dummy_prefix=True, bint remove_extra_whitespaces=True,
                 bint escape_whitespaces=True, bint treat_whitespace_as_suffix=False):
        """charsmap: NormalizerSpec.precompiled_charsmap (b"": no rules); users: the user-
        defined symbols (strs).  Raises ValueError for a charsmap that is not one."""
        cdef Py_ssize_t n = len(charsmap), size, i
        cdef const uint8_t* p = <const uint8_t*>(<const char*>charsmap)
        self.add_dummy_prefix, self.remove_extra_whitespaces = add_dummy_prefix, remove_extra_whitespaces
        self.escape_whitespaces, self.whitespace_as_suffix = escape_whitespaces, treat_whitespace_as_suffix
        self.blob = charsmap
        self.units = NULL
        if n:
            if n <= 4:
                raise ValueError("the precompiled charsmap is broken (shorter than its header)")
            size = p[0] | (p[1] << 8) | (p[2] << 16) | (<Py_ssize_t>p[3] << 24)
            if size >= n - 4 + 1 or size % 4 or size == 0:
                raise ValueError(f"the precompiled charsmap is broken (a trie of {size} bytes in {n})")
            self.n_units = size // 4
            self.units_copy = <uint32_t*>malloc(size)
            if self.units_copy == NULL:
                raise MemoryError()
            for i in range(self.n_units):   # little-endian on every machine
                self.units_copy[i] = (p[4 + 4 * i] | (p[5 + 4 * i] << 8) | (p[6 + 4 * i] << 16)
                                      | (<uint32_t>p[7 + 4 * i] << 24))
            self.units = self.units_copy
            self.strings = p + 4 + size
            self.n_strings = n - 4 - size
        encoded = sorted({u.encode("utf-8") for u in users if u}, key=len, reverse=True)
        self.users_blob = b"".join(encoded)
        self.users = <const uint8_t*>(<const char*>self.users_blob)
        self.n_users = len(encoded)
        self.user_ends = <Py_ssize_t*>malloc((self.n_users + 1) * sizeof(Py_ssize_t))
        if self.user_ends == NULL:
            raise MemoryError()
        memset(self.user_first, 0, 256)
        size = 0
        for i, u in enumerate(encoded):
            size += len(u)
            self.user_ends[i] = size
            self.user_first[(<bytes>u)[0]] = 1
        self.plain_table()

    cdef void plain_table(self) noexcept:
        """Fill `plain`: most text is ASCII that no rule touches, copied without a trie walk."""
        cdef uint8_t pair[2]
        cdef Py_ssize_t value, a, b
        for a in range(128):
            for b in range(129):
                self.plain[a * 129 + b] = a != 32 and not self.user_first[a]
            if self.units == NULL or not self.plain[a * 129]:
                continue
            pair[0] = <uint8_t>a
            if self.rule_match(pair, 1, &value):      # a rule for the byte alone
                for b in range(129):
                    self.plain[a * 129 + b] = 0
                continue
            for b in range(128):                      # a rule, or the start of one, for the pair
                pair[1] = <uint8_t>b
                if self.rule_match(pair, 2, &value) or self.reaches(pair, 2):
                    self.plain[a * 129 + b] = 0

    cdef bint reaches(self, const uint8_t* s, Py_ssize_t n) noexcept:
        """Whether the trie has a path for s[:n] (a rule may continue past it)."""
        cdef const uint32_t* units = self.units
        cdef uint32_t unit = units[0], id = 0
        cdef Py_ssize_t i
        id ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        for i in range(n):
            id ^= s[i]
            if id >= <uint32_t>self.n_units:
                return False
            unit = units[id]
            if (unit & <uint32_t>0x800000FF) != s[i]:
                return False
            id ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        return True

    cdef inline Py_ssize_t user_match(self, const uint8_t* s, Py_ssize_t n) noexcept nogil:
        """The length of the longest user-defined symbol s starts with, 0 if none."""
        cdef const uint8_t* blob = self.users
        cdef Py_ssize_t i, start = 0, ln
        if not self.user_first[s[0]]:
            return 0
        for i in range(self.n_users):
            ln = self.user_ends[i] - start
            if ln <= n and memcmp(blob + start, s, ln) == 0:
                return ln
            start = self.user_ends[i]
        return 0

    cdef inline Py_ssize_t rule_match(self, const uint8_t* s, Py_ssize_t n, Py_ssize_t* value) noexcept nogil:
        """The length of the longest rule s starts with (of the first 32 matches), its
        replacement's start in value; 0 if none (darts-clone's commonPrefixSearch)."""
        cdef const uint32_t* units = self.units
        cdef uint32_t unit = units[0], id = 0, lab
        cdef Py_ssize_t i, best = 0, found = 0
        id ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        for i in range(n):
            id ^= s[i]
            if id >= <uint32_t>self.n_units:
                break
            unit = units[id]
            lab = unit & <uint32_t>0x800000FF
            if lab != s[i]:
                break
            id ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            if (unit >> 8) & 1:
                if id >= <uint32_t>self.n_units:
                    break
                if found < MAX_TRIE_RESULTS:
                    best = i + 1
                    value[0] = units[id] & 0x7FFFFFFF
                found += 1
        return best

    cdef inline Py_ssize_t prefix(self, const uint8_t* s, Py_ssize_t n, const uint8_t** out,
                                  Py_ssize_t* out_len) noexcept nogil:
        """NormalizePrefix: the bytes s[:n] starts with become out[:out_len]; returns how
        many input bytes that consumed."""
        cdef Py_ssize_t ln, value = 0, end
        cdef const uint8_t* nul
        ln = self.user_match(s, n) if self.n_users else 0
        if ln:
            out[0], out_len[0] = s, ln
            return ln
        if self.units != NULL:
            ln = self.rule_match(s, n, &value)
            if ln:
                if value >= self.n_strings:
                    out[0], out_len[0] = s, 0
                    return ln
                nul = <const uint8_t*>memchr(self.strings + value, 0, self.n_strings - value)
                end = (nul - self.strings) if nul != NULL else self.n_strings
                out[0], out_len[0] = self.strings + value, end - value
                return ln
        ln = utf8_len(s, n)
        if ln == 0:
            out[0], out_len[0] = <const uint8_t*>b"\xef\xbf\xbd", 3
            return 1
        out[0], out_len[0] = s, ln
        return ln

    cdef Py_ssize_t run(self, const uint8_t* s, Py_ssize_t n, uint8_t** buf, Py_ssize_t* cap,
                        bint spaces) except -1 nogil:
        """Normalizer::Normalize of s[:n] into *buf (grown as needed); the output's length.
        With `spaces`, escaped spaces stay " " (the caller's kernel puts "▁" for them)."""
        cdef Py_ssize_t o = 0, used, k, sp_len, room
        cdef const uint8_t* sp
        cdef bint prev_space, remove = self.remove_extra_whitespaces
        cdef bint escape = self.escape_whitespaces and not spaces
        cdef uint8_t* q
        if remove:
            while n:
                used = self.prefix(s, n, &sp, &sp_len)
                if not (sp_len == 1 and sp[0] == 32):
                    break
                s += used
                n -= used
        if n == 0:
            return 0
        if 3 * n + 16 > cap[0]:
            buf[0] = <uint8_t*>xrealloc(buf[0], 3 * n + 16)
            cap[0] = 3 * n + 16
        if self.add_dummy_prefix and not self.whitespace_as_suffix:
            o = self.put_space(buf, cap, o, escape)
        prev_space = remove
        while n:
            if s[0] < 0x80 and o < cap[0] and (n == 1 or s[1] < 0x80) and \
                    self.plain[s[0] * 129 + (s[1] if n > 1 else 128)]:
                buf[0][o] = s[0]
                o += 1
                s += 1
                n -= 1
                prev_space = False
                continue
            used = self.prefix(s, n, &sp, &sp_len)
            if prev_space:
                while sp_len and sp[0] == 32:
                    sp += 1
                    sp_len -= 1
            if sp_len:
                room = 3 * sp_len + 8
                if o + room > cap[0]:
                    buf[0] = <uint8_t*>xrealloc(buf[0], 2 * cap[0] + room)
                    cap[0] = 2 * cap[0] + room
                q = buf[0]
                for k in range(sp_len):
                    if escape and sp[k] == 32:
                        memcpy(q + o, META, 3)
                        o += 3
                    else:
                        q[o] = sp[k]
                        o += 1
                prev_space = sp[sp_len - 1] == 32
            s += used
            n -= used
            if not remove:
                prev_space = False
        if remove:   # trailing spaces (escaped: "▁", which a literal "▁" also is)
            while True:
                if self.escape_whitespaces and o >= 3 and memcmp(buf[0] + o - 3, META, 3) == 0:
                    o -= 3
                elif o >= 1 and buf[0][o - 1] == 32 and (spaces or not self.escape_whitespaces):
                    o -= 1
                else:
                    break
        if self.add_dummy_prefix and self.whitespace_as_suffix:
            o = self.put_space(buf, cap, o, escape)
        return o

    cdef inline Py_ssize_t put_space(self, uint8_t** buf, Py_ssize_t* cap, Py_ssize_t o,
                                     bint escape) except -1 nogil:
        if o + 3 > cap[0]:
            buf[0] = <uint8_t*>xrealloc(buf[0], 2 * cap[0] + 3)
            cap[0] = 2 * cap[0] + 3
        if escape:
            memcpy(buf[0] + o, META, 3)
            return o + 3
        buf[0][o] = 32
        return o + 1

    def normalize(self, str text, bint spaces=False):
        """SentencePiece's normalized form of text (a str; "" for a text of spaces when
        remove_extra_whitespaces).  With `spaces`, the escaped spaces (the dummy prefix
        too) stay " ": English text then stays an ASCII str, which a kernel reads in place
        and escapes itself (kind REPLACE_SPACE), instead of a UCS-2 str it converts back.
        Raises UnicodeEncodeError for lone surrogates, as sentencepiece does, and ValueError
        if the charsmap's replacements are not UTF-8."""
        cdef Utf8Text u
        cdef uint8_t* buf = NULL
        cdef Py_ssize_t cap = 0, n = -1
        utf8_text_open(text, &u)
        try:
            with nogil:
                if utf8_text_convert(&u) == 0:
                    n = self.run(u.s, u.n, &buf, &cap, spaces)
            utf8_text_check(text, &u)
            return PyUnicode_DecodeUTF8(<const char*>buf, n, NULL) if n > 0 else ""
        finally:
            utf8_text_close(&u)
            free(buf)
