"""Split patterns read in tiktoken's dialect (Rust's fancy-regex), as tiktoken reads them
(fastbpe/regex_dialects.py): the translated constructs compared with tiktoken live on generated
patterns and texts, the refused ones refused by name, the known patterns kept as they are."""
from __future__ import annotations

import itertools
import pickle

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import fastbpe
from helpers import BYTE_RANKS, toy_encoding
from fastbpe import patterns, regex_dialects
from fastbpe.regex_dialects import FANCY_REGEX, DialectError, to_regex

tiktoken = pytest.importorskip("tiktoken")

# every piece of at most 3 of these characters is one token, so ids show where pieces end
_TOKEN_CHARS = "ab A1_\n\t'.é"
_RANKS = {bytes([i]): i for i in range(256)}
for _n in (2, 3):
    for _t in itertools.product(_TOKEN_CHARS, repeat=_n):
        _RANKS.setdefault("".join(_t).encode(), len(_RANKS))
_TEXT_CHARS = _TOKEN_CHARS + "BZkK\u212aſЖж٣½²\u00a0\u2028\u200d\x1c\x85\r\v\f-"


def _ids(module, pat: str, text: str, **kw):
    enc = module.Encoding("dialect", pat_str=pat, mergeable_ranks=_RANKS, special_tokens={}, **kw)
    return enc.encode_ordinary(text)


def _tiktoken_ids(pat: str, text: str):
    try:
        return _ids(tiktoken, pat, text)
    except BaseException as e:   # tiktoken panics (PanicException) on an empty match
        if type(e).__name__ == "PanicException":
            return None
        raise


@pytest.mark.parametrize("pat, text", [
    (r"\w+$|\w|\s", "abc\n"),                      # issue 29 item 6: $ is the end of text only
    (r"[\p{L}&&\p{Lu}]+|.|\n", "aBBc\n"),          # class intersection
    (r"\s+$|\S+|\s", "ab \n"),
    (r"[a-z--[aeiou]]+|.", "bead"),                # class difference, nested class
    (r"[\w~~\d]+|.", "ab12_"),                     # symmetric difference
    (r"[[:alpha:]]+|.", "abé"),                    # ASCII classes
    (r"\x{41}+|\u{e9}|.", "AAé"),
    (r"(?m)^.|.|\n", "ab\nab\n"),
    (r"a\Z|.|\n", "a\n\n"),
    (r"\h+|.", "aF9g"),
])
def test_tiktoken_dialect_examples(pat, text):
    assert _ids(fastbpe, pat, text) == _tiktoken_ids(pat, text)


_ATOMS = [r"\s", r"\S", r"\w", r"\W", r"\d", r"\D", r"\p{L}", r"\p{Lu}", r"\p{N}", r"\P{L}",
          r"[\p{L}&&\p{Lu}]", r"[\w--\d]", r"[a-z&&[^aeiou]]", r"[\s~~\p{Zs}]", r"[[:alpha:]]",
          r"[[:^space:]]", r"[[:digit:][:punct:]]", ".", "a", "b", " ", r"\n", r"\x{e9}", r"\u{41}",
          r"\h", r"[^\r\n\p{L}\p{N}]", r"\p{^L}", r"\O", r"\N", "'", r"[\]a-]", r"[^\s\p{L}]",
          r"(?i:k)", r"(?i:[a-c])", r"(?i:ſ)", r"(?s:.)", r"\e", r"[\t-\r]"]
_ZERO_WIDTH = ["$", "^", r"\z", r"\Z", r"\A", r"\b", r"\B", r"(?!\S)", r"(?=\s)", r"(?<=a)",
               r"(?<!\s)", r"(?m:$)", r"(?m:^)", r"(?<=\s+)", r"(?=\n*\z)"]
_MANDATORY_Q = ["", "+", "{1,3}", "++", "+?", "{2}", "{1,}"]
_OPTIONAL_Q = ["*", "?", "{,2}", "*+", "??", "{0,1}"]


@st.composite
def _branches(draw):
    parts = []
    for _ in range(draw(st.integers(0, 2))):
        if draw(st.booleans()):
            parts.append(draw(st.sampled_from(_ZERO_WIDTH)))
        else:
            parts.append(draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_OPTIONAL_Q)))
    # one part that cannot match empty, so tiktoken never sees an empty match (it panics there)
    parts.insert(draw(st.integers(0, len(parts))),
                 draw(st.sampled_from(_ATOMS)) + draw(st.sampled_from(_MANDATORY_Q)))
    body = "".join(parts)
    wrap = draw(st.sampled_from(["{}", "(?:{})", "(?>{})", "(?i:{})", "(?s:{})", "(?m:{})", "({})"]))
    return wrap.format(body)


