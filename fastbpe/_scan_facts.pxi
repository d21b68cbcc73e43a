# Included by _scan_program.pyx (textually: these are its module globals): what registering a
# program derives from its arrays for the matcher, the arrays a chain keeps pointers into, the
# lead bytes and ASCII tests of a class, a class every match needs (_needed_class), how every
# match ends (_anchored_end), and the per-byte start tables class_next reads.

cdef const int32_t* _ints(list keep, object arr) except NULL:
    cdef const int32_t[::1] view = arr
    keep.append(arr)
    return &view[0]


cdef const uint8_t* _bytes(list keep, object arr) except NULL:
    cdef const uint8_t[::1] view = arr
    keep.append(arr)
    return &view[0]


_LEAD_BYTES = {}   # a class table's bytes -> its lead bytes: registering asks up to 4 times a program


def _lead_bytes(table):
    """A 256-bit set: the UTF-8 lead bytes (0xC2-0xF4) that start some character of the class
    (run_next skips a character whose lead byte is not in it without decoding it).  Plain
    Python over the buffers (numpy arrays, or a cached program's arrays), by list.count over
    the index: a 256-code-point range holds a member unless its block is one of the few empty
    ones; each table's answer is kept (DeepSeek-Coder's load asked 13 times, 16.7M)."""
    _lo, _hi, index, blocks = table
    view = memoryview(index)
    data = memoryview(blocks).tobytes()
    key = (view.format, view.tobytes(), data)
    got = _LEAD_BYTES.get(key)
    if got is None:
        got = _lead_bytes_of(view.tolist(), data)
        if len(_LEAD_BYTES) < 64:
            _LEAD_BYTES[key] = got
    return got


def _ascii_only(table) -> bool:
    """Whether the class has no member >= U+0080 (no bit past 127 in any block it indexes)."""
    _lo, _hi, index, blocks = table
    data = memoryview(blocks).tobytes()
    first = memoryview(index)[0]
    return not any(any(data[b * 32 + (16 if b == first else 0):b * 32 + 32]) for b in set(memoryview(index).tolist()))


def _lead_bytes_of(index: list, data: bytes):
    empty = [i for i in set(index) if not any(data[i * 32:i * 32 + 32])]

    def holds(a, b):    # whether index[a:b] points at a block with a member
        seg = index[a:b]
        return sum(seg.count(e) for e in empty) != len(seg)

    bits = 0
    for b in range(0xC2, 0xE0):                          # 64 code points: 8 bytes of one block
        cp = (b & 0x1F) << 6
        at = index[cp >> 8] * 32 + ((cp & 255) >> 3)
        if any(data[at:at + 8]):
            bits |= 1 << b
    for b in range(0xE0, 0xF0):                          # 4096 code points: 16 blocks
        if holds((b & 0x0F) << 4, ((b & 0x0F) + 1) << 4):
            bits |= 1 << b
    for b in range(0xF0, 0xF5):                          # 0x40000 code points: 1024 blocks
        if holds((b & 0x07) << 10, ((b & 0x07) + 1) << 10):
            bits |= 1 << b
    return bits


def _ascii_range_test(ascii_bits):
    """(usable, k1, k2) for run_next's eight-bytes-at-a-time search: when a class's ASCII
    characters are one range lo..hi (or none), an ASCII byte x is in it exactly when bit 7 of
    x + k1 is set and bit 7 of x + k2 is not (k1 = 0x80 - lo, k2 = 0x7F - hi in every byte;
    no sum carries into the next byte)."""
    if ascii_bits is None:
        return False, 0, 0
    bits = ascii_bits[0] | (ascii_bits[1] << 64)
    members = [b for b in range(128) if (bits >> b) & 1]
    if not members:
        lo, hi = 1, 0
    elif members[len(members) - 1] - members[0] == len(members) - 1:    # (no wraparound here)
        lo, hi = members[0], members[len(members) - 1]
    else:
        return False, 0, 0
    return True, (0x80 - lo) * 0x0101010101010101, (0x7F - hi) * 0x0101010101010101


