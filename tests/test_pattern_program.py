"""Scanner programs (fastbpe.pattern_program + fastbpe._scan_program) against the regex package.

Every pattern of the model zoo that compiles (fastbpe.patterns, llama.cpp's regexes of
gguf.pretokenizers) is run as a program and compared with regex piece by piece: matches and the
text between them (the gap-keeping cut of llama.cpp and HF Split(Isolated)), and for patterns
whose matches tile every text, regex.findall.  Chains of regexes run as one program are compared
with llama.cpp's step-by-step cut on regex.  Other tests fail if a model-zoo pattern silently
falls back to regex, check restarts at every piece end, threads, and that no input takes
quadratic time.
"""
from __future__ import annotations

import os
import random

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastbpe import _pretokenize, _scan_program, _testing, pattern_program, patterns
from fastbpe.gguf.pretokenizers import LLAMA3, PRE_TOKENIZERS, QWEN2, REGEXES, Splitter as GGUFSplitter, to_python
from fastbpe.pretokenize import Splitter, chain_kind, program_kind, program_refusal

from reference_encode import with_gaps

FUZZ = float(os.environ.get("FASTBPE_FUZZ", "1"))
hyp = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _zoo() -> list[str]:
    out = [getattr(patterns, k) for k in dir(patterns) if k.endswith("_PATTERN")]
    for exprs in REGEXES.values():
        out += [to_python(e) for e in exprs if "AFMoE" not in e]
    return list(dict.fromkeys(out))


ZOO = _zoo()
COMPILED = []
for _pat in ZOO:
    try:
        COMPILED.append((_pat, _scan_program.register(("test", _pat), [pattern_program.compile_pattern(_pat)])))
    except pattern_program.Unsupported:
        pass

CHARS = list("aZzs09 '\t\n\r.,!?-_$+<=>^~|`\"()[]{}/\\") + [
    "é", "ß", "\u017f", "\u212a", "K", "\u0301", "中", "가", "ア", "😀", "🦙", "\xa0", "\u2028", "\u3000", "\x85",
    "١", "Ⅷ", "½", "ǅ", "ʰ", "ｱ", "İ", "ı", "Ω", "ﬀ", "\u200d", "\x1c", "！", "…", "。", "µ"]
FRAGMENTS = ["'s", "'S", "'ll", "'Re", "'ve", "'D", " the", "The", "HELLOworld", "helloWorld", "123456", " 42",
             "   ", "\n\n", " \n ", "\r\n", "...", "don't", "<sentinel:12>", "IMGIMGABZ", "\t\n", "    ", "x" * 5]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.sampled_from(CHARS),
                           st.text(alphabet=st.sampled_from(CHARS), min_size=1, max_size=4)),
                 max_size=25).map("".join)


def test_the_model_zoo_compiles():
    refused = {p: program_refusal(p, gaps=True) for p in ZOO if program_kind(p, gaps=True) < 0}
    # a repeated group (superbpe's lookahead, exaone-moe's words) is all that is refused
    assert all("group repeated" in why for why in refused.values()), refused
    assert len(refused) <= 2 and len(COMPILED) >= len(ZOO) - 2


@pytest.mark.fuzz
@settings(hyp, max_examples=int(300 * FUZZ))
@given(texts)
def test_programs_cut_as_regex(text):
    for pat, kind in COMPILED:
        assert _pretokenize.split(text, kind) == with_gaps(regex.compile(pat), text), pat


@pytest.mark.fuzz
@settings(hyp, max_examples=int(200 * FUZZ))
@given(st.text(max_size=30))
def test_programs_cut_as_regex_any_unicode(text):
    for pat, kind in COMPILED:
        assert _pretokenize.split(text, kind) == with_gaps(regex.compile(pat), text), pat


@pytest.mark.parametrize("pat", [p for p, _ in COMPILED])
def test_total_programs_equal_findall(pat):
    """A pattern whose matches tile every text runs as a program for findall's users too."""
    if not pattern_program.compile_pattern(pat).total:
        pytest.skip("matches leave gaps: only for gap-keeping users")
    rng = random.Random(7)
    split = Splitter(pat)
    assert split.kind >= 0 and split.engine in ("scanner", "program")
    for _ in range(300):
        text = "".join(rng.choice(CHARS + FRAGMENTS) for _ in range(rng.randrange(0, 30)))
        assert split.findall(text) == [m.group() for m in regex.finditer(pat, text)], text


