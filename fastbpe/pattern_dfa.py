"""Scanner programs as class-driven state machines: one table lookup per character.

The program matcher (`_scan_program`) backtracks: it tries a pattern's alternatives one after
another, a call and a class test per item, and gives characters back.  Tokenizer patterns are
alternations of character-class runs, so most of them need none of that: `build` turns a
compiled `pattern_program.Program` into a deterministic automaton over the program's
character classes that gives the backtracking matcher's match, character for character:

- The characters are cut into equivalence classes: code points that every atom of the
  pattern treats alike (from the atoms' own bit tables, so classes stay `regex`'s or
  Oniguruma's).  The C side looks a character's class up in two small tables.
- The pattern becomes a Thompson NFA whose epsilon edges are ordered as backtracking tries
  them (greedy: take one more first; lazy: stop first; alternatives left to right).  A state
  of the automaton is the ordered list of NFA threads alive after a character.  On the next
  character's class the threads' closures are walked in that order; reaching the match node
  records a match ending before the character and drops every later (lower-priority)
  thread — leftmost-first, as RE2 and Rust's regex build their DFAs.  The walk sees the next
  character first, so a one-character lookahead (`(?!\\S)`) and `\\Z` are tests inside it.
- What needs more than that stays on the backtracking matcher (`build` returns None):
  possessive quantifiers and atomic groups, `$`, lookaheads longer than one character, a
  repeated group that can match empty, more than 62 distinct atoms, 254 classes or
  MAX_STATES states.

The matcher runs the automaton from a position until no thread is alive; the last match
recorded is the match.  Exactness against the backtracking matcher and `regex` is fuzzed in
tests/test_pattern_dfa.py.
"""
from __future__ import annotations

from .pattern_program import LAZY, POSSESSIVE, T_CLASS, T_DOLLAR, T_END, T_GROUP, T_LOOK, T_NLOOK, UNBOUNDED

MAX_STATES = 4096        # automaton states (int32 rows of classes + 1 entries; state * 2 + 1 fits int16)
MAX_NODES = 8192         # NFA nodes (bounded repeats are copies)
_CHAR, _SPLIT, _ASSERT, _MATCH = range(4)


class _Refused(Exception):
    """The pattern needs the backtracking matcher."""


class Dfa:
    """The automaton's arrays for `_scan_program` (plain numpy data).

    `trans`: int32[n_states * width], width = classes + 1 (the last column: the text's end);
    an entry is next_state * 2 + (1 if a match ends before this character); state 0 is dead,
    1 the start.  `low`: uint8[256], the class of each code point < 256 (and of each byte of
    a byte-level program); `index`: uint16[4352], `rows`: uint8[rows * 256]: the class of a
    code point cp is rows[index[cp >> 8] * 256 + (cp & 255)]; `invalid`: the class of a byte
    that starts no UTF-8 character; `eot`: the end's column."""

    def __init__(self, trans, low, index, rows, invalid: int, eot: int):
        self.trans, self.low, self.index, self.rows = trans, low, index, rows
        self.invalid, self.eot = invalid, eot
        self.width = eot + 1
        self.n_states = len(trans) // self.width

    def byte_table(self):
        """int16[n_states << 8]: the transition of each state on each byte read as one
        character (ASCII; every byte of a byte-level program), so the matcher skips the class
        lookup for them: row `state` holds trans at the class of each byte (a row of 256 so
        the row's start is a shift; a program on UTF-8 never reads its upper half)."""
        import numpy as np
        table = np.asarray(self.trans).reshape(self.n_states, self.width)[:, np.asarray(self.low)]
        return np.ascontiguousarray(table, dtype=np.int16).reshape(-1)


def build(program) -> Dfa | None:
    """The automaton of a compiled program, or None when the pattern needs backtracking."""
    try:
        return _Builder(program).dfa()
    except _Refused:
        return None


