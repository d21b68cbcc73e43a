"""Normalizer programs (fastbpe/normalize.py over fastbpe/_normalize.pyx) against HF tokenizers'
normalizers, live: the normalized text and the alignment (each character's span in the input,
read from HF's offsets through a byte-level tokenizer whose tokens are single bytes), for every
op and for random Sequences of them on hypothesis strings, and against fastbpe's Python
reference classes (fastbpe.hf.normalizers)."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("tokenizers", reason="the tokenizers package is the reference (pip install '.[test]')")

from tokenizers import Tokenizer as HFTokenizer  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402

from fastbpe import normalize as ops  # noqa: E402
from fastbpe.formats.bytelevel import BYTE_TO_CHAR  # noqa: E402
from fastbpe.hf import normalizers as hf_normalizers  # noqa: E402
from fastbpe.hf.normalized import NormalizedText  # noqa: E402
from fastbpe.normalize import NormalizerProgram, NotLowered  # noqa: E402

# characters whose normalizing interacts: combining marks of several classes, Hangul syllables
# and jamo, final sigma, Turkish I, ligatures, full-width and compatibility forms, emoji (and
# a ZWJ sequence), White_Space of several kinds, the byte-level alphabet's edges
POOL = ("a", "A", "e", "E", "i", "I", "s", "S", " ", "  ", "\t", "\n", "\u00a0", "\u3000", "\u2028", "\x1c",
        "\u0301", "\u0327", "\u0316", "\u0334", "\u0308", "\u0903", "\u20dd", "\u093c", "\u0958",
        "\u1100", "\u1161", "\u11a8", "\uac00", "\ud55c", "\u3099", "\uff76", "\uff9e",
        "\u03a3", "\u03c3", "\u03c2", "\u0130", "\u0131", "\ufb01", "\ufb03", "\u00bd", "\u00b2", "\u2126",
        "\uff37", "\uff4f", "\uff11", "\u1e9e", "\u00df", "\u01c5", "\u1f80", "\u0344", "\u0f73", "\u2460",
        "\U0001f600", "\U0001f469\u200d\U0001f4bb", "\U0001d15e", "\U00011935\U00011930",
        "\u00e9", "\u00c9", "\u00e7", "\u0105", "\u1e0b\u0323", "\u2581", "\u00ff", "~", "!", "<", ">")

texts = st.one_of(
    st.lists(st.sampled_from(POOL), max_size=12).map("".join),
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
)

# (an empty literal is tested alone: HF panics on what follows it in a Sequence)
literals = st.lists(st.sampled_from(["a", "A", " ", "s", "\u0301", "e\u0301", "\u03a3", "I", "ab", "  "]),
                    min_size=1, max_size=2).map("".join)
contents = st.sampled_from(["", " ", "\u2581", "x", "XY", "\u0301", "E\u0301", "\u00e9"])


def replace_run(pattern: str, content: str):
    """The op a Replace with this regex lowers to (Oniguruma's classes)."""
    (op,) = hf_normalizers.from_json({"type": "Replace", "pattern": {"Regex": pattern}, "content": content}).lower()
    assert isinstance(op, ops.ReplaceRun)
    return op


# regexes that are one class repeated (CLIP's \s+), as Oniguruma reads them
RUN_PATTERNS = ["\\s+", "\\s", " +", "[a\u0301]+", "\\p{L}{1,2}", "[^\\s\\p{L}]+", "\\s++"]
run_ops = st.builds(lambda p, c: replace_run(p, c), st.sampled_from(RUN_PATTERNS), contents)

op_strategy = st.one_of(
    st.sampled_from(["NFC", "NFD", "NFKC", "NFKD"]).map(ops.UnicodeForm),
    run_ops,
    st.just(ops.Lowercase()),
    st.builds(ops.ReplaceLiteral, literals, contents),
    st.builds(ops.Prepend, st.sampled_from(["\u2581", " ", "ab", "E\u0301"])),
    st.builds(ops.Strip, st.booleans(), st.booleans()),
    st.just(ops.StripAccents()),
    st.just(ops.ByteLevel()),
)


def hf_step(op):
    """HF's normalizer for one op."""
    if isinstance(op, ops.UnicodeForm):
        return getattr(N, op.form)()
    if isinstance(op, ops.Lowercase):
        return N.Lowercase()
    if isinstance(op, ops.ReplaceLiteral):
        return N.Replace(op.literal, op.content)
    if isinstance(op, ops.ReplaceRun):
        from tokenizers import Regex
        return N.Replace(Regex(op.pattern), op.content)
    if isinstance(op, ops.Prepend):
        return N.Prepend(op.prefix)
    if isinstance(op, ops.Strip):
        return N.Strip(left=op.left, right=op.right)
    if isinstance(op, ops.StripAccents):
        return N.StripAccents()
    return N.ByteLevel()


def json_step(op) -> dict:
    """The tokenizer.json node of one op."""
    if isinstance(op, ops.UnicodeForm):
        return {"type": op.form}
    if isinstance(op, ops.ReplaceLiteral):
        return {"type": "Replace", "pattern": {"String": op.literal}, "content": op.content}
    if isinstance(op, ops.ReplaceRun):
        return {"type": "Replace", "pattern": {"Regex": op.pattern}, "content": op.content}
    if isinstance(op, ops.Prepend):
        return {"type": "Prepend", "prepend": op.prefix}
    if isinstance(op, ops.Strip):
        return {"type": "Strip", "strip_left": op.left, "strip_right": op.right}
    return {"type": {ops.Lowercase: "Lowercase", ops.StripAccents: "StripAccents",
                     ops.ByteLevel: "ByteLevel"}[type(op)]}


_BYTES_VOCAB = {c: i for i, c in enumerate(BYTE_TO_CHAR[b] for b in range(256))}


def hf_aligned(steps: list, text: str) -> tuple[str, list]:
    """HF's normalized text and each of its characters' span in text: a tokenizer whose
    tokens are single bytes (ByteLevel without its regex, no merges) gives every byte of a
    normalized character that character's span, as its offsets."""
    tok = HFTokenizer.from_str(json.dumps({
        "version": "1.0", "added_tokens": [],
        "normalizer": {"type": "Sequence", "normalizers": [json_step(op) for op in steps]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                          "use_regex": False},
        "model": {"type": "BPE", "vocab": _BYTES_VOCAB, "merges": []}}))
    normalized = tok.normalizer.normalize_str(text)
    offsets = tok.encode(text, add_special_tokens=False).offsets
    spans, k = [], 0
    for c in normalized:
        spans.append(offsets[k])
        k += len(c.encode("utf-8", "surrogatepass"))
    assert k == len(offsets)
    return normalized, spans


def ours_aligned(program: NormalizerProgram, text: str) -> tuple[str, list]:
    out, starts, ends = program.normalize_aligned(text)
    if starts is None:
        return out, [(i, i + 1) for i in range(len(out))]
    return out, list(zip(starts, ends))


def reference_aligned(steps: list, text: str) -> tuple[str, list]:
    norm = hf_normalizers.from_json({"type": "Sequence", "normalizers": [json_step(op) for op in steps]})
    t = norm.normalize(NormalizedText.from_original(text))
    return t.text, [t.span(i) for i in range(len(t.text))]


def no_surrogates(text: str) -> bool:
    return not any(0xD800 <= ord(c) < 0xE000 for c in text)


def expected(steps: list, text: str) -> tuple[str, list]:
    """HF's normalized text and alignment.  With an empty String Replace HF's alignment
    panics (and its normalize_str too on non-ASCII text: a cut inside a character): there
    the reference's alignment is compared, and HF's text on ASCII."""
    if not any(isinstance(op, ops.ReplaceLiteral) and not op.literal for op in steps):
        return hf_aligned(steps, text)
    want = reference_aligned(steps, text)
    if text.isascii() and len(steps) == 1:
        assert want[0] == N.Sequence([hf_step(op) for op in steps]).normalize_str(text)
    return want


# -- every op alone and random sequences, against HF and the reference -------------------

@pytest.mark.parametrize("op", [ops.UnicodeForm(f) for f in ("NFC", "NFD", "NFKC", "NFKD")] + [
    ops.Lowercase(), ops.ReplaceLiteral(" ", "\u2581"), ops.ReplaceLiteral("e\u0301", "X"),
    ops.ReplaceLiteral("", "x"), ops.ReplaceLiteral("ab", ""), ops.Prepend("\u2581"),
    ops.Strip(True, True), ops.Strip(True, False), ops.Strip(False, True), ops.StripAccents(), ops.ByteLevel()],
    ids=repr)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts)
