"""SentencePiece `.model` files (`fastbpe.sentencepiece.SentencePieceProcessor`, read by
formats/sentencepiece_model.py, encoded by the compiled char-level model): ids, pieces,
BOS/EOS and decode equal the `sentencepiece` package's on every `.model` file inside the
mistral-common wheel (the test extra installs both), on generated strings (user-defined
symbols, byte fallback, spaces) and on the shared corpora when ../shared is present; other
model types and settings are refused by name, malformed files are ValueErrors."""
from __future__ import annotations

import json
import lzma
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from datasources import CORPUS_DIR

spm = pytest.importorskip("sentencepiece", reason="sentencepiece is the reference (pip install '.[test]')")
mistral_common = pytest.importorskip("mistral_common", reason="its wheel holds the .model files (pip install '.[test]')")

from fastbpe.formats.sentencepiece_model import read_sentencepiece_model, sentencepiece_model_from_bytes  # noqa: E402
from fastbpe.sentencepiece import SentencePieceProcessor  # noqa: E402

DATA = Path(mistral_common.__file__).parent / "data"
FILES = sorted(p.name for p in DATA.glob("*.model*"))
PIECES = list("aZ09 \t\n'-.,!?") + ["  ", "   ", "\u2581", "héllo", "日本語", "😀", "\U0001d55c", "\u0301", "\x00",
                                     "[INST]", "[/INST]", "[REF]", "[/REF]", "[REFERENCE_DOC_3]", "<s>", "</s>",
                                     "<unk>", "<0x41>", "12345", "don't", "\u00a0", "ꙮ"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)
_LOADED: dict = {}


def loaded(name: str):
    if name not in _LOADED:
        _LOADED[name] = (spm.SentencePieceProcessor(model_file=str(DATA / name)),
                         SentencePieceProcessor(DATA / name))
    return _LOADED[name]


def test_the_wheel_has_model_files():
    assert len(FILES) >= 2, f"no .model files in {DATA}"


@pytest.mark.parametrize("name", FILES)
def test_reader_matches_the_package(name):
    ref, ours = loaded(name)
    assert ours.get_piece_size() == ref.get_piece_size()
    assert (ours.bos_id(), ours.eos_id(), ours.unk_id(), ours.pad_id()) == \
        (ref.bos_id(), ref.eos_id(), ref.unk_id(), ref.pad_id())
    for i in range(ref.get_piece_size()):
        assert ours.id_to_piece(i) == ref.id_to_piece(i)
        assert ours.get_score(i) == pytest.approx(ref.get_score(i))
        assert (ours.is_control(i), ours.is_unknown(i), ours.is_byte(i), ours.is_unused(i)) == \
            (ref.is_control(i), ref.is_unknown(i), ref.is_byte(i), ref.is_unused(i))
    assert ours.piece_to_id("\u2581the") == ref.piece_to_id("\u2581the")
    assert ours.piece_to_id("no such piece") == ref.piece_to_id("no such piece")


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, bos=st.booleans(), eos=st.booleans())
def test_generated_strings_match(name, text, bos, eos):
    ref, ours = loaded(name)
    ids = ours.encode(text, add_bos=bos, add_eos=eos)
    assert ids == ref.encode(text, add_bos=bos, add_eos=eos)
    assert ours.encode(text, out_type=str) == ref.encode(text, out_type=str)
    assert ours.decode(ids) == ref.decode(ids)


@pytest.mark.parametrize("name", FILES)
def test_batches_and_long_texts(name):
    ref, ours = loaded(name)
    texts = ["Hello world", "", " [INST] x [/INST]", "a" * 5000, " " * 3000 + "x", "日本" * 2000]
    assert ours.encode(texts) == ref.encode(texts)
    assert ours.encode(texts, num_threads=2) == ref.encode(texts)
    assert ours.decode([ref.encode(t) for t in texts]) == ref.decode([ref.encode(t) for t in texts])


@pytest.mark.parametrize("corpus", ["large_en", "multilingual", "code"])
def test_shared_corpora_match(corpus):
    path = CORPUS_DIR / f"{corpus}.txt.xz"
    if not path.exists():
        pytest.skip(f"{path} not found (shared data absent)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read(200_000)
    docs = [text[i:i + 2000] for i in range(0, len(text), 2000)]
    for name in FILES:
        ref, ours = loaded(name)
        assert ours.encode(docs) == ref.encode(docs), name


def _field(number: int, payload: bytes) -> bytes:
    return bytes([number << 3 | 2, len(payload)]) + payload


def test_other_models_and_bad_files_are_refused(tmp_path):
    pieces = b"".join(_field(1, _field(1, p.encode()) + b"\x15\x00\x00\x00\x00") for p in ("<unk>", "a", "b"))
    unigram = pieces + _field(2, b"\x18\x01")          # trainer_spec.model_type = UNIGRAM
    path = tmp_path / "unigram.model"
    path.write_bytes(unigram)
    assert read_sentencepiece_model(path).model_type == "UNIGRAM"
    with pytest.raises(ValueError, match="UNIGRAM"):
        SentencePieceProcessor(path)
    nfkc = pieces + _field(2, b"\x18\x02") + _field(3, _field(1, b"nmt_nfkc"))
    with pytest.raises(ValueError, match="nmt_nfkc"):
        SentencePieceProcessor(_write(tmp_path, nfkc))
    for broken in (b"", b"\x0a\x50abc", b"\x0b", b"\x0a\x02\x15\x00"):
        with pytest.raises(ValueError, match="not a SentencePiece model"):
            sentencepiece_model_from_bytes(broken, "x.model")


def _write(tmp_path, data: bytes) -> Path:
    p = tmp_path / "m.model"
    p.write_bytes(data)
    return p


def test_tokenizer_from_file_and_the_cli_take_model_files(tmp_path):
    """`fastbpe.Tokenizer.from_file` hands a .model file to SentencePieceProcessor (as a .gguf
    to GGUFTokenizer); the CLI's -m encodes and decodes with it."""
    from cli_run import run_cli

    import fastbpe
    from fastbpe.formats.sentencepiece_model import looks_like_sentencepiece_model

    name = FILES[-1]
    ref, _ = loaded(name)
    tok = fastbpe.Tokenizer.from_file(DATA / name)
    assert isinstance(tok, SentencePieceProcessor)
    assert tok.encode("Hello [INST] world 😀") == ref.encode("Hello [INST] world 😀")
    code, out, err = run_cli("encode", "-m", DATA / name, stdin="Hello world")
    assert code == 0, err
    assert json.loads(out) == ref.encode("Hello world")
    code, out, err = run_cli("decode", "-m", DATA / name, stdin=" ".join(map(str, ref.encode("héllo 😀"))))
    assert code == 0, err
    assert out.decode().strip() == "héllo 😀"
    assert not looks_like_sentencepiece_model(b'\n{\n  "version": "1.0"')
    assert not looks_like_sentencepiece_model(b"minbpe v1\n")
