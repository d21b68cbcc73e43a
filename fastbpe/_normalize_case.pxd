# Lowercase for _normalize.pyx's ops (inline): Rust's char::to_lowercase of every character,
# and HF's Replace of runs of one class (`\\s+`, CLIP's) followed by Lowercase in one pass.
from libc.stdint cimport uint8_t, uint16_t, uint32_t, uint64_t

from fastbpe._class_bits cimport class_has
from fastbpe._nfc cimport lower_of
from fastbpe._normalize_buf cimport Buf, View, copy_same, put, reserve, unit_t
from fastbpe._str_units cimport code_point


cdef inline Py_ssize_t lower_run(const unit_t* d, Py_ssize_t i, Py_ssize_t n, uint32_t* out) noexcept nogil:
    """d[i:n] lowercased into out[0:] one for one, up to the first character whose
    lowercase is longer than one: the index it stopped at."""
    cdef uint32_t c
    cdef const uint32_t* seq
    cdef Py_ssize_t m, j = i
    while j < n:
        c = d[j]
        if c < 0x80:
            out[j - i] = c + ((<uint32_t>(c - 65) < 26) << 5)   # A-Z: +32, branch-free
        else:
            m = lower_of(c, &seq)
            if m == 0:
                out[j - i] = c
            elif m == 1:
                out[j - i] = seq[0]
            else:
                break
        j += 1
    return j


cdef inline Py_ssize_t lower_first(const unit_t* d, Py_ssize_t n) noexcept nogil:
    """The index of the first character Lowercase changes (n: none)."""
    cdef Py_ssize_t i = 0
    cdef uint32_t c
    cdef const uint32_t* seq
    while i < n:
        c = d[i]
        if c < 0x80:
            if <uint32_t>(c - 65) < 26:
                return i
        elif lower_of(c, &seq):
            return i
        i += 1
    return n


cdef inline int op_lowercase(View v, Buf* out) except -1 nogil:
    """Rust's char::to_lowercase of every character; each output character takes the span of
    the character it came from."""
    cdef Py_ssize_t i, j, k, m
    cdef const uint32_t* seq
    if v.kind == 1:
        i = lower_first(<const uint8_t*>v.data, v.n)
    elif v.kind == 2:
        i = lower_first(<const uint16_t*>v.data, v.n)
    else:
        i = lower_first(<const uint32_t*>v.data, v.n)
    if i == v.n:
        return 0
    out.n = 0
    copy_same(out, v, 0, i)
    while i < v.n:
        reserve(out, out.n + v.n - i + 4)
        if v.kind == 1:
            j = lower_run(<const uint8_t*>v.data, i, v.n, out.ch + out.n)
        elif v.kind == 2:
            j = lower_run(<const uint16_t*>v.data, i, v.n, out.ch + out.n)
        else:
            j = lower_run(<const uint32_t*>v.data, i, v.n, out.ch + out.n)
        if out.aligned:
            for k in range(i, j):
                out.src[out.n + k - i] = k
        out.n += j - i
        if j == v.n:
            break
        # one character to several (U+0130): each takes its span
        m = lower_of(code_point(v.kind, v.data, j), &seq)
        for k in range(m):
            put(out, seq[k], j)
        i = j + 1
    return 1


cdef inline Py_ssize_t units_replace_run_lower(const unit_t* d, Py_ssize_t n, const uint64_t* ascii,
                                               const uint16_t* index, const uint8_t* blocks, Py_ssize_t run_max,
                                               uint32_t content, Buf* out) except -1 nogil:
    """replace_run_lower over one str kind: 1 when the output differs from d, else 0."""
    cdef Py_ssize_t i = 0, j, k, m, stop, start
    cdef uint32_t c, lc, diff = 0
    cdef const uint32_t* seq
    cdef bint changed = False
    reserve(out, n)
    k = out.n
    while i < n:
        start = i
        while i < n:        # ASCII outside the class: lowercased one for one, branch-free
            c = d[i]
            if c >= 128 or (ascii[c >> 6] >> (c & 63)) & 1:
                break
            lc = c + ((<uint32_t>(c - 65) < 26) << 5)     # A-Z: +32
            diff |= lc ^ c
            out.ch[k + i - start] = lc
            i += 1
        if out.aligned:
            for j in range(start, i):
                out.src[k + j - start] = j
        k += i - start
        if i == n:
            break
        c = d[i]
        if c < 128 or class_has(ascii, index, blocks, c):
            # a run of the class (at most run_max) becomes the content, which takes the span
            # of its last character; one character that is already the content stays as is
            stop = i + run_max if run_max < n - i else n
            j = i + 1
            while j < stop and class_has(ascii, index, blocks, d[j]):
                j += 1
            changed |= j > i + 1 or c != content
            out.ch[k] = content
            if out.aligned:
                out.src[k] = j - 1
            k += 1
            i = j
            continue
        m = lower_of(c, &seq)
        if m <= 1:
            out.ch[k] = seq[0] if m == 1 else c
            changed |= m == 1
            if out.aligned:
                out.src[k] = i
            k += 1
        else:               # one character to several (U+0130): each takes its span
            out.n = k
            for j in range(m):
                put(out, seq[j], i)
            reserve(out, out.n + n - i)
            k = out.n
            changed = True
        i += 1
    out.n = k
    return 1 if changed or diff else 0


cdef inline int replace_run_lower(View v, const uint64_t* ascii, const uint16_t* index, const uint8_t* blocks,
                                  Py_ssize_t run_max, uint32_t content, Buf* out) except -1 nogil:
    """HF's Replace of runs of a class (1..run_max members) by one character, then Lowercase,
    in one pass over v: `content` is that character already lowercased (a one-character
    lowercase).  Each output character takes the span the two ops in turn give it (the
    Replace's: a run's content the span of its last character; Lowercase one for one)."""
    if v.kind == 1:
        return units_replace_run_lower(<const uint8_t*>v.data, v.n, ascii, index, blocks, run_max, content, out)
    if v.kind == 2:
        return units_replace_run_lower(<const uint16_t*>v.data, v.n, ascii, index, blocks, run_max, content, out)
    return units_replace_run_lower(<const uint32_t*>v.data, v.n, ascii, index, blocks, run_max, content, out)
