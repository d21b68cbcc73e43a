# cython: boundscheck=False, wraparound=False, cdivision=True
"""UBPE kernels over int arrays: multi-pair training, the top-n segmentation DAG, classic encoding.

Every rule here mirrors the reference `ubpe-native` 0.3.0 exactly (ties, summation order), because
fitted models and encodings must be identical to it; `fastbpe/ubpe/` documents the rules.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, calloc, realloc, free
from libc.string cimport memset, memcpy, memcmp
from libc.math cimport log, fabs, isfinite

from fastbpe._hash cimport mix64, pow2_at_least
cimport cython

import numpy as np

cdef uint64_t EMPTY = 0xFFFFFFFFFFFFFFFFULL
cdef uint64_t LOW32 = 0xFFFFFFFFULL


# ---------------------------------------------------------------- pair statistics (training)

cdef inline uint64_t pair_hash(uint64_t key) noexcept nogil:
    """A pair's slot hash: one multiply, the product's upper half (a pair is left << 32 | right,
    and both halves reach those bits); mix64's two rounds cost a third of counting."""
    return (key * 0x9E3779B97F4A7C15ULL) >> 32


cdef struct PairStat:
    uint64_t key         # left << 32 | right; EMPTY when free
    int64_t count        # occurrences in the corpus
    int64_t docs         # documents containing the pair
    int64_t listed       # 1 while the slot is in `used` (vanished pairs leave it, see top_candidates)


cdef struct PairStats:
    PairStat* slots
    uint64_t mask
    int64_t* used        # indices of listed slots (to scan without a full sweep)
    Py_ssize_t n_used
    Py_ssize_t n_occupied    # slots with a key, listed or not (the load factor)


cdef int stats_init(PairStats* t, uint64_t cap) except -1 nogil:
    t.slots = <PairStat*>malloc(cap * sizeof(PairStat))
    t.used = <int64_t*>malloc(cap * sizeof(int64_t))
    if t.slots == NULL or t.used == NULL:
        with gil:
            raise MemoryError()
    memset(t.slots, 0xFF, cap * sizeof(PairStat))
    t.mask = cap - 1
    t.n_used = 0
    t.n_occupied = 0
    return 0


cdef void stats_free(PairStats* t) noexcept nogil:
    free(t.slots)
    free(t.used)
    t.slots = NULL
    t.used = NULL


cdef inline PairStat* stats_find(const PairStats* t, uint64_t key) noexcept nogil:
    cdef uint64_t i = pair_hash(key) & t.mask
    while True:
        if t.slots[i].key == key:
            return &t.slots[i]
        if t.slots[i].key == EMPTY:
            return NULL
        i = (i + 1) & t.mask


cdef int stats_grow(PairStats* t) except -1 nogil:
    """Twice the slots, holding the listed entries (unlisted ones have count 0 and go)."""
    cdef PairStats bigger
    cdef Py_ssize_t k
    cdef PairStat* s
    cdef uint64_t i
    stats_init(&bigger, (t.mask + 1) * 2)
    for k in range(t.n_used):
        s = &t.slots[t.used[k]]
        i = pair_hash(s.key) & bigger.mask
        while bigger.slots[i].key != EMPTY:
            i = (i + 1) & bigger.mask
        bigger.slots[i] = s[0]
        bigger.used[bigger.n_used] = <int64_t>i
        bigger.n_used += 1
    bigger.n_occupied = bigger.n_used
    stats_free(t)
    t[0] = bigger
    return 0


cdef PairStat* stats_slot(PairStats* t, uint64_t key) except NULL nogil:
    """The entry of `key`, inserted with zero counts if absent, listed in `used` (valid until
    the next insert)."""
    cdef uint64_t i
    cdef PairStat* s
    if <uint64_t>(t.n_occupied + 1) * 2 > t.mask + 1:
        stats_grow(t)
    i = pair_hash(key) & t.mask
    while True:
        s = &t.slots[i]
        if s.key == key:
            if not s.listed:
                s.listed = 1
                t.used[t.n_used] = <int64_t>i
                t.n_used += 1
            return s
        if s.key == EMPTY:
            break
        i = (i + 1) & t.mask
    s.key = key
    s.count = 0
    s.docs = 0
    s.listed = 1
    t.used[t.n_used] = <int64_t>i
    t.n_used += 1
    t.n_occupied += 1
    return s


# One document's pairs: a PairStats reused for every document, its mask narrowed to the
# document's size (the slots past it stay empty) so it stays in cache.

cdef inline void local_size_for(PairStats* t, uint64_t allocated, int64_t n_symbols) noexcept nogil:
    t.mask = min(pow2_at_least(<uint64_t>(4 * n_symbols + 4)), allocated) - 1


cdef int local_flush(PairStats* t, PairStats* stats, uint8_t* left_mark) except -1 nogil:
    """Apply one document's changes to the corpus statistics, then empty the local table (and
    its marks in `left_mark`, if given).  Per pair `count` occurrences vanished and `docs`
    appeared: one that appears touches a new token, so the document did not hold it before;
    one that vanishes leaves the document's count when none is left (`listed`, see
    settle_document)."""
    cdef Py_ssize_t k
    cdef PairStat* s
    cdef PairStat* g
    for k in range(t.n_used):
        s = &t.slots[t.used[k]]
        if s.count != s.docs:
            g = stats_slot(stats, s.key)
            g.count += s.docs - s.count
            if s.count == 0:
                g.docs += 1
            elif s.listed == 0 and s.docs == 0:
                g.docs -= 1
        if left_mark != NULL:
            left_mark[s.key >> 32] = 0
        s.key = EMPTY
    t.n_used = 0
    return 0


# A step's changes, one document at a time.  Training keeps each document as one run of
# tokens with a separator (SEP, an id no token has) after each part, so a document is scanned
# and rewritten in one flat loop and no pair spans two parts.  While the step's pairs are
# replaced, a small table (reused, sized to the document) notes per pair the occurrences that
# vanish (`count`) and appear (`docs`); `listed` then counts the vanishing pairs' occurrences
# left in the document, which says whether the document still holds them.  The work is the
# changed spots plus one filtered pass over each hit document, instead of recounting them.

cdef inline PairStat* local_entry(PairStats* t, uint64_t key) noexcept nogil:
    """The entry of `key` in a per-document table, inserted with zeros (it never fills)."""
    cdef uint64_t h = pair_hash(key) & t.mask
    cdef PairStat* s
    while True:
        s = &t.slots[h]
        if s.key == key:
            return s
        if s.key == EMPTY:
            s.key = key
            s.count = 0
            s.docs = 0
            s.listed = 0
            t.used[t.n_used] = <int64_t>h
            t.n_used += 1
            return s
        h = (h + 1) & t.mask


cdef inline uint64_t pair_key(int64_t left, int64_t right) noexcept nogil:
    return (<uint64_t><uint32_t>left << 32) | <uint64_t><uint32_t>right


cdef inline void count_doc(PairStats* t, const int32_t* x, Py_ssize_t n, int32_t sep) noexcept nogil:
    """Add the pairs of a document (parts separated by `sep`) to a per-document table's `docs`."""
    cdef Py_ssize_t i
    for i in range(n - 1):
        if x[i] != sep and x[i + 1] != sep:
            local_entry(t, pair_key(x[i], x[i + 1])).docs += 1


