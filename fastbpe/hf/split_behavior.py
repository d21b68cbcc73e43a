"""HF's split of a text by a pattern with a behavior (NormalizedString::split): the reference
cut (`split_by`), and each behavior as the pattern whose plain (Isolated) cut is the same
(`isolating`), which is how a Split, Punctuation or any step with a behavior lowers to one
scanner level."""
from __future__ import annotations

from .normalized import NormalizedText
from ..plan import NotLowered

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")


def split_by(t: NormalizedText, matcher, behavior: str, invert: bool = False) -> list:
    """HF's NormalizedString::split with a pattern: the text tiled by (span, is_match), empty
    matches included (they change what MergedWith*/Contiguous join), then merged."""
    text = t.text
    if not text:
        return []
    tiles, prev = [], 0
    for start, end in matcher.spans(text):
        if prev != start:
            tiles.append((prev, start, False))
        tiles.append((start, end, True))
        prev = end
    if prev != len(text):
        tiles.append((prev, len(text), False))
    if invert:
        tiles = [(s, e, not m) for s, e, m in tiles]
    spans = []  # (start, end, removed)
    if behavior == "Isolated":
        spans = [(s, e, False) for s, e, _ in tiles]
    elif behavior == "Removed":
        spans = tiles
    elif behavior == "Contiguous":
        previous = False
        for s, e, m in tiles:
            if m == previous and spans:
                spans[-1] = (spans[-1][0], e, False)
            else:
                spans.append((s, e, False))
            previous = m
    elif behavior == "MergedWithPrevious":
        previous = False
        for s, e, m in tiles:
            if m and not previous and spans:
                spans[-1] = (spans[-1][0], e, False)
            else:
                spans.append((s, e, False))
            previous = m
    elif behavior == "MergedWithNext":
        previous = False
        for s, e, m in reversed(tiles):
            if m and not previous and spans:
                spans[-1] = (s, spans[-1][1], False)
            else:
                spans.append((s, e, False))
            previous = m
        spans.reverse()
    else:
        raise ValueError(f"tokenizer.json: unknown split behavior {behavior!r}")
    return [t.slice(s, e) for s, e, removed in spans if not removed and e > s]


def never_adjacent(prog) -> bool:
    """Whether no match of a compiled pattern can start where one ends: every top-level
    alternative ends with a class repeated without bound (not lazily: nothing after it, so a
    match ends where that run of the class does) holding every character a match can start
    with.  Contiguous then cuts as Isolated does (`\\d+\\.\\d+`, `[a-z][a-z0-9]+`)."""
    import numpy as np

    from ..program_items import LAZY, T_CLASS
    if prog.root_first < 0:
        return False

    def bits(cls: int):    # (ascii lo, hi, the 256-code-point blocks of code points 128 and up)
        lo, hi, index, blocks = prog.tables[cls]
        table = np.frombuffer(bytes(blocks), dtype=np.uint8).reshape(-1, 32)[np.frombuffer(bytes(index), dtype=np.uint16)]
        table[0, :16] = 0
        return lo, hi, table

    first_lo, first_hi, first = bits(prog.root_first)
    alt_start, alt_end, alt_seqs = prog.alt_arrays
    seq_start, seq_end, _ = prog.seq_arrays
    items = prog.item_array
    for a in range(int(alt_start[prog.root]), int(alt_end[prog.root])):
        seq = int(alt_seqs[a])
        if seq_end[seq] <= seq_start[seq]:
            return False
        kind, cls, _, most, mode = (int(x) for x in items[5 * (int(seq_end[seq]) - 1):5 * int(seq_end[seq])])
        if kind != T_CLASS or most < 1 << 30 or mode == LAZY:
            return False
        lo, hi, table = bits(cls)
        if first_lo & ~lo or first_hi & ~hi or (first & ~table).any():
            return False
    return True


def isolating(pattern: str, behavior: str, run, alternatives: int = 1, adjacent: bool = True) -> str:
    """The pattern whose Isolated cut is `behavior`'s cut by `pattern` (never empty: compiled;
    `run`: its program's (class, max) when it is one class repeated; `adjacent`: False when
    `never_adjacent` holds): Contiguous joins runs of
    matches, MergedWithPrevious ends a piece after each match, MergedWithNext starts one at it
    (the gap is taken lazily up to where the next match starts: the matcher repeats no group
    without bound); a longer pattern's text after its last match is one piece (second branch).
    MergedWithNext puts each of the pattern's top-level alternatives first as it is, one branch
    each, not in a group: the matcher then knows what each branch needs and skips text without it
    (digits, no ".", by `\\d+\\.\\d+|q`: linear, not one failed match per digit)."""
    if behavior == "Isolated":
        return pattern
    one_char = run is not None and run[1] == 1
    if behavior == "Contiguous" and one_char:
        return f"(?:{pattern})+"
    if behavior == "Contiguous" and (not adjacent or (run is not None and run[1] >= 1 << 30)):
        return pattern    # no match starts where one ends (a run without bound...): Isolated's cut
    if behavior == "MergedWithPrevious" and one_char:
        return f"(?:(?!{pattern})[\\s\\S])*(?:{pattern})"
    if behavior == "MergedWithPrevious":
        return f"[\\s\\S]*?(?:{pattern})|[\\s\\S]+(?![\\s\\S])"
    if behavior == "MergedWithNext" and one_char:
        return f"(?:{pattern})(?:(?!{pattern})[\\s\\S])*"
    if behavior == "MergedWithNext":
        branches = top_level_branches(pattern)
        if len(branches) != alternatives:     # (a spelling the split misreads: one group, as correct)
            branches = [f"(?:{pattern})"]
        return "|".join(f"{b}[\\s\\S]*?(?=(?:{pattern})|(?![\\s\\S]))" for b in branches)
    raise NotLowered(f"Split behavior {behavior} with a pattern longer than one character (the matcher "
                     "repeats no group without bound)")


# invert swaps matches and gaps: a match merged with the gap before it is a gap merged with the match after
INVERTED = {"MergedWithPrevious": "MergedWithNext", "MergedWithNext": "MergedWithPrevious"}


def top_level_branches(pattern: str) -> list:
    """pattern's text cut at its top-level `|` (outside groups, sets and escapes); `(?:a|b)X`
    matches as `aX|bX`, each branch in turn."""
    out, depth, in_set, opened, start, i = [], 0, 0, 0, 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
        elif in_set:
            if c == "[":
                in_set, opened = in_set + 1, i
            elif c == "]" and not (i == opened + 1 or (i == opened + 2 and pattern[i - 1] == "^")):
                in_set -= 1       # (a "]" first in a set is the character)
        elif c == "[":
            in_set, opened = 1, i
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    return out + [pattern[start:]]
