"""Scanner programs run as state machines (fastbpe/pattern_dfa.py) cut exactly as the
backtracking matcher and `regex` do.

Every pattern registered through `pretokenize` gets its automaton when it has one; the same
compiled program registered straight with `_scan_program.register` (no `dfa` attribute) runs
on the backtracking matcher, so each test compares the two engines on one program."""
from __future__ import annotations

import os

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastbpe import _pretokenize, _scan_program, pattern_dfa, pattern_program, patterns
from fastbpe.gguf.pretokenizers import REGEXES, to_python
from fastbpe.plan import Level

from reference_encode import with_gaps
from fastbpe.pretokenize import chain_kind, program_kind

FUZZ = float(os.environ.get("FASTBPE_FUZZ", "1"))
hyp = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

DEEPSEEK_V3 = REGEXES["deepseek3"][2]
MINIMAX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
           r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
           r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def chain_reference(levels):
    """The chain cut level by level with `regex`: each level's pattern inside the pieces of the
    one before, a level's removed pieces (its `drop`: "matches" or "gaps") left out."""
    steps = [(regex.compile(level.pattern), getattr(level, "drop", None)) for level in levels]

    def reference(text):
        pieces = [text]
        for rx, dropped in steps:
            out = []
            for piece in pieces:
                at = 0
                for m in rx.finditer(piece):
                    if m.start() > at and dropped != "gaps":
                        out.append(piece[at:m.start()])
                    if m.end() > m.start() and dropped != "matches":
                        out.append(m.group())
                    at = m.end()
                if at < len(piece) and dropped != "gaps":
                    out.append(piece[at:])
            pieces = out
        return pieces
    return reference


def _zoo() -> list[str]:
    out = [getattr(patterns, k) for k in dir(patterns) if k.endswith("_PATTERN")]
    for exprs in REGEXES.values():
        out += [to_python(e) for e in exprs if "AFMoE" not in e]
    return list(dict.fromkeys(out + [MINIMAX]))


def _both(pat: str):
    """(kind on the automaton, kind on the backtracking matcher) of one compiled program, or
    None when the pattern is outside the program subset or needs backtracking."""
    try:
        prog = pattern_program.compile_pattern(pat)
    except (pattern_program.Unsupported, ValueError):
        return None
    dfa = pattern_dfa.build(prog)
    if dfa is None:
        return None
    back = _scan_program.register(("test-backtrack", pat), [prog])
    prog2 = pattern_program.compile_pattern(pat)
    prog2.dfa = dfa
    auto = _scan_program.register(("test-dfa", pat), [prog2])
    return auto, back


ZOO = [(p, k) for p in _zoo() if (k := _both(p)) is not None]

CHARS = list("aZzs09 '\t\n\r.,!?-_$+<=>^~|`\"()[]{}/\\") + [
    "é", "ß", "\u017f", "\u212a", "K", "\u0301", "中", "가", "ア", "😀", "\xa0", "\u2028", "\u3000", "\x85",
    "١", "Ⅷ", "½", "ǅ", "ʰ", "ｱ", "İ", "Ω", "\u200d", "！", "…", "。"]
FRAGMENTS = ["'s", "'S", "'ll", "'Re", " the", "The", "HELLOworld", "helloWorld", "123456", " 42", "   ",
             "\n\n", " \n ", "\r\n", "...", "don't", "\t\n", "        ", "x" * 5, "    def f(x):\n"]
texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(CHARS),
                           st.text(alphabet=st.sampled_from(CHARS), min_size=1, max_size=4)),
                 max_size=30).map("".join)