cdef Py_ssize_t rewrite_doc(int32_t* x, Py_ssize_t n, Py_ssize_t start, const int64_t* first_of,
                            const int64_t* second_of, int64_t new_base, int32_t sep,
                            PairStats* local, bint* has_pair) noexcept nogil:
    """Replace the step's pairs in x[0:n] left to right (the pair starting at `a` becomes
    new_base + its row; `sep` is never half of one); returns the new length and sets
    `has_pair` if a pair is left (or may be: x[0:start], before the first occurrence, is taken
    as it is).  Parts left with one token are dropped with their separator.  Old pairs touching a replaced occurrence go to `count`, new
    pairs touching a new token to `docs` -- exactly the pairs that differ, since every other
    adjacency is kept as it was."""
    cdef Py_ssize_t a = start, w = start
    cdef int64_t t, m
    cdef bint prev_replaced = False     # x[a - 1] was the right half of a replaced pair
    cdef bint last_new = False          # the output's last token is new
    cdef bint pair_left = start > 0, last_was_new
    while a < n:
        t = x[a]
        m = first_of[t]
        if m >= 0 and a + 1 < n and x[a + 1] == second_of[m]:
            # x[a - 1] still holds its old value: the output has not caught up past it
            if a > 0 and not prev_replaced and x[a - 1] != sep:
                local_entry(local, pair_key(x[a - 1], t)).count += 1
            local_entry(local, pair_key(t, x[a + 1])).count += 1
            if a + 2 < n and x[a + 2] != sep:   # a replacement at a + 2 leaves this pair to us
                local_entry(local, pair_key(x[a + 1], x[a + 2])).count += 1
            x[w] = <int32_t>(new_base + m)
            if w > 0 and x[w - 1] != sep:
                local_entry(local, pair_key(x[w - 1], x[w])).docs += 1
                pair_left = True
            last_new = True
            prev_replaced = True
            a += 2
            w += 1
        else:
            a += 1
            prev_replaced = False
            last_was_new = last_new
            last_new = False
            if t == sep:
                if w > 0 and x[w - 1] != sep and (w == 1 or x[w - 2] == sep):
                    w -= 1                # a part of one token never pairs again: drop it
                if w > 0 and x[w - 1] != sep:
                    x[w] = sep
                    w += 1
                continue
            x[w] = <int32_t>t
            if w > 0 and x[w - 1] != sep:
                pair_left = True
                if last_was_new:
                    local_entry(local, pair_key(x[w - 1], t)).docs += 1
            w += 1
    has_pair[0] = pair_left
    return w


cdef int settle_document(PairStats* local, PairStats* stats, const int32_t* x, Py_ssize_t n,
                         uint8_t* left_mark) except -1 nogil:
    """Apply one document's noted changes (x[0:n], already rewritten) to the corpus statistics
    (local_flush).  Whether a vanishing pair is still in the document takes one pass over it,
    counting its occurrences into `listed` (a mark per left token skips most spots; the
    separator is never marked)."""
    cdef Py_ssize_t j
    cdef PairStat* s
    cdef bint any_vanishing = False
    for j in range(local.n_used):
        s = &local.slots[local.used[j]]
        if s.count > 0:
            left_mark[s.key >> 32] = 1
            any_vanishing = True
    if any_vanishing:
        for j in range(n - 1):
            if left_mark[x[j]]:
                s = stats_find(local, pair_key(x[j], x[j + 1]))
                if s != NULL:
                    s.listed += 1
    return local_flush(local, stats, left_mark)


cdef inline bint ranks_before(const PairStat* a, const PairStat* b) noexcept nogil:
    """The reference's candidate order: more occurrences, then fewer documents, then the larger pair."""
    if a.count != b.count:
        return a.count > b.count
    if a.docs != b.docs:
        return a.docs < b.docs
    return a.key > b.key


cdef Py_ssize_t top_candidates(PairStats* t, PairStat* top, Py_ssize_t k) noexcept nogil:
    """The k best pairs, best first (insertion into a short sorted array).  Pairs the merges
    made disappear leave the scan list (stats_slot lists them again if they come back)."""
    cdef Py_ssize_t n = 0, i, j, kept = 0
    cdef PairStat* s
    for i in range(t.n_used):
        s = &t.slots[t.used[i]]
        if s.count <= 0:
            s.listed = 0
            continue
        t.used[kept] = t.used[i]
        kept += 1
        if n == k and not ranks_before(s, &top[k - 1]):
            continue
        j = n if n < k else k - 1
        while j > 0 and ranks_before(s, &top[j - 1]):
            top[j] = top[j - 1]
            j -= 1
        top[j] = s[0]
        if n < k:
            n += 1
    t.n_used = kept
    return n


cdef inline int64_t pair_count(const PairStats* t, int64_t left, int64_t right) noexcept nogil:
    cdef const PairStat* s = stats_find(t, (<uint64_t>left << 32) | <uint64_t>right)
    return s.count if s != NULL else 0


cdef int verify_stats(PairStats* stats, const int32_t* x, const int64_t* doc_start,
                      const int64_t* doc_len, Py_ssize_t n_docs, int32_t sep,
                      uint64_t local_cap) except -1:
    """Recount every document from scratch and compare with the incremental statistics."""
    cdef PairStats fresh, local
    cdef Py_ssize_t d, i, n_fresh = 0, n_kept = 0
    cdef PairStat* s
    cdef const PairStat* f
    fresh.slots = NULL
    fresh.used = NULL
    local.slots = NULL
    local.used = NULL
    try:
        stats_init(&fresh, 1 << 10)
        stats_init(&local, local_cap)
        for d in range(n_docs):
            local_size_for(&local, local_cap, doc_len[d])
            count_doc(&local, &x[doc_start[d]], doc_len[d], sep)
            local_flush(&local, &fresh, NULL)
        for i in range(fresh.n_used):
            f = &fresh.slots[fresh.used[i]]
            if f.count > 0:
                n_fresh += 1
                s = stats_find(stats, f.key)
                if s == NULL or s.count != f.count or s.docs != f.docs:
                    raise RuntimeError(
                        f"pair ({f.key >> 32}, {f.key & LOW32}): counted {f.count} in {f.docs} "
                        f"documents, kept {s.count if s != NULL else 0} in {s.docs if s != NULL else 0}")
        for i in range(stats.n_used):
            s = &stats.slots[stats.used[i]]
            if s.count != 0:
                n_kept += 1
                if s.count < 0 or s.docs <= 0:
                    raise RuntimeError(f"pair ({s.key >> 32}, {s.key & LOW32}) kept as {s.count} in {s.docs}")
        if n_kept != n_fresh:
            raise RuntimeError(f"{n_kept} pairs kept, {n_fresh} counted")
    finally:
        stats_free(&fresh)
        stats_free(&local)
    return 0


