"""Mistral's tekken.json (`fastbpe.mistral.Tekkenizer`): ids, BOS/EOS, decode under every special
token policy and the tiktoken-style Encoding equal mistral-common's Tekkenizer, on every tekken
file inside the mistral-common wheel (the test extra installs it), on generated strings and on
the shared corpora when ../shared is present; malformed files are ValueErrors naming the file."""
from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasources import CORPUS_DIR

mistral_common = pytest.importorskip("mistral_common", reason="mistral-common is the reference (pip install '.[test]')")
from mistral_common.tokens.tokenizers.tekken import Tekkenizer as Reference  # noqa: E402

from fastbpe.formats.tekken import read_tekken  # noqa: E402
from fastbpe.mistral import SpecialTokenPolicy, Tekkenizer  # noqa: E402

DATA = Path(mistral_common.__file__).parent / "data"
FILES = sorted(p.name for p in DATA.glob("tekken*.json"))
PIECES = list("aZ09 \t\n\r'-.,!?/") + ["  ", "\n\n", "héllo", "日本語", "😀", "\u0301", "Straße", "<s>", "</s>",
                                       "[INST]", "<SPECIAL_50>", "1234", "don't", "\u00a0", "ǅ", "\U0001d55c"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
_LOADED: dict = {}


def loaded(name: str):
    if name not in _LOADED:
        _LOADED[name] = (Reference.from_file(DATA / name), Tekkenizer.from_file(DATA / name))
    return _LOADED[name]


def test_the_wheel_has_tekken_files():
    assert FILES, f"no tekken*.json in {DATA}"


@pytest.mark.parametrize("name", FILES)
def test_special_tokens_and_sizes_match(name):
    ref, ours = loaded(name)
    assert ours.num_special_tokens == ref.num_special_tokens
    assert ours.n_words == ref.n_words
    assert (ours.bos_id, ours.eos_id, ours.pad_id, ours.unk_id) == (ref.bos_id, ref.eos_id, ref.pad_id, ref.unk_id)
    for i in (0, 1, 2, 3, 17, 999, 1000, 1255, 1256, 5000, ref.n_words - 1):
        assert ours.id_to_piece(i) == ref.id_to_piece(i)
        assert ours.id_to_byte_piece(i, "keep") == ref.id_to_byte_piece(i, "keep")
        assert ours.is_byte(i) == ref.is_byte(i)
        assert ours.is_special(i) == ref.is_special(i)
    assert ours.get_control_token("[INST]") == ref.get_control_token("[INST]")
    with pytest.raises(ValueError):
        ours.get_special_token("<not a token>")


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, bos=st.booleans(), eos=st.booleans())
def test_generated_strings_match(name, text, bos, eos):
    ref, ours = loaded(name)
    ids = ours.encode(text, bos, eos)
    assert ids == ref.encode(text, bos, eos)
    mixed = ids + [ref.bos_id, 7, ref.eos_id] + ids
    for policy in ("ignore", "keep"):
        assert ours.decode(mixed, policy) == ref.decode(mixed, policy)
    assert ours.decode(mixed, SpecialTokenPolicy.KEEP) == ref.decode(mixed, "keep")


@pytest.mark.parametrize("name", FILES)
def test_decode_raise_policy_and_batches(name):
    ref, ours = loaded(name)
    with pytest.raises(ValueError):
        ours.decode([ref.bos_id, 2000], "raise")
    with pytest.raises(ValueError):
        ours.decode([2000], "sometimes")
    texts = ["Hello <s> world", "", "日本語 😀\n\n x"]
    assert ours.encode_batch(texts, bos=True, eos=True) == [ref.encode(t, True, True) for t in texts]


@pytest.mark.parametrize("name", FILES)
def test_tiktoken_style_encoding(name):
    ref, ours = loaded(name)
    enc = ours.to_encoding()
    text = "Hi <s> there [INST] go [/INST]"
    assert enc.encode_ordinary(text) == ref.encode(text, False, False)
    allowed = enc.encode(text, allowed_special="all")
    assert ref.bos_id in allowed and ref.get_control_token("[INST]") in allowed
    with pytest.raises(ValueError):
        enc.encode(text)   # tiktoken's rule: special text is disallowed unless allowed
    assert enc.decode(enc.encode_ordinary(text)) == text