def test_the_tokenizer_patterns_get_an_automaton():
    """The patterns that ran slowest on backtracking (DeepSeek-V3's third Split, MiniMax's, the
    Llama-3 family's) compile to small automata; possessive ones stay on backtracking."""
    names = {p for p, _ in ZOO}
    for pat in (DEEPSEEK_V3, MINIMAX, patterns.LLAMA3_PATTERN, patterns.QWEN2_PATTERN):
        assert pat in names, pat
        dfa = pattern_dfa.build(pattern_program.compile_pattern(pat))
        assert dfa.n_states < 64 and dfa.eot < 40
    assert pattern_dfa.build(pattern_program.compile_pattern(r"\p{L}++|\s")) is None
    assert pattern_dfa.build(pattern_program.compile_pattern(r"a+$|a")) is None


@pytest.mark.fuzz
@settings(hyp, max_examples=int(300 * FUZZ))
@given(texts)
def test_automata_cut_as_backtracking_and_regex(text):
    data = text.encode("utf-8", "surrogatepass")
    for pat, (auto, back) in ZOO:
        assert list(_pretokenize.piece_boundaries(data, auto)) == list(_pretokenize.piece_boundaries(data, back)), pat
        assert _pretokenize.split(text, auto) == with_gaps(regex.compile(pat), text), pat


@pytest.mark.fuzz
@settings(hyp, max_examples=int(150 * FUZZ))
@given(st.binary(max_size=40))
def test_automata_cut_invalid_utf8_as_backtracking(data):
    """Bytes that are not UTF-8 (the kernel never passes them, the matcher still must not
    differ or read past the end)."""
    for pat, (auto, back) in ZOO:
        assert list(_pretokenize.piece_boundaries(data, auto)) == list(_pretokenize.piece_boundaries(data, back)), pat


ATOMS = ["a", "b", "s", "[ab]", "[^a\\n]", r"\s", r"\S", r"\p{L}", r"\d", ".", " ", "'", "(?i:s)", r"\n"]
QUANTS = ["", "", "?", "*", "+", "{1,2}", "{2}", "{0,3}", "{2,}", "??", "*?", "+?", "{1,3}?"]


@st.composite
def subset_patterns(draw, depth=0):
    def item():
        kind = draw(st.integers(0, 9 if depth < 2 else 6))
        if kind <= 6:
            atom = draw(st.sampled_from(ATOMS))
        elif kind == 7:
            atom = "(?:" + draw(subset_patterns(depth + 1)) + ")"
        elif kind == 8:
            return draw(st.sampled_from(["(?=", "(?!"])) + draw(st.sampled_from(ATOMS + ["a|b", r"\s|\d"])) + ")"
        else:
            return r"\Z"
        return atom + draw(st.sampled_from(QUANTS))
    seqs = ["".join(item() for _ in range(draw(st.integers(1, 3)))) for _ in range(draw(st.integers(1, 3)))]
    return "|".join(seqs)


@pytest.mark.fuzz
@settings(hyp, max_examples=int(500 * FUZZ))
@given(subset_patterns(), st.lists(st.text(alphabet=st.sampled_from("ab sS'\n1é中\u017fK."), max_size=14),
                                   min_size=1, max_size=4))
def test_random_patterns_on_the_automaton_cut_as_regex(pat, some_texts):
    """Lazy and greedy repeats, counted repeats of groups, one-character lookaheads and \\Z:
    the automaton's leftmost-first matches are regex's (the text between matches kept)."""
    try:
        kinds = _both(pat)
    except ValueError:
        return
    if kinds is None:
        return
    rx = regex.compile(pat)
    for text in some_texts:
        want = with_gaps(rx, text)
        assert _pretokenize.split(text, kinds[0]) == want, (pat, text)
        assert _pretokenize.split(text, kinds[1]) == want, (pat, text)


def test_registered_programs_run_on_their_automaton():
    kind = program_kind(DEEPSEEK_V3, gaps=True)
    assert kind >= 64
    _scan_program.steps_taken()
    _pretokenize.piece_boundaries(b"hello world " * 100, kind)
    # the automaton's steps are the characters it reads: about one per byte
    assert _scan_program.steps_taken() < 2 * 1200


