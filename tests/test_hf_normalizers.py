"""NFC/NFD/NFKC/NFKD and Lowercase as HF tokenizers 0.23 computes them, from fastbpe's own tables
(Unicode 9.0 for normalization, as HF's unicode-normalization-alignments crate; Unicode 17 for
Lowercase, as the Rust that built it), whatever this Python's unicodedata is; and offsets
after length-changing normalizers aligned per normalized character as HF aligns them."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from hf_reference import FIELDS, build

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402

from fastbpe._nfc import NORMALIZATION_UNICODE_VERSION, lowercase, normalize  # noqa: E402
from fastbpe.hf import Tokenizer  # noqa: E402
from fastbpe.hf.normalizers import nfc  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FORMS = ("NFC", "NFD", "NFKC", "NFKD")

# characters whose normalization interacts: marks of several classes, Hangul jamo, a nukta,
# compatibility forms that compose after decomposing (ｶﾞ), Unicode 13+ pairs HF leaves alone
POOL = [chr(c) for c in (0x61, 0x65, 0x69, 0x301, 0x327, 0x316, 0x334, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x958,
                         0x93C, 0x309A, 0x11935, 0x11930, 0xFF76, 0xFF9E, 0x3099, 0x1E0B, 0x323, 0xFB01,
                         0x2126, 0x344, 0xF73, 0xF71, 0xF72, 0xF74, 0xFB2, 0xF80, 0x1D15E, 0x1D165, 0x20,
                         0x3B9, 0x345, 0x130, 0x3A3, 0x1F80, 0x5B0, 0x5BC, 0x2460, 0x33C0, 0xFDFA, 0x105D2,
                         0x307, 0xA7CB, 0x16EA0, 0x10D50, 0x1C89)]


def _code_points():
    # every plane with assigned characters (the private-use and empty planes hold nothing
    # that normalizes or lowercases)
    for cp in list(range(0, 0x32000)) + list(range(0xE0000, 0xE1000)):
        if not 0xD800 <= cp < 0xE000:
            yield chr(cp)


def test_unicode_version_is_hfs():
    assert NORMALIZATION_UNICODE_VERSION == "9.0.0"


@pytest.mark.parametrize("form", FORMS)
def test_every_code_point_normalizes_as_hf(form):
    ref = getattr(N, form)()
    bad = [hex(ord(c)) for c in _code_points() if normalize(c, form)[0] != ref.normalize_str(c)]
    assert bad == []


def test_every_code_point_lowercases_as_hf():
    ref = N.Lowercase()
    bad = [hex(ord(c)) for c in _code_points() if lowercase(c)[0] != ref.normalize_str(c)]
    assert bad == []


def test_sequences_normalize_as_hf():
    rng = random.Random(7)
    refs = {form: getattr(N, form)() for form in FORMS}
    for _ in range(20000):
        text = "".join(rng.choice(POOL) for _ in range(rng.randint(1, 8)))
        for form, ref in refs.items():
            assert normalize(text, form)[0] == ref.normalize_str(text), (form, [hex(ord(c)) for c in text])
        assert nfc(text) == refs["NFC"].normalize_str(text)


def _char_level(normalizer: dict) -> str:
    """A model whose tokens are single characters: every token's offsets are the alignment of
    one normalized character."""
    chars = set("".join(POOL)) | {"i\u0307"[1]}
    for c in POOL:
        for form in FORMS:
            for ref in (getattr(N, form)(),):
                out = ref.normalize_str(c)
                chars |= set(out) | set(N.Lowercase().normalize_str(out)) | set(N.Lowercase().normalize_str(c))
    vocab = {c: i for i, c in enumerate(sorted(chars))}
    vocab["<unk>"] = len(vocab)
    return json.dumps({"version": "1.0", "added_tokens": [], "normalizer": normalizer, "pre_tokenizer": None,
                       "model": {"type": "BPE", "vocab": vocab, "merges": [], "unk_token": "<unk>"}})


@pytest.mark.parametrize("normalizer", [["NFC"], ["NFD"], ["NFKC"], ["NFKD"], ["Lowercase"],
                                        ["Lowercase", "NFKC"], ["NFD", "Lowercase", "NFC"]],
                         ids=lambda n: "+".join(n))
def test_offsets_follow_hfs_alignment(normalizer):
    node = {"type": "Sequence", "normalizers": [{"type": n} for n in normalizer]}
    spec = _char_level(node)
    ref, ours = HFTokenizer.from_str(spec), Tokenizer.from_str(spec)
    rng = random.Random(8)
    texts = ["ｶﾞ", "\u0958\u309a", "a\u0301\u0327b", "\uFB01\u0301", "\u0130\u0301"]
    texts += ["".join(rng.choice(POOL) for _ in range(rng.randint(1, 7))) for _ in range(1500)]
    for text in texts:
        want, got = ref.encode(text), ours.encode(text)
        assert (got.ids, got.offsets) == (want.ids, want.offsets), [hex(ord(c)) for c in text]


@pytest.mark.parametrize("text", ["\U00011935\U00011930", "\u0958\u309a", "x \u0958\u309a \U000105d2\u0307 é"])
def test_byte_level_nfc_file_as_hf(text):
    """A Qwen2.5-style file (NFC, then a byte-level split): ids on both paths and offsets."""
    ref = build(normalizer=N.NFC(), pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(),
                byte_level_alphabet=True)
    ours = Tokenizer.from_str(ref.to_str())
    want = ref.encode(text)
    got = ours.encode(text)
    for field in FIELDS:
        assert getattr(got, field) == getattr(want, field), field
    assert ours.encode_ids(text) == want.ids
    assert ours.encode_batch([text])[0].ids == want.ids


def test_generated_tables_are_current():
    """tools/gen_normalization_tables.py --check: needs a Python whose unicodedata is 9.0."""
    probe = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_normalization_tables.py"), "--check"],
                           capture_output=True, text=True)
    if "cannot read Unicode 9.0 data" in probe.stderr:
        pytest.skip("no Python with Unicode 9.0 unicodedata (CPython 3.6) to regenerate the tables")
    assert probe.returncode == 0, probe.stderr


@pytest.mark.parametrize("normalizer", [N.ByteLevel(), N.Sequence([N.NFKC(), N.ByteLevel()])], ids=["bytelevel", "nfkc+bytelevel"])
@pytest.mark.parametrize("pre_tokenizer", [None, P.Whitespace()], ids=["no-pre", "whitespace"])
def test_byte_level_normalizer(normalizer, pre_tokenizer):
    from hf_reference import assert_same

    assert_same(build(normalizer=normalizer, pre_tokenizer=pre_tokenizer, decoder=D.ByteLevel(),
                      byte_level_alphabet=True))