def fit_pairs(const int32_t[::1] seq, const int64_t[::1] part_start, const int64_t[::1] part_doc,
              int64_t first_id, int64_t n_tokens, int64_t n_candidates, object on_step=None,
              bint verify=False):
    """Run the multi-pair training loop over the parts seq[part_start[i]:part_start[i + 1]]
    (part i in document part_doc[i]; the parts of a document consecutive).

    Pair statistics are kept up to date incrementally: a step looks only at the documents where
    one of its pairs occurs and changes the counts of the pairs around the replaced spots (see
    rewrite_doc, settle_document); documents with no pair left leave the scan.  `verify`
    (tests) re-counts everything after each step and raises RuntimeError if the statistics
    differ.  Returns an int64 array of rows (left, right, new id, documents containing the
    pair), one per new token in creation order.  `on_step(n_new_tokens)` is called between
    steps (progress)."""
    cdef Py_ssize_t n_parts = part_doc.shape[0]
    # each new id merges at least one occurrence away, so ids stay below first_id + len(seq)
    cdef int64_t id_cap = min(max(first_id, n_tokens), first_id + seq.shape[0]) + n_candidates + 2
    cdef int32_t sep = <int32_t>(id_cap - 1)           # no token has it
    cdef int32_t* x = <int32_t*>malloc((seq.shape[0] + n_parts + 1) * sizeof(int32_t))
    cdef int64_t* doc_start = <int64_t*>malloc((n_parts + 1) * sizeof(int64_t))
    cdef int64_t* doc_len = <int64_t*>malloc((n_parts + 1) * sizeof(int64_t))
    cdef int64_t* live = <int64_t*>malloc((n_parts + 1) * sizeof(int64_t))   # documents with a pair
    cdef PairStat* top = <PairStat*>malloc(max(n_candidates, 1) * sizeof(PairStat))
    cdef int64_t* accepted = <int64_t*>malloc(max(n_candidates, 1) * sizeof(int64_t))
    cdef int64_t* first_of = <int64_t*>malloc(id_cap * sizeof(int64_t))   # left token -> accepted row
    cdef int64_t* second_of = <int64_t*>malloc(max(n_candidates, 1) * sizeof(int64_t))
    cdef uint8_t* left_mark = <uint8_t*>calloc(id_cap, 1)      # see settle_document
    cdef PairStats stats
    cdef PairStats local
    cdef uint64_t local_cap
    cdef list rows = []
    cdef int64_t max_token = first_id - 1, biggest_doc = 0, pos = 0
    cdef Py_ssize_t n_docs = 0, n_live = 0, k, kept, p, i, s0, e, n_top, n_acc, a, b, d
    cdef int64_t l1, r1, l2, r2, n2, m
    cdef bint good, hit, has_pair
    stats.slots = NULL
    stats.used = NULL
    local.slots = NULL
    local.used = NULL
    try:
        if (x == NULL or doc_start == NULL or doc_len == NULL or live == NULL or top == NULL
                or accepted == NULL or first_of == NULL or second_of == NULL or left_mark == NULL):
            raise MemoryError()
        if part_start.shape[0] != n_parts + 1:
            raise ValueError("part_start needs one more entry than part_doc")
        if n_candidates < 1:
            raise ValueError("n_candidates must be at least 1")
        for i in range(seq.shape[0]):
            if not 0 <= seq[i] < first_id:
                raise ValueError(f"symbol id {seq[i]} is outside 0..{first_id - 1}")
        for p in range(n_parts):
            if not 0 <= part_start[p] <= part_start[p + 1] <= seq.shape[0]:
                raise ValueError("part_start must be non-decreasing offsets into seq")
            if p and part_doc[p] < part_doc[p - 1]:
                raise ValueError("the parts of a document must be consecutive (part_doc sorted)")
        for i in range(id_cap):
            first_of[i] = -1
        for p in range(n_parts):    # the training layout: parts of 2+ symbols, each then `sep`
            if p == 0 or part_doc[p] != part_doc[p - 1]:
                doc_start[n_docs] = pos
                n_docs += 1
            if part_start[p + 1] - part_start[p] >= 2:
                for i in range(part_start[p], part_start[p + 1]):
                    x[pos] = seq[i]
                    pos += 1
                x[pos] = sep
                pos += 1
            doc_len[n_docs - 1] = pos - doc_start[n_docs - 1]
            biggest_doc = max(biggest_doc, doc_len[n_docs - 1])
        with nogil:
            stats_init(&stats, 1 << 16)
            local_cap = pow2_at_least(<uint64_t>(4 * biggest_doc + 4))
            stats_init(&local, local_cap)
            for d in range(n_docs):             # the first count, one document at a time
                local_size_for(&local, local_cap, doc_len[d])
                count_doc(&local, &x[doc_start[d]], doc_len[d], sep)
                if local.n_used:
                    live[n_live] = d
                    n_live += 1
                local_flush(&local, &stats, NULL)
        while max_token < n_tokens:
            with nogil:
                n_top = top_candidates(&stats, top, n_candidates)
                # the first candidate always; later ones only with fresh tokens and no better border pair
                n_acc = 0
                if n_top > 0:
                    accepted[0] = 0
                    n_acc = 1
                for a in range(1, n_top):
                    l2 = <int64_t>(top[a].key >> 32)
                    r2 = <int64_t>(top[a].key & LOW32)
                    n2 = top[a].count
                    good = True
                    for b in range(n_acc):
                        l1 = <int64_t>(top[accepted[b]].key >> 32)
                        r1 = <int64_t>(top[accepted[b]].key & LOW32)
                        if l1 == l2 or l1 == r2 or r1 == l2 or r1 == r2:
                            good = False
                            break
                    if not good:
                        continue
                    for b in range(n_acc):
                        l1 = <int64_t>(top[accepted[b]].key >> 32)
                        r1 = <int64_t>(top[accepted[b]].key & LOW32)
                        good = pair_count(&stats, r2, l1) < n2 and pair_count(&stats, r1, l2) < n2
                        if not good:
                            break
                    if good:
                        accepted[n_acc] = a
                        n_acc += 1
                for b in range(n_acc):
                    first_of[top[accepted[b]].key >> 32] = b
                    second_of[b] = <int64_t>(top[accepted[b]].key & LOW32)
                # each document where an accepted pair occurs: rewrite it noting the pairs that
                # vanish and appear, then settle its counts
                kept = 0
                for k in range(n_live):
                    d = live[k]
                    s0 = doc_start[d]
                    e = s0 + doc_len[d] - 1
                    hit = False
                    for i in range(s0, e):
                        m = first_of[x[i]]
                        if m >= 0 and x[i + 1] == second_of[m]:
                            hit = True
                            break
                    if hit:
                        local_size_for(&local, local_cap, doc_len[d])
                        doc_len[d] = rewrite_doc(&x[s0], doc_len[d], i - s0, first_of, second_of,
                                                 max_token + 1, sep, &local, &has_pair)
                        settle_document(&local, &stats, &x[s0], doc_len[d], left_mark)
                        if not has_pair:
                            continue
                    live[kept] = d
                    kept += 1
                n_live = kept
                for b in range(n_acc):
                    first_of[top[accepted[b]].key >> 32] = -1
            if n_top == 0:
                break
            for b in range(n_acc):
                max_token += 1
                rows.append((<int64_t>(top[accepted[b]].key >> 32),
                             <int64_t>(top[accepted[b]].key & LOW32),
                             max_token, top[accepted[b]].docs))
            if verify:
                verify_stats(&stats, x, doc_start, doc_len, n_docs, sep, local_cap)
            if on_step is not None:
                on_step(n_acc)
    finally:
        stats_free(&stats)
        stats_free(&local)
        free(x)
        free(doc_start)
        free(doc_len)
        free(live)
        free(top)
        free(accepted)
        free(first_of)
        free(second_of)
        free(left_mark)
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


# ---------------------------------------------------------------- Python's sum() of floats

cdef struct FSum:            # CPython >= 3.12 sums floats with Neumaier's compensation
    double f
    double c


cdef inline void fsum_add(FSum* s, double x) noexcept nogil:
    cdef double t = s.f + x
    if fabs(s.f) >= fabs(x):
        s.c += (s.f - t) + x
    else:
        s.c += (x - t) + s.f
    s.f = t


cdef inline double fsum_value(const FSum* s) noexcept nogil:
    if s.c != 0.0 and isfinite(s.c):
        return s.f + s.c
    return s.f


cdef inline double tf_idf_term(int64_t freq, double weight) noexcept nogil:
    return (1.0 + log(<double>freq)) * weight


# ---------------------------------------------------------------- prefix tree of token sequences

cdef struct Edge:            # (node << 32 | symbol) -> child node
    uint64_t key
    int32_t child


cdef struct Cand:            # one segmentation of a suffix, sharing its tail with others (a cons list)
    int32_t token
    int32_t tail             # index of the rest in the pool; -1 at the end of the word
    int32_t length           # number of tokens
    double weight            # the reference's tf-idf value of the whole sequence
    double f                 # the compensated sum behind `weight` (see FSum)
    double c


cdef struct DagWork:         # scratch for one call; owned by the call
    Cand* pool
    Py_ssize_t pool_len, pool_cap
    int32_t* heads           # [(L + 1) * top_n] candidate indices per position, heap order
    Py_ssize_t pos_cap
    int32_t* n_heads         # [L + 1]
    int32_t* scratch         # tokens of one sequence
    Py_ssize_t scratch_cap   # of n_heads, scratch and order
    int64_t* freq            # [n_ids] token frequencies while summing (all zero between uses)
    int32_t* order           # distinct tokens in counter order


cdef int dag_reserve(DagWork* w, Py_ssize_t n_pos, Py_ssize_t top_n) except -1 nogil:
    """Room for a word of n_pos - 1 symbols and `top_n` candidates per position (the scratch
    outlives calls, whose words and top_n differ, so each array has its own capacity)."""
    cdef Py_ssize_t need = n_pos * top_n
    if need > w.pos_cap:
        free(w.heads)
        w.pos_cap = 0
        w.heads = <int32_t*>malloc(need * sizeof(int32_t))
        if w.heads == NULL:
            with gil:
                raise MemoryError()
        w.pos_cap = need
    if n_pos + 1 > w.scratch_cap:
        free(w.n_heads)
        free(w.scratch)
        free(w.order)
        w.scratch_cap = 0
        w.n_heads = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        w.scratch = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        w.order = <int32_t*>malloc((n_pos + 1) * sizeof(int32_t))
        if w.n_heads == NULL or w.scratch == NULL or w.order == NULL:
            with gil:
                raise MemoryError()
        w.scratch_cap = n_pos + 1
    return 0