@pytest.mark.parametrize("tail", ["", "x", "\u4e2d", "!", "\n"])
@pytest.mark.parametrize("run", [" ", "a", "A", "1", ".", "\n", "\u4e2d", "\xa0", " \n"])
def test_long_runs_stay_linear(run, tail):
    """An automaton run that reads far past its result (`\\s+\\Z` over spaces then a letter)
    hands the positions it read to the backtracking matcher: 4x the text, about 4x the work."""
    for pat in [r"\s+\Z|\S+|\s", r"\s*[\r\n]+|\s+(?!\S)|\s+|\S", DEEPSEEK_V3, MINIMAX]:
        kind = program_kind(pat, gaps=True)
        small, big = ((run * k + tail).encode() for k in (1 << 12, 1 << 14))
        _scan_program.steps_taken()
        _pretokenize.piece_boundaries(small, kind)
        s_small = _scan_program.steps_taken()
        _pretokenize.piece_boundaries(big, kind)
        s_big = _scan_program.steps_taken()
        assert s_big <= 5 * s_small + 64 and s_big <= 16 * len(big) + 64, (pat, run, tail, s_small, s_big)


def test_run_levels_skip_ascii_exactly():
    """A chain level that is one class repeated (DeepSeek-V3's CJK runs) skips ASCII eight bytes
    at a time: a class character at every offset, at the end, and none at all."""
    levels = [Level(r"\p{N}{1,3}", "regex"), Level(r"[一-龥぀-ゟ゠-ヿ]+", "regex"), Level(DEEPSEEK_V3, "regex")]
    kind, why = chain_kind(levels)
    assert kind >= 64, why
    reference = chain_reference(levels)

    for k in range(40):
        for c in ["中", "7", "é", "\n", ""]:
            text = "ab cd" * 3 + "x" * k + c + " tail" * (k % 3)
            assert _pretokenize.split(text, kind) == reference(text), text


# (outer level, inner level, whether the inner level keeps every ASCII match of the outer whole)
_WHOLE_PAIRS = [
    (r"\s?[A-Za-z]+", r"\s?[!-/:-~]+", True),       # DeepSeek-LLM: its "punctuation" holds every ASCII letter
    (r"\s?\p{L}+", r"\s?[!-/:-~]+", True),          # (a non-ASCII letter is outside: checked per piece)
    (r"\d|[a-z]+", r"\s?[a-z0-9]+", True),
    (r"\d+|[a-z]+", r"[a-z0-9]+", True),
    (r"\d|[a-z]+", r"[a-z]+(?!\d)|\d", True),       # the inner level's text ends with the piece
    (r"[a-z]+", r"\s?[a-z]+", True),                # one-class levels: counted runs
    (r"[a-z]{1,3}", r"\d|[a-z]{1,3}", True),
    (r"[a-z]{1,4}", r"[a-z]{1,3}", False),
    (r"\s?[A-Za-z]+", r"\s?\p{P}+", False),
    (r"\s?[a-z]+", r"\s?[a-y]+", False),            # "z"
    (r"[a-z]+", r"[a-z]{1,3}", False),              # four letters
    (r"\s?[a-z]+", r"[a-z]+", False),               # " a": a gap, then a match
    (r" ?[a-z]+|\s+(?!\S)|\s+", r"\S+|\s+", False),  # " a"
    (r"[a-z]+(?=\d)|[a-z]", r"[a-z]", False),       # "ab" before a digit
]