def _chain_reference(pre) -> GGUFSplitter:
    ref = GGUFSplitter(pre, force_regex=True)
    assert ref.engine == "regex"
    return ref


@pytest.mark.parametrize("kind", sorted(REGEXES))
def test_chains_cut_as_llama_cpp_steps(kind):
    pre = next(p for p in PRE_TOKENIZERS.values() if p.kind == kind)
    fast, ref = GGUFSplitter(pre), _chain_reference(pre)
    if fast.engine != "program":
        pytest.skip(f"not a program: {fast.engine}")
    chars = CHARS + FRAGMENTS
    if LLAMA3 in REGEXES[kind] or QWEN2 in REGEXES[kind]:
        # a built-in level (the C scanner's Llama-3 pattern) reads the contractions with (?i:
        # ...), llama.cpp with [sS]: they differ on U+017F and U+212A, before programs too
        chars = [c for c in chars if c not in ("\u017f", "\u212a")]
    rng = random.Random(sum(map(ord, kind)))
    for _ in range(int(600 * FUZZ)):
        text = "".join(rng.choice(chars) for _ in range(rng.randrange(0, 30)))
        assert fast.split(text) == ref.split(text), (kind, text)


@pytest.mark.parametrize("name", ["falcon", "deepseek-coder", "deepseek-llm", "starcoder", "command-r", "refact",
                                  "default", "bloom", "viking", "chameleon", "gpt-4o", "tekken", "qwen35",
                                  "seed-coder", "jais-2", "smollm"])
def test_model_zoo_runs_as_a_program(name):
    """Fails if one of these silently falls back to regex.  (deepseek-v3 is a built-in kind since
    320f3f0: test_builtin_chains.test_gguf_deepseek3_chain_is_the_kind.)"""
    split = GGUFSplitter(PRE_TOKENIZERS[name])
    assert split.engine == "program" and split.scanner_kind >= 64, split
    assert "scanner program" in repr(split)
    assert GGUFSplitter(PRE_TOKENIZERS[name], force_regex=True).engine == "regex"


def test_engine_is_visible_and_force_regex_is_kept(monkeypatch):
    pat = r"\p{L}+|\p{N}{1,3}|[^\p{L}\p{N}]+"
    split = Splitter(pat)
    assert (split.engine, split.kind >= 64, _pretokenize.pattern_kind(pat)) == ("program", True, split.kind)
    assert "engine=program" in repr(split)
    assert Splitter(patterns.CL100K_PATTERN).engine == "scanner"
    monkeypatch.setenv("FASTBPE_FORCE_REGEX", "1")
    forced = Splitter(pat)
    assert forced.engine == "regex" and forced.kind == -1 and "FORCE_REGEX" in repr(forced)


@pytest.mark.parametrize("pat, why", [
    (r"(?<=a)b|.", "group kind"), (r"\bfoo\b|.", "\\b"), (r"(a)\1|.", "\\1"), (r"^a|.", "'^'"),
    (r"a*", "empty"), (r"(?:ab)+|.", "repeated without bound"), (r"(?x) a |.", "group kind"),
])
def test_outside_the_subset_uses_regex_and_says_why(pat, why):
    split = Splitter(pat)
    assert split.engine == "regex" and why in split.refusal, split.refusal
    assert split.findall("ab abb") == [m.group() for m in regex.finditer(pat, "ab abb")]


def test_findall_users_never_get_a_pattern_with_gaps():
    pat = r"\w+"                                   # spaces match nothing: findall drops them
    assert Splitter(pat).engine == "regex" and program_kind(pat) == -1
    kind = program_kind(pat, gaps=True)
    assert kind >= 64 and _pretokenize.split("ab  c", kind) == ["ab", "  ", "c"]


