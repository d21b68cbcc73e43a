"""HF's UnicodeScripts pre-tokenizer: a piece ends where the script changes.

Each character has HF's script (`script_ranges.py`, asked of tokenizers by
`tools/gen_hf_scripts.py`: SentencePiece's table, Hiragana, Katakana and U+30FC read as Han);
a character of no script (Any: " ", unassigned code points) never starts a piece and joins the
piece before it, and a piece's leading run of them is dropped (HF's ranges start at the first
change: " a" gives "a").  Lowered to two scanner levels (a scanner program holds at most 256
items, too few for one branch per script): script k is the digits (k // 12, k % 12), the first
level cuts where the first digit changes, the second, inside those pieces, where the second does;
each level's piece is `[d](?:[d or Any])*` for each digit d, the text before a piece's first
scripted character removed (drop="gaps")."""
from __future__ import annotations

import zlib
from functools import lru_cache

from ..plan import Level
from .normalized import NormalizedText
from .script_ranges import RANGES

ANY = 0
SCRIPTS = max(s for _, _, s in RANGES)
BASE = 12
# a level's atoms: a private-use character naming the scripts whose digit (level 0: k // BASE,
# level 1: k % BASE) is d, U+F0000 + 256 * level + d, or those and Any, U+F1000 + 256 * level + d;
# `_members` answers them (the program is compiled from these, never matched)
_ONE, _WITH_ANY = 0xF0000, 0xF1000
DIALECT = f"hf-scripts-{zlib.crc32(repr(RANGES).encode()):08x}"   # a new table is a new program


@lru_cache(maxsize=1)
def script_table() -> bytes:
    """HF's script number of each code point (0: Any)."""
    table = bytearray(0x110000)
    for first, last, script in RANGES:
        table[first:last + 1] = bytes([script]) * (last - first + 1)
    return bytes(table)


def _members(atom: str):
    import numpy as np

    code = ord(atom[1]) if len(atom) == 3 else -1   # "[c]"
    with_any = code >= _WITH_ANY
    level, digit = divmod(code - (_WITH_ANY if with_any else _ONE), 256)
    if not (_ONE <= code < _WITH_ANY + 512 and level in (0, 1)):
        raise ValueError(f"UnicodeScripts: unknown atom {atom!r}")
    table = np.frombuffer(script_table(), dtype=np.uint8)
    digits = table // BASE if level == 0 else table % BASE
    inside = (digits == digit) & (table != ANY)
    if with_any:
        inside |= table == ANY
    inside[0xD800:0xE000] = False
    return np.packbits(inside, bitorder="little")


class UnicodeScripts:
    def cut(self, t: NormalizedText) -> list:
        text, table = t.text, script_table()
        cuts, last = [], None
        for i, c in enumerate(text):
            script = table[ord(c)]
            if script != ANY and script != last:
                cuts.append(i)
                last = script
        cuts.append(len(text))
        return [t.slice(a, b) for a, b in zip(cuts, cuts[1:])]

    def pre_tokenize(self, pieces: list) -> list:
        return [p for t in pieces for p in self.cut(t)]

    def lower(self, byte_level: bool) -> list:
        """After ByteLevel (byte_level) the levels read each byte as its byte-level character,
        whose script the table gives (pattern_program.byte_level_members), as HF reads them."""
        levels = []
        for level, count in ((0, SCRIPTS // BASE + 1), (1, BASE)):
            at = 256 * level
            pattern = "|".join(f"[{chr(_ONE + at + d)}][{chr(_WITH_ANY + at + d)}]*" for d in range(count))
            levels.append(Level(pattern, DIALECT, byte_level=byte_level, members=_members, drop="gaps"))
        return levels
