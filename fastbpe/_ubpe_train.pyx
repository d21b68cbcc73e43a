# cython: boundscheck=False, wraparound=False, cdivision=True
"""UBPE training: multi-pair steps over int arrays (`fit_pairs`).

Every UBPE kernel mirrors the reference `ubpe-native` 0.3.0 exactly (ties, summation order),
because fitted models and encodings must be identical to it; `fastbpe/ubpe/` documents the rules.
"""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc

from fastbpe._hash cimport pow2_at_least, probe
from fastbpe._ubpe_pairs cimport *

import numpy as np


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
    cdef uint64_t h = probe(&t.slots[0].key, STAT_STRIDE, t.mask, pair_hash(key) & t.mask, key, EMPTY)
    cdef PairStat* s = &t.slots[h]
    if s.key != key:
        s = claim_slot(t, h, key, False)
    return s


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
