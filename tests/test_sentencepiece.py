"""SentencePiece `.model` files (`fastbpe.sentencepiece.SentencePieceProcessor`, read by
formats/sentencepiece_model.py, encoded by the compiled char-level model): ids, pieces,
BOS/EOS and decode equal the `sentencepiece` package's on every `.model` file inside the
mistral-common wheel (the test extra installs both), on generated strings (user-defined
symbols, byte fallback, spaces) and on the shared corpora when ../shared is present; other
model types and settings are refused by name, malformed files are ValueErrors.  Models the
`sentencepiece` trainer makes here (BPE, each normalizer rule: its precompiled charsmap, with
and without remove_extra_whitespaces, byte_fallback, split_digits, user-defined symbols,
whitespace as suffix, a rule table of one's own with a denormalizer for decode) are
compared the same way, normalized text included (fastbpe/_spm_normalize.pyx)."""
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
    assert ours.id_to_piece([0, 5, 7]) == ref.id_to_piece([0, 5, 7])
    assert ours.piece_to_id(["\u2581the", "nope"]) == ref.piece_to_id(["\u2581the", "nope"])
    with pytest.raises(IndexError):
        ours.id_to_piece(ref.get_piece_size())


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
    plain = [t for t in texts if "INST" not in t] + ["a [b] c [", "x[/INS"]   # no user-defined symbol: one kernel batch
    assert ours.encode(plain) == ref.encode(plain)
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
    odd = pieces + _field(2, b"\x18\x02") + _field(3, b"\x28\x00")   # escape_whitespaces = false (no BPE
    with pytest.raises(ValueError, match="escape_whitespaces"):                # trainer makes one)
        SentencePieceProcessor(_write(tmp_path, odd))
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


# -- models trained here: every normalizer setting ------------------------------------------

WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "café", "naïve", "Ｆｕｌｌ", "ｗｉｄｔｈ",
         "①②", "ﬁne", "日本語", "テキスト", "한국어", "emoji😀", "x²", "Ⅻ", "\u00a0nbsp", "tab\there", "123", "4567",
         "don't", "Straße", "İstanbul", "ǅ", "A\u0301", "  two  spaces ", "ＡＢＣ", "ｶﾞ", "\u3000wide"]
HARD = PIECES + ["ab", "AB", "A", "...", "the ", "thé", "\u3000", "Ｆ", "ﬁ", "①", "²", "Ⅻ", "ǅ", "A\u0301", "İ", "ß", "ẞ", "\x07", "\u200b", "\ufeff", "ｶ", "ﾞ",
                 "Σ", "ς", "\r", "[U1]", "<x>", "the ", "quick", "Ｆｕｌｌ", "\u2581\u2581", "..."]
HARD_TEXT = st.lists(st.sampled_from(HARD), max_size=24).map("".join)
SETTINGS = {   # name: trainer arguments
    "nmt_nfkc": dict(normalization_rule_name="nmt_nfkc", byte_fallback=True),
    "nmt_nfkc-keep-spaces": dict(normalization_rule_name="nmt_nfkc", remove_extra_whitespaces=False,
                                 user_defined_symbols=["[U1]", "<x>"], split_digits=True, byte_fallback=True),
    "nfkc_cf-unk": dict(normalization_rule_name="nfkc_cf", character_coverage=0.995),
    "nfkc-no-prefix": dict(normalization_rule_name="nfkc", add_dummy_prefix=False, byte_fallback=True),
    "identity-remove-spaces": dict(normalization_rule_name="identity", user_defined_symbols=["[U1]", "<x>"],
                                   byte_fallback=True),
    "identity-keep-spaces": dict(normalization_rule_name="identity", remove_extra_whitespaces=False,
                                 split_digits=True),
    "whitespace-as-suffix": dict(normalization_rule_name="nmt_nfkc", treat_whitespace_as_suffix=True,
                                 remove_extra_whitespaces=False, byte_fallback=True),
    # a rule table of one's own (becomes normalizer "user_defined"): ASCII pairs and runs the
    # kernel's ASCII fast path must leave to the trie
    "custom-rules": dict(normalization_rule_name="user_defined", remove_extra_whitespaces=False, byte_fallback=True,
                         rules="2E 2E 2E\t2026\n41\t61\n61 62\t78\n20 20\t20\n74 68 65 20\t54\n",
                         denormalize="2026\t2E 2E 2E\n78\t61 62\n"),   # decode's rules (denormalizer_spec)
}
_TRAINED: dict = {}