cdef int pool_push(DagWork* w, int32_t token, int32_t tail, int32_t length, double weight,
                   const FSum* state) except -1 nogil:
    cdef Cand* grown
    if w.pool_len == w.pool_cap:
        w.pool_cap = w.pool_cap * 2 if w.pool_cap else 1024
        grown = <Cand*>realloc(w.pool, w.pool_cap * sizeof(Cand))
        if grown == NULL:
            with gil:
                raise MemoryError()
        w.pool = grown
    w.pool[w.pool_len].token = token
    w.pool[w.pool_len].tail = tail
    w.pool[w.pool_len].length = length
    w.pool[w.pool_len].weight = weight
    w.pool[w.pool_len].f = state.f
    w.pool[w.pool_len].c = state.c
    w.pool_len += 1
    return <int>(w.pool_len - 1)


cdef void dag_free(DagWork* w) noexcept nogil:
    free(w.pool)
    free(w.heads)
    free(w.n_heads)
    free(w.scratch)
    free(w.freq)
    free(w.order)


cdef inline bint cand_less(double wa, int32_t la, double wb, int32_t lb) noexcept nogil:
    """EncodingCandidate.__lt__: lower weight; on equal weight the longer sequence is smaller."""
    if wa == wb:
        return la > lb
    return wa < wb


cdef inline Py_ssize_t sift_up(int32_t* heap, const Cand* pool, Py_ssize_t pos, double wt,
                               int32_t length) noexcept nogil:
    """heapq's _siftdown for a new item at `pos`: parents greater than it move down; returns
    the slot where the item belongs."""
    cdef Py_ssize_t h
    while pos > 0:
        h = (pos - 1) >> 1
        if not cand_less(wt, length, pool[heap[h]].weight, pool[heap[h]].length):
            break
        heap[pos] = heap[h]
        pos = h
    return pos


# Encodings of words already seen (natural text repeats its words): per (word, top_n) the sorted
# candidates with their tokens, in arenas owned by the UBPELookup; emptied when it grows past
# CACHE_MAX_* so memory stays bounded.  Only touched with the GIL held.

cdef struct CacheEntry:
    uint64_t hash            # 0: free slot
    int64_t word_off         # symbols in `words`
    int64_t cand_off         # candidates in `cands`, best first
    int32_t word_len
    int32_t top_n
    int32_t n_cand


cdef struct CachedCand:
    double weight
    int64_t tok_off          # tokens in `toks`
    int32_t length


cdef struct WordCache:
    CacheEntry* entries
    uint64_t mask
    Py_ssize_t n_entries
    int32_t* words
    Py_ssize_t words_len, words_cap
    int32_t* toks
    Py_ssize_t toks_len, toks_cap
    CachedCand* cands
    Py_ssize_t cands_len, cands_cap


cdef enum:
    CACHE_SLOTS = 1 << 16           # emptied at half full
    CACHE_MAX_SYMBOLS = 1 << 22     # of the words kept


cdef inline uint64_t word_hash(const int32_t* word, Py_ssize_t n, Py_ssize_t top_n) noexcept nogil:
    cdef uint64_t h = <uint64_t>top_n * 0x9E3779B97F4A7C15ULL + <uint64_t>n
    cdef Py_ssize_t i
    for i in range(n):
        h = (h ^ <uint32_t>word[i]) * 0x100000001B3ULL
    h = mix64(h)
    return h if h != 0 else 1


cdef inline CacheEntry* cache_find(WordCache* cc, uint64_t h, const int32_t* word, Py_ssize_t n,
                                   Py_ssize_t top_n, uint64_t* slot) noexcept:
    """The entry of (word, top_n), or NULL with *slot = the free slot where it would go."""
    cdef uint64_t i = h & cc.mask
    cdef CacheEntry* e
    while cc.entries[i].hash != 0:
        e = &cc.entries[i]
        if (e.hash == h and e.word_len == n and e.top_n == top_n and
                (n == 0 or memcmp(&cc.words[e.word_off], word, n * sizeof(int32_t)) == 0)):
            return e
        i = (i + 1) & cc.mask
    slot[0] = i
    return NULL


cdef int grow_array(void** data, Py_ssize_t* cap, Py_ssize_t need, size_t item) except -1:
    cdef Py_ssize_t new_cap = cap[0] if cap[0] else 1024
    cdef void* grown
    if need <= cap[0]:
        return 0
    while new_cap < need:
        new_cap *= 2
    grown = realloc(data[0], new_cap * item)
    if grown == NULL:
        raise MemoryError()
    data[0] = grown
    cap[0] = new_cap
    return 0


cdef struct Step:               # where one symbol leads in the prefix tree
    int32_t node             # -1: nowhere
    int32_t token            # the token ending there, -1 if none