@example(text="ΟΔΟΣ İSTANBUL ﬁne Ｗｏｒｌｄ 한국어 e\u0301 a\u0301\u0327b \U0001f600")
@example(text="")
def test_each_op_as_hf(op, text):
    if not no_surrogates(text):
        return
    program = NormalizerProgram([op])
    want = expected([op], text)
    assert ours_aligned(program, text) == want
    assert program.normalize(text) == want[0]
    assert reference_aligned([op], text) == want


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(op_strategy, max_size=5), text=texts)
def test_sequences_as_hf(steps, text):
    if not no_surrogates(text):
        return
    program = NormalizerProgram(steps)
    want = expected(steps, text)
    assert ours_aligned(program, text) == want
    assert program.normalize(text) == want[0]
    assert program.normalize_batch([text, text.upper(), ""]) == [
        want[0], program.normalize(text.upper()), program.normalize("")]
    assert reference_aligned(steps, text) == want


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=st.sampled_from(RUN_PATTERNS), content=contents, text=texts,
       before=st.sampled_from([[], [ops.UnicodeForm("NFC")], [ops.ReplaceLiteral("a", "B\u0130")]]))
def test_replace_run_then_lowercase_as_hf(pattern, content, text, before):
    """A Replace of a class's runs by one character then Lowercase (CLIP's) runs as one pass
    over the text: HF's text and alignment, on a str of each kind and after an op that
    changed the text."""
    if not no_surrogates(text):
        return
    steps = before + [replace_run(pattern, content), ops.Lowercase()]
    program = NormalizerProgram(steps)
    want = expected(steps, text)
    assert ours_aligned(program, text) == want
    assert program.normalize_batch([text, text.upper(), text + "\u0130\U0001F600"]) == [
        want[0], expected(steps, text.upper())[0], expected(steps, text + "\u0130\U0001F600")[0]]


