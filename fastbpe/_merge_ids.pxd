# Merging from given initial ids (_merge_ids.pyx): the heap loop char-level models share
# (hf's BPE model for dropout, `_char_bpe.CharBPE` for SentencePiece-style files).
from libc.stdint cimport int32_t, uint64_t

from fastbpe._core cimport BPETable
from fastbpe._vocab cimport tok_t

cdef Py_ssize_t merge_ids_kernel(BPETable table, tok_t* ids, int32_t* nxt, int32_t* prv,
                                 uint64_t* heap, uint64_t* skipped, Py_ssize_t n,
                                 double dropout, uint64_t seed) noexcept nogil