def trained(name: str, tmp_path_factory):
    """A BPE model the sentencepiece trainer makes from generated lines with SETTINGS[name],
    loaded by sentencepiece and by fastbpe."""
    if name not in _TRAINED:
        import io
        import random

        rng = random.Random(7)
        lines = [" ".join(rng.choice(WORDS) for _ in range(12)) for _ in range(3000)]
        out = io.BytesIO()
        args = dict(model_type="bpe", vocab_size=500, hard_vocab_limit=False, character_coverage=1.0,
                    minloglevel=2)
        args.update(SETTINGS[name])
        folder = tmp_path_factory.mktemp("spm")
        if "rules" in args:
            (folder / "rules.tsv").write_text(args.pop("rules"))
            args["normalization_rule_tsv"] = str(folder / "rules.tsv")
            del args["normalization_rule_name"]
        if "denormalize" in args:
            (folder / "denormalize.tsv").write_text(args.pop("denormalize"))
            args["denormalization_rule_tsv"] = str(folder / "denormalize.tsv")
        spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, **args)
        path = folder / f"{name}.model"
        path.write_bytes(out.getvalue())
        _TRAINED[name] = (spm.SentencePieceProcessor(model_file=str(path)), SentencePieceProcessor(path), path)
    return _TRAINED[name]


@pytest.mark.parametrize("name", sorted(SETTINGS))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(text=HARD_TEXT)
def test_trained_models_match(name, text, tmp_path_factory):
    ref, ours, _ = trained(name, tmp_path_factory)
    if ours._normalizer is not None:
        want = ref.normalize(text)
        assert ours._normalizer.normalize(text) == want
        assert ours._normalizer.normalize(text, True).replace(" ", "\u2581") == want   # spaces left to the kernel
    ids = ours.encode(text)
    assert ids == ref.encode(text)
    assert ours.encode(text, out_type=str) == ref.encode(text, out_type=str)
    assert ours.decode(ids) == ref.decode(ids)
    options = dict(add_bos=True, add_eos=True, reverse=True)
    assert ours.encode(text, **options) == ref.encode(text, **options)
    assert ours.encode(text, out_type=str, emit_unk_piece=True, **options) == \
        ref.encode(text, out_type=str, emit_unk_piece=True, **options)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_trained_models_batches_and_settings(name, tmp_path_factory):
    ref, ours, path = trained(name, tmp_path_factory)
    model = read_sentencepiece_model(path)
    want = SETTINGS[name]
    assert model.normalizer == want["normalization_rule_name"]
    assert bool(model.precompiled_charsmap) == (want["normalization_rule_name"] != "identity")
    assert model.remove_extra_whitespaces == want.get("remove_extra_whitespaces", True)
    assert model.add_dummy_prefix == want.get("add_dummy_prefix", True)
    assert bool(model.denormalizer_charsmap) == ("denormalize" in want)
    rng = __import__("random").Random(name)
    texts = ["", " ", "   ", " \t x  y ", "ＡＢＣ　ｶﾞ ①", "a" * 3000, " " * 2000 + "x" + " " * 2000,
             "\u3000" * 500 + "日本" * 500] + ["".join(rng.choice(HARD) for _ in range(40)) for _ in range(200)]
    assert ours.encode(texts) == ref.encode(texts)
    assert ours.encode(texts, num_threads=2) == ref.encode(texts)
    assert ours.encode(iter(texts), out_type=str, add_bos=True) == ref.encode(texts, out_type=str, add_bos=True)
    ids = ref.encode(texts)
    assert ours.decode(ids) == ref.decode(ids)


def test_sampling_is_refused_not_ignored(tmp_path_factory):
    _, ours, _ = trained("nmt_nfkc", tmp_path_factory)
    with pytest.raises(ValueError, match="enable_sampling"):
        ours.encode("hello", enable_sampling=True, alpha=0.1)


