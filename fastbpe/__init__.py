"""fastbpe: byte-level BPE tokenizers with Cython kernels."""
