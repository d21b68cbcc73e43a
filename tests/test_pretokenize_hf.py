"""The scanner's Hugging Face patterns (Qwen2, Qwen3.5, Llama-3, tokenizers' ByteLevel regex) cut text
as `tokenizers` itself does (Oniguruma, not `regex`: the fuzzing against `regex` is in
test_pretokenize.py).  Texts here use characters whose properties no recent Unicode version
changed, so the two engines' Unicode versions do not matter."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbpe import _pretokenize as pt
from fastbpe import patterns as P
from fastbpe.pretokenize import scanner_kind

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is the reference for HF pre-tokenizing")
from tokenizers import Regex, pre_tokenizers  # noqa: E402

TEXTS = [
    "Hello world, it's 12345 o'clock! I'LL be there; we've 3.14159 apples.",
    "  leading\n\n\ttabs\r\n  and   trailing   \n",
    "x=1234567;y=[a1b22c333];\n    return f(x)  # comment\n",
    "Zahlen ١٢٣٤ und ½ ², Ⅻ; 東京 2024年 Ünïcödé naïve café — “quotes” ’s 'S 'Re",
    "日本語のテキスト。中文，한국어 텍스트! Привет, мир 42",
    "emoji 👍🏽 mixed😀text\u200b zero\u00a0width  \u3000 ideographic space",
    "''s '' 'll's don't DON'T 1'2'3 !!!??? ...\n\n\n   ",
]

SPLITS = {
    "qwen2": pre_tokenizers.Split(Regex(P.QWEN2_PATTERN), behavior="isolated"),
    "qwen35": pre_tokenizers.Split(Regex(P.QWEN35_PATTERN), behavior="isolated"),
    "llama3": pre_tokenizers.Split(Regex(P.LLAMA3_PATTERN), behavior="isolated"),
    "o200k": pre_tokenizers.Split(Regex(P.O200K_PATTERN), behavior="isolated"),     # MiniMax's split
    "tekken": pre_tokenizers.Split(Regex(P.TEKKEN_PATTERN), behavior="isolated"),   # Mistral's
}


def hf_pieces(name: str, text: str) -> list[str]:
    if name == "hf_gpt2":  # the ByteLevel pre-tokenizer maps bytes to its alphabet: compare raw pieces
        pre = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        offsets = [span for _, span in pre.pre_tokenize_str(text)]
        return [text[a:b] for a, b in offsets]
    return [piece for piece, _ in SPLITS[name].pre_tokenize_str(text)]


@pytest.mark.parametrize("name", ["qwen2", "qwen35", "llama3", "o200k", "tekken", "hf_gpt2"])
def test_scanner_matches_tokenizers(name):
    kind = scanner_kind(P.BY_NAME[name], force_regex=False)
    assert kind == pt.KINDS[name] >= 0
    for text in TEXTS + ["".join(TEXTS)]:
        assert pt.split(text, kind) == hf_pieces(name, text), text


def test_qwen2_digits_are_single():
    kind = pt.KINDS["qwen2"]
    assert pt.split("a12345 ١٢", kind) == ["a", "1", "2", "3", "4", "5", " ", "١", "٢"]
    assert pt.split("a12345", pt.KINDS["llama3"]) == ["a", "123", "45"]


def test_shared_hf_files_use_known_patterns():
    """The patterns are the exact text of the real files (the scanner matches by text)."""
    import json

    from datasources import HF_GPT2_JSON

    root = HF_GPT2_JSON.parent.parent
    found = 0
    for model, name in [("qwen2.5", "qwen2"), ("deepseek-r1-distill-llama-8b", "llama3")]:
        path = root / model / "tokenizer.json"
        if not path.exists():
            continue
        pre = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]
        assert pre["pretokenizers"][0]["pattern"]["Regex"] == P.BY_NAME[name]
        found += 1
    if not found:
        pytest.skip("no shared HF tokenizer.json files (../shared/data/vocab/hf)")


def test_unicode_version_follows_tokenizers():
    """The scanner's tables follow tiktoken's Unicode version, not regex's; on every code point
    where the two differ (tools/tiktoken_unicode_overrides.txt) HF tokenizers cuts as the
    scanner does too, in many contexts."""
    from pretokenize_cases import REGEX_DIFFERS, probe as _probe

    if not REGEX_DIFFERS:
        pytest.skip("the tables follow regex's Unicode version in this build")
    texts = [_probe(chr(cp)) for cp in REGEX_DIFFERS] + ["\x1c\x1d\x1e\x1f \x85\xa0x\u2028y"]
    for name in ["qwen2", "qwen35", "llama3", "o200k", "tekken", "hf_gpt2"]:
        kind = pt.KINDS[name]
        bad = [t for t in texts if pt.split(t, kind) != hf_pieces(name, t)]
        assert not bad, f"{name}: {len(bad)} texts differ from tokenizers, e.g. {bad[:2]!r}"


@pytest.mark.parametrize("name", ["o200k", "tekken", "llama3"])
def test_removed_invert_of_a_known_pattern_takes_the_scanner(name):
    """MiniMax (o200k) and OLMo-2 (Llama-3) split with Removed and invert: a known pattern's
    matches tile every text, so nothing is removed and the cut is the Isolated one, which the
    built-in scanner makes (it agrees with Oniguruma on every code point in 13 contexts, a
    one-off check; the texts here and test_unicode_version_follows_tokenizers keep watch)."""
    from fastbpe.hf import pre_tokenizers as hp

    levels = hp.Split({"Regex": P.BY_NAME[name]}, "Removed", True).lower(False)
    assert [level.builtin for level in levels] == [pt.KINDS[name]]
    removed = pre_tokenizers.Split(Regex(P.BY_NAME[name]), behavior="removed", invert=True)
    for text in TEXTS + ["".join(TEXTS)]:
        assert pt.split(text, pt.KINDS[name]) == [p for p, _ in removed.pre_tokenize_str(text)], text


# -- Qwen3.5: Qwen2's pattern with combining marks in the letter runs ([\p{L}\p{M}]+) and out of the
# punctuation runs ([^\s\p{L}\p{M}\p{N}]+): a built-in kind, recognised by its exact text --

QWEN35 = pt.KINDS["qwen35"]
PATHS = [(scanner, blocks) for scanner in ("auto", "sse2", "swar", "char") for blocks in (True, False)]
_MARKED = [
    "e\u0301 \u0301x !\u0301 !\u0301\u0301a \u0301! 1\u0301 \u0301\u0301 \u20dd\u0903 'ſa 'K \u0301's",
    "naïve cafe\u0301 ं नमस्ते दुनिया, สวัสดี ครับ; ক্ষ্ম \u0301\n\u0301\t\u0301 \u00a0\u0301",
    "a" * 70 + "\u0301" + "b" * 70 + " " * 3 + "\u0301" * 3 + "." * 70 + "\u0301" + "1" * 5,
]


def test_qwen35_is_its_own_kind():
    from fastbpe.hf import pre_tokenizers as hp

    assert pt.pattern_kind(P.QWEN35_PATTERN) == scanner_kind(P.QWEN35_PATTERN) == QWEN35
    assert [level.builtin for level in hp.Split({"Regex": P.QWEN35_PATTERN}, "Isolated", False).lower(False)] == [QWEN35]
    assert scanner_kind(P.QWEN35_PATTERN.replace("[\\p{L}\\p{M}]+", "[\\p{M}\\p{L}]+")) == -1   # text, not meaning
    # marks are what sets it apart from Qwen2's kind
    assert pt.split("!\u0301a", QWEN35) == ["!\u0301a"] and pt.split("!\u0301a", pt.KINDS["qwen2"]) == ["!\u0301", "a"]


def test_qwen35_on_every_path():
    for text in TEXTS + _MARKED + ["".join(TEXTS + _MARKED) * 2]:
        want = hf_pieces("qwen35", text)
        was = pt.scanner_in_use()
        try:
            for scanner, blocks in PATHS:
                pt.use_scanner(scanner)
                pt.use_ascii_blocks(blocks)
                assert pt.split(text, QWEN35) == want, (scanner, blocks, text[:60])
        finally:
            pt.use_ascii_blocks(True)
            pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)


def test_qwen35_every_code_point_in_context():
    """Every code point but the surrogates, in contexts that reach each alternative (the letter run
    with and without its optional character, a mark before and after, punctuation, spaces, the
    contractions), on the block scanner and the per-character matchers."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    was = pt.scanner_in_use()
    try:
        for scanner, ctx in [("auto", "{0}{0}a {0}1 \u0301.{0}日{0}\n"),
                             ("char", "'{0}x {0} \u0301{0}!{0}\u0301 {0}  {0}\t\u00a0{0}'s")]:
            pt.use_scanner(scanner)
            for i in range(0, len(cps), 8192):
                text = "".join(ctx.format(chr(c)) for c in cps[i:i + 8192])
                if pt.split(text, QWEN35) != hf_pieces("qwen35", text):
                    bad = [hex(c) for c in cps[i:i + 8192]
                           if pt.split(ctx.format(chr(c)), QWEN35) != hf_pieces("qwen35", ctx.format(chr(c)))]
                    pytest.fail(f"{scanner}, context {ctx!r}: code points {bad[:10]} cut otherwise than tokenizers")
    finally:
        pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)