@cython.final
cdef class UBPELookup:
    """Token sequences (over alphabet ids) in a prefix tree, with each id's idf weight.

    `encode_best` / `encode_top` walk the DAG of all segmentations of a word from its end,
    keeping the best `top_n` per position (TopElements's heap, exactly as the reference)."""
    cdef Edge* edges
    cdef uint64_t mask
    cdef int32_t* value      # [n_nodes] token id ending at the node, -1 if none
    cdef int32_t n_nodes
    cdef double* weights     # [n_ids]
    cdef int64_t n_ids
    cdef DagWork spare       # the scratch of a finished call, for the next one
    cdef bint has_spare
    cdef WordCache cache
    # the same tree laid out for walking: each node's children side by side (few cache lines),
    # and the root's as a direct array by symbol
    cdef int32_t* first_child    # [n_nodes + 1]
    cdef int32_t* child_sym
    cdef Step* child             # [n_nodes - 1] node and token, by first_child
    cdef Step* root_child        # [root_size]
    cdef int32_t root_size

    def __cinit__(self, list sequences, list ids, double[::1] weights):
        cdef Py_ssize_t total = 1, k, i, n
        cdef uint64_t cap
        cdef int32_t node, child
        cdef object seq
        for seq in sequences:
            total += len(seq)
        cap = pow2_at_least(<uint64_t>(total * 2 + 2))
        self.mask = cap - 1
        self.edges = <Edge*>malloc(cap * sizeof(Edge))
        self.value = <int32_t*>malloc((total + 1) * sizeof(int32_t))
        self.n_ids = weights.shape[0]
        self.weights = <double*>malloc(max(self.n_ids, 1) * sizeof(double))
        if self.edges == NULL or self.value == NULL or self.weights == NULL:
            raise MemoryError()
        memset(self.edges, 0xFF, cap * sizeof(Edge))
        for i in range(self.n_ids):
            self.weights[i] = weights[i]
        self.value[0] = -1
        self.n_nodes = 1
        for k in range(len(sequences)):
            seq = sequences[k]
            n = len(seq)
            if n == 0:
                raise ValueError("a token must stand for at least one symbol")
            node = 0
            for i in range(n):
                child = self._child(node, <int32_t>seq[i])
                if child < 0:
                    child = self._add_child(node, <int32_t>seq[i])
                node = child
            if not 0 <= ids[k] < self.n_ids:
                raise ValueError(f"token id {ids[k]} has no weight slot")
            if self.value[node] < 0:      # the first sequence inserted keeps its id
                self.value[node] = <int32_t>ids[k]
        self._lay_out_children()
        self.cache.entries = <CacheEntry*>calloc(CACHE_SLOTS, sizeof(CacheEntry))
        if self.cache.entries == NULL:
            raise MemoryError()
        self.cache.mask = CACHE_SLOTS - 1

    cdef int _lay_out_children(self) except -1:
        cdef uint64_t i
        cdef int32_t parent, sym, k, child
        cdef int32_t* fill
        self.first_child = <int32_t*>calloc(self.n_nodes + 1, sizeof(int32_t))
        self.child_sym = <int32_t*>malloc(self.n_nodes * sizeof(int32_t))
        self.child = <Step*>malloc(self.n_nodes * sizeof(Step))
        if self.first_child == NULL or self.child_sym == NULL or self.child == NULL:
            raise MemoryError()
        self.root_size = 0
        for i in range(self.mask + 1):
            if self.edges[i].key != EMPTY:
                parent = <int32_t>(self.edges[i].key >> 32)
                sym = <int32_t>(self.edges[i].key & LOW32)
                self.first_child[parent + 1] += 1
                if parent == 0 and sym >= self.root_size:
                    self.root_size = sym + 1
        for k in range(self.n_nodes):
            self.first_child[k + 1] += self.first_child[k]
        fill = <int32_t*>malloc((self.n_nodes + 1) * sizeof(int32_t))
        self.root_child = <Step*>malloc(max(self.root_size, 1) * sizeof(Step))
        if fill == NULL or self.root_child == NULL:
            free(fill)
            raise MemoryError()
        for k in range(self.n_nodes):
            fill[k] = self.first_child[k]
        for k in range(self.root_size):
            self.root_child[k].node = -1
            self.root_child[k].token = -1
        for i in range(self.mask + 1):
            if self.edges[i].key != EMPTY:
                parent = <int32_t>(self.edges[i].key >> 32)
                sym = <int32_t>(self.edges[i].key & LOW32)
                child = self.edges[i].child
                self.child_sym[fill[parent]] = sym
                self.child[fill[parent]].node = child
                self.child[fill[parent]].token = self.value[child]
                fill[parent] += 1
                if parent == 0 and sym >= 0:
                    self.root_child[sym].node = child
                    self.root_child[sym].token = self.value[child]
        free(fill)
        return 0

    cdef inline Step _next(self, int32_t node, int32_t sym) noexcept nogil:
        """Where `sym` leads from `node` (the walking layout)."""
        cdef int32_t k
        cdef Step nowhere
        if node == 0 and 0 <= sym < self.root_size:
            return self.root_child[sym]
        for k in range(self.first_child[node], self.first_child[node + 1]):
            if self.child_sym[k] == sym:
                return self.child[k]
        nowhere.node = -1
        nowhere.token = -1
        return nowhere

    def __dealloc__(self):
        free(self.edges)
        free(self.value)
        free(self.weights)
        free(self.first_child)
        free(self.child_sym)
        free(self.child)
        free(self.root_child)
        free(self.cache.entries)
        free(self.cache.words)
        free(self.cache.toks)
        free(self.cache.cands)
        if self.has_spare:
            dag_free(&self.spare)

    cdef inline int32_t _child(self, int32_t node, int32_t sym) noexcept nogil:
        cdef uint64_t key = (<uint64_t>node << 32) | <uint32_t>sym
        cdef uint64_t i = pair_hash(key) & self.mask
        while True:
            if self.edges[i].key == key:
                return self.edges[i].child
            if self.edges[i].key == EMPTY:
                return -1
            i = (i + 1) & self.mask

    cdef int32_t _add_child(self, int32_t node, int32_t sym) noexcept:
        cdef uint64_t key = (<uint64_t>node << 32) | <uint32_t>sym
        cdef uint64_t i = pair_hash(key) & self.mask
        while self.edges[i].key != EMPTY:
            i = (i + 1) & self.mask
        self.edges[i].key = key
        self.edges[i].child = self.n_nodes
        self.value[self.n_nodes] = -1
        self.n_nodes += 1
        return self.n_nodes - 1

    cdef inline double _weight(self, int64_t token) noexcept nogil:
        return self.weights[token] if 0 <= token < self.n_ids else 0.0

    cdef double _seq_weight(self, DagWork* w, int32_t token, int32_t tail, FSum* state) noexcept nogil:
        """tf-idf of `token` + the sequence at `tail`, summed in Counter order (distinct tokens by
        first appearance from the right end, as the reference builds its Counter).  `state` gets
        the running sum before its final correction, so a new token extends it in O(1): its term
        is the last one added, and its count is 1 (term = idf)."""
        cdef Py_ssize_t n = 0, i, n_order = 0
        cdef int32_t c = tail
        cdef int32_t t
        cdef bint seen = False
        while c >= 0 and w.pool[c].token >= 0:
            seen = seen or w.pool[c].token == token
            c = w.pool[c].tail
        if not seen:
            state.f = w.pool[tail].f if tail >= 0 else 0.0
            state.c = w.pool[tail].c if tail >= 0 else 0.0
            fsum_add(state, self._weight(token))
            return fsum_value(state)
        w.scratch[n] = token
        n += 1
        c = tail
        while c >= 0 and w.pool[c].token >= 0:
            w.scratch[n] = w.pool[c].token
            n += 1
            c = w.pool[c].tail
        i = n - 1
        while i >= 0:
            t = w.scratch[i]
            if w.freq[t] == 0:
                w.order[n_order] = t
                n_order += 1
            w.freq[t] += 1
            i -= 1
        state.f = 0.0
        state.c = 0.0
        for i in range(n_order):
            t = w.order[i]
            fsum_add(state, tf_idf_term(w.freq[t], self._weight(t)))
            w.freq[t] = 0
        return fsum_value(state)

    cdef int _word_dag(self, const int32_t* word, Py_ssize_t n, Py_ssize_t top_n, DagWork* w) except -1 nogil:
        """Fill w.heads for positions n..0; position 0 holds the word's best candidates (heap order)."""
        cdef Py_ssize_t p, q, k, pos, child_pos, right
        cdef FSum state
        cdef Step step
        cdef int32_t node, tok, cand, size, length
        cdef int32_t* heap
        cdef double wt
        cdef Cand* pool
        dag_reserve(w, n + 1, top_n)
        w.pool_len = 0
        state.f = 0.0
        state.c = 0.0
        pool_push(w, -1, -1, 0, 0.0, &state)
        w.heads[n * top_n] = 0
        w.n_heads[n] = 1
        p = n - 1
        while p >= 0:
            heap = &w.heads[p * top_n]
            size = 0
            node = 0
            q = p
            while q < n:                        # tokens starting at p, shortest first
                step = self._next(node, word[q])
                node = step.node
                if node < 0:
                    break
                q += 1
                tok = step.token
                if tok < 0:
                    continue
                for k in range(w.n_heads[q]):
                    cand = w.heads[q * top_n + k]
                    length = w.pool[cand].length + 1
                    wt = self._seq_weight(w, tok, cand, &state)
                    if size < top_n:             # heapq.heappush: sift the new item up
                        size += 1
                        pool_push(w, tok, cand, length, wt, &state)
                        heap[sift_up(heap, w.pool, size - 1, wt, length)] = <int32_t>(w.pool_len - 1)
                    else:
                        pool = w.pool
                        if not cand_less(pool[heap[0]].weight, pool[heap[0]].length, wt, length):
                            continue             # not greater than the smallest kept
                        pool_push(w, tok, cand, length, wt, &state)   # heapq.heapreplace: sift down from the root
                        pool = w.pool
                        pos = 0
                        child_pos = 1
                        while child_pos < size:
                            right = child_pos + 1
                            if right < size and not cand_less(pool[heap[child_pos]].weight, pool[heap[child_pos]].length,
                                                              pool[heap[right]].weight, pool[heap[right]].length):
                                child_pos = right
                            heap[pos] = heap[child_pos]
                            pos = child_pos
                            child_pos = 2 * pos + 1
                        heap[sift_up(heap, pool, pos, wt, length)] = <int32_t>(w.pool_len - 1)
            if size == 0:
                with gil:
                    raise ValueError(f"symbol id {word[p]} is not in the model's alphabet")
            w.n_heads[p] = size
            p -= 1
        return 0

    cdef DagWork _new_work(self) except *:
        """Scratch for one call: the spare one if free (taken with the GIL held, so two threads
        never share it), else new.  Its `freq` is all zeros between uses."""
        cdef DagWork w
        if self.has_spare:
            self.has_spare = False
            return self.spare
        memset(&w, 0, sizeof(DagWork))
        w.freq = <int64_t*>calloc(max(self.n_ids, 1), sizeof(int64_t))
        if w.freq == NULL:
            raise MemoryError()
        return w

    cdef void _done_with(self, DagWork* w) noexcept:
        if self.has_spare:
            dag_free(w)
        else:
            self.spare = w[0]
            self.has_spare = True

    cdef list _cand_ids(self, DagWork* w, int32_t c):
        cdef list out = []
        while c >= 0 and w.pool[c].token >= 0:
            out.append(w.pool[c].token)
            c = w.pool[c].tail
        return out

    cdef const CacheEntry* _word_cands(self, DagWork* w, const int32_t* word, Py_ssize_t n,
                                       Py_ssize_t top_n) except NULL:
        """The word's best `top_n` candidates, best first with heap order kept among equal keys
        (the DAG on a miss, then kept).  The pointer lives until the next call."""
        cdef WordCache* cc = &self.cache
        cdef uint64_t h = word_hash(word, n, top_n)
        cdef uint64_t i
        cdef CacheEntry* e = cache_find(cc, h, word, n, top_n, &i)
        cdef Py_ssize_t k, j, nc
        cdef int32_t c, x
        cdef int32_t* order
        if e != NULL:
            return e
        if n > 256:                    # long words: the DAG without the GIL
            with nogil:
                self._word_dag(word, n, top_n, w)
        else:
            self._word_dag(word, n, top_n, w)
        nc = w.n_heads[0]
        if (<Py_ssize_t>(cc.n_entries + 1) * 2 > <Py_ssize_t>(cc.mask + 1)
                or cc.words_len + n > CACHE_MAX_SYMBOLS):
            memset(cc.entries, 0, (cc.mask + 1) * sizeof(CacheEntry))     # full: start again
            cc.n_entries = cc.words_len = cc.toks_len = cc.cands_len = 0
        e = cache_find(cc, h, word, n, top_n, &i)    # again: another thread may have added it
        if e != NULL:
            return e
        grow_array(<void**>&cc.words, &cc.words_cap, cc.words_len + n, sizeof(int32_t))
        grow_array(<void**>&cc.cands, &cc.cands_cap, cc.cands_len + nc, sizeof(CachedCand))
        k = 0
        for j in range(nc):
            k += w.pool[w.heads[j]].length
        grow_array(<void**>&cc.toks, &cc.toks_cap, cc.toks_len + k, sizeof(int32_t))
        # the candidates best first (insertion sort keeps heap order among equal keys)
        order = <int32_t*>malloc(max(nc, 1) * sizeof(int32_t))
        if order == NULL:
            raise MemoryError()
        for k in range(nc):
            c = w.heads[k]
            j = k
            while j > 0 and cand_less(w.pool[order[j - 1]].weight, w.pool[order[j - 1]].length,
                                      w.pool[c].weight, w.pool[c].length):
                order[j] = order[j - 1]
                j -= 1
            order[j] = c
        e = &cc.entries[i]
        e.hash = h
        e.word_off = cc.words_len
        e.word_len = <int32_t>n
        e.top_n = <int32_t>top_n
        e.cand_off = cc.cands_len
        e.n_cand = <int32_t>nc
        if n:
            memcpy(&cc.words[cc.words_len], word, n * sizeof(int32_t))
        cc.words_len += n
        for k in range(nc):
            c = order[k]
            cc.cands[cc.cands_len + k].weight = w.pool[c].weight
            cc.cands[cc.cands_len + k].length = w.pool[c].length
            cc.cands[cc.cands_len + k].tok_off = cc.toks_len
            x = c
            while x >= 0 and w.pool[x].token >= 0:
                cc.toks[cc.toks_len] = w.pool[x].token
                cc.toks_len += 1
                x = w.pool[x].tail
        cc.cands_len += nc
        cc.n_entries += 1
        free(order)
        return e

    def encode_best(self, int32_t[::1] seq, int64_t[::1] offsets):
        """(ids, weight) of the best encoding of parts seq[offsets[i]:offsets[i+1]] concatenated.

        One-symbol parts pass through with no weight (the reference's shortcut); a document that
        is a single part is weighted as its word.  Words come from the cache (_word_cands)."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, n_out = 0, i
        cdef int32_t* out = <int32_t*>malloc(max(seq.shape[0], 1) * sizeof(int32_t))
        cdef double total = 0.0
        cdef const CacheEntry* e
        cdef const CachedCand* cand
        try:
            if out == NULL:
                raise MemoryError()
            for p in range(n_parts):
                if not 0 <= offsets[p] <= offsets[p + 1] <= seq.shape[0]:
                    raise ValueError("offsets must be non-decreasing offsets into seq")
            for p in range(n_parts):
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1 and n_parts > 1:
                    out[n_out] = seq[s]
                    n_out += 1
                    continue
                e = self._word_cands(&w, &seq[s] if n > 0 else NULL, n, 1)
                cand = &self.cache.cands[e.cand_off]
                total += cand.weight
                memcpy(&out[n_out], &self.cache.toks[cand.tok_off], cand.length * sizeof(int32_t))
                n_out += cand.length
            ids = [out[i] for i in range(n_out)]
        finally:
            self._done_with(&w)
            free(out)
        return ids, total

    def encode_top(self, int32_t[::1] seq, Py_ssize_t top_n):
        """The word's best `top_n` encodings as [(ids, weight)], best first (stable on ties,
        like the reference's sorted(reverse=True) over its heap)."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n = seq.shape[0], k
        cdef list found = []
        cdef int32_t c
        try:
            with nogil:
                self._word_dag(&seq[0] if n > 0 else NULL, n, top_n, &w)
            for k in range(w.n_heads[0]):
                c = w.heads[k]
                found.append((w.pool[c].weight, -w.pool[c].length, k, self._cand_ids(&w, c)))
        finally:
            self._done_with(&w)
        found.sort(key=lambda item: (-item[0], -item[1], item[2]))
        return [(item[3], item[0]) for item in found]


    def encode_top_doc(self, int32_t[::1] seq, int64_t[::1] offsets, Py_ssize_t top_n):
        """The best `top_n` encodings of a document of several parts, as the reference combines
        them: from the last part back, each part's sorted candidates are merged with the sorted
        tails (two-list merge; on equal keys the next tail goes first).  One-symbol parts are
        prepended as they are.  Tails share their ends (a cons pool), so nothing is copied twice."""
        cdef DagWork w = self._new_work()
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, k, j, nc, nt, n_new, ci, ti
        cdef Py_ssize_t pool_len = 0, pool_cap = 1024
        cdef int32_t* node_tok = <int32_t*>malloc(pool_cap * sizeof(int32_t))   # tail chains
        cdef int32_t* node_next = <int32_t*>malloc(pool_cap * sizeof(int32_t))
        cdef int32_t* tail_head = <int32_t*>malloc(2 * top_n * sizeof(int32_t))  # current, next
        cdef double* tail_w = <double*>malloc(2 * top_n * sizeof(double))
        cdef int64_t* tail_len = <int64_t*>malloc(2 * top_n * sizeof(int64_t))
        cdef int32_t node
        cdef const CacheEntry* e
        cdef const CachedCand* cand
        cdef double wa, wb
        cdef int64_t la, lb
        cdef list found = []
        cdef list ids
        try:
            if (node_tok == NULL or node_next == NULL or tail_head == NULL or tail_w == NULL
                    or tail_len == NULL):
                raise MemoryError()
            for p in range(n_parts):
                if not 0 <= offsets[p] <= offsets[p + 1] <= seq.shape[0]:
                    raise ValueError("offsets must be non-decreasing offsets into seq")
            nt = 1
            tail_head[0] = -1
            tail_w[0] = 0.0
            tail_len[0] = 0
            p = n_parts - 1
            while p >= 0:
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1:
                    for k in range(nt):
                        node = self._cons(&node_tok, &node_next, &pool_len, &pool_cap, seq[s], tail_head[k])
                        tail_head[k] = node
                        tail_len[k] += 1
                    p -= 1
                    continue
                e = self._word_cands(&w, &seq[s] if n > 0 else NULL, n, top_n)
                cand = &self.cache.cands[e.cand_off]      # best first
                nc = e.n_cand
                n_new = 0
                ci = 0
                ti = 0
                while ci < nc and ti < nt and n_new < top_n:
                    node = self._cons_tokens(&self.cache.toks[cand[ci].tok_off], cand[ci].length, &node_tok, &node_next, &pool_len, &pool_cap, tail_head[ti])
                    tail_head[top_n + n_new] = node
                    tail_w[top_n + n_new] = cand[ci].weight + tail_w[ti]
                    tail_len[top_n + n_new] = cand[ci].length + tail_len[ti]
                    n_new += 1
                    if n_new == top_n or (ci == nc - 1 and ti == nt - 1):
                        break
                    if ci == nc - 1:
                        ti += 1
                    elif ti == nt - 1:
                        ci += 1
                    else:
                        wa = tail_w[ti + 1] + cand[ci].weight
                        la = -tail_len[ti + 1] - cand[ci].length
                        wb = tail_w[ti] + cand[ci + 1].weight
                        lb = -tail_len[ti] - cand[ci + 1].length
                        if wa > wb or (wa == wb and la > lb):
                            ti += 1
                        else:
                            ci += 1
                for k in range(n_new):
                    tail_head[k] = tail_head[top_n + k]
                    tail_w[k] = tail_w[top_n + k]
                    tail_len[k] = tail_len[top_n + k]
                nt = n_new
                p -= 1
            for k in range(nt):
                ids = []
                node = tail_head[k]
                while node >= 0:
                    ids.append(node_tok[node])
                    node = node_next[node]
                found.append((ids, tail_w[k]))
        finally:
            self._done_with(&w)
            free(node_tok)
            free(node_next)
            free(tail_head)
            free(tail_w)
            free(tail_len)
        return found

    cdef int32_t _cons(self, int32_t** tok, int32_t** nxt, Py_ssize_t* length, Py_ssize_t* cap,
                       int32_t token, int32_t rest) except -2:
        """A new chain node `token` -> `rest` in the growable pool; returns its index (-1 is the
        empty chain, so -2 signals an error)."""
        cdef int32_t* grown
        if length[0] == cap[0]:
            cap[0] *= 2
            grown = <int32_t*>realloc(tok[0], cap[0] * sizeof(int32_t))
            if grown == NULL:
                raise MemoryError()
            tok[0] = grown
            grown = <int32_t*>realloc(nxt[0], cap[0] * sizeof(int32_t))
            if grown == NULL:
                raise MemoryError()
            nxt[0] = grown
        tok[0][length[0]] = token
        nxt[0][length[0]] = rest
        length[0] += 1
        return <int32_t>(length[0] - 1)

    cdef int32_t _cons_tokens(self, const int32_t* tokens, Py_ssize_t n, int32_t** tok, int32_t** nxt,
                              Py_ssize_t* length, Py_ssize_t* cap, int32_t rest) except -2:
        """The chain of tokens[0:n] followed by `rest` (-1: empty)."""
        cdef Py_ssize_t i = n - 1
        cdef int32_t node = rest
        while i >= 0:
            node = self._cons(tok, nxt, length, cap, tokens[i], node)
            i -= 1
        return node