@pytest.mark.parametrize("outer,inner,whole", _WHOLE_PAIRS)
def test_levels_that_keep_the_outer_matches_whole(outer, inner, whole):
    """Registration runs both automata over every ASCII string (_whole_matches): a level is
    marked only when every ASCII match of the level before is one match of it; a chain with
    such a level cuts as the levels do one by one, on texts longer than a window (1 KiB),
    non-ASCII letters inside the outer matches, and removed pieces."""
    levels = [Level(r"[\r\n]", "regex"), Level(outer, "regex"), Level(inner, "regex"), Level(r"\p{N}", "regex")]
    kind, why = chain_kind(levels)
    assert kind >= 64, why
    assert _scan_program.whole_levels(kind)[2:] == [whole, False]
    reference = chain_reference(levels)

    import random
    rng = random.Random(sum(map(ord, outer + inner)))
    alphabet = list("abcdyzAZ09 .,!?-_'\n\r\t") + ["ab", " the", "xyz1", "é", "µ", "中", "  ", "z" * 5]
    for k in range(int(120 * FUZZ)):
        size = rng.choice([3, 10, 40, 700 if k % 4 else 1500])
        text = "".join(rng.choice(alphabet) for _ in range(size))
        assert _pretokenize.split(text, kind) == reference(text), (outer, inner, text)


@pytest.mark.parametrize("outer", [[r"\s?[A-Za-z]+", r"\s?[!-/:-~]+"], [r"[a-z]+"]])
@pytest.mark.parametrize("anchored", [r"\s+(?:(?=\n)|(?![\s\S]))", r"\s+$", r"\s+\Z", r"[a ]+(?=\n)", r"\s+(?=[\n.])"])
def test_anchored_levels_skip_pieces_exactly(outer, anchored):
    """A level whose matches end before a stop or at the piece's end (DeepSeek-LLM's `\\s+$`)
    copies the outer pieces before the next stop byte whose last character is outside its class
    without matching them (chain_window): cut as the levels one by one, with stops, non-ASCII
    characters and pieces ending in the class anywhere, on texts longer than a window."""
    levels = ([Level(r"[\r\n]", "regex")] + [Level(p, "regex") for p in outer]
              + [Level(anchored, "regex"), Level(r"\p{N}", "regex")])
    kind, why = chain_kind(levels)
    assert kind >= 64, why
    reference = chain_reference(levels)

    import random
    rng = random.Random(sum(map(ord, anchored)))
    alphabet = list("abcAZ09 .,!-\n\t\x7f") + [" the", "  ", "a ", "\x01 ", "é", " \u00a0", "中", " . ", "x" * 9]
    for k in range(int(150 * FUZZ)):
        size = rng.choice([2, 8, 40, 700 if k % 4 else 1500])
        text = "".join(rng.choice(alphabet) for _ in range(size))
        assert _pretokenize.split(text, kind) == reference(text), (anchored, text)


@pytest.mark.parametrize("pat", [r"\s?\p{L}+", r" ?[^\s.,!?]+", r"[ab]?[bc]+", r"a?a+", r"\s?[a \t]+", r"\d?\D+",
                                 r"[^a]?[^b]+", r"é?[a-zé中]+"])
def test_optional_then_run_levels_cut_as_regex(pat):
    """A level `S?C+` (DeepSeek's `\\s?\\p{L}+`, Bloom's) is matched by opt_run_match, not the
    automaton: S's character only when C's follows, then C's longest run, S and C overlapping
    or not; alone and as the second level of a chain, on text with every UTF-8 length."""
    rng = __import__("random").Random(sum(map(ord, pat)))
    alphabet = list("abc \t.,!?19\n") + ["é", "中", "\U0001f600", " é", "  ", "ab" * 5]
    for levels in ([Level(pat, "regex")], [Level(r"[\r\n]", "regex"), Level(pat, "regex"), Level(r"\p{N}", "regex")]):
        kind, why = chain_kind(levels)
        assert kind >= 64, why
        reference = chain_reference(levels)
        for k in range(int(150 * FUZZ)):
            text = "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 3, 12, 60, 1300])))
            assert _pretokenize.split(text, kind) == reference(text), (pat, text)


@pytest.mark.parametrize("inner", [(r"\s+$", None), (r"\s", "matches"), (r"[,\n]", "matches"), (r"[a-z]+", "gaps"),
                                   (r"\s?[a-z]+", None), (r"[,.]", None), (r"\p{N}", "matches")])