def _needed_class(program):
    """A class of which every non-empty match holds a character (a class item the root's one
    sequence repeats at least once: `\\p{L}` of `\\s?\\p{L}+`), the one with the fewest ASCII
    members and then 256-blocks; -1 for none.  A piece without such a character holds no match."""
    items = memoryview(program.item_array).tolist()
    alt_start, alt_end, alt_seqs = (memoryview(a).tolist() for a in program.alt_arrays)
    seq_start, seq_end = (memoryview(a).tolist() for a in program.seq_arrays[:2])
    root = program.root
    if alt_end[root] - alt_start[root] != 1:
        return -1
    seq = alt_seqs[alt_start[root]]
    best, best_size = -1, None
    for i in range(seq_start[seq], seq_end[seq]):
        kind, arg, lo = items[5 * i], items[5 * i + 1], items[5 * i + 2]
        if kind != T_CLASS or lo < 1:
            continue
        ascii_lo, ascii_hi, index, blocks = program.tables[arg]
        size = (bin(ascii_lo).count("1") + bin(ascii_hi).count("1"), len(set(memoryview(index).tolist())))
        if best_size is None or size < best_size:
            best, best_size = arg, size
    return best


def _anchored_end(program):
    """(class, stops) when every match of the pattern ends with a character of `class`, at the
    end of its text or before an ASCII character of `stops` (a 128-bit set) or a non-ASCII
    byte: the root's one sequence is a class item repeated at least once and then zero-width
    items only (`\\s+$`; Oniguruma's `$` read as `(?:(?=\\n)|(?![\\s\\S]))`); (-1, 0)
    otherwise.  An ASCII piece with no stop after its start whose last character is not in
    the class holds no match (may_match)."""
    items = memoryview(program.item_array).tolist()
    alt_start, alt_end, alt_seqs = (memoryview(a).tolist() for a in program.alt_arrays)
    seq_start, seq_end, seq_first = (memoryview(a).tolist() for a in program.seq_arrays)
    every = (1 << 128) - 1

    def ascii_of(cls):
        lo, hi = program.tables[cls][:2]
        return int(lo) | (int(hi) << 64)

    def seqs(alt):
        return [alt_seqs[j] for j in range(alt_start[alt], alt_end[alt])]

    def zero_width(i):
        kind, arg = items[5 * i], items[5 * i + 1]
        if kind == T_GROUP:
            return all(zero_width(j) for s in seqs(arg) for j in range(seq_start[s], seq_end[s]))
        return kind in (T_DOLLAR, T_END, T_LOOK, T_NLOOK)

    def stops(i):                   # where zero-width item i can hold, besides the end (None: anywhere)
        kind, arg = items[5 * i], items[5 * i + 1]
        if kind == T_END:
            return 0
        if kind == T_DOLLAR:
            return 1 << 10
        if kind == T_LOOK:          # before a first character of the lookahead
            firsts = [seq_first[s] for s in seqs(arg)]
            return None if -1 in firsts else functools.reduce(operator.or_, map(ascii_of, firsts), 0)
        if kind == T_NLOOK:         # before no character: the lookahead takes every ASCII one
            for s in seqs(arg):
                j = seq_start[s]
                if (seq_end[s] - j == 1 and items[5 * j] == T_CLASS and items[5 * j + 2] >= 1
                        and ascii_of(items[5 * j + 1]) == every):
                    return 0
            return None
        if kind == T_GROUP and items[5 * i + 2] >= 1:
            out = 0
            for s in seqs(arg):     # each alternative: any of its items' answers (all must hold)
                got = next((g for g in map(stops, range(seq_start[s], seq_end[s])) if g is not None), None)
                if got is None:
                    return None
                out |= got
            return out
        return None

    import functools
    import operator
    root = program.root
    if alt_end[root] - alt_start[root] != 1:
        return -1, 0
    seq = alt_seqs[alt_start[root]]
    a, b = seq_start[seq], seq_end[seq]
    last = b - 1
    while last >= a and zero_width(last):
        last -= 1
    if last < a or last == b - 1 or items[5 * last] != T_CLASS or items[5 * last + 2] < 1:
        return -1, 0
    got = next((g for g in map(stops, range(last + 1, b)) if g is not None), None)
    return (-1, 0) if got is None else (items[5 * last + 1], got)


cdef int _start_bytes(uint8_t* tab, object program, int cls, bint byte_level) except -1:
    """tab[b]: whether a character of class `cls` can start at byte b (class_next): the byte's
    own membership when byte-level, else an ASCII member or a UTF-8 lead byte of one."""
    cdef int b
    if cls < 0:
        return 0
    lo, hi, index, blocks = program.tables[cls]
    lead = 0 if byte_level else _lead_bytes(program.tables[cls])
    data = memoryview(blocks).tobytes()
    index = memoryview(index)
    for b in range(256):
        if b < 128:
            tab[b] = ((lo if b < 64 else hi) >> (b & 63)) & 1
        elif byte_level:
            tab[b] = (data[index[0] * 32 + (b >> 3)] >> (b & 7)) & 1
        else:
            tab[b] = (lead >> b) & 1
    return 0