# ---------------------------------------------------------------- classic multi-pair substitution

@cython.final
cdef class ClassicMerges:
    """The classic encoder: pairs in vocabulary order; each round substitutes the first pair that
    occurs plus the following ones that occur, until a vocabulary pair shares a token with them."""
    cdef int64_t* left
    cdef int64_t* right
    cdef int64_t* new_id
    cdef Py_ssize_t n_pairs
    cdef PairStats rank_of      # (left, right) -> rank, stored in `count`
    cdef double* weights
    cdef int64_t n_ids

    def __cinit__(self, int64_t[:, ::1] pairs, double[::1] weights):
        cdef Py_ssize_t i
        self.n_pairs = pairs.shape[0]
        stats_init(&self.rank_of, pow2_at_least(<uint64_t>(self.n_pairs * 2 + 2)))
        self.left = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.right = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.new_id = <int64_t*>malloc(max(self.n_pairs, 1) * sizeof(int64_t))
        self.n_ids = weights.shape[0]
        self.weights = <double*>malloc(max(self.n_ids, 1) * sizeof(double))
        if self.left == NULL or self.right == NULL or self.new_id == NULL or self.weights == NULL:
            raise MemoryError()
        for i in range(self.n_ids):
            self.weights[i] = weights[i]
        for i in range(self.n_pairs):
            self.left[i] = pairs[i, 0]
            self.right[i] = pairs[i, 1]
            self.new_id[i] = pairs[i, 2]
            if not (0 <= pairs[i, 0] < 0x7FFFFFFF and 0 <= pairs[i, 1] < 0x7FFFFFFF and 0 <= pairs[i, 2] < 0x7FFFFFFF):
                raise ValueError(f"token ids must be in 0..2**31-2, got {tuple(pairs[i])}")
            if stats_find(&self.rank_of, (<uint64_t>pairs[i, 0] << 32) | <uint64_t>pairs[i, 1]) == NULL:
                stats_slot(&self.rank_of, (<uint64_t>pairs[i, 0] << 32) | <uint64_t>pairs[i, 1]).count = i

    def __dealloc__(self):
        stats_free(&self.rank_of)
        free(self.left)
        free(self.right)
        free(self.new_id)
        free(self.weights)

    cdef Py_ssize_t _merge_word(self, int32_t* a, Py_ssize_t n, uint8_t* present, uint8_t* taken,
                                int64_t* chosen) noexcept nogil:
        """Substitute in place until no vocabulary pair occurs; returns the new length."""
        cdef Py_ssize_t i, j, first, n_chosen, w
        cdef const PairStat* s
        cdef int64_t t
        while n > 1:
            first = self.n_pairs
            for i in range(n - 1):
                s = stats_find(&self.rank_of, (<uint64_t>a[i] << 32) | <uint64_t><uint32_t>a[i + 1])
                if s != NULL:
                    present[s.count] = 1
                    if s.count < first:
                        first = s.count
            if first == self.n_pairs:
                break
            chosen[0] = first
            n_chosen = 1
            taken[self.left[first]] = 1
            taken[self.right[first]] = 1
            for j in range(first + 1, self.n_pairs):
                if taken[self.left[j]] or taken[self.right[j]]:
                    break
                if present[j]:
                    chosen[n_chosen] = j
                    n_chosen += 1
                    taken[self.left[j]] = 1
                    taken[self.right[j]] = 1
            for i in range(n - 1):                # clear the marks
                s = stats_find(&self.rank_of, (<uint64_t>a[i] << 32) | <uint64_t><uint32_t>a[i + 1])
                if s != NULL:
                    present[s.count] = 0
            for j in range(n_chosen):
                taken[self.left[chosen[j]]] = 0
                taken[self.right[chosen[j]]] = 0
            # left to right, each chosen pair becomes its token (lefts are distinct across chosen)
            w = 0
            i = 0
            while i < n:
                t = a[i]
                j = self._chosen_index(t, chosen, n_chosen)
                if j >= 0 and i + 1 < n and a[i + 1] == self.right[chosen[j]]:
                    a[w] = <int32_t>self.new_id[chosen[j]]
                    i += 2
                else:
                    a[w] = <int32_t>t
                    i += 1
                w += 1
            n = w
        return n

    cdef inline Py_ssize_t _chosen_index(self, int64_t t, const int64_t* chosen, Py_ssize_t n_chosen) noexcept nogil:
        cdef Py_ssize_t j
        for j in range(n_chosen):
            if self.left[chosen[j]] == t:
                return j
        return -1

    cdef double _word_weight(self, const int32_t* a, Py_ssize_t n, int64_t* freq, int32_t* order) noexcept nogil:
        """tf-idf summed in Counter(word) order: distinct tokens by first appearance."""
        cdef Py_ssize_t i, n_order = 0
        cdef int32_t t
        cdef FSum s
        for i in range(n):
            t = a[i]
            if freq[t] == 0:
                order[n_order] = t
                n_order += 1
            freq[t] += 1
        s.f = 0.0
        s.c = 0.0
        for i in range(n_order):
            t = order[i]
            fsum_add(&s, tf_idf_term(freq[t], self.weights[t] if t < self.n_ids else 0.0))
            freq[t] = 0
        return fsum_value(&s)

    def encode(self, int32_t[::1] seq, int64_t[::1] offsets, int64_t max_id):
        """(ids, weight) for parts seq[offsets[i]:offsets[i+1]] (modified in place), concatenated;
        one-symbol parts pass through with no weight when there are several parts."""
        cdef Py_ssize_t n_parts = offsets.shape[0] - 1, p, s, n, m, i, longest = 0
        cdef Py_ssize_t n_ids = max(max_id, self.n_ids) + 1
        cdef uint8_t* present = <uint8_t*>calloc(self.n_pairs + 1, 1)
        cdef uint8_t* taken = <uint8_t*>calloc(n_ids, 1)
        cdef int64_t* chosen = <int64_t*>malloc((self.n_pairs + 1) * sizeof(int64_t))
        cdef int64_t* freq = <int64_t*>calloc(n_ids, sizeof(int64_t))
        cdef int32_t* order = NULL
        cdef list ids = []
        cdef double total = 0.0, wt
        try:
            for p in range(n_parts):
                longest = max(longest, offsets[p + 1] - offsets[p])
            order = <int32_t*>malloc((longest + 1) * sizeof(int32_t))
            if present == NULL or taken == NULL or chosen == NULL or freq == NULL or order == NULL:
                raise MemoryError()
            for p in range(n_parts):
                s = offsets[p]
                n = offsets[p + 1] - s
                if n == 1 and n_parts > 1:
                    ids.append(seq[s])
                    continue
                with nogil:
                    m = self._merge_word(&seq[s], n, present, taken, chosen) if n > 0 else 0
                    wt = self._word_weight(&seq[s], m, freq, order) if m > 0 else 0.0
                for i in range(m):
                    ids.append(seq[s + i])
                total += wt
        finally:
            free(present)
            free(taken)
            free(chosen)
            free(freq)
            free(order)
        return ids, total