@pytest.mark.parametrize("name", FILES)
def test_the_split_is_the_built_in_tekken_scanner(name):
    """tekken's pattern (o200k's without the contraction suffixes, single digits) runs on the
    built-in scanner kind made for it, not a scanner program and not o200k's kind: o200k would
    keep "'t" in "don't" and cut "12345" as 123|45."""
    import regex

    from fastbpe import _pretokenize as pt
    from fastbpe import patterns as P

    assert read_tekken(DATA / name).pattern == P.TEKKEN_PATTERN
    ref, ours = loaded(name)
    splitter = ours.to_encoding().splitter
    assert (splitter.engine, splitter.kind) == ("scanner", pt.KINDS["tekken"])
    text = "I don't know, DON'T we'll 12345 \u0661\u0662\u0663 x'S  ǅa\u0301b 3.14159/\n\n  end"
    assert pt.split(text, pt.KINDS["tekken"]) == regex.findall(P.TEKKEN_PATTERN, text)
    assert pt.split(text, pt.KINDS["tekken"]) != pt.split(text, pt.KINDS["o200k"])
    assert ours.encode(text, False, False) == ref.encode(text, False, False)


def test_unicode_version_follows_tiktoken():
    """Where regex's Unicode version and the scanner's tables (tiktoken's) disagree, the tekken
    kind gives mistral-common's ids (it splits with tiktoken)."""
    from pretokenize_cases import REGEX_DIFFERS, probe as _probe

    if not REGEX_DIFFERS:
        pytest.skip("the tables follow regex's Unicode version in this build")
    ref, ours = loaded(FILES[-1])
    texts = ["".join(_probe(chr(cp)) for cp in REGEX_DIFFERS[i:i + 100]) for i in range(0, len(REGEX_DIFFERS), 100)]
    assert ours.encode_batch(texts) == [ref.encode(t, False, False) for t in texts]


@pytest.mark.parametrize("corpus", ["large_en", "multilingual", "code"])
def test_shared_corpora_match(corpus):
    path = CORPUS_DIR / f"{corpus}.txt.xz"
    if not path.exists():
        pytest.skip(f"{path} not found (shared data absent)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read(300_000)
    docs = [text[i:i + 2000] for i in range(0, len(text), 2000)]
    for name in FILES:
        ref, ours = loaded(name)
        assert ours.encode_batch(docs) == [ref.encode(d, False, False) for d in docs], name


def _write(tmp_path, doc) -> Path:
    p = tmp_path / "tekken.json"
    p.write_text(json.dumps(doc))
    return p


def test_malformed_files_are_value_errors(tmp_path):
    good = {"config": {"pattern": r"\w+|\s+|.", "version": "v3", "default_vocab_size": 280,
                       "default_num_special_tokens": 24},
            "vocab": [{"rank": i, "token_bytes": __import__("base64").b64encode(bytes([i])).decode(), "token_str": None}
                      for i in range(256)]}
    tok = Tekkenizer.from_file(_write(tmp_path, good))
    assert tok.encode("ab", False, True) == [24 + ord("a"), 24 + ord("b"), 2]
    assert [tok.id_to_piece(i) for i in (0, 1, 19, 20, 23)] == \
        ["<unk>", "<s>", "[TOOL_CONTENT]", "<SPECIAL_20>", "<SPECIAL_23>"]   # the legacy list, then fillers
    for broken, message in [
        ({**good, "vocab": good["vocab"][:10]}, "ordinary tokens"),
        ({**good, "config": {**good["config"], "default_num_special_tokens": 3, "default_vocab_size": 259}}, "special tokens for 3"),
        ({**good, "config": {**good["config"], "version": "v13"}}, "special_tokens"),
        ({**good, "special_tokens": [{"rank": 0, "token_str": "a"}, {"rank": 1, "token_str": "a"}]}, "unique"),
        ({"vocab": []}, "not a tekken"),
    ]:
        with pytest.raises(ValueError, match=message):
            read_tekken(_write(tmp_path, broken))
    (tmp_path / "bad.json").write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="bad.json"):
        read_tekken(tmp_path / "bad.json")


def test_the_cli_takes_tekken_files():
    from cli_run import run_cli

    name = FILES[-1]
    ref, _ = loaded(name)
    code, out, err = run_cli("encode", "-m", DATA / name, stdin="Hello <s> world")
    assert code == 0, err
    assert json.loads(out) == ref.encode("Hello <s> world", False, False)