@settings(max_examples=300, deadline=None)
@given(literal=st.text(alphabet="ab\u00e9\u20ac", min_size=1, max_size=6),
       text=st.text(alphabet="ab\u00e9\u20ac", max_size=40), content=st.sampled_from(["", "#", "ba"]))
def test_literal_replace_is_leftmost_non_overlapping(literal, text, content):
    """The literal search (KMP, memchr on Latin-1) finds what str.replace finds, on every str kind."""
    program = NormalizerProgram([ops.ReplaceLiteral(literal, content)])
    assert program.normalize(text) == text.replace(literal, content)
    assert program.normalize(text + "\U0001f600") == (text + "\U0001f600").replace(literal, content)


def test_unchanged_text_is_the_same_object():
    program = NormalizerProgram([ops.UnicodeForm("NFKC"), ops.Lowercase(), ops.ReplaceLiteral("  ", " "),
                                 ops.Strip(True, True), ops.StripAccents()])
    for text in ["plain lower ascii", "caf\u00e9 d\u00e9j\u00e0 vu", "\u65e5\u672c\u8a9e \ud55c\uad6d\uc5b4", ""]:
        assert program.normalize(text) is text
        assert program.normalize_aligned(text) == (text, None, None)
        assert program.normalize_batch([text])[0] is text
    assert program.normalize("Upper") == "upper"


def test_long_texts_and_batches():
    """Long texts (buffers grow), every str kind, batches of mixed kinds."""
    program = NormalizerProgram([ops.UnicodeForm("NFKD"), ops.Lowercase(), ops.ReplaceLiteral(" ", "\u2581"),
                                 ops.Prepend("\u2581")])
    parts = ["Hello World ", "\u00c9t\u00e9 ", "\ufb01 ", "\U0001f600 ", "\u0130 ", "\uac00 "]
    texts = [p * 3000 for p in parts] + ["".join(parts) * 500]
    ref = N.Sequence([N.NFKD(), N.Lowercase(), N.Replace(" ", "\u2581"), N.Prepend("\u2581")])
    want = [ref.normalize_str(t) for t in texts]
    assert [program.normalize(t) for t in texts] == want
    assert program.normalize_batch(texts) == want
    with pytest.raises(TypeError):
        program.normalize_batch(["a", b"b"])