def test_one_character_pieces_kept_or_removed_as_regex(inner):
    """A one-character outer piece is one piece of any level (chain_window copies it without
    matching) unless the level removes its matches or its gaps, where it must be matched:
    the `\\n` of every line, `,`, one digit, one non-ASCII letter, cut as the levels one by one
    with removed pieces left out."""
    pat, drop = inner
    levels = [Level(r"[\r\n]", "regex"), Level(r"\s?[!-/:-@]+", "regex"), Level(pat, "regex", drop=drop),
              Level(r"\p{N}", "regex")]
    kind, why = chain_kind(levels)
    assert kind >= 64, why
    reference = chain_reference(levels)

    rng = __import__("random").Random(sum(map(ord, pat)))
    alphabet = list("ab ,.\n\n1\t") + ["é", "中", " x", ", ", "\u00a0"]
    for k in range(int(150 * FUZZ)):
        text = "".join(rng.choice(alphabet) for _ in range(rng.choice([1, 2, 9, 60, 1300])))
        assert _pretokenize.split(text, kind) == reference(text), (pat, drop, text)


@pytest.mark.parametrize("later", [[r"[\u4e00-\u9fff]+", r"\p{N}"], [r"\p{N}+", r"[,;]"], [r"[\u4e00-\u9fff]+"]])
@pytest.mark.parametrize("drop", [None, "matches"])
def test_levels_without_their_class_in_a_window_leave_it_as_is(later, drop):
    """A run level with no character of its class in a window's pieces takes the pieces of
    the level before as they are (no copy): CJK and Digits on English text.  Long texts of
    letters where the class is rare or absent, pieces longer than a window (carried over), a
    removed level before; cut as the levels one by one with removed pieces left out."""
    levels = ([Level(r"[\r\n]", "regex"), Level(r"\s?[A-Za-z]+", "regex"), Level(r"[!.]", "regex", drop=drop)]
              + [Level(p, "regex") for p in later])
    kind, why = chain_kind(levels)
    assert kind >= 64, why
    reference = chain_reference(levels)

    rng = __import__("random").Random(len(later) + (drop is None))
    common = [" the", " word", "s", "!", ".", "\n", "  ", "x" * 1500, " " * 1300, "é"]
    rare = ["1", "中", ",", "2024", "京い"]
    for k in range(int(60 * FUZZ)):
        size = rng.choice([5, 300, 2500])
        text = "".join(rng.choice(rare) if rng.random() < 0.004 else rng.choice(common[:7] if rng.random() < 0.98
                       else common) for _ in range(size))
        assert _pretokenize.split(text, kind) == reference(text), (later, drop, text)


@pytest.mark.parametrize("first", [r"[\r\n]", r"\n", r"[\r\n]+", r"[,;]"])
def test_byte_run_levels_found_by_memchr_as_regex(first):
    """A run level whose class is one or two ASCII bytes (`[\\r\\n]`) finds its next character
    by memchr, 512 bytes at a time (bytes_next): lone \\r, \\r\\n, no line end for more than
    512 bytes, non-ASCII text; alone and before DeepSeek-like levels."""
    rng = __import__("random").Random(sum(map(ord, first)))
    alphabet = list("ab ,;.\r\n") + ["\r\n", "é", "中", " word", "x" * 40]
    for levels in ([Level(first, "regex")], [Level(first, "regex"), Level(r"\s?\p{L}+", "regex"),
                                            Level(r"\s+(?:(?=\n)|(?![\s\S]))", "regex")]):
        kind, why = chain_kind(levels)
        assert kind >= 64, why
        reference = chain_reference(levels)
        for k in range(int(100 * FUZZ)):
            text = "".join(rng.choice(alphabet[:-1] if k % 3 else alphabet[-3:]) for _ in range(rng.choice([1, 5, 80, 900])))
            assert _pretokenize.split(text, kind) == reference(text), (first, text)
