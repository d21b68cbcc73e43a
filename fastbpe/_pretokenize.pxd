# C API of the pre-tokenizer (fastbpe/_pretokenize.pyx).
#
# Other kernels use it with
#     from fastbpe._pretokenize cimport PatternKind, PAT_CL100K, piece_end, scan_pieces
#
# `s[0:n]` is valid UTF-8 (the caller guarantees it; lone surrogates already replaced).
# On invalid UTF-8 the functions stay memory-safe and still tile s[0:n], but the pieces
# are unspecified.  `n` is the end of the text or segment: `$` and lookaheads see it as
# the end of text.  Nothing here touches Python objects; all of it runs without the GIL.

cdef enum PatternKind:
    PAT_NONE = -1      # not a known pattern: use the regex package
    PAT_R50K           # R50K_PATTERN   (tiktoken gpt2 / r50k_base / p50k_base)
    PAT_GPT2           # GPT2_PATTERN   (minbpe GPT2_SPLIT_PATTERN)
    PAT_CL100K         # CL100K_PATTERN (tiktoken cl100k_base)
    PAT_GPT4           # GPT4_PATTERN   (minbpe GPT4_SPLIT_PATTERN)
    PAT_O200K          # O200K_PATTERN  (tiktoken o200k_base / o200k_harmony)
    PAT_LLAMA3         # LLAMA3_PATTERN (Llama 3 tokenizer.json)
    PAT_QWEN2          # QWEN2_PATTERN  (Qwen2 / Qwen2.5 tokenizer.json: single digits)
    PAT_HF_GPT2        # HF_GPT2_PATTERN (tokenizers' ByteLevel pre-tokenizer, use_regex=true)
    PAT_TEKKEN         # TEKKEN_PATTERN (Mistral tekken.json: o200k without contractions, single digits)
    PAT_QWEN35         # QWEN35_PATTERN (Qwen3.5 tokenizer.json: Qwen2's with \p{M} in the letter runs)
    PAT_DEEPSEEK_V3    # DEEPSEEK_V3_SPLITS: DeepSeek-V3's three Split steps, one cutting the pieces of the other
    PAT_CLIP           # CLIP_PATTERN Split Removed+invert, then ByteLevel's regex (ends of removed pieces: DROPPED)

# End (exclusive byte offset) of the piece the pattern matches at byte offset `pos`.
# The pieces of these patterns tile the text, so a caller loops
#     while pos < n: pos = piece_end(kind, s, n, pos)
# Returns a value in (pos, n] for 0 <= pos < n; returns n for pos >= n or an unknown kind.
cdef Py_ssize_t piece_end(int kind, const unsigned char* s, Py_ssize_t n,
                          Py_ssize_t pos) noexcept nogil

# Batch form: writes the ends of the pieces starting at `pos` into ends[0:k] and returns
# k (stops at the end of text or when cap ends are written; continue from ends[k-1]).
# One dispatch per call instead of per piece: the faster loop for long texts.
cdef Py_ssize_t scan_pieces(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                            Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil

# ValueError unless kind is one the scanner knows (for the Python entry points and test hooks).
cdef int check_kind(int kind) except -1
