# The cl100k family's block scanners: cl100k, GPT4, LLAMA3 (dollar=False), QWEN2 (single
# digits) and QWEN35 (single digits, letters=LM_FLAGS).  Included by _pretokenize.pyx, after
# the block scanner's helpers it uses (block_run, block_letters, block_digits3,
# block_other_run, block_space and the slow_* pointers); `dollar`, `single_digits` and
# `letters` are constants at each call site of the scan loop.

# cl100k, GPT4, LLAMA3 (dollar=False), QWEN2 (single digits) and QWEN35 (single digits,
# letters=LM_FLAGS: marks in the letter runs, out of the other runs).  The hot part (a letter
# run, with or without a space before it: most pieces of prose and code) inlines into the
# scan loop; block_cl100k_rest takes the other pieces.

cdef inline Py_ssize_t slow_cl100k_family(const uint8_t* s, Py_ssize_t n, Py_ssize_t pos, bint dollar,
                                          bint single_digits, uint8_t letters) noexcept nogil:
    if letters != FB_L:
        return slow_qwen35(s, n, pos)
    if single_digits:
        return slow_qwen2(s, n, pos)
    return slow_cl100k(s, n, pos) if dollar else slow_gpt4(s, n, pos)


cdef Py_ssize_t block_cl100k_rest(const fb_window* win, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                  bint dollar, bint single_digits, uint8_t letters) noexcept nogil:
    cdef fb_view w = fb_view_of(win)       # by value: not reloaded after stores
    cdef uint8_t b0 = s[pos], b1, f0, not_other = LNS | letters
    cdef Py_ssize_t e
    if b0 >= 0x80:
        return slow_cl100k_family(s, n, pos, dollar, single_digits, letters)
    f0 = fb_ascii_flags[b0]
    if f0 & FB_L:
        return block_run(w, s, n, pos + 1, FB_C_LETTER, letters)
    if f0 & FB_N:
        return pos + 1 if single_digits else block_digits3(w, s, n, pos)
    if b0 == CH_QUOTE:
        e = contraction_ci(s, n, pos)
        if e:
            return e
    # b0 is ASCII punctuation or whitespace: what follows decides.
    b1 = s[pos + 1] if pos + 1 < n else 0
    if b1 >= 0x80:
        return slow_cl100k_family(s, n, pos, dollar, single_digits, letters)
    if b0 != CH_LF and b0 != CH_CR and fb_has(w, FB_C_LETTER, pos + 1):
        return block_run(w, s, n, pos + 2, FB_C_LETTER, letters)     # [^\r\n\p{L}\p{N}]?+\p{L}++
    if not (f0 & FB_S):
        return run_newlines(s, n, block_other_run(w, s, n, pos + 1, not_other), False)
    if b0 == CH_SPACE and fb_has(w, FB_C_OTHER, pos + 1):
        return run_newlines(s, n, block_other_run(w, s, n, pos + 2, not_other), False)
    e = block_space(w, s, n, pos, dollar, True)
    if e >= 0:
        return e
    return slow_cl100k_family(s, n, pos, dollar, single_digits, letters)


cdef inline Py_ssize_t block_cl100k(const fb_window* win, fb_view w, const uint8_t* s, Py_ssize_t n, Py_ssize_t pos,
                                    bint dollar, bint single_digits, uint8_t letters) noexcept nogil:
    cdef unsigned long long x = fb_bits(w, FB_C_LETTER, pos)
    if x & 1:
        return block_letters(w, s, n, pos, x, letters)
    if s[pos] == CH_SPACE and x & 2:
        return block_letters(w, s, n, pos + 1, x >> 1, letters)
    return block_cl100k_rest(win, s, n, pos, dollar, single_digits, letters)
