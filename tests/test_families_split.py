"""Issue 28 "follow HF's semantics in general": HF's Split with multi-character String patterns
and regex patterns, on every behavior (Isolated, Removed, MergedWithPrevious, MergedWithNext,
Contiguous) with and without invert, against HF tokenizers live on generated text: the Python
stage (pre_tokenize_str, the reference) and whole files whose Split lowers to the kernel (the
engine each pattern and behavior gets is pinned: a change either way shows here)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import family_files as ff
from hf_reference import assert_same_as_hf
from test_families import _train_text

from tokenizers import Regex, Tokenizer as HFTokenizer, pre_tokenizers as hf_pre_tokenizers

from fastbpe.hf import Tokenizer, pre_tokenizers

BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")
_HF_BEHAVIOR = {"Isolated": "isolated", "Removed": "removed", "MergedWithPrevious": "merged_with_previous",
                "MergedWithNext": "merged_with_next", "Contiguous": "contiguous"}
# (kind, pattern): String patterns are matched literally, as HF escapes them
PATTERNS = [("String", "ab"), ("String", "aa"), ("String", "--"), ("String", " x"), ("String", "."),
            ("Regex", "[a-z]+"), ("Regex", "ab|a"), ("Regex", "a+b"), ("Regex", "\\d+\\.\\d+"), ("Regex", "(?:ab)+"),
            ("Regex", "x(?=y)"), ("Regex", "\\s+$"), ("Regex", "[,.]"), ("Regex", "'s|'t|\\s+"),
            ("Regex", "\\p{L}{2,3}"), ("Regex", "a[^a]"), ("Regex", "\\d+\\.\\d+|q"), ("Regex", "[|]x|(?:a|b)y"),
            ("Regex", "[a-z][a-z0-9]+"), ("Regex", "x[a-z]*"), ("Regex", "\\p{L}+|\\p{N}+")]
ALPHABET = "aabbxy -,.\n12.3's\tAé京q|"
TEXT = st.text(st.sampled_from(ALPHABET), max_size=40)


def _node(kind: str, pattern: str, behavior: str, invert: bool) -> dict:
    return {"type": "Split", "pattern": {kind: pattern}, "behavior": behavior, "invert": invert}


def _hf_split(kind: str, pattern: str, behavior: str, invert: bool):
    return hf_pre_tokenizers.Split(Regex(pattern) if kind == "Regex" else pattern, _HF_BEHAVIOR[behavior],
                                   invert=invert)


CASES = [(kind, pattern, behavior, invert) for kind, pattern in PATTERNS for behavior in BEHAVIORS
         for invert in (False, True)]


@settings(max_examples=400, deadline=None)
@given(case=st.sampled_from(CASES), text=TEXT)
def test_split_stage_generated(case, text):
    ours = pre_tokenizers.from_json(_node(*case))
    assert ours.pre_tokenize_str(text) == _hf_split(*case).pre_tokenize_str(text), case


_BASE: list = []
_BUILT: dict = {}


def _pair(case):
    """HF's and fastbpe's Tokenizer of a trained GPT-J-style file whose pre-tokenizer is the
    Split, then ByteLevel without its regex."""
    if case not in _BUILT:
        if not _BASE:
            _BASE.append(json.loads(HFTokenizer.from_str(ff.trained("gpt-j", _train_text())).to_str()))
        doc = json.loads(json.dumps(_BASE[0]))
        doc["pre_tokenizer"] = ff._seq(_node(*case), {"type": "ByteLevel", "add_prefix_space": False,
                                                     "trim_offsets": True, "use_regex": False})
        text = json.dumps(doc)
        _BUILT[case] = HFTokenizer.from_str(text), Tokenizer.from_str(text)
    return _BUILT[case]


# one character, or never followed by another match: every alternative ends with a class repeated without
# bound that holds every character a match starts with (split_behavior.never_adjacent)
_ONE_OR_RUN = {"[,.]", ".", "[a-z]+", "\\d+\\.\\d+", "[a-z][a-z0-9]+", "x[a-z]*"}


def engine(case) -> str:
    """The engine each case gets: every behavior lowers (MergedWith*: the gap taken lazily up
    to the next match), but Contiguous over a longer pattern whose matches can be adjacent, `(?:P)+`,
    a group repeated without bound, which the scanner-program matcher does not take."""
    _, pattern, behavior, invert = case
    if pattern == "(?:ab)+":     # itself a group repeated without bound: Oniguruma cuts
        return "kernel+matcher" if behavior == "Isolated" and not invert else "pipeline (Split regex '(?:ab)+' (outside the compiled subset"
    if behavior == "Contiguous" and pattern not in _ONE_OR_RUN:
        return "pipeline (Split behavior Contiguous with a pattern longer than one character"
    return "kernel"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES), text=TEXT)
def test_split_file_generated(case, text):
    ref, ours = _pair(case)
    assert ours.engine.startswith(engine(case)), (case, ours.engine)
    assert_same_as_hf(ref, ours, text)


@pytest.mark.parametrize("behavior", BEHAVIORS)
@pytest.mark.parametrize("invert", [False, True])
def test_split_file_long_runs(behavior, invert):
    """A long text with no match, and one with matches everywhere: the kernel's pieces are HF's."""
    for kind, pattern in (("String", "ab"), ("Regex", "a+b")):
        ref, ours = _pair((kind, pattern, behavior, invert))
        for text in ("x" * 5000, "ab" * 2000 + "a" * 3000, "aab " * 1000):
            assert ours.encode_ids(text) == ref.encode(text).ids