class _Builder:
    def __init__(self, program):
        self.program = program
        self.atoms: dict[int, int] = {}      # table id -> bit in a class's signature
        self.op, self.mask, self.x, self.y = [], [], [], []

    # -- character classes -------------------------------------------------------------

    def _collect(self, alt) -> None:
        for seq in alt.seqs:
            for it in seq:
                if it.type == T_CLASS:
                    t = self.program.class_index(it.arg)
                    if t not in self.atoms:
                        self.atoms[t] = len(self.atoms)
                elif it.type in (T_GROUP, T_LOOK, T_NLOOK):
                    self._collect(it.arg)
        if len(self.atoms) > 62:
            raise _Refused("too many atoms")

    def _classes(self):
        import numpy as np
        tables = self.program.tables
        atoms = sorted(self.atoms, key=self.atoms.get)
        # the distinct combinations of the atoms' blocks, one row of classes each
        cols = np.ascontiguousarray(np.stack([tables[a][2] for a in atoms]).T)   # (4352, K)
        raw, width = cols.tobytes(), cols.shape[1] * 2
        seen: dict = {}
        block_row = np.array([seen.setdefault(raw[b * width:(b + 1) * width], len(seen))
                              for b in range(cols.shape[0])], dtype=np.uint16)
        combos = np.frombuffer(b"".join(seen), dtype=cols.dtype).reshape(len(seen), -1).T
        sig = np.zeros((combos.shape[1], 256), dtype=np.uint64)
        for k, a in enumerate(atoms):
            blocks = np.asarray(tables[a][3]).reshape(-1, 32)[combos[k]]
            bits = np.unpackbits(blocks, axis=1, bitorder="little").astype(np.uint64)
            sig |= bits << np.uint64(k)
        # a byte that starts no character is in no class: signature 0
        sigs, cls = np.unique(np.append(sig.reshape(-1), np.uint64(0)), return_inverse=True)
        if len(sigs) > 254:
            raise _Refused("too many classes")
        rows = cls[:-1].astype(np.uint8)
        self.n_classes = len(sigs)
        self.sigs = [int(s) for s in sigs]
        index = block_row
        low = rows[int(index[0]) * 256:int(index[0]) * 256 + 256].copy()
        return low, index, rows, int(cls[-1])

    def _mask_of(self, text: str) -> int:
        bit = self.atoms[self.program.class_index(text)]
        return sum(1 << c for c, s in enumerate(self.sigs) if (s >> bit) & 1)

    # -- the NFA ------------------------------------------------------------------------

    def _node(self, op: int, mask: int = 0, x: int = -1, y: int = -1) -> int:
        if len(self.op) >= MAX_NODES:
            raise _Refused("too many nodes")
        self.op.append(op)
        self.mask.append(mask)
        self.x.append(x)
        self.y.append(y)
        return len(self.op) - 1

    def _alt(self, alt, nxt: int) -> int:
        starts = [self._seq(seq, nxt) for seq in alt.seqs]
        out = starts[-1]
        for s in reversed(starts[:-1]):
            out = self._node(_SPLIT, x=s, y=out)
        return out

    def _seq(self, items, nxt: int) -> int:
        for it in reversed(items):
            nxt = self._item(it, nxt)
        return nxt

    def _item(self, it, nxt: int) -> int:
        eot = 1 << self.n_classes
        if it.type in (T_LOOK, T_NLOOK):
            if any(len(seq) != 1 or seq[0].type != T_CLASS or (seq[0].min, seq[0].max) != (1, 1)
                   for seq in it.arg.seqs):
                raise _Refused("a lookahead longer than one character")
            inside = 0
            for seq in it.arg.seqs:
                inside |= self._mask_of(seq[0].arg)
            allowed = inside if it.type == T_LOOK else (eot - 1) & ~inside | eot
            return self._node(_ASSERT, mask=allowed, x=nxt)
        if it.type == T_END:
            return self._node(_ASSERT, mask=eot, x=nxt)
        if it.type == T_DOLLAR:
            raise _Refused("$ looks two characters ahead")
        if it.mode == POSSESSIVE:
            raise _Refused("possessive or atomic")
        if it.type == T_CLASS:
            mask = self._mask_of(it.arg)

            def frag(k: int) -> int:
                return self._node(_CHAR, mask=mask, x=k)
        else:
            if it.max > 1 and _nullable(it.arg):
                raise _Refused("a repeated group that can match empty")

            def frag(k: int) -> int:
                return self._alt(it.arg, k)
        lazy = it.mode == LAZY
        if it.max >= UNBOUNDED:
            loop = self._node(_SPLIT)
            body = frag(loop)
            self.x[loop], self.y[loop] = (nxt, body) if lazy else (body, nxt)
            tail = loop
        else:
            tail = nxt
            for _ in range(it.max - it.min):
                body = frag(tail)
                tail = self._node(_SPLIT, x=nxt, y=body) if lazy else self._node(_SPLIT, x=body, y=nxt)
        for _ in range(it.min):
            tail = frag(tail)
        return tail

    # -- determinizing ------------------------------------------------------------------

    def _step(self, state: tuple, c: int):
        """(the threads alive after class c, whether a match ends before it) from `state`."""
        op, mask, xs, ys = self.op, self.mask, self.x, self.y
        bit = 1 << c
        seen = set()
        out, out_seen = [], set()
        stack = list(reversed(state))
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            o = op[n]
            if o == _CHAR:
                if mask[n] & bit and xs[n] not in out_seen:
                    out_seen.add(xs[n])
                    out.append(xs[n])
            elif o == _SPLIT:
                stack.append(ys[n])
                stack.append(xs[n])
            elif o == _ASSERT:
                if mask[n] & bit:
                    stack.append(xs[n])
            else:                      # the match: every thread after it has lower priority
                return tuple(out), True
        return tuple(out), False

    def dfa(self) -> Dfa:
        import numpy as np
        root = self.program.tree
        self._collect(root)
        low, index, rows, invalid = self._classes()
        match = self._node(_MATCH)
        start = self._alt(root, match)
        width = self.n_classes + 1
        ids = {(): 0, (start,): 1}
        order = [(), (start,)]
        trans = [0] * width           # the dead state: dead on everything
        i = 1
        while i < len(order):
            state = order[i]
            for c in range(width):
                nxt, matched = self._step(state, c)
                if c == self.n_classes:
                    nxt = ()          # the text's end: nothing follows
                got = ids.get(nxt)
                if got is None:
                    if len(order) >= MAX_STATES:
                        raise _Refused("too many states")
                    got = ids[nxt] = len(order)
                    order.append(nxt)
                trans.append(got * 2 + matched)
            i += 1
        return Dfa(np.asarray(trans, dtype=np.int32), low, index, rows, invalid, self.n_classes)


def _nullable(alt) -> bool:
    for seq in alt.seqs:
        if all(it.type in (T_LOOK, T_NLOOK, T_END, T_DOLLAR) or it.min == 0
               or (it.type == T_GROUP and _nullable(it.arg)) for it in seq):
            return True
    return False
