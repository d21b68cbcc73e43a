# C API of the scanner programs (fastbpe/_scan_program.pyx): compiled split patterns, and
# chains of them (llama.cpp's pre-tokenizers), run over UTF-8 without the GIL.
#
# A registered program has a kind >= PROGRAM_BASE; _pretokenize's piece_end / scan_pieces
# hand such kinds here, so the encode kernel runs them as it runs the built-in patterns.
# The pieces tile s[0:n]: every match is a piece and so is the text between matches.

cdef enum:
    PROGRAM_BASE = 64
    MAX_PROGRAMS = 4096     # registered kinds per process (a pointer each)

# A piece end with this bit set: the piece is removed (a chain with an HF Split Removed level);
# only chains registered with one give such ends, and only the encode kernel takes their kinds.
cdef extern from *:
    """
    #define FB_DROPPED ((Py_ssize_t)1 << 62)
    """
    const Py_ssize_t DROPPED "FB_DROPPED"

ctypedef Py_ssize_t (*builtin_piece_fn)(int kind, const unsigned char* s, Py_ssize_t n,
                                        Py_ssize_t pos) noexcept nogil

ctypedef Py_ssize_t (*builtin_scan_fn)(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                                       Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil

# The built-in scanner's piece_end and scan_pieces, for chain levels that are built-in patterns
# (set once by _pretokenize at import: it cimports this module, not the other way round).
cdef void set_builtin_piece_end(builtin_piece_fn f, builtin_scan_fn g) noexcept

# Whether `kind` is a registered program.
cdef bint program_known(int kind) noexcept nogil

# As _pretokenize.piece_end / scan_pieces, for a registered program kind.
cdef Py_ssize_t program_piece_end(int kind, const unsigned char* s, Py_ssize_t n,
                                  Py_ssize_t pos) noexcept nogil
cdef Py_ssize_t program_scan(int kind, const unsigned char* s, Py_ssize_t n, Py_ssize_t pos,
                             Py_ssize_t* ends, Py_ssize_t cap) noexcept nogil