def test_decode_matches_on_odd_id_sequences(tmp_path_factory):
    """Ids no encode makes: leading space pieces, control and byte pieces first, bad bytes."""
    for name in ("nmt_nfkc", "nmt_nfkc-keep-spaces", "nfkc-no-prefix", "nfkc_cf-unk", "custom-rules"):
        ref, ours, _ = trained(name, tmp_path_factory)
        n = ref.get_piece_size()
        rng = __import__("random").Random(1)
        special = [i for i in range(n) if ref.is_control(i) or ref.is_unknown(i) or ref.is_byte(i)]
        space = [ref.piece_to_id("\u2581")] if ref.piece_to_id("\u2581") != ref.unk_id() else []
        for _ in range(300):
            ids = [rng.choice(special + space * 3 + list(range(n))) for _ in range(rng.randint(0, 8))]
            assert ours.decode(ids) == ref.decode(ids), (name, ids)


def test_broken_charsmaps_are_refused_or_harmless(tmp_path_factory):
    """A charsmap whose header is wrong is a ValueError naming the file; one whose trie is
    garbage encodes without reading outside it (no crash), as its bytes say."""
    import random

    from fastbpe._spm_normalize import SpmNormalizer

    _, _, path = trained("nmt_nfkc", tmp_path_factory)
    data = path.read_bytes()
    charsmap = read_sentencepiece_model(path).precompiled_charsmap
    at = data.index(charsmap)
    for bad in (b"\x05\x00\x00\x00ab", b"\xff\xff\xff\x7f" + bytes(40), b"\x01\x00\x00\x00\x00\x00\x00\x00"):
        # same length: the field's size prefix stays right
        broken = data[:at] + bad + bytes(len(charsmap) - len(bad)) + data[at + len(charsmap):]
        with pytest.raises(ValueError, match="m.model: the precompiled charsmap is broken"):
            SentencePieceProcessor(_write(path.parent, broken))
    rng = random.Random(5)
    for _ in range(30):
        garbage = charsmap[:4] + bytes(rng.randrange(256) for _ in range(len(charsmap) - 4))
        norm = SpmNormalizer(garbage)
        for text in ("hello world", "ＡＢＣ①", "\x00\xff日本", ""):
            try:
                assert isinstance(norm.normalize(text), str)
            except UnicodeDecodeError:   # its replacements are not UTF-8: a ValueError
                pass


def test_mutated_model_files_are_value_errors_or_load():
    """The C reader (_spm_model.read_model) on every truncation point of a small file and on
    bytes flipped at random: a ValueError naming the file, or a model; never a crash."""
    import random

    data = (DATA / FILES[0]).read_bytes()[:3000]
    rng = random.Random(3)
    cases = [data[:k] for k in range(0, 3000, 7)]
    for _ in range(300):
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        cases.append(bytes(b))
    for case in cases:
        try:
            sentencepiece_model_from_bytes(case, "x.model")
        except ValueError as e:
            assert "x.model" in str(e)


def test_split_rows_are_every_split_and_linear():
    """_spm_model.split_rows: every split of a piece into two pieces, one row each (checked
    against cutting every piece everywhere), None pieces left out; a 200k-character piece
    costs time linear in its length (cutting it everywhere hashed 200k characters per cut)."""
    import random

    from fastbpe._spm_model import split_rows

    rng = random.Random(4)
    pieces = list({"".join(rng.choice("ab▁é😀") for _ in range(rng.randint(1, 6))) for _ in range(400)})
    pieces[5] = None
    ids = {p: i for i, p in enumerate(pieces) if p is not None}
    rows, ranks = split_rows(pieces, list(range(len(pieces))))
    want = sorted((ids[p[:k]], ids[p[k:]], i) for p, i in ids.items() for k in range(1, len(p))
                  if p[:k] in ids and p[k:] in ids)
    got = sorted(tuple(rows[3 * k:3 * k + 3]) for k in range(len(rows) // 3))
    assert got == want and list(ranks) == [r[2] for r in (tuple(rows[3 * k:3 * k + 3]) for k in range(len(ranks)))]
    long = "x" * 200_000   # cut everywhere and hashed per cut: minutes; here a blink
    rows, _ = split_rows([long, "x" * 100_000, "x", long + "y"], [0, 1, 2, 3])
    assert sorted(tuple(rows[3 * k:3 * k + 3]) for k in range(len(rows) // 3)) == [(1, 1, 0)]
