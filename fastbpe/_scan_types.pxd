# The scanner programs' layout (fastbpe/_scan_program.pyx fills it from a compiled
# pattern_program.Program): items, sequences and alternatives in flat arrays, the chain of
# levels, and the backtracking matcher's context (_scan_backtrack.pxd).
from libc.stdint cimport int32_t, uint8_t, uint64_t

from fastbpe._scan_dfa cimport Cls, Dfa

cdef enum:
    MAX_LEVELS = 8
    MAX_ITEMS = 256
    T_CLASS = 0
    T_GROUP = 1
    T_LOOK = 2
    T_NLOOK = 3
    T_DOLLAR = 4
    T_END = 5
    M_GREEDY = 0
    M_LAZY = 1
    M_POSSESSIVE = 2
    C_ITEMS = 0
    C_REPEAT = 1
    C_STOP = 2
    UNBOUNDED = 1 << 30          # pattern_program.UNBOUNDED
    DROP_MATCHES = 1             # Level.drop
    DROP_GAPS = 2

ctypedef struct Item:
    int32_t type, arg, min, max, mode

ctypedef struct Prog:
    const Item* items
    const int32_t* seq_start
    const int32_t* seq_end
    const int32_t* seq_first     # class of the characters that can start the seq, -1: any
    const int32_t* alt_start
    const int32_t* alt_end
    const int32_t* alt_seqs
    Cls* classes
    int n_items, root, root_first
    int run_class                # >= 0: the pattern is one class repeated 1..run_max times
    int run_max
    bint run_swar                # run_next may search eight ASCII bytes at a time: the class's
    uint64_t run_k1, run_k2      # ASCII characters are one range or none (_ascii_range_test)
    uint64_t run_lead[4]         # the UTF-8 lead bytes that start a character of the class
    int run_bytes                # 1-2: the class is these ASCII bytes alone ([\r\n]): memchr finds
    uint8_t run_b[2]             # its next character (bytes_next); 0: not so
    int need                     # a class every non-empty match holds a character of, or -1
    int opt_class, opt_run       # >= 0: the pattern is opt_class? opt_run+, greedy (`\s?\p{L}+`):
                                 # matched by opt_run_match, not the automaton; -1: not so
    uint8_t opt_tab[256]         # per byte, for opt_cut: 1 an ASCII character of opt_run, 2 of
                                 # opt_class, 4 a byte >= 0x80 (decoded: char_in)
    int last                     # every match ends with a character of class last, at the text's
    uint8_t stop_tab[256]        # end or before a byte flagged here (_anchored_end); -1: unknown
    int stop_one                 # the flagged ASCII bytes are stop_b alone (1) or none (0): the
    uint8_t stop_b               # next stop is memchr's or the next non-ASCII byte; -1: not so
    uint8_t run_tab[256]         # per byte: a character of the run class can start there;
    uint8_t first_tab[256]       # ... of root_first's class; of need's class (class_next)
    uint8_t need_tab[256]
    bint byte_level              # one byte is one character (text in GPT-2's byte alphabet:
                                 # the classes hold the bytes whose characters they match)
    Dfa dfa                      # the pattern's automaton (trans NULL: backtrack)

ctypedef struct Level:
    int builtin                  # >= 0: a built-in scanner kind; -1: prog
    int drop                     # DROP_MATCHES / DROP_GAPS: HF's Split Removed (without / with invert)
    bint whole                   # an ASCII match of the level before is one match of this level
                                 # (decided at registration: _whole_matches)
    bint mark                    # this level's matches carry MATCHED for the next (whole) level
    Prog prog

ctypedef struct Chain:
    int n_levels
    Level levels[MAX_LEVELS]

ctypedef struct Cont:            # what to match after the current items (a linked stack)
    int kind, item, end, count
    Py_ssize_t start
    const Cont* next

ctypedef struct Ctx:
    const Prog* p
    const uint8_t* s
    Py_ssize_t n
    Py_ssize_t* memo_start       # per unbounded class item: a run seen (start, end) ...
    Py_ssize_t* memo_end
    Py_ssize_t* memo_lo          # ... the lowest position from which what follows failed
    Py_ssize_t* memo_n           # ... for this text end (-1: none)
    Py_ssize_t steps             # the matcher's work: calls, characters run over, give-backs
    Py_ssize_t dfa_until         # positions below: backtrack (an automaton run read past them)
