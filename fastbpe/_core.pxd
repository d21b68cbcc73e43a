# The encode kernel's table object (_core.pyx).  Its parts: the token and pair tables
# (_vocab.pxd), the per-call buffers (_workspace.pxd), the piece cache (_piece_cache.pxd)
# and the merge loops (_merge.pxd).
from libc.stdint cimport uint8_t, uint64_t, int32_t

from fastbpe._merge cimport MergeTables
from fastbpe._piece_cache cimport PieceCache
from fastbpe._vocab cimport PairTable, TokenTable
from fastbpe._workspace cimport IdBuf, Work


cdef class BPETable:
    cdef TokenTable tok
    cdef PairTable pairs
    cdef uint64_t* byte_pairs   # [256*256] (rank << 32 | new id) of two single-byte parts; cache-friendly first round
    cdef int32_t* char_tokens   # where a merge may start from a character's token (_vocab.build_char_tokens)
    cdef MergeTables merge      # the tables the merge loops read (pointers into the above)
    cdef bint whole_piece    # emit a piece that is itself a token directly (tiktoken semantics)
    cdef bint partial_bytes  # some single bytes have no token (HF skips them: merge_known_bytes)
    cdef uint8_t* self_merging   # merge lists: per token, whether merging its bytes gives it (see encode_piece_hashed)
    cdef int word_marks      # _word_marks.MARK_* bits: pieces merge between marks (HF's prefix / suffix)
    cdef int32_t piece_byte_id[256]   # the id of a one-byte piece (-1: none): its byte's token, or merged between marks
    cdef readonly Py_ssize_t n_bpe_tokens
    cdef tuple id_objects    # _id_output.id_ints: () or a Python int per id; a list allocates nothing per token
    cdef readonly uint64_t serial   # unique per table in this process: names its piece caches
    cdef object last_cache   # the PieceCache of the thread that used the table last ...
    cdef unsigned long last_thread   # ... and that thread's ident (see thread_cache)

    cdef int encode_piece(self, const uint8_t* p, Py_ssize_t n, IdBuf* out, Work* w) except -1 nogil
    cdef int32_t lookup(self, const uint8_t* p, Py_ssize_t n) noexcept nogil
    cdef int encode_piece_hashed(self, const uint8_t* p, Py_ssize_t n, uint64_t h, uint64_t head,
                                 IdBuf* out, Work* w) except -1 nogil
    cdef int encode_utf8(self, const uint8_t* s, Py_ssize_t n, int kind, IdBuf* out, Work* w) except -1 nogil
    cdef int _load_tokens(self, list token_bytes, dict special_bytes, bint unique) except -1
    cdef int _finish(self) except -1
    cdef int require_byte_pairs(self) except -1
    cpdef object encode_text(self, str text, int kind, int as_numpy=*)

cdef PieceCache thread_cache(BPETable table)
