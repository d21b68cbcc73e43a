"""Added tokens of a tokenizer.json as HF tokenizers finds them: the ids HF assigns, single_word
with Unicode `\\w`, lstrip/rstrip spans that overlap or are empty, and a matcher built in linear
time for 100k+ tokens.  Every tokenizer.json is written here; HF's `tokenizers` is the oracle."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

tokenizers = pytest.importorskip("tokenizers", reason="the tokenizers package is the reference (pip install '.[test]')")

from hf_reference import assert_same_as_hf  # noqa: E402

from fastbpe._token_trie import TokenTrie  # noqa: E402
from fastbpe.hf import Tokenizer  # noqa: E402

ALPHABET = "ab <>xé\u0301\u200d\ufe0f½²_1"


def _spec(added, vocab=None, normalizer=None, pre_tokenizer=None, file_ids=False) -> str:
    """A char-level BPE file; the added tokens' ids are HF's unless file_ids (then as given)."""
    vocab = vocab if vocab is not None else {c: i for i, c in enumerate(ALPHABET)}
    if not file_ids:
        given: dict = {}
        for node in added:
            if node["content"] in vocab:
                node["id"] = vocab[node["content"]]
            else:
                node["id"] = given.setdefault(node["content"], len(vocab) + len(given))
    return json.dumps({"version": "1.0", "added_tokens": added, "normalizer": normalizer,
                       "pre_tokenizer": pre_tokenizer,
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


def _token(content, token_id=0, **flags) -> dict:
    node = {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": False}
    node.update(flags)
    return node


def _assert_same(spec: str, texts) -> None:
    ref, ours = tokenizers.Tokenizer.from_str(spec), Tokenizer.from_str(spec)
    assert ours.get_added_tokens_decoder().keys() == ref.get_added_tokens_decoder().keys()
    for text in texts:
        assert_same_as_hf(ref, ours, text)


# -- 4: ids -----------------------------------------------------------------------------------

def test_added_token_ids_are_assigned_as_hf_does():
    # the file's ids are wrong on purpose: content in the vocabulary keeps its vocabulary id, a
    # repeated content its first id, the rest take the next ids after the vocabulary's size
    vocab = {"a": 0, "b": 1, "ab": 2, "c": 7}
    added = [_token("x", 90), _token("ab", 3), _token("y", 4), _token("x", 1, special=True), _token("z", 0)]
    spec = _spec(added, vocab, file_ids=True)
    ref, ours = tokenizers.Tokenizer.from_str(spec), Tokenizer.from_str(spec)
    assert {i: t.content for i, t in ours.get_added_tokens_decoder().items()} == \
        {i: t.content for i, t in ref.get_added_tokens_decoder().items()} == {2: "ab", 4: "x", 5: "y", 6: "z"}
    assert ours.get_added_tokens_decoder()[4].special  # the later flags win
    assert ours.get_vocab_size() == ref.get_vocab_size()
    for text in ("xabyz", "zz ab x"):
        assert ours.encode(text).ids == ref.encode(text).ids
        assert ours.decode(ref.encode(text).ids, skip_special_tokens=True) == \
            ref.decode(ref.encode(text).ids, skip_special_tokens=True)


# -- 5: single_word ---------------------------------------------------------------------------

@pytest.mark.parametrize("neighbour", ["\u0301", "\ufe0f", "\u200d", "½", "²", "_", "1", "é", " "])
def test_single_word_uses_unicode_word_characters(neighbour):
    spec = _spec([_token("ab", single_word=True)])
    _assert_same(spec, [f"{neighbour}ab", f"ab{neighbour}", f"{neighbour}ab{neighbour}", f"a {neighbour}ab b"])


# -- 9: lstrip / rstrip -----------------------------------------------------------------------

def test_strip_spans_that_overlap_the_next_token():
    # "<a>" takes the spaces after it, " <b>" starts inside them: HF keeps both spans
    spec = _spec([_token("<a>", rstrip=True), _token(" <b>", lstrip=True), _token(" ", rstrip=True),
                  _token("b", lstrip=True, rstrip=True)])
    _assert_same(spec, ["<a>  <b>", "<a> <b>", "x  <a>   <b>  b  a", "  b  ", "<a>", " <a> "])


def test_added_tokens_with_random_flags_match_hf():
    rng = random.Random(20)
    contents = ["<a>", " <b>", "a", "b ", "é", " ", "xé", "½"]
    for trial in range(150):
        added = []
        for content in rng.sample(contents, rng.randint(1, 4)):
            flags = {k: rng.random() < 0.5 for k in ("single_word", "lstrip", "rstrip", "special")}
            added.append(_token(content, **flags))
        normalizer = {"type": "Lowercase"} if rng.random() < 0.3 else None
        if normalizer:
            for node in added:
                node["normalized"] = rng.random() < 0.5
        texts = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))) for _ in range(6)]
        _assert_same(_spec(added, normalizer=normalizer), texts)


_WS_ALPHABET = "1a \t\n\u3000"
_WS_CONTENTS = ["\t", "\n", " ", "\t\n", "a", "1", " a", "\u3000", "a\n"]


def test_strip_span_that_swallows_the_next_token():
    """Issue 29 item 8: "\t" (rstrip) takes "\n" with it; the "\n" token (lstrip) is then left
    with no text and HF drops it (ids [49, 256]), where fastbpe added an empty token."""
    vocab = {"1": 49, "a": 97, " ": 32}
    spec = _spec([_token("\t", 256, rstrip=True), _token("\n", 257, lstrip=True)], vocab, file_ids=True)
    ref = tokenizers.Tokenizer.from_str(spec)
    tab = ref.token_to_id("\t")
    assert ref.encode("1\t\n").ids == [49, tab]
    _assert_same(spec, ["1\t\n", "\t\n", "a\t\na", "\n\t\n", "\t \n1"])
    # HF panics ("AddedVocabulary bad split") when the swallowed token's lstrip start passes
    # its end; fastbpe drops it as it drops an empty one
    ours = Tokenizer.from_str(spec)
    assert ours.encode("1\t\n\n").ids == ours.encode_ids("1\t\n\n") == [49, tab]
    assert ours.encode("1\t\n\n").offsets == [(0, 1), (1, 4)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tokens=st.lists(st.tuples(st.sampled_from(_WS_CONTENTS), st.booleans(), st.booleans(), st.booleans()),
                       min_size=1, max_size=4, unique_by=lambda t: t[0]),
       texts=st.lists(st.text(alphabet=_WS_ALPHABET, max_size=12), min_size=1, max_size=4))
def test_whitespace_added_tokens_with_strip_flags_match_hf(tokens, texts):
    """Added tokens made of whitespace with random lstrip/rstrip/single_word, on whitespace-heavy
    texts, so strip spans overlap, swallow and empty each other: HF's ids, offsets, tokens
    (texts where HF panics are left out)."""
    vocab = {c: i for i, c in enumerate(_WS_ALPHABET)}
    added = [_token(c, single_word=w, lstrip=l, rstrip=r) for c, l, r, w in tokens]
    spec = _spec(added, vocab)
    ref = tokenizers.Tokenizer.from_str(spec)
    kept = []
    for text in texts:
        try:
            ref.encode(text)
        except BaseException as e:   # pyo3's PanicException ("AddedVocabulary bad split")
            if type(e).__name__ != "PanicException":
                raise
            continue
        kept.append(text)
    _assert_same(spec, kept)


# -- 15: the matcher --------------------------------------------------------------------------

def _leftmost_longest(tokens: list, text: str) -> list:
    first = {}
    for k, t in enumerate(tokens):
        first.setdefault(t, k)
    out, pos = [], 0
    while pos < len(text):
        hit = next(((s, e) for s in range(pos, len(text)) for e in range(len(text), s, -1)
                    if text[s:e] in first), None)
        if hit is None:
            break
        out.append((hit[0], hit[1], first[text[hit[0]:hit[1]]]))
        pos = hit[1]
    return out


@pytest.mark.parametrize("alphabet", ["ab😀", "abж", "abé", " x\n"])   # str kinds 4, 2, 1, 1
def test_token_trie_is_leftmost_longest(alphabet):
    """Also when every token starts with one character (the search then jumps between that
    character's occurrences), and with the positions passed where a character starts tokens
    but not with the next one (runs of spaces: a space before a letter)."""
    rng = random.Random(15)
    for k in range(2000):
        tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 6))]
        if k % 2:
            tokens = [alphabet[-1] + t for t in tokens]
        text = "".join(rng.choice(alphabet + "c") for _ in range(rng.randint(0, 20)))
        assert TokenTrie(tokens, range(len(tokens))).find(text) == _leftmost_longest(tokens, text), (tokens, text)


@pytest.mark.parametrize("alphabet", ["ab ", "aж ", "xé "])   # str kinds 1, 2, 1
def test_token_trie_skips_long_stretches(alphabet):
    """Long texts where tokens start rarely (1-4 first characters, runs of spaces among
    them): the root passes 16, then 8 bytes of units a step and reads a step with a
    candidate unit by unit; a token may start at any offset in a step or straddle two."""
    rng = random.Random(16)
    filler = "qrstuvwxyz.,"
    for k in range(400):
        tokens = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 4))]
        if k % 2:
            tokens += ["  ", "   "]
        text = "".join(rng.choice(alphabet) if rng.random() < 0.04 else rng.choice(filler)
                       for _ in range(rng.randint(0, 120)))
        assert TokenTrie(tokens, range(len(tokens))).find(text) == _leftmost_longest(tokens, text), (tokens, text)


@pytest.mark.parametrize("filler", ["abc’de", "abcdef", "ab😀cd"])   # str kinds 2, 1, 4
def test_token_trie_one_first_character_at_every_offset(filler):
    """Every token starts with "<" (GPT-J's, most files' specials): the search jumps between
    its occurrences (2-byte text eight units a step), so a "<" or a token at any offset of
    a step, at the text's end, or a "<" not followed by a token's second character."""
    tokens = ["<|endoftext|>", "<|x|>", "<|y"]
    trie = TokenTrie(tokens, range(len(tokens)))
    for n in range(0, 40):
        for token in ("<|x|>", "<|y", "<|endoftext|>", "<", "<|"):
            for at in range(n + 1):
                text = (filler * 8)[:at] + token + (filler * 8)[at:n]
                assert trie.find(text) == _leftmost_longest(tokens, text), (text, token)


@pytest.mark.parametrize("lengths", [range(2, 25), [2, 3, 5, 8, 13], [1, 4, 40], [3]])
@pytest.mark.parametrize("filler", ["ab\n", "aж\n", "a😀\n"])   # str kinds 1, 2, 4
def test_token_trie_runs_of_one_character(lengths, filler):
    """Tokens from a character that are all runs of it (GPT-NeoX's and Phi-2's runs of spaces,
    here of tabs too, with gaps in the lengths) are answered by the run's length: the longest
    token no longer than the run, at every run length 1-40 and offset, beside other tokens
    ("[PAD1]", " x" making the space's tokens no runs) and their neighbours."""
    rng = random.Random(17)
    runs = [c * k for c in " \t" for k in lengths]
    for others in ([], ["[PAD1]", "[PAD12]", "\n\n"], [" x", "\tb"]):
        tokens = runs + others
        trie = TokenTrie(tokens, range(len(tokens)))
        for k in range(1, 41):
            for lead in ("", "a", " ", "\t", "[PAD1"):
                text = lead + " " * k + "x" + "\t" * k
                assert trie.find(text) == _leftmost_longest(tokens, text), (tokens, text)
        for _ in range(150):
            text = "".join(rng.choice([" " * rng.randint(1, 40), "\t" * rng.randint(1, 40), rng.choice(filler),
                                       rng.choice(others or ["b"]), " \t", "x"]) for _ in range(rng.randint(0, 8)))
            assert trie.find(text) == _leftmost_longest(tokens, text), (tokens, text)


def test_token_trie_work_is_linear():
    # building: one node and one edge per distinct prefix; searching text without any token:
    # one step per character however many tokens start alike
    tokens = [f"<tok{k:06d}|>" for k in range(20_000)]
    trie = TokenTrie(tokens, range(len(tokens)))
    prefixes = {t[:k] for t in tokens for k in range(1, len(t) + 1)}
    assert trie.nodes == len(prefixes) + 1
    assert trie.build_steps <= 3 * sum(map(len, tokens))
    text = "<tok00" * 2000
    assert trie.search_steps(text) <= 2 * len(text)
    # a long near-miss ("a" * 50 + "b" against "a" * 1000): linear too
    near = TokenTrie(["a" * 50 + "b"], [0])
    assert near.search_steps("a" * 1000) <= 2 * 1000
    assert near.find("a" * 1000 + "b") == [(950, 1001, 0)]


def test_many_added_tokens_match_hf():
    tokens = [_token(f"<t{k}>", special=bool(k % 2)) for k in range(3000)]
    spec = _spec(tokens, {c: i for i, c in enumerate("<>t0123456789 ab")})
    _assert_same(spec, ["a <t12><t2999>b <t3000> <t", "<t1<t10>>"])


def test_engine_says_pipeline_while_a_char_level_file_matches_in_normalized_text():
    """A char-level file runs the pipeline while an added token is matched in normalized
    text (the char-level kernel normalizes inside its call): `engine` says so, and the ids
    are still HF's."""
    spec = _spec([_token("<s>", special=True)], normalizer={"type": "Replace", "pattern": {"String": " "},
                                                            "content": "▁"})
    ref, ours = tokenizers.Tokenizer.from_str(spec), Tokenizer.from_str(spec)
    assert ours.engine == "kernel"
    # a token without " " or "▁" matches where its text is under Replace(" " -> "▁") (Gemma's)
    for tok in (ref, ours):
        tok.add_tokens([tokenizers.AddedToken("xa", normalized=True)])
    assert ours.engine == "kernel"
    for text in ("xa b <s>xa", "ab xab", " xa ", "▁xa▁"):
        assert_same_as_hf(ref, ours, text)
    for tok in (ref, ours):
        tok.add_tokens([tokenizers.AddedToken("b▁", normalized=True)])
    assert ours.engine.startswith("pipeline (an added token matched in normalized text"), ours.engine
    for text in ("xa b <s>xa", "ab xab", "b b▁"):
        assert_same_as_hf(ref, ours, text)


@pytest.mark.parametrize("content", ["AB", "a  b", "E\u0301x", " <S> ", "x\t\nb", "\u00c9\u00c9"])
def test_normalized_tokens_under_a_regex_normalizer_match_hf(content):
    """A normalized added token's content goes through the normalizer's C program (CLIP's NFC,
    Replace(\\s+ -> " ") with a regex, Lowercase: no Oniguruma at its first encode): the same
    tokens and ids as HF, which runs its normalizer on the content."""
    normalizer = {"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": r"\s+"}, "content": " "}, {"type": "Lowercase"}]}
    spec = _spec([_token(content, normalized=True), _token("<S>", special=True)], normalizer=normalizer)
    _assert_same(spec, [f"a{content}b", content, f"{content}{content} ab <S>", content.lower() + " x"])