@st.composite
def _patterns(draw):
    branches = draw(st.lists(_branches(), min_size=1, max_size=4))
    prefix = draw(st.sampled_from(["", "", "(?i)", "(?m)", "(?s)", "(?ms)"]))
    return prefix + "|".join(branches)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pat=_patterns(), text=st.text(alphabet=_TEXT_CHARS, max_size=14))
def test_translated_patterns_give_tiktokens_ids(pat, text):
    expected = _tiktoken_ids(pat, text)
    assume(expected is not None)
    assert _ids(fastbpe, pat, text) == expected, (pat, to_regex(pat, FANCY_REGEX))


@pytest.mark.parametrize("pat, construct", [
    (r"(a)\1", "backreference"), (r"(?P<x>a)(?P=x)", "group kind"), (r"\k<x>", "named backreference"),
    (r"a(?i)b", "flags set in the middle"), (r"(?x)a b", "x (verbose) flag"), (r"(?U)a+", "swap greed"),
    (r"(?R)a", "CRLF"), (r"\b+", "quantifier on an assertion"), (r"(?=a)*", "quantifier on a lookaround"),
    (r"\K", r"\K"), (r"\G", r"\G"), (r"\R", r"\R"), (r"\b{start}", "word-boundary kind"),
    (r"\<a", "word-start"), (r"\p{word}", r"\p{word}"), (r"\p{alnum}", r"\p{alnum}"),
    (r"(?#c)a", "group kind"), (r"(*FAIL)", "backtracking verb"), (r"a+?+", "lazy possessive"),
])
def test_untranslatable_constructs_are_refused_by_name(pat, construct):
    with pytest.raises(ValueError, match="split pattern") as info:
        fastbpe.Encoding("x", pat_str=pat, mergeable_ranks=_RANKS, special_tokens={})
    assert isinstance(info.value, DialectError) and construct in info.value.construct


@pytest.mark.parametrize("pat", [r"a**", r"(a", r"\q", r"[a"])
def test_patterns_tiktoken_refuses_are_refused(pat):
    with pytest.raises(ValueError):
        _ids(tiktoken, pat, "a")
    with pytest.raises(ValueError):
        _ids(fastbpe, pat, "a")


def test_known_patterns_keep_their_text_and_scanner():
    for pat in patterns.BY_NAME.values():
        assert to_regex(pat, FANCY_REGEX) == pat
    assert fastbpe.get_encoding("cl100k_base").splitter.engine == "scanner"


def test_regex_dialect_reads_python_regex():
    """pattern_dialect="regex" (fastbpe's trainers) keeps Python's meaning of $, and pickles."""
    enc = fastbpe.Encoding("py", pat_str=r"\w+$|\w|\s", mergeable_ranks=_RANKS, special_tokens={},
                           pattern_dialect=regex_dialects.REGEX)
    assert enc.splitter.findall("abc\n") == ["abc", "\n"]
    again = pickle.loads(pickle.dumps(enc))
    assert again.pattern_dialect == "regex" and again.encode("abc\n") == enc.encode("abc\n")
    tt = fastbpe.Encoding("tt", pat_str=r"\w+$|\w|\s", mergeable_ranks=_RANKS, special_tokens={})
    assert pickle.loads(pickle.dumps(tt)).encode("abc\n") == _tiktoken_ids(r"\w+$|\w|\s", "abc\n")


def test_other_dialects_are_not_translated():
    with pytest.raises(ValueError, match="Oniguruma"):
        to_regex(r"\w+$", regex_dialects.ONIGURUMA)
    with pytest.raises(ValueError, match="unknown regex dialect"):
        to_regex(r"a", "pcre")


# -- patterns with capture groups split by whole matches, as tiktoken --

@pytest.mark.parametrize("pat", [r"(\w+)|\s+|[^\w\s]+", r"(\w)(\w*)|(\s+)|[^\w\s]+"])
def test_capture_groups_use_whole_matches(pat):
    import tiktoken

    text = "Hello, world! foo bar"
    enc = toy_encoding(pat)
    tt = tiktoken.Encoding("toy", pat_str=pat, mergeable_ranks=BYTE_RANKS,
                           special_tokens={"<|endoftext|>": 256})
    assert enc.encode(text) == tt.encode(text)
    assert enc.decode(enc.encode(text)) == text
    counts = fastbpe.trainer.count_pieces([text], pat, num_threads=1).to_dict()
    assert counts == {b"Hello": 1, b",": 1, b" ": 3, b"world": 1, b"!": 1, b"foo": 1, b"bar": 1}