# ---------------------------------------------------------------- str parts -> ids

from cpython.unicode cimport PyUnicode_READ, PyUnicode_KIND, PyUnicode_DATA, PyUnicode_GET_LENGTH


def map_str_parts(list parts, int32_t[::1] table):
    """Parts (str) -> (int32 ids end to end, int64 offsets), each character through `table`
    (code point -> id, -1 for none).  ValueError names the first character not in the table."""
    cdef Py_ssize_t n_parts = len(parts), total = 0, p, i, n, k = 0
    cdef Py_ssize_t size = table.shape[0]
    cdef object part
    cdef int kind
    cdef void* data
    cdef Py_UCS4 ch
    cdef int32_t v
    for part in parts:
        if type(part) is not str:
            raise TypeError("map_str_parts takes str parts")
        total += PyUnicode_GET_LENGTH(part)
    ids = np.empty(total, dtype=np.int32)
    offsets = np.empty(n_parts + 1, dtype=np.int64)
    cdef int32_t[::1] out = ids
    cdef int64_t[::1] off = offsets
    off[0] = 0
    for p in range(n_parts):
        part = parts[p]
        n = PyUnicode_GET_LENGTH(part)
        kind = PyUnicode_KIND(part)
        data = PyUnicode_DATA(part)
        for i in range(n):
            ch = PyUnicode_READ(kind, data, i)
            v = table[ch] if ch < <Py_UCS4>size else -1
            if v < 0:
                raise ValueError(f"symbol {chr(ch)!r} is not in the alphabet")
            out[k] = v
            k += 1
        off[p + 1] = k
    return ids, offsets


