# CharBPE.build's work (included by _char_bpe.pyx): the load-time tables of a char-level vocabulary,
# the characters' first ids, what each token stands for, where pieces are cut, the 129 x 129 first pairs.


cdef CharBPE build_char_bpe(dict vocab, merges, unk_token, bint byte_fallback, bint fuse_unk, bint ignore_merges,
                            str meta, ranks, BPETable table):
    """CharBPE.build (its docstring says what each argument is and what is refused)."""
    cdef CharBPE self = CharBPE.__new__(CharBPE)
    cdef Py_ssize_t n_ids = max(vocab.values(), default=-1) + 1, i, k, m
    cdef int64_t a, b, c, cp
    cdef bytes meta_utf8 = meta.encode("utf-8")
    if len(meta) != 1:
        raise ValueError(f"the meta character must be one character, got {meta!r}")
    if unk_token is not None and unk_token not in vocab:
        raise ValueError(f"unk_token {unk_token!r} is not in the vocabulary")
    self.meta_char = meta
    self.meta_len = len(meta_utf8)
    memcpy(self.meta, <const char*>meta_utf8, self.meta_len)
    self.sym.byte_fallback, self.sym.fuse_unk, self.ignore_merges = byte_fallback, fuse_unk, ignore_merges
    self.sym.unk_id = vocab[unk_token] if unk_token is not None else -1
    if table is None:   # (hf.model passes its own: then no token is encoded here)
        tokens = [None] * n_ids
        for t, i in vocab.items():
            tokens[i] = t.encode("utf-8", "surrogatepass")
        table = BPETable.from_merges(merges, tokens, None, whole_piece=False, require_all_bytes=False, ranks=ranks)
    self.table = table
    if isinstance(merges, array.array) and merges.typecode == "q":
        rows = merges
    else:
        import numpy
        rows = array.array("q", numpy.ascontiguousarray(merges, dtype="int64").reshape(-1).tobytes())
    m = len(rows) // 3
    # the characters' tokens
    self.sym.bmp_ids = <int32_t*>malloc(0x10000 * sizeof(int32_t))
    self.token_nbytes = <int32_t*>malloc((n_ids + 1) * sizeof(int32_t))
    if self.sym.bmp_ids == NULL or self.token_nbytes == NULL:
        raise MemoryError()
    for i in range(0x10000):
        self.sym.bmp_ids[i] = FALLBACK_ID
    for i in range(n_ids + 1):
        self.token_nbytes[i] = -1
    astral = []
    for t, i in vocab.items():
        if len(t) == 1:
            cp = ord(t)
            if cp < 0x10000:
                self.sym.bmp_ids[cp] = i
            else:
                astral.append((cp, i))
            self.token_nbytes[i] = 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4   # its UTF-8
    astral.sort()
    self.sym.n_astral = len(astral)
    self.sym.astral_cps = <uint32_t*>malloc((self.sym.n_astral + 1) * sizeof(uint32_t))
    self.sym.astral_ids = <int32_t*>malloc((self.sym.n_astral + 1) * sizeof(int32_t))
    if self.sym.astral_cps == NULL or self.sym.astral_ids == NULL:
        raise MemoryError()
    for i in range(self.sym.n_astral):
        self.sym.astral_cps[i], self.sym.astral_ids[i] = astral[i]
    all_bytes = True
    for i in range(256):
        b_id = vocab.get(f"<0x{i:02X}>")
        self.sym.byte_ids[i] = -1 if b_id is None else b_id
        if b_id is None:
            all_bytes = False
        elif byte_fallback:
            self.token_nbytes[b_id] = 1
    if byte_fallback and not all_bytes and self.sym.unk_id >= 0:
        raise ValueError("byte_fallback with some <0xNN> tokens missing and an unk token: HF puts a pending "
                         "unk token after the fallback bytes; not compiled")
    # what each merged token stands for (unk and what contains it: -1), passes in merge order
    # until none adds one: a merge may use a part that a later-ranked merge makes (Baichuan's
    # "-- -" before "- -": one pass left "---" unknown, its offsets the rest of the word)
    cdef const int64_t[::1] r = rows   # typed: a Python loop over 60k+ merges cost ~30 ms a load
    cdef bint grew = True
    for i in range(m):
        if r[3 * i] == self.sym.unk_id or r[3 * i + 1] == self.sym.unk_id:
            raise ValueError("a merge involves the unk token: not compiled")
    while grew:
        grew = False
        for i in range(m):
            a, b, c = r[3 * i], r[3 * i + 1], r[3 * i + 2]
            if self.token_nbytes[c] < 0 and self.token_nbytes[a] > 0 and self.token_nbytes[b] > 0:
                self.token_nbytes[c] = self.token_nbytes[a] + self.token_nbytes[b]
                grew = True
    # where merges never reach across (_char_cuts): a piece is cut there
    if ranks is not None and not (isinstance(ranks, array.array) and ranks.typecode == "q"):
        import numpy
        ranks = numpy.ascontiguousarray(ranks, dtype="int64").reshape(-1)
    cut, ascii_cut, cut_flags, self.runs_apart = merge_cuts(vocab, r, meta, n_ids, ranks, byte_fallback)
    self.cut_before_meta = cut
    self.joins_meta = cut and any(f & CUT_JOINS_META for f in cut_flags[:0x80])
    self.meta_id = self.sym.bmp_ids[ord(meta)] if ord(meta) < 0x10000 else -1
    self.spaced = cut and 2 <= self.meta_len <= 3 and not ignore_merges
    memcpy(self.ascii_cut, <const char*>ascii_cut, sizeof(self.ascii_cut))
    self.cut_flags = <uint8_t*>malloc(0x10000)
    if self.cut_flags == NULL:
        raise MemoryError()
    memcpy(self.cut_flags, <const char*>cut_flags, 0x10000)
    # the first pairs of a word of ASCII and meta characters (merge_word) from a table
    self.small_pairs = <uint64_t*>malloc(129 * 129 * sizeof(uint64_t))
    if self.small_pairs == NULL:
        raise MemoryError()
    for i in range(129):   # (initial_symbols' ids: a character's token, else its fallback byte's)
        self.small_ids[i] = char_id(&self.sym, i if i < 128 else ord(meta))
        if i < 128 and self.small_ids[i] < 0 and byte_fallback:
            self.small_ids[i] = self.sym.byte_ids[i]
        if i == 128 and (ord(meta) < 0x80 or self.meta_len > 3):
            self.small_ids[i] = -1   # (merge_word reads a meta character of 2 or 3 bytes there)
    for i in range(129):
        for k in range(129):
            self.small_pairs[129 * i + k] = NO_PAIR if self.small_ids[i] < 0 or self.small_ids[k] < 0 else (
                pair_word(&self.table.pairs, self.small_ids[i], self.small_ids[k]))
    if self.runs_apart and self.spaced:
        fill_meta_runs(self)
    return self


cdef int fill_meta_runs(CharBPE self) except -1:
    """The ids of k = 1..RUN_MAX meta characters merged alone (run_ids, run_n), and meta_runs on:
    encode_spaced then cuts an indented word as encode_run_word does, the run's ids from here."""
    cdef Work w
    cdef IdBuf out
    cdef uint8_t text[4 * RUN_MAX]
    cdef Py_ssize_t k, i, ml = self.meta_len
    memset(&w, 0, sizeof(Work))
    memset(&out, 0, sizeof(IdBuf))
    try:
        for k in range(1, RUN_MAX + 1):
            memcpy(text + (k - 1) * ml, self.meta, ml)
            out.len = 0
            idbuf_reserve(&out, k * ml + 8)
            self.merge_word(text, k * ml, &out, &w)
            self.run_n[k] = out.len if out.len <= PACKED_MAX_IDS else 0
            for i in range(self.run_n[k]):
                self.run_ids[k][i] = out.data[i]
    finally:
        work_free(&w)
        idbuf_free(&out)
    self.meta_runs = True
    return 0