def test_strip_whitespace_is_rusts():
    """Strip's White_Space set against HF on every code point."""
    program = NormalizerProgram([ops.Strip(True, False)])
    ref = N.Strip(left=True, right=False)
    bad = [hex(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000
           and program.normalize(chr(cp) + "a") != ref.normalize_str(chr(cp) + "a")]
    assert bad == []


def test_strip_accents_marks_are_hfs():
    """StripAccents' combining marks (Unicode 9.0 General_Category M) against HF on every code point."""
    program = NormalizerProgram([ops.StripAccents()])
    ref = N.StripAccents()
    every = "".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    assert program.normalize(every) == ref.normalize_str(every)


# -- lowering the hf classes -------------------------------------------------------------

def test_lower_composes_sequences():
    norm = hf_normalizers.from_json({"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "StripAccents"}]},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}, {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Strip", "strip_left": True, "strip_right": False}, {"type": "ByteLevel"}]})
    assert norm.lower() == [ops.UnicodeForm("NFC"), ops.Lowercase(), ops.StripAccents(),
                            ops.ReplaceLiteral(" ", "\u2581"), ops.Prepend("\u2581"), ops.Strip(True, False),
                            ops.ByteLevel()]
    assert hf_normalizers.program_of(None) is None
    assert hf_normalizers.program_of(hf_normalizers.from_json({"type": "Sequence", "normalizers": []})) is None


def test_regex_replace_lowers_when_one_class_repeats():
    pytest.importorskip("onigurumacffi")
    norm = hf_normalizers.from_json({"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}]})
    assert [type(op) for op in norm.lower()] == [ops.UnicodeForm, ops.ReplaceRun]
    for pattern in ["ab|c", "\\s+x", "(?<=a)b", "a*"]:   # not one class repeated 1.. times
        norm = hf_normalizers.from_json({"type": "Replace", "pattern": {"Regex": pattern}, "content": " "})
        with pytest.raises(NotLowered, match="Replace with the regex"):
            norm.lower()
        with pytest.raises(NotLowered):
            hf_normalizers.program_of(norm)


@pytest.mark.parametrize("pattern", RUN_PATTERNS)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=texts, content=contents)
def test_regex_replace_runs_as_hf(pattern, text, content):
    op = replace_run(pattern, content)
    assert ours_aligned(NormalizerProgram([op]), text) == expected([op], text)


def test_bad_ops_are_refused():
    with pytest.raises(ValueError):
        ops.UnicodeForm("NFX")
    from fastbpe._normalize import Program
    with pytest.raises(ValueError):
        Program([("nonsense",)])
    with pytest.raises(ValueError):
        Program([("form", 0, b"short")])


# -- end to end: byte-level tokenizer.json files with normalizers, on the kernel path ------

from hf_reference import FIELDS, SAMPLES, build  # noqa: E402
from datasources import VOCAB_DIR  # noqa: E402
from tokenizers import AddedToken  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402

NORMALIZER_NODES = {
    "lowercase": {"type": "Lowercase"},
    "nfkc": {"type": "NFKC"},
    "nfd": {"type": "NFD"},
    "nfc+lowercase+replace": {"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Lowercase"}, {"type": "Replace", "pattern": {"String": "  "}, "content": " "}]},
    "nfd+stripaccents+strip": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "StripAccents"}, {"type": "Strip", "strip_left": True, "strip_right": True}]},
    "nfkc+prepend": {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Prepend", "prepend": " "}]},
}

E2E_TEXTS = SAMPLES + [
    "HELLO World ÉCOLE Straße İstanbul ΟΔΟΣ", "Ｆｕｌｌ－ｗｉｄｔｈ ＡＢＣ １２３ ﬁﬂ ½", "e\u0301 a\u0301\u0327b \u1100\u1161\u11a8",
    "Hello <|endoftext|> WORLD", "HELLO hello HeLLo", "  x  ", "\U0001f600 Emoji \U0001f469\u200d\U0001f4bb",
    "ǅemal ǈ ǋ", "a\u00a0b\u3000c", "<special> THE END",
]


def _swapped(path, node) -> str:
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["normalizer"] = node
    return json.dumps(doc)


def _small(node) -> str:
    """A byte-level file trained here (no shared data needed), with a normalized added token,
    a raw one and a special one."""
    ref = build(pre_tokenizer=P.ByteLevel(add_prefix_space=False), decoder=D.ByteLevel(), byte_level_alphabet=True)
    ref.add_tokens([AddedToken("hello", normalized=True), AddedToken("<special>", normalized=False)])
    ref.add_special_tokens(["<|endoftext|>"])
    doc = json.loads(ref.to_str())
    doc["normalizer"] = node
    return json.dumps(doc)