# ---------------------------------------------------------------- the word regex, without `re`

from cpython.unicode cimport Py_UNICODE_ISALNUM, Py_UNICODE_ISSPACE

# the one split regex done here: fastbpe.ubpe.split uses it only when the model's regex_str is
# exactly this string; any other goes through `re`
WORD_REGEX = r" ?\w+| ?[^\w\s]+|\s+"

cdef enum:
    PUNCT = 0
    WORD = 1
    SPACE = 2

cdef uint8_t ASCII_CLASS[128]


cdef inline uint8_t char_class(Py_UCS4 ch) noexcept:
    """`re`'s classes for a str pattern: \\w is str.isalnum() or '_', \\s is str.isspace()."""
    if ch < 128:
        return ASCII_CLASS[ch]
    if Py_UNICODE_ISALNUM(ch):
        return WORD
    if Py_UNICODE_ISSPACE(ch):
        return SPACE
    return PUNCT


cdef void init_ascii_class() noexcept:
    cdef Py_UCS4 ch
    for ch in range(128):
        ASCII_CLASS[ch] = WORD if (Py_UNICODE_ISALNUM(ch) or ch == 95) else (
            SPACE if Py_UNICODE_ISSPACE(ch) else PUNCT)

init_ascii_class()


cdef Py_ssize_t split_words_into(str doc, const int32_t* table, Py_ssize_t size, int32_t* ids,
                                 int64_t* ends, int64_t base) except -1:
    """`re.findall(WORD_REGEX, doc)` as part ends (base + offset, written to `ends`) with every
    character mapped through `table` into `ids`; returns the number of parts.  The matches
    cover the whole str, so ids gets len(doc) entries.  At each position the regex takes, in
    order: ' ' + a \\w run, a \\w run, ' ' + a run of neither, such a run, a \\s run."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(doc), i = 0, j, n_parts = 0
    cdef int kind = PyUnicode_KIND(doc)
    cdef void* data = PyUnicode_DATA(doc)
    cdef Py_UCS4 ch
    cdef uint8_t cls, run
    cdef int32_t v
    while i < n:
        ch = PyUnicode_READ(kind, data, i)
        cls = char_class(ch)
        j = i
        run = cls
        if ch == 32 and i + 1 < n:
            cls = char_class(PyUnicode_READ(kind, data, i + 1))
            if cls != SPACE:          # ' ' joins the following \w or [^\w\s] run
                run = cls
                j = i + 1
        j += 1
        while j < n and char_class(PyUnicode_READ(kind, data, j)) == run:
            j += 1
        ends[n_parts] = base + j
        n_parts += 1
        i = j
    for i in range(n):
        ch = PyUnicode_READ(kind, data, i)
        v = table[ch] if ch < <Py_UCS4>size else -1
        if v < 0:
            raise ValueError(f"symbol {chr(ch)!r} is not in the alphabet")
        ids[base + i] = v
    return n_parts


def split_words_map(str doc, int32_t[::1] table):
    """(ids int32, offsets int64) of one str split by WORD_REGEX: what map_str_parts gives for
    `re.findall(WORD_REGEX, doc)`."""
    ids, ends, _ = split_words_map_docs([doc], table)
    return ids, ends


def split_words_map_docs(list docs, int32_t[::1] table):
    """Many str documents split by WORD_REGEX end to end: (ids, part offsets, parts per document)."""
    cdef Py_ssize_t n_docs = len(docs), total = 0, d, n_parts = 0, k
    cdef object doc
    for doc in docs:
        if type(doc) is not str:
            raise TypeError("split_words_map_docs takes str documents")
        total += PyUnicode_GET_LENGTH(doc)
    ids = np.empty(total, dtype=np.int32)
    ends = np.empty(total + 1, dtype=np.int64)
    counts = np.empty(n_docs, dtype=np.int64)
    cdef int32_t[::1] out = ids
    cdef int64_t[::1] off = ends
    cdef int64_t[::1] per_doc = counts
    cdef int64_t base = 0
    off[0] = 0
    for d in range(n_docs):
        doc = docs[d]
        k = split_words_into(doc, &table[0] if table.shape[0] else NULL, table.shape[0],
                             &out[0] if total else NULL, &off[1 + n_parts], base)
        per_doc[d] = k
        n_parts += k
        base += PyUnicode_GET_LENGTH(doc)
    return ids, ends[:n_parts + 1], counts
