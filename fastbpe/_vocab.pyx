# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Building the encode kernel's token and pair tables (declared in _vocab.pxd).

Both merge semantics of DESIGN.md §2 use the same two tables; only the pair table's content
differs: tiktoken ranks get the *complete split table* (`build_split_table`: for every token
T and every cut k where T[:k] and T[k:] are both tokens, (id(T[:k]), id(T[k:])) -> rank(T)),
merge lists get their merges (`pair_put` per merge, in _core.BPETable.from_merges)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.number cimport PyNumber_Index
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t, uint64_t, UINT32_MAX
from libc.stdlib cimport malloc, realloc, free
from fastbpe._memory cimport fb_table_alloc
from libc.string cimport memcpy

from fastbpe._hash cimport piece_hash, pow2_at_least

cdef extern from "_portable.h":   # __builtin_prefetch, or MSVC's, or nothing
    void prefetch "fb_prefetch"(const void* p) noexcept nogil

cdef enum:
    SPLIT_PREFETCH = 64      # build_split_table: tokens up to this long have their lookups' slots prefetched

import sys


cdef int token_table_load(TokenTable* tok, list token_bytes, dict special_bytes, bint unique) except -1:
    """Fill an empty (zeroed) token table.  token_bytes[i] is the bytes of BPE token i (None:
    unused id); special_bytes maps extra ids (special tokens) to their bytes, for decoding
    only.  unique: two tokens with the same bytes are an error (else the first id wins)."""
    cdef Py_ssize_t n_bpe = len(token_bytes)
    cdef Py_ssize_t n_ids = n_bpe
    cdef Py_ssize_t total = 0, i, ln, off = 0
    cdef int64_t sid
    cdef object b
    for sid, b in special_bytes.items():
        if sid < 0 or sid >= 0x7FFFFFFF:
            raise ValueError(f"special token id out of range: {sid}")
        if sid + 1 > n_ids:
            n_ids = sid + 1
        total += len(b)
    for b in token_bytes:
        if b is not None:
            total += len(<bytes>b)
    if n_ids >= 0x7FFFFFFF:
        raise ValueError("too many token ids")
    tok.n_ids = n_ids
    tok.data = <uint8_t*>malloc(total + 1)
    tok.start = <int64_t*>malloc((n_ids + 1) * sizeof(int64_t))
    tok.length = <int32_t*>malloc((n_ids + 1) * sizeof(int32_t))
    if tok.data == NULL or tok.start == NULL or tok.length == NULL:
        raise MemoryError()
    for i in range(n_ids):
        tok.start[i] = -1
        tok.length[i] = 0
    for i in range(n_bpe):
        b = token_bytes[i]
        if b is None:
            continue
        ln = PyBytes_GET_SIZE(b)
        if ln == 0:
            raise ValueError(f"token {i} is empty")
        memcpy(tok.data + off, PyBytes_AS_STRING(b), ln)
        tok.start[i] = off
        tok.length[i] = <int32_t>ln
        off += ln
    for sid, b in special_bytes.items():
        if sid < n_bpe and tok.start[sid] >= 0:
            continue  # a BPE token already decodes to these id's bytes
        ln = len(b)
        memcpy(tok.data + off, PyBytes_AS_STRING(b), ln)
        tok.start[sid] = off
        tok.length[sid] = <int32_t>ln
        off += ln
    _build_lookup(tok, n_bpe, unique)
    return 0


cdef int _build_lookup(TokenTable* tok, Py_ssize_t n_bpe, bint unique) except -1:
    """The bytes -> id slots over the BPE tokens, and the id of each single byte."""
    cdef uint64_t cap = pow2_at_least(<uint64_t>(n_bpe * 2 + 1))
    cdef uint64_t i, h, mask = cap - 1
    cdef Py_ssize_t t, ln
    cdef const uint8_t* p
    cdef int32_t other
    cdef uint8_t one_byte
    tok.slots = <TokenSlot*>fb_table_alloc(cap * sizeof(TokenSlot), 0)
    if tok.slots == NULL:
        raise MemoryError()
    for i in range(cap):
        tok.slots[i].id = -1
    tok.mask = mask
    for t in range(n_bpe):
        if tok.start[t] < 0:
            continue
        p = tok.data + tok.start[t]
        ln = tok.length[t]
        other = token_lookup(tok, p, ln)
        if other >= 0:
            if unique:
                raise ValueError(f"tokens {other} and {t} have the same bytes {bytes(p[:ln])!r}")
            continue  # keep the first id for these bytes
        h = piece_hash(p, ln)
        i = h & mask
        while tok.slots[i].id >= 0:
            i = (i + 1) & mask
        tok.slots[i].id = <int32_t>t
        tok.slots[i].tag = slot_tag(h, ln)
        tok.slots[i].head = load_head(p, ln)
    for i in range(256):
        one_byte = <uint8_t>i
        tok.byte_id[i] = token_lookup(tok, &one_byte, 1)
    return 0