def test_encoding_with_a_custom_pattern_runs_the_program(monkeypatch):
    from fastbpe.encoding import Encoding
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"he": 256, b"ll": 257, b"hell": 258, b" w": 259, b"12": 260})
    pat = r"\p{L}+|\p{N}{1,2}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
    enc = Encoding("custom", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    monkeypatch.setenv("FASTBPE_FORCE_REGEX", "1")
    slow = Encoding("custom", pat_str=pat, mergeable_ranks=ranks, special_tokens={})
    assert enc._splitter.engine == "program" and slow._splitter.engine == "regex"
    for text in ["hello world 12345!!", "  héllo\n\n wörld 中文 😀", "", " 1"]:
        assert enc.encode_ordinary(text) == slow.encode_ordinary(text), text
    assert enc.encode_batch(["hello 12"] * 50, num_threads=2) == [slow.encode_ordinary("hello 12")] * 50


def test_piece_end_at_every_boundary_restarts_exactly():
    """A scan may start at any piece end: single programs restart anywhere, chains replay."""
    rng = random.Random(3)
    kinds = [k for _, k in COMPILED[:12]] + [GGUFSplitter(PRE_TOKENIZERS[n]).scanner_kind
                                           for n in ("falcon", "deepseek-llm", "starcoder")]
    for kind in kinds:
        for _ in range(30):
            data = "".join(rng.choice(CHARS + FRAGMENTS) for _ in range(rng.randrange(1, 20))).encode()
            ends = list(_pretokenize.piece_boundaries(data, kind))
            for start, end in zip([0] + ends, ends):
                assert _testing.piece_end_at(data, kind, int(start)) == end


def test_chain_scans_in_many_batches_and_threads_agree():
    """The encode kernel resumes a chain at its last end (per-thread state); 2 threads at once."""
    from concurrent.futures import ThreadPoolExecutor
    kind = GGUFSplitter(PRE_TOKENIZERS["falcon"]).scanner_kind
    rng = random.Random(5)
    docs = ["".join(rng.choice(CHARS + FRAGMENTS) for _ in range(3000)).encode() for _ in range(4)]
    want = [list(_pretokenize.piece_boundaries(d, kind)) for d in docs]
    with ThreadPoolExecutor(2) as pool:
        got = list(pool.map(lambda d: list(_pretokenize.piece_boundaries(d, kind)), docs * 3))
    assert got == want * 3


def test_case_insensitive_letters_follow_regex():
    kind = program_kind(r"(?i:'s|'k|ss)|.", gaps=True)
    for text in ["'\u017f", "'S", "'\u212a", "'K", "\u017fS", "'x"]:
        assert _pretokenize.split(text, kind) == regex.findall(r"(?i:'s|'k|ss)|.", text), text


def _steps(kind: int, data: bytes) -> int:
    """The scanner-program matcher's steps to cut data (work counted, not timed)."""
    _scan_program.steps_taken()
    _pretokenize.piece_boundaries(data, kind)
    return _scan_program.steps_taken()


@pytest.mark.parametrize("name", ["falcon", "deepseek-llm", "deepseek-coder", "gpt-4o", "jais-2", "bloom"])
def test_no_input_takes_quadratic_time(name):
    """Runs of one character (and a run then a character that ends every match attempt) take
    linear work: 4x the text, about 4x the matcher's steps (quadratic would be 16x)."""
    kind = GGUFSplitter(PRE_TOKENIZERS[name]).scanner_kind
    for c in [" ", "a", "A", "1", ".", "\n", "\u4e2d", "'", "\xa0", "\u0301"]:
        for tail in ["", "x", "\u4e2d", "!"]:
            small, big = (c * k + tail for k in (1 << 14, 1 << 16))
            s_small, s_big = _steps(kind, small.encode()), _steps(kind, big.encode())
            assert s_big <= 5 * s_small + 64 and s_big <= 16 * len(big) + 64, (name, c, tail, s_small, s_big)


def test_steps_count_backtracking_work():
    """The counter sees quadratic work where there is some: a lazy run that must reach the
    text's end from every start (no memo for lazy runs) is counted as such."""
    kind = program_kind(r"a+?$|a", gaps=True)
    if kind < 0:
        pytest.skip("not a scanner program: " + str(program_refusal(r"a+?$|a", gaps=True)))
    small, big = _steps(kind, b"a" * 500 + b"b"), _steps(kind, b"a" * 2000 + b"b")
    assert big > 10 * small, (small, big)


def test_chain_kind_refuses_cleanly():
    assert chain_kind([r"\p{N}", r"(?<=x)y"])[0] == -1
    with pytest.raises(ValueError, match="invalid split pattern"):
        pattern_program.compile_pattern("(")


def test_only_the_scanner_tables_limits_fall_back_to_regex(monkeypatch):
    """A chain the scanner's fixed tables cannot take (more levels than MAX_LEVELS) splits with
    regex and says why; any other error of registration is a bug and is raised, not hidden
    behind a slow "pipeline" engine (a cached program that failed to load did that once)."""
    kind, why = chain_kind([r"\p{L}+|\P{L}+"] * 9)
    assert kind == -1 and "levels" in why

    def broken(key, levels):
        raise ValueError("invalid literal for int() with base 10: b'\\x00'")
    monkeypatch.setattr(_scan_program, "register", broken)
    with pytest.raises(ValueError, match="invalid literal"):
        chain_kind([r"\p{L}+|\P{L}+", r"[a-z]+|[^a-z]+"])


# -- random patterns of the subset: the matcher's structure against regex's ------------------

ATOMS = ["a", "b", "s", "[ab]", "[^a\\n]", r"\s", r"\S", r"\p{L}", r"\d", ".", " ", "'", "(?i:s)", r"\n"]
QUANTS = ["", "", "?", "*", "+", "{1,2}", "{2}", "{0,3}", "{2,}"]


@st.composite
def subset_patterns(draw, depth=0):
    def item():
        kind = draw(st.integers(0, 9 if depth < 2 else 6))
        if kind <= 6:
            atom = draw(st.sampled_from(ATOMS))
        elif kind == 7:
            atom = "(?:" + draw(subset_patterns(depth + 1)) + ")"
        elif kind == 8:
            return draw(st.sampled_from(["(?=", "(?!"])) + draw(st.sampled_from(ATOMS + ["$"])) + ")"
        else:
            return draw(st.sampled_from(["$", r"\Z"]))
        q = draw(st.sampled_from(QUANTS))
        return atom + q + (draw(st.sampled_from(["", "?", "+"])) if q else "")
    seqs = ["".join(item() for _ in range(draw(st.integers(1, 3)))) for _ in range(draw(st.integers(1, 3)))]
    return "|".join(seqs)


@pytest.mark.fuzz
@settings(hyp, max_examples=int(400 * FUZZ))
@given(subset_patterns(), st.lists(st.text(alphabet=st.sampled_from("ab sS'\n1é中\u017fK."), max_size=12),
                                   min_size=1, max_size=4))
def test_random_subset_patterns_cut_as_regex(pat, some_texts):
    try:
        kind = program_kind(pat, gaps=True)
    except ValueError:
        return                      # regex rejects it too (e.g. a bad repeat)
    if kind < 0:
        return
    rx = regex.compile(pat)
    for text in some_texts:
        assert _pretokenize.split(text, kind) == with_gaps(rx, text), (pat, text)


# -- HF Split(Isolated) regexes: programs with Oniguruma's classes -----------------------------

HF_PATTERNS = [r"\p{N}{1,3}", r"[\p{P}\p{S}]+", r"\w+|\W+", r"\s?\p{L}+", r" ?[^\s\p{L}\p{N}]+[\r\n]*",
               REGEXES["deepseek3"][2], REGEXES["gpt4o"][0], r"[一-龥぀-ゟ゠-ヿ]+", r"\d+|[^\d]+",
               # case-insensitive ASCII literals: Oniguruma's folding per letter ("s" is also U+017F)
               r"(?i:'s)|\w+|\W", r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|\s+|.",
               # Oniguruma's `$` (end of a line), spelled as it reads it (hf.oniguruma.onig_text): DeepSeek-LLM
               r"\s+$", r"x$|[$\s]+$|\S"]


@pytest.mark.parametrize("pat", HF_PATTERNS)
def test_hf_split_programs_cut_as_oniguruma(pat):
    pytest.importorskip("onigurumacffi")
    from fastbpe.hf.normalized import NormalizedText
    from fastbpe.hf.oniguruma import compile_split_pattern
    from fastbpe.hf.pre_tokenizers import Split, split_by
    split = Split({"Regex": pat}, "Isolated", False)
    assert split.engine == "program" and split.kind >= 64, pat
    onig = compile_split_pattern("test", {"Regex": pat})
    rng = random.Random(11)
    # Oniguruma's Unicode version differs from regex's: new letters and digits are in the text
    chars = CHARS + ["\u0c5c", "\U00011de0", "\U000323b0", "\u0295", "'", "\u017f", "\u212a", "S", "\u00df"]
    for _ in range(400):
        text = "".join(rng.choice(chars + FRAGMENTS) for _ in range(rng.randrange(1, 25)))
        t = NormalizedText.from_original(text)
        assert [p.text for p in split.pre_tokenize([t])] == [p.text for p in split_by(t, onig, "Isolated")], text


# "ss" (U+00DF folds to it: one character for two atoms); a possessive {m,n}
@pytest.mark.parametrize("pat", [r"(?i:'ss)|\w+|\W", r"\p{N}{1,3}+|\D"])
def test_hf_split_keeps_oniguruma_where_it_reads_otherwise(pat):
    pytest.importorskip("onigurumacffi")
    from fastbpe.hf.pre_tokenizers import Split
    assert Split({"Regex": pat}, "Isolated", False).engine == "oniguruma"


# a "-" beside a nested set: pasted in, it would make a range (`[x[-y]]` is {x, -, y}; review's finding)
@pytest.mark.parametrize("pat", [r"[x[-y]]+", r"[[a]-z]+", r"[m[-x]]+", r"[[a-]z]+", r"[q[ab]c]+"])
def test_hf_split_nested_sets_cut_as_oniguruma(pat):
    pytest.importorskip("onigurumacffi")
    from fastbpe.hf.normalized import NormalizedText
    from fastbpe.hf.oniguruma import compile_split_pattern
    from fastbpe.hf.pre_tokenizers import Split, split_by
    split = Split({"Regex": pat}, "Isolated", False)
    onig = compile_split_pattern("test", {"Regex": pat})
    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice("abcmqxyz-_[] ") for _ in range(rng.randrange(1, 20)))
        t = NormalizedText.from_original(text)
        assert [p.text for p in split.pre_tokenize([t])] == [p.text for p in split_by(t, onig, "Isolated")], text