def _files():
    out = [("small", _small)]
    for name in ("gpt2", "qwen2.5"):
        path = VOCAB_DIR / "hf" / name / "tokenizer.json"
        if path.is_file():
            out.append((name, lambda node, path=path: _swapped(path, node)))
    return out


def _assert_as_hf(spec: str, texts: list) -> None:
    ref, ours, fresh = HFTokenizer.from_str(spec), Tokenizer.from_str(spec), Tokenizer.from_str(spec)
    assert ours._uses_fast_path(), "the file should take the kernel path"
    for add in (True, False):
        want = ref.encode_batch(texts, add_special_tokens=add)
        got = ours.encode_batch(texts, add_special_tokens=add)
        for w, g, text in zip(want, got, texts):
            for field in FIELDS:
                assert getattr(g, field) == getattr(w, field), (field, text, add)
        assert ours.encode_ids_batch(texts, add_special_tokens=add) == [w.ids for w in want]
        for w, text in zip(want, texts):
            got = fresh.encode(text, add_special_tokens=add)
            assert (got.ids, got.tokens, got.offsets, got.word_ids) == (w.ids, w.tokens, w.offsets, w.word_ids), text
            assert fresh.encode_ids(text, add_special_tokens=add) == w.ids
        ids_only = fresh.encode_batch(texts, add_special_tokens=add)   # lazy Encodings
        assert [e.ids for e in ids_only] == [w.ids for w in want]
        assert [e.offsets for e in ids_only] == [w.offsets for w in want]


@pytest.mark.parametrize("file", _files(), ids=lambda f: f[0])
@pytest.mark.parametrize("normalizer", sorted(NORMALIZER_NODES))
def test_normalizer_files_as_hf(file, normalizer):
    _assert_as_hf(file[1](NORMALIZER_NODES[normalizer]), E2E_TEXTS)


@pytest.mark.parametrize("normalizer", ["lowercase", "nfc+lowercase+replace", "nfd+stripaccents+strip"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(batch=st.lists(st.lists(st.sampled_from(POOL + ("hello", "HELLO", "<special>", "<|endoftext|>", "Word")),
                               max_size=10).map("".join), min_size=1, max_size=4))
def test_normalizer_files_on_generated_texts(normalizer, batch):
    _assert_as_hf(_small(NORMALIZER_NODES[normalizer]), batch)


def test_regex_replace_file_takes_the_kernel():
    """CLIP's normalizer (NFC, \\s+ -> " ", Lowercase) in the kernel call, HF's offsets."""
    pytest.importorskip("onigurumacffi")
    spec = _small({"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Replace", "pattern": {"Regex": "\\s+"}, "content": " "}, {"type": "Lowercase"}]})
    _assert_as_hf(spec, E2E_TEXTS + ["a \t\n b\u3000\u2028c  ", "\n\n", " x "])
    spec = _small({"type": "Replace", "pattern": {"Regex": "ab|c"}, "content": " "})
    ours = Tokenizer.from_str(spec)
    assert not ours._uses_fast_path() and "regex" in ours._normalizer_not_lowered


def test_to_encoding_and_pattern_need_nfc_or_none():
    """A tiktoken-style Encoding has no normalizer: a file that lowercases refuses it (its ids
    would differ), and the CLI's block cutting pattern is None."""
    ours = Tokenizer.from_str(_small(NORMALIZER_NODES["lowercase"]))
    assert ours.byte_level_pattern is None
    with pytest.raises(ValueError, match="no normalizer but NFC"):
        ours.to_encoding()
    assert Tokenizer.from_str(_small({"type": "NFC"})).byte_level_pattern is not None


@pytest.mark.parametrize("form", ["NFC", "NFKC", "NFD", "NFKD"])
def test_stability_tables_skip_only_what_is_stable(form):
    """Each form's stability table from the code points with a decomposition (whole blocks
    without one filled from the class table) equals the one made code point by code point,
    every one of them sent through decompose (and recompose, for NFC/NFKC)."""
    from fastbpe._nfc import stability_table
    assert stability_table(form) == stability_table(form, every_code_point=True)
