"""The scanner's Hugging Face patterns (Qwen2, Llama-3, tokenizers' ByteLevel regex) cut text
as `tokenizers` itself does (Oniguruma, not `regex`: the fuzzing against `regex` is in
test_pretokenize.py).  Texts here use characters whose properties no recent Unicode version
changed, so the two engines' Unicode versions do not matter."""
from __future__ import annotations

import pytest

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


@pytest.mark.parametrize("name", ["qwen2", "llama3", "o200k", "tekken", "hf_gpt2"])
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
    from test_pretokenize import REGEX_DIFFERS, _probe

    if not REGEX_DIFFERS:
        pytest.skip("the tables follow regex's Unicode version in this build")
    texts = [_probe(chr(cp)) for cp in REGEX_DIFFERS] + ["\x1c\x1d\x1e\x1f \x85\xa0x\u2028y"]
    for name in ["qwen2", "llama3", "o200k", "tekken", "hf_gpt2"]:
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
