"""Which of a GGUF file's special tokens llama.cpp's partition cuts, as one kernel call's plan.

llama.cpp (`tokenizer_st_partition`) cuts the special tokens out of a text one token at a time,
longest first, each token's occurrences left to right inside the fragments the longer ones left,
lstrip / rstrip dropping the C spaces beside an occurrence within its fragment.  The kernel
(`_added_split.encode_cut_texts`) finds tokens leftmost-longest.  Over tokens whose occurrences
never overlap (no token's proper suffix is another's proper prefix) both cut the same: any two
occurrences are apart or one holds the other, and both keep the outermost.  Tokens that can
overlap are put on different levels: the longest-first list cut into runs that do not, each
run a trie searched in the stretches between the runs before it (`CutLevels`), which is
llama.cpp's order.  A strip cannot cross another token of its level: when a level strips
spaces to the right, none of its tokens starts with a C space (to the left: ends with one)."""
from __future__ import annotations

from .._added_split import STRIP_LEFT, STRIP_RIGHT, CutLevels
from .._token_trie import TokenTrie
from .vocab import LSTRIP, RSTRIP

C_SPACE = " \t\n\v\f\r"   # C's isspace, which llama.cpp's lstrip/rstrip use
LONG_SPECIAL = 64   # characters: a special longer is found with str's `in`, not `regex`
_OVERLAP_BUDGET = 1 << 22   # characters of prefixes, summed: a few MB at most
_MAX_LEVELS = 8     # each level is one more search over the stretches
_LEVELED_WORDS = 4096   # tokens that overlap: levels found by bisection, each step a can_overlap


class SpecialCut:
    """The tries of one mode's special tokens: `raw` over the whole text, `second` in the
    stretches between its tokens, `deeper` (a CutLevels chain or None) in the stretches after
    that; None where a mode has fewer levels (no specials: the text is encoded whole)."""
    __slots__ = ("raw", "second", "deeper")

    def __init__(self, tries: list):
        tries = tries + [None] * (2 - len(tries))
        self.raw, self.second = tries[0], tries[1]
        deeper = None
        for trie in reversed(tries[2:]):
            deeper = CutLevels(trie, deeper)
        self.deeper = deeper


def special_cut(words: list, ids: list, attrs: list) -> SpecialCut | None:
    """The plan that cuts `words` (ids `ids`, longest first, llama.cpp's order) as llama.cpp
    does, or None when the kernel cannot (a token over LONG_SPECIAL characters, more than
    _MAX_LEVELS levels): the caller then cuts in Python."""
    if ids and max(map(len, words)) > LONG_SPECIAL:
        return None
    flags = [(STRIP_LEFT if attrs[i] & LSTRIP else 0) | (STRIP_RIGHT if attrs[i] & RSTRIP else 0) for i in ids]
    tries, k = [], 0
    while k < len(words):
        lo, hi = k + 1, len(words)       # words[k:lo] is a level; find the longest that is
        if _level_ok(words[k:], flags[k:]):
            lo = hi
        elif hi - k > _LEVELED_WORDS or not _level_ok(words[k:lo], flags[k:lo]):
            return None                  # too many to search for levels; a strip beside its own spaces
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if _level_ok(words[k:mid], flags[k:mid]):
                lo = mid
            else:
                hi = mid - 1
        tries.append(TokenTrie(words[k:lo], [i | f for i, f in zip(ids[k:lo], flags[k:lo])]))
        k = lo
        if len(tries) > _MAX_LEVELS:
            return None
    return SpecialCut(tries)


def _level_ok(words: list, flags: list) -> bool:
    """Whether one leftmost-longest search cuts `words` as llama.cpp's token-by-token passes."""
    if any(f & STRIP_RIGHT for f in flags) and any(w and w[0] in C_SPACE for w in words):
        return False
    if any(f & STRIP_LEFT for f in flags) and any(w and w[-1] in C_SPACE for w in words):
        return False
    return not can_overlap(words)


def can_overlap(words: list) -> bool:
    """Whether occurrences of two different tokens can overlap without one holding the other:
    a token's proper suffix is another token's proper prefix.  Two exceptions cut alike both
    ways, leftmost first: occurrences of one token ("ete" in "etete"), and runs of one
    character (GPT-NeoX's and MPT's user-defined runs of 2 to 24 spaces: in a run, llama.cpp's
    longest-first and leftmost-longest both take the longest run token that fits, from the left)."""
    def run_of(w: str) -> str | None:
        return w[0] if w and w.count(w[0]) == len(w) else None

    # The prefix table holds every prefix of every token: quadratic in a token's length.  Past
    # a budget (a stranger's file with a 64k-character special), answer "may overlap": the
    # caller then cuts with the Python partition, linear and always right, only slower.
    if sum(len(w) * len(w) for w in words) > _OVERLAP_BUDGET:
        return True
    # prefix -> [a word with it, several words have it, a word not a run has it]: O(1) a lookup
    prefixes = {}
    for w in set(words):
        plain = run_of(w) is None
        for k in range(1, len(w)):
            entry = prefixes.get(w[:k])
            if entry is None:
                prefixes[w[:k]] = [w, False, plain]
            else:
                entry[1] = True
                entry[2] = entry[2] or plain
    for w in set(words):
        plain = run_of(w) is None
        for k in range(1, len(w)):
            entry = prefixes.get(w[k:])
            # a run's suffix is a run of its character: only a word not a run overlaps it
            if entry is not None and (entry[2] if not plain else entry[1] or entry[0] != w):
                return True
    return False



