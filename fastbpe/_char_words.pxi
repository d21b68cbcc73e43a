# The words of a normalized or spaced text looked up whole in the thread's piece cache before they
# are cut (included by _char_bpe.pyx; CharBPE.encode_normalized and encode_one call these): a word
# seen before costs one probe, not encode_cut's byte loop and a call a part.


cdef inline bint word_key(CharBPE self, const uint8_t* p, Py_ssize_t ln, const uint8_t* end, uint64_t m3, uint64_t* k0,
                          uint64_t* k1) noexcept nogil:
    """Whether encode_words probes the word p[:ln] whole: the meta character (its bytes m3)
    and up to 15 bytes; then its packed key (cache_probe's) in k0, k1.  (Skipping words
    with bytes >= 0x80 left multilingual text as it was and cost English 2%: curly quotes.)"""
    if not (ln > self.meta_len and ln - self.meta_len <= PACKED_MAX and load_word(p, self.meta_len, end) == m3):
        return False
    packed_key(p + self.meta_len, ln - self.meta_len, end, k0, k1)
    k1[0] |= META_KEY
    return True


cdef inline Py_ssize_t word_stop(CharBPE self, const uint8_t* q, Py_ssize_t n, Py_ssize_t start) noexcept nogil:
    cdef Py_ssize_t stop = meta_word_end(self.meta, self.meta_len, q, n, start)   # (on past one after ">")
    while self.joins_meta and stop < n and q[stop - 1] < 0x80 and self.cut_flags[q[stop - 1]] & CUT_JOINS_META:
        stop = meta_word_end(self.meta, self.meta_len, q, n, stop)
    return stop


cdef int encode_words(CharBPE self, const uint8_t* q, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil:
    """encode_cut of q[:n] for a file whose merges never join across a meta character
    that follows another character (cut_before_meta): a word from one such meta character
    to the next that has a packed key (up to 18 bytes, most words of English) is looked up
    whole in the piece cache first, inline (a word seen before costs one probe, not
    encode_cut's byte loop and a call a part), and one that encode_cut cuts into parts of
    up to 3 ids in all is kept whole too (its ids are its parts' ids: the cuts are exact).
    Longer words go to encode_cut alone: probing them whole cost multilingual text more
    than it saved (few repeat, and their parts were probed again); so does the rest of a
    text once half its probed words (16 or more) missed."""
    cdef Py_ssize_t start = 0, stop, ml = self.meta_len, before, run, probes = 0, misses = 0
    cdef const uint8_t* end = q + n
    cdef uint64_t k0, k1, h, m3 = 0
    cdef const PackedEntry* pe
    memcpy(&m3, self.meta, ml)
    stop = word_stop(self, q, n, 0)
    while start < n:
        if not word_key(self, q + start, stop - start, end, m3, &k0, &k1):
            # words without a packed key, and those after them up to one with a key: one
            # encode_cut (the byte loop cuts before their meta characters too)
            run = stop
            while run < n:
                stop = word_stop(self, q, n, run)
                if word_key(self, q + run, stop - run, end, m3, &k0, &k1):
                    break
                run = stop
            self.encode_cut(q, start, run, end, out, w)
            start = run
            continue
        probes += 1
        h = char_hash(k0, k1)
        pe = &w.packed[h & w.packed_mask]
        idbuf_reserve(out, stop - start + 8)
        before = out.len
        if pe.k0 == k0 and pe.k1 == k1 and pe.n_ids:
            memcpy(out.data + out.len, pe.ids, 16)
            out.len += pe.n_ids
        else:
            misses += 1
            if misses >= MISS_MIN and 2 * misses > probes:   # (multilingual: few repeat)
                self.encode_cut(q, start, n, end, out, w)
                return 0
            before = out.len
            if self.encode_cut(q, start, stop, end, out, w) > 1 and out.len - before <= PACKED_MAX_IDS:
                packed_store(w.packed, w.packed_mask, h, k0, k1, out.data + before, out.len - before)
        start = stop
        if start < n:
            stop = word_stop(self, q, n, start)
    return 0


cdef inline Py_ssize_t spaced_key(CharBPE self, const uint8_t* s, Py_ssize_t start, Py_ssize_t stop, const uint8_t* end,
                                  uint64_t* k0, uint64_t* k1) noexcept nogil:
    """The length of the normalized form of the word s[start:stop] (a space, then 1-15 other
    bytes) when it has a packed key, which is set in k0, k1 (as cache_probe makes it: the
    bytes after the meta character, flagged), else 0."""
    cdef Py_ssize_t ln = stop - start
    if ln < 2 or ln - 1 > PACKED_MAX or s[start + 1] == 32:
        return 0
    if self.joins_meta and ((start > 0 and s[start - 1] < 0x80 and self.cut_flags[s[start - 1]] & CUT_JOINS_META) or (
            stop < (end - s) and s[stop - 1] < 0x80 and self.cut_flags[s[stop - 1]] & CUT_JOINS_META)):
        return 0   # a merge joins its space to the character before it (or the next word's): not probed alone
    packed_key(s + start + 1, ln - 1, end, k0, k1)
    k1[0] |= META_KEY
    return self.meta_len + ln - 1


cdef inline Py_ssize_t indented_key(CharBPE self, const uint8_t* s, Py_ssize_t start, Py_ssize_t stop,
                                    const uint8_t* end, uint64_t* k0, uint64_t* k1) noexcept nogil:
    """For a word s[start:stop] of k >= 2 spaces and more (meta_runs): the k - 1 spaces before
    the last when " word" after them has a packed key (set in k0, k1 by spaced_key) and runs
    of k - 1 and k have their ids in run_ids, else 0.  (encode_run_word's cut: code's
    indented words are probed as " word", the run's ids from the table.)"""
    cdef Py_ssize_t j = start + 1
    while j + 1 < stop and s[j + 1] == 32:
        j += 1
    if j + 1 >= stop or j - start >= RUN_MAX or not (self.run_n[j - start] and self.run_n[j - start + 1]):
        return 0   # (a run alone, at the text's end; a long run)
    return j - start if spaced_key(self, s, j, stop, end, k0, k1) else 0


cdef inline int run_before(CharBPE self, Py_ssize_t k, IdBuf* out, Py_ssize_t n_word) except -1 nogil:
    """Put the ids of a run of meta characters before the ids of the word that end out (n_word:
    "▁" + word after k - 1 more meta characters, runs_apart): the run of k - 1, or of k and
    the word's ids without its first when that is the meta character's (encode_run_word's rule)."""
    cdef Py_ssize_t skip, r
    cdef tok_t* p
    idbuf_reserve(out, PACKED_MAX_IDS)
    p = out.data + out.len - n_word
    skip = p[0] == <tok_t>self.meta_id
    r = self.run_n[k - 1 + skip]
    memmove(p + r, p + skip, (n_word - skip) * sizeof(tok_t))
    memcpy(p, self.run_ids[k - 1 + skip], r * sizeof(tok_t))
    out.len += r - skip
    return 0