# one character from each UTF-8 length and many lead bytes (2-byte C2-DF, 3-byte E0-EF, 4-byte F0-F4)
_LEADS = ["a", "7", " ", "\u00b2", "\u00e9", "\u0416", "\u0663", "\u07c1", "\u0905", "\u0967", "\u3042", "\u3007",
          "\u4e00", "\u9fa5", "\uac00", "\uff11", "\U0001d7ce", "\U00020000", "\U0001f600", "\U000104a0", "\U0010fffd"]


@pytest.mark.parametrize("pat", [r"\p{N}{1,3}", r"[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", r"[\u00b2\u0660-\u0669]+",
                                 r"\p{Nd}+", r"[\U00020000-\U0002a6df]+"])
def test_one_class_levels_skip_characters_by_lead_byte(pat):
    """A one-class level passes a character whose UTF-8 lead byte starts no member without
    decoding it (run_next): the cut equals regex's on text mixing every character length."""
    kind = chain_kind([pat, r"\S+|\s+"])[0]
    assert kind >= 0
    rng = random.Random(sum(map(ord, pat)))
    for _ in range(int(400 * FUZZ)):
        text = "".join(rng.choice(_LEADS) for _ in range(rng.randrange(1, 40)))
        outer = with_gaps(regex.compile(pat), text)
        want = [q for piece in outer for q in with_gaps(regex.compile(r"\S+|\s+"), piece)]
        assert _pretokenize.split(text, kind) == want, text