cdef inline int _states(const Prog* P) noexcept:
    """The states _step walks for P: its automaton's, or a run's count + 2; 0: none."""
    if P.byte_level:
        return 0
    if P.run_class >= 0:
        return P.run_max + 2 if P.run_max <= 64 else 3
    return P.dfa.n_states if P.dfa.trans != NULL else 0


cdef inline int32_t _step(const Prog* P, int32_t state, int c) noexcept:
    """The next state after ASCII c (0: dead).  A one-class run: state k has read k - 1
    characters (3, unbounded: any number)."""
    if P.run_class < 0:
        return P.dfa.bytes[(state << 8) | c] >> 1
    if state == 0 or not (P.classes[P.run_class].ascii[c >> 6] >> (c & 63)) & 1:
        return 0
    return 2 if P.run_max > 64 else (state + 1 if state <= P.run_max else 0)


cdef inline bint _may_end(const Prog* P, int32_t state) noexcept:
    """Whether a match may end in this state (before some next character or the end)."""
    cdef int k
    if P.run_class >= 0:
        return state >= 2
    for k in range(P.dfa.width):
        if P.dfa.trans[state * P.dfa.width + k] & 1:
            return True
    return False


cdef inline bint _ends_here(const Prog* P, int32_t state) noexcept:
    """Whether the match at the start of a text ends at its end, in this state there."""
    if P.run_class >= 0:
        return state >= 2
    return P.dfa.trans[state * P.dfa.width + P.dfa.eot] & 1


cdef bint _whole_matches(const Prog* A, const Prog* Bp) except -1:
    """Whether every match of the level A that is ASCII, cut by the next level Bp as its text,
    is one match of Bp (DeepSeek-LLM's `\\s?[A-Za-z...]+` then `\\s?[!-/:-~...]+`, whose class
    holds every ASCII letter): the chain then keeps such a piece whole without matching it.
    Both run together over every ASCII string (the pairs of states reachable, 128 bytes from
    each; automata, or a one-class run's count): wherever A may end a match, Bp's match must
    end at the text's end.  False without automata (backtracking, byte-level) or past 4M pairs."""
    cdef Py_ssize_t na = _states(A), nb = _states(Bp), top = 0, pair, nxt
    if na == 0 or nb == 0 or na * nb > (1 << 22):
        return False
    cdef uint8_t* seen = <uint8_t*>calloc(na * nb, 1)
    cdef int32_t* stack = <int32_t*>calloc(na * nb + 1, sizeof(int32_t))
    cdef int32_t sa, sb, ta, tb
    cdef int c
    cdef bint ok = True
    if seen == NULL or stack == NULL:
        free(seen)
        free(stack)
        raise MemoryError()
    stack[0] = 1 * nb + 1          # both start states; the empty string is no piece
    top = 1
    while top and ok:
        top -= 1
        pair = stack[top]
        sa, sb = pair // nb, pair % nb
        for c in range(128):
            ta = _step(A, sa, c)
            if ta == 0:
                continue
            tb = _step(Bp, sb, c)
            nxt = ta * nb + tb
            if seen[nxt]:
                continue
            seen[nxt] = 1
            if _may_end(A, ta) and not _ends_here(Bp, tb):
                ok = False
                break
            stack[top] = nxt
            top += 1
    free(seen)
    free(stack)
    return ok


def _optional_then_run(program):
    """(S, C) when the pattern is one sequence `S? C+` of two greedy class items (DeepSeek's
    `\\s?\\p{L}+`, Bloom's ` ?[^...]+`): opt_run_match matches it without the automaton;
    (-1, -1) otherwise."""
    items = memoryview(program.item_array).tolist()
    alt_start, alt_end, alt_seqs = (memoryview(a).tolist() for a in program.alt_arrays)
    seq_start, seq_end = (memoryview(a).tolist() for a in program.seq_arrays[:2])
    root = program.root
    if alt_end[root] - alt_start[root] != 1:
        return -1, -1
    seq = alt_seqs[alt_start[root]]
    if seq_end[seq] - seq_start[seq] != 2:
        return -1, -1
    a, b = (items[5 * i:5 * i + 5] for i in range(seq_start[seq], seq_end[seq]))
    if a[0] == T_CLASS and a[2:] == [0, 1, M_GREEDY] and b[0] == T_CLASS and b[2:] == [1, UNBOUNDED, M_GREEDY]:
        return a[1], b[1]
    return -1, -1