_QWEN35_ALPHABET = list("aZq 19'.,;!?-_()\t\n\r\x0b\x01") + [
    "é", "\u0301", "\u0903", "\u20dd", "ß", "中", "ſ", "K", "١", "²", "😀", "\u00a0", "\u3000", "—", "€", "\u200b",
    "'s", "'LL", "न", "ि", "ส", "ั"]


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(_QWEN35_ALPHABET), max_size=120).map("".join))
def test_qwen35_generated_text(text):
    for t in (text, text * 3):      # * 3: long enough for the 64-byte ASCII blocks
        assert pt.split(t, QWEN35) == hf_pieces("qwen35", t)


def test_qwen35_tokenizer_json_runs_on_the_kind():
    """A Qwen3.5-style tokenizer.json (NFC, its Split, ByteLevel) runs on the kernel with the kind, and
    its Encodings' word ids (the pieces) are tokenizers'."""
    import json

    from fastbpe.formats.bytelevel import BYTE_TO_CHAR
    from fastbpe.hf import Tokenizer

    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    doc = json.dumps({"version": "1.0", "added_tokens": [], "normalizer": {"type": "NFC"},
                      "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                          {"type": "Split", "pattern": {"Regex": P.QWEN35_PATTERN}, "behavior": "Isolated",
                           "invert": False},
                          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
                      "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                                                                  "use_regex": False},
                      "model": {"type": "BPE", "vocab": vocab, "merges": []}})
    ours, ref = Tokenizer.from_str(doc), tokenizers.Tokenizer.from_str(doc)
    assert ours.engine == "kernel" and ours._kind == QWEN35
    for text in TEXTS + _MARKED:
        got, want = ours.encode(text), ref.encode(text)
        assert (got.ids, got.offsets, got.word_ids) == (want.ids, want.offsets, want.word_ids), text