cdef void token_table_free(TokenTable* tok) noexcept nogil:
    free(tok.data)
    free(tok.start)
    free(tok.length)
    free(tok.slots)
    tok.data = NULL
    tok.start = NULL
    tok.length = NULL
    tok.slots = NULL


cdef int check_bytes_present(const TokenTable* tok) except -1:
    cdef int i
    missing = [i for i in range(256) if tok.byte_id[i] < 0]
    if missing:
        raise ValueError(
            f"the vocabulary lacks {len(missing)} of the 256 single-byte tokens "
            f"(first missing byte: {missing[0]:#04x}); a byte-level BPE needs all of them")
    return 0


cdef int pair_table_init(PairTable* t, Py_ssize_t expected) except -1 nogil:
    cdef uint64_t cap = pow2_at_least(<uint64_t>(expected * 2 + 1))
    cdef uint64_t i
    t.slots = <PairSlot*>fb_table_alloc(cap * sizeof(PairSlot), 0)
    if t.slots == NULL:
        with gil:
            raise MemoryError()
    for i in range(cap):
        t.slots[i].key = PAIR_SLOT_FREE
    t.mask = cap - 1
    t.shift = top_bits_shift(cap)
    t.count = 0
    # the filter: 4-8 pairs a word (0.5-3% of absent pairs get through to the slots), 128
    # KiB for 100k pairs.  Sizes measured: 2 and 4 times larger were 3-10% slower (the
    # filter's own misses), 2 times smaller the same
    cdef uint64_t words = pow2_at_least(<uint64_t>(expected // 8 + 1))
    t.absent = <uint64_t*>fb_table_alloc(words * sizeof(uint64_t), 1)
    if t.absent == NULL:
        with gil:
            raise MemoryError()
    t.absent_shift = top_bits_shift(words)
    return 0


cdef inline int top_bits_shift(uint64_t size) noexcept nogil:
    """64 - log2(size) (a power of two): a hash shifted right by it indexes `size` entries."""
    cdef int shift = 64
    while size > 1:
        size >>= 1
        shift -= 1
    return shift


cdef void pair_table_free(PairTable* t) noexcept nogil:
    free(t.slots)
    free(t.absent)
    t.slots = NULL
    t.absent = NULL


cdef bint pair_put(PairTable* t, tok_t left, tok_t right, uint32_t rank, tok_t new_id) noexcept nogil:
    """Insert a pair; an existing pair keeps its first (lowest) rank. Returns True if new."""
    cdef uint64_t key = (<uint64_t>left << 32) | right
    cdef uint64_t h = pair_hash(key)
    cdef uint64_t i = h >> t.shift
    while True:
        if t.slots[i].key == key:
            return False
        if t.slots[i].key == PAIR_SLOT_FREE:
            t.slots[i].key = key
            t.slots[i].rank = rank
            t.slots[i].new_id = new_id
            t.absent[h >> t.absent_shift] |= pair_filter_bits(h)
            t.count += 1
            return True
        i = (i + 1) & t.mask


cdef int build_split_table(const TokenTable* tok, Py_ssize_t n_bpe, PairTable* pairs) except -1:
    """The complete split table (see the module docstring) into an empty pair table."""
    cdef Py_ssize_t t, k, ln, n_pairs = 0, cap = 0
    cdef const uint8_t* p
    cdef int32_t left, right
    cdef uint64_t* found = NULL
    cdef uint64_t* grown
    cdef uint64_t h_left[SPLIT_PREFETCH]
    cdef uint64_t h_right[SPLIT_PREFETCH]
    try:
        with nogil:
            for t in range(n_bpe):
                ln = tok.length[t]
                if tok.start[t] < 0 or ln < 2:
                    continue
                p = tok.data + tok.start[t]
                # every prefix's and suffix's slot is fetched before any is looked up: the
                # lookups then overlap instead of each waiting on memory (o200k's 200k
                # tokens make ~2M of them in 8 MiB of slots)
                if ln <= SPLIT_PREFETCH:
                    for k in range(1, ln):
                        h_left[k] = piece_hash(p, k)
                        h_right[k] = piece_hash(p + k, ln - k)
                        prefetch(&tok.slots[h_left[k] & tok.mask])
                        prefetch(&tok.slots[h_right[k] & tok.mask])
                for k in range(1, ln):
                    left = token_lookup_hashed(tok, p, k, h_left[k] if ln <= SPLIT_PREFETCH
                                               else piece_hash(p, k), load_head(p, k))
                    if left < 0:
                        continue
                    right = token_lookup_hashed(tok, p + k, ln - k, h_right[k] if ln <= SPLIT_PREFETCH
                                                else piece_hash(p + k, ln - k), load_head(p + k, ln - k))
                    if right < 0:
                        continue
                    if n_pairs + 2 > cap:
                        cap = cap * 2 if cap else 1 << 16
                        grown = <uint64_t*>realloc(found, cap * 2 * sizeof(uint64_t))
                        if grown == NULL:
                            with gil:
                                raise MemoryError()
                        found = grown
                    found[2 * n_pairs] = (<uint64_t>left << 32) | <uint32_t>right
                    found[2 * n_pairs + 1] = <uint64_t>t
                    n_pairs += 1
            pair_table_init(pairs, n_pairs)
            for k in range(n_pairs):
                pair_put(pairs, <tok_t>(found[2 * k] >> 32), <tok_t>(found[2 * k] & 0xFFFFFFFFU),
                         <uint32_t>found[2 * k + 1], <tok_t>found[2 * k + 1])
    finally:
        free(found)
    return 0


cdef uint64_t* build_byte_pairs(const TokenTable* tok, const PairTable* pairs) except NULL:
    """[256*256] (rank << 32 | merged id) of two single-byte parts, NO_PAIR where they do
    not merge: a merge's first round reads this small table instead of the pair table.
    The caller owns (frees) it."""
    cdef int a, b
    cdef uint64_t* table = <uint64_t*>malloc(65536 * sizeof(uint64_t))
    if table == NULL:
        raise MemoryError()
    for a in range(256):
        for b in range(256):
            table[a * 256 + b] = pair_word(pairs, <tok_t>tok.byte_id[a], <tok_t>tok.byte_id[b])
    return table


cdef enum:
    CHAR_TOKEN_LIMIT = 1 << 27   # build_char_tokens packs a token in 27 bits (higher: from bytes)
    EDGE_KINDS = 3   # a character's neighbour on one side: none, one from a multi-byte
                     # character (see build_char_tokens), any


cdef inline int _edge_level(const uint32_t* const* mins, const tok_t* parts, int n_parts,
                            uint32_t r_max) noexcept nogil:
    """The most general kind of neighbour (0 none, 1 multi-byte, 2 any) no part of the
    list can merge with at a rank <= r_max; mins[k][t]: the lowest rank of t with a
    neighbour of kind k."""
    cdef int level, k
    for level in range(EDGE_KINDS - 1, 0, -1):
        for k in range(n_parts):
            if mins[level][parts[k]] <= r_max:
                break
        else:
            return level
    return 0


cdef int32_t* build_char_tokens(const TokenTable* tok, const PairTable* pairs,
                                const uint64_t* byte_pairs) except NULL:
    """[CHAR2_SIZE + CHAR3_SIZE] for each 2- and 3-byte UTF-8 character (indexed by its
    payload bits, see _merge.char_part): (T << 4 | left << 2 | right), where T is the token
    its bytes merge into, and a merge may start from T instead of the bytes when the
    neighbour on the left is at most of kind `left` and the one on the right at most of
    kind `right` (0: none, 1: a part of a multi-byte character, 2: any); -1 where the bytes
    merge into more than one token.  The caller owns (frees) it.

    Why starting from T gives the same ids: the bytes merge into T by internal merges of
    ranks up to r_max.  If no merge of a neighbour with a part of the character on its edge
    (or with T) has a rank <= r_max, none of them can come first, since while the character
    is unfinished one of its internal merges is always waiting with a rank <= r_max; every
    other merge happens in the same order (DESIGN.md §3: lowest rank first, leftmost on
    ties).  A neighbour is whatever part touches the character, so on the left it always
    ends with the byte before it, on the right it starts with the byte after it: "a part of
    a multi-byte character" on the left ends with a continuation byte, on the right starts
    with a lead byte; only merges with such neighbours count for kind 1.  The edge parts:
    the first byte (and the first two when they merge first) on the left, the last byte
    (and the last two when they merge first) on the right, T on both."""
    cdef int32_t* table = <int32_t*>malloc((CHAR2_SIZE + CHAR3_SIZE) * sizeof(int32_t))
    cdef uint32_t* mins = <uint32_t*>malloc(4 * (tok.n_ids + 1) * sizeof(uint32_t))
    cdef const uint32_t* left_mins[EDGE_KINDS]    # [kind][t]: lowest rank of (neighbour, t)
    cdef const uint32_t* right_mins[EDGE_KINDS]   # [kind][t]: lowest rank of (t, neighbour)
    cdef uint32_t* any_left
    cdef uint32_t* mb_left
    cdef uint32_t* any_right
    cdef uint32_t* mb_right
    cdef Py_ssize_t i, c, nl, nr
    cdef uint64_t key, w, w12, w23
    cdef tok_t a, b, i1, i2, i3, first, t
    cdef tok_t lefts[3]
    cdef tok_t rights[3]
    cdef uint32_t r, r1, r_max
    cdef uint8_t last_of_a, first_of_b
    cdef bint left_first
    cdef const PairSlot* slot
    if table == NULL or mins == NULL:
        free(table)
        free(mins)
        raise MemoryError()
    any_left = mins
    mb_left = mins + (tok.n_ids + 1)
    any_right = mins + 2 * (tok.n_ids + 1)
    mb_right = mins + 3 * (tok.n_ids + 1)
    left_mins[0] = right_mins[0] = NULL   # no neighbour: never read
    left_mins[1] = mb_left
    left_mins[2] = any_left
    right_mins[1] = mb_right
    right_mins[2] = any_right
    try:
        with nogil:
            for i in range(CHAR2_SIZE + CHAR3_SIZE):
                table[i] = -1
            for i in range(4 * (tok.n_ids + 1)):
                mins[i] = 0xFFFFFFFFU
            for i in range(<Py_ssize_t>pairs.mask + 1):
                slot = &pairs.slots[i]
                key = slot.key
                if key == PAIR_SLOT_FREE:
                    continue
                a = <tok_t>(key >> 32)
                b = <tok_t>(key & 0xFFFFFFFFU)
                if a >= <tok_t>tok.n_ids or b >= <tok_t>tok.n_ids or tok.start[a] < 0 or tok.start[b] < 0 \
                        or tok.length[a] < 1 or tok.length[b] < 1:
                    continue
                last_of_a = tok.data[tok.start[a] + tok.length[a] - 1]
                first_of_b = tok.data[tok.start[b]]
                # b has a as its left neighbour; a has b as its right neighbour
                any_left[b] = min(any_left[b], slot.rank)
                any_right[a] = min(any_right[a], slot.rank)
                if 0x80 <= last_of_a < 0xC0:
                    mb_left[b] = min(mb_left[b], slot.rank)
                if first_of_b >= 0xC0:
                    mb_right[a] = min(mb_right[a], slot.rank)
            # 2-byte characters: lead 110xxxxx, one continuation byte
            for c in range(CHAR2_SIZE):
                i1 = <tok_t>tok.byte_id[0xC0 | (c >> 6)]
                i2 = <tok_t>tok.byte_id[0x80 | (c & 0x3F)]
                w = byte_pairs[((0xC0 | (c >> 6)) << 8) | (0x80 | (c & 0x3F))]
                if w >= NO_PAIR:
                    continue
                r_max = <uint32_t>(w >> 32)
                t = <tok_t>(w & 0xFFFFFFFFU)
                if t >= CHAR_TOKEN_LIMIT:
                    continue
                lefts[0] = i1
                lefts[1] = t
                rights[0] = i2
                rights[1] = t
                table[c] = <int32_t>((t << 4) | (_edge_level(left_mins, lefts, 2, r_max) << 2)
                                     | _edge_level(right_mins, rights, 2, r_max))
            # 3-byte characters: lead 1110xxxx, two continuation bytes
            for c in range(CHAR3_SIZE):
                i1 = <tok_t>tok.byte_id[0xE0 | (c >> 12)]
                i2 = <tok_t>tok.byte_id[0x80 | ((c >> 6) & 0x3F)]
                i3 = <tok_t>tok.byte_id[0x80 | (c & 0x3F)]
                w12 = byte_pairs[((0xE0 | (c >> 12)) << 8) | (0x80 | ((c >> 6) & 0x3F))]
                w23 = byte_pairs[((0x80 | ((c >> 6) & 0x3F)) << 8) | (0x80 | (c & 0x3F))]
                if w12 >= NO_PAIR and w23 >= NO_PAIR:
                    continue
                lefts[0] = i1
                rights[0] = i3
                nl = nr = 1
                left_first = (w12 >> 32) <= (w23 >> 32)   # the first two bytes merge first (leftmost on ties)
                w = w12 if left_first else w23
                first = <tok_t>(w & 0xFFFFFFFFU)
                r1 = <uint32_t>(w >> 32)
                # the middle part joins the edge it merged with
                if left_first:
                    w = pair_word(pairs, first, i3)
                    lefts[nl] = first
                    nl += 1
                else:
                    w = pair_word(pairs, i1, first)
                    rights[nr] = first
                    nr += 1
                if w >= NO_PAIR:
                    continue
                r = <uint32_t>(w >> 32)
                r_max = r if r > r1 else r1
                t = <tok_t>(w & 0xFFFFFFFFU)
                if t >= CHAR_TOKEN_LIMIT:
                    continue
                lefts[nl] = t
                rights[nr] = t
                table[CHAR2_SIZE + c] = <int32_t>((t << 4) | (_edge_level(left_mins, lefts, nl + 1, r_max) << 2)
                                                  | _edge_level(right_mins, rights, nr + 1, r_max))
    finally:
        free(mins)
    return table


cdef object decode_tokens(const TokenTable* tok, tokens):
    """The concatenated bytes of a sequence of token ids (a list, tuple, any sequence or a
    1-d integer numpy array). KeyError for an unknown id, OverflowError for a negative or
    huge one, TypeError for a non-integer (tiktoken's errors)."""
    cdef Py_ssize_t n, i, total = 0
    cdef const uint32_t[::1] ids32
    cdef bytes res
    cdef char* dst
    np = sys.modules.get("numpy")  # without numpy loaded, tokens cannot be an array
    if np is not None and isinstance(tokens, np.ndarray):
        if tokens.ndim != 1 or tokens.dtype.kind not in "iu":
            raise TypeError("tokens must be a 1-d integer array")
        if tokens.size and (tokens.min() < 0 or tokens.max() > UINT32_MAX):
            raise OverflowError("out of range integral type conversion attempted")
        ids32 = np.ascontiguousarray(tokens, dtype=np.uint32)
    else:
        if (isinstance(tokens, (str, bytes, set, frozenset, dict))
                or not hasattr(tokens, "__len__")):  # unordered: no defined token order
            raise TypeError(f"'{type(tokens).__name__}' object is not a sequence of token ids")
        ids32 = _ids_from_sequence(tokens)
    n = ids32.shape[0]
    for i in range(n):
        if ids32[i] >= <uint32_t>tok.n_ids or tok.start[ids32[i]] < 0:
            raise KeyError(f"Invalid token for decoding: {ids32[i]}")
        total += tok.length[ids32[i]]
    res = PyBytes_FromStringAndSize(NULL, total)
    dst = PyBytes_AS_STRING(res)
    with nogil:
        for i in range(n):
            memcpy(dst, tok.data + tok.start[ids32[i]], tok.length[ids32[i]])
            dst += tok.length[ids32[i]]
    return res


cdef list token_list(token_bytes):
    """token_bytes as a list of bytes (or None for unused ids); TypeError for anything else."""
    cdef list tokens = token_bytes if type(token_bytes) is list else list(token_bytes)
    for t in tokens:
        if t is not None and type(t) is not bytes:
            raise TypeError(f"tokens must be bytes, not {type(t).__name__}")
    return tokens


cdef object _ids_from_sequence(tokens):
    """A uint32 array from a Python sequence of ints, with tiktoken's errors."""
    if type(tokens) is not list and type(tokens) is not tuple:
        tokens = list(tokens)  # every item even when the object's __len__ is wrong
    cdef Py_ssize_t n = len(tokens), i
    arr = memoryview(bytearray(4 * n)).cast("I")
    cdef uint32_t[::1] v = arr
    cdef object t
    cdef unsigned long long x
    i = 0
    for t in tokens:
        if i >= n:
            break
        if t.__class__ is not int:
            t = PyNumber_Index(t)  # TypeError for str/float, like tiktoken
        if t < 0 or t > UINT32_MAX:
            raise OverflowError("out of range integral type conversion attempted")
        v[i] = <uint32_t>t
        i += 1
    return arr[:i]