# -- LLaDA / Ling-3.0: GPT-4's spelling with single digits, the qwen2 kind by its text --

def test_llada_spelling_is_qwen2s_kind():
    """LLaDA's Split regex (tiktoken's cl100k spelling with `\\p{N}`) cuts as Qwen2's: every code
    point but the surrogates in contexts that reach each alternative (contractions, the optional
    character before letters, digits, punctuation runs with newlines, whitespace before a newline,
    at the end and before a non-space), on the block scanner and the per-character matchers, as
    tokenizers cuts with LLaDA's own text."""
    from fastbpe.hf import pre_tokenizers as hp

    qwen2 = pt.KINDS["qwen2"]
    assert pt.pattern_kind(P.LLADA_PATTERN) == scanner_kind(P.LLADA_PATTERN) == qwen2
    assert [level.builtin for level in hp.Split({"Regex": P.LLADA_PATTERN}, "Isolated", False).lower(False)] == [qwen2]
    llada = pre_tokenizers.Split(Regex(P.LLADA_PATTERN), behavior="isolated")
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    was = pt.scanner_in_use()
    try:
        for scanner, ctx in [("auto", "{0}{0}a {0}1 !{0}\n'{0}"),
                             ("char", "x{0} !{0}!\r\n{0}  {0}\n \n")]:
            pt.use_scanner(scanner)
            for i in range(0, len(cps), 8192):
                text = "".join(ctx.format(chr(c)) for c in cps[i:i + 8192])
                if pt.split(text, qwen2) != [p for p, _ in llada.pre_tokenize_str(text)]:
                    bad = [hex(c) for c in cps[i:i + 8192] if pt.split(ctx.format(chr(c)), qwen2)
                           != [p for p, _ in llada.pre_tokenize_str(ctx.format(chr(c)))]]
                    pytest.fail(f"{scanner}, context {ctx!r}: code points {bad[:10]} cut otherwise than tokenizers")
    finally:
        pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)
    for text in TEXTS + ["".join(TEXTS) * 2, " \n\n  x \r\n\r\n", "a.\n\n\n", "x  \n  "]:
        assert pt.split(text, qwen2) == [p for p, _ in llada.pre_tokenize_str(text)], text
