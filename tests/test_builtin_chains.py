"""Chains of HF pre-tokenizer steps that one built-in scanner kind cuts as a whole: DeepSeek-V3's
three Splits (digits in threes, then CJK runs, then its main regex, each inside the pieces of the
one before) and CLIP's Split (Removed, invert) followed by ByteLevel's regex.  Each kind cuts as
`tokenizers` does (Oniguruma), on every code point in context, on generated text and on every
scan path; `lower_steps` recognises the exact chain and nothing else."""
from __future__ import annotations

import importlib.util
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbpe import _pretokenize as pt
from fastbpe import patterns as P
from fastbpe.pretokenize import builtin_chain_kind, clip_kind

tokenizers = pytest.importorskip("tokenizers", reason="tokenizers is the reference for HF's Split chains")
from tokenizers import Regex, pre_tokenizers  # noqa: E402

DEEPSEEK = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(p), "isolated") for p in P.DEEPSEEK_V3_SPLITS])
KIND = pt.KINDS["deepseek_v3"]
PATHS = [(scanner, blocks) for scanner in ("auto", "sse2", "swar", "char") for blocks in (True, False)]

TEXTS = [
    "Hello world, it's 12345 dollars!\n\n  foo.bar(x)   \n\tx\x0bq",
    "x=1234567;y=[a1b22c333];\n    return f(x)  # comment\n   1  \n\n 22",
    "日本語のテキスト、カタカナ・ーです。abc 123日本 ゠ア゛゜ゝ\u3040\u3097\u3099ア",
    "Zahlen ١٢٣٤ und ½ ², Ⅻ; 東京 2024年 Ünïcödé naïve café — “quotes” 's 'S .NET ..x",
    "emoji 👍🏽 mixed😀text\u200b zero\u00a0width  \u3000 ideographic space x\u0301 \u0301\u0301",
    "\x01\x02ab\x01. \x7f\x1c\x1dz  \r\n\r\n  \r  日本  中 文\n",
    "a" * 70 + " " * 70 + "." * 70 + "\n" * 3 + "1" * 70 + "Z" * 3,
]

# Characters around each code point: doubled, before/after a letter, a space, a digit, CJK, a
# newline, punctuation and a combining mark (every alternative and every segment border).
CONTEXTS = ["{0}{0}a {0}1 \u0301.{0}日{0}\n"]
_ALPHABET = list("aZq 19'.,;!?-_()\t\n\r\x0b\x01\x7f") + [
    "é", "e\u0301", "\u0301", "ß", "中", "日", "の", "カ", "・", "ー", "゠", "゛", "\u3040", "\u3099", "١", "²",
    "½", "😀", "\u00a0", "\u3000", "\u2028", "—", "「", "$", "€", "\u200b", "\U00080001"]


def hf_pieces(text: str) -> list[str]:
    return [piece for piece, _ in DEEPSEEK.pre_tokenize_str(text)]


@pytest.fixture
def each_path():
    """Runs the body on every scan path (block scanner per classifier, with and without the
    64-byte ASCII blocks, and the per-character matchers), restoring the defaults after."""
    was = pt.scanner_in_use()
    try:
        def run(check):
            for scanner, blocks in PATHS:
                pt.use_scanner(scanner)
                pt.use_ascii_blocks(blocks)
                check(f"{scanner}, blocks={blocks}")
        yield run
    finally:
        pt.use_ascii_blocks(True)
        pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)


def test_the_kind_cuts_as_tokenizers(each_path):
    texts = TEXTS + ["".join(TEXTS), "".join(TEXTS) * 3]

    def check(path):
        for text in texts:
            assert pt.split(text, KIND) == hf_pieces(text), (path, text)
    each_path(check)


def test_every_code_point_in_context():
    """Every code point but the surrogates (the classes: tables for \\p{L}\\p{M}\\p{N}\\s,
    _unicode_ps.h for [\\p{P}\\p{S}], the CJK ranges) in contexts that reach each alternative."""
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    for ctx in CONTEXTS:
        for i in range(0, len(cps), 8192):
            text = "".join(ctx.format(chr(c)) for c in cps[i:i + 8192])
            if pt.split(text, KIND) != hf_pieces(text):
                bad = [hex(c) for c in cps[i:i + 8192] if pt.split(ctx.format(chr(c)), KIND) != hf_pieces(ctx.format(chr(c)))]
                pytest.fail(f"context {ctx!r}: code points {bad[:10]} cut otherwise than tokenizers")


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_ALPHABET), max_size=160).map("".join))
def test_generated_text(text):
    assert pt.split(text, KIND) == hf_pieces(text)
    assert pt.split(text * 2, KIND) == hf_pieces(text * 2)     # long enough for the ASCII blocks


# Words of several scripts, CJK and kana next to other letters, marks, zero-width characters:
# the per-character scan's word step (fb_ds_word_end) against tokenizers.
_WORDS = _ALPHABET + ["Привет", " мир", " 東京", "カタカナ", "ひらがな", " ภาษาไทย", " हिन्दी", "مرحبا", " 한국어",
                      "\u200d", " \u0301", "'s"]


@settings(max_examples=200, deadline=None)
@given(text=st.lists(st.sampled_from(_WORDS), max_size=60).map("".join))
def test_words_of_every_script_on_the_char_path(text):
    was = pt.scanner_in_use()
    try:
        pt.use_scanner("char")
        assert pt.split(text, KIND) == hf_pieces(text)
    finally:
        pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)


@settings(max_examples=100, deadline=None)
@given(text=st.lists(st.sampled_from(list("ab Z09.,!'\n\r\t\x0b\x01\x1c\x7f")), min_size=60, max_size=300).map("".join))
def test_generated_ascii_on_every_path(text):
    _assert_on_every_path(text, KIND, hf_pieces(text))


def _assert_on_every_path(text: str, kind: int, want: list) -> None:
    """kind cuts text into want on every scan path (SIMD or not, ASCII blocks or not)."""
    was = pt.scanner_in_use()
    try:
        for scanner, blocks in PATHS:
            pt.use_scanner(scanner)
            pt.use_ascii_blocks(blocks)
            assert pt.split(text, kind) == want, (scanner, blocks)
    finally:
        pt.use_ascii_blocks(True)
        pt.use_scanner("auto" if was in ("avx2", "sse2", "swar") else was)


def test_punct_symbol_table_is_tokenizers():
    """fastbpe/_unicode_ps.h is what tools/gen_hf_punct_symbol.py makes from this tokenizers."""
    import pathlib

    tool = pathlib.Path(__file__).resolve().parents[1] / "tools" / "gen_hf_punct_symbol.py"
    spec = importlib.util.spec_from_file_location("gen_hf_punct_symbol", tool)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    members = gen.hf_members(r"[\p{P}\p{S}]")
    assert pathlib.Path(gen.OUT).read_text(encoding="utf-8").split("\n", 2)[2] == gen.render(members).split("\n", 2)[2]


def _levels(steps_json: list):
    from fastbpe.hf import pre_tokenizers as hp

    steps = [hp.from_json(node) for node in steps_json]
    return hp.lower_steps(steps)[0]


def _split(pattern: str, behavior: str = "Isolated", invert: bool = False) -> dict:
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": invert}


BYTELEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


def test_the_exact_chain_is_one_builtin_level():
    pytest.importorskip("onigurumacffi", reason="the other chains lower with Oniguruma's classes")
    levels = _levels([_split(p) for p in P.DEEPSEEK_V3_SPLITS] + [BYTELEVEL])
    assert [level.builtin for level in levels] == [KIND]
    assert builtin_chain_kind(P.DEEPSEEK_V3_SPLITS) == KIND
    assert builtin_chain_kind(P.DEEPSEEK_V3_SPLITS, force_regex=True) == -1
    # a Split before the chain cuts first; the chain still runs on the kind inside its pieces
    levels = _levels([_split(r"\n")] + [_split(p) for p in P.DEEPSEEK_V3_SPLITS])
    assert [level.builtin for level in levels] == [-1, KIND]


def test_lowering_the_chain_compiles_no_program():
    """The three Splits' own programs (for running a step by itself) are made on first use, not
    at load: the kernel's plan does not need them (a cold load asked Oniguruma for their classes)."""
    from fastbpe.hf import pre_tokenizers as hp

    steps = [hp.from_json(_split(p)) for p in P.DEEPSEEK_V3_SPLITS]
    assert [level.builtin for level in hp.lower_steps(steps)[0]] == [KIND]
    assert [s._engine for s in steps] == [None, None, None]
    if importlib.util.find_spec("onigurumacffi"):
        assert steps[0].kind >= 0 and steps[0].engine == "program"      # decided when asked


# chains near a built-in kind's that must not take it (each is lowered as its own steps)
_NOT_DEEPSEEK_V3 = [
    [_split(p) for p in P.DEEPSEEK_V3_SPLITS[:2]],                                  # not the whole chain
    [_split(p) for p in reversed(P.DEEPSEEK_V3_SPLITS)],                            # another order
    [_split(P.DEEPSEEK_V3_SPLITS[0]), _split(P.DEEPSEEK_V3_SPLITS[1]),
     _split(P.DEEPSEEK_V3_SPLITS[2].replace("[A-Za-z]+", "[A-Za-z]*"))],            # one pattern changed
    [_split(P.DEEPSEEK_V3_SPLITS[0], "Removed")] + [_split(p) for p in P.DEEPSEEK_V3_SPLITS[1:]],  # a behavior
    [{"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]
    + [_split(p) for p in P.DEEPSEEK_V3_SPLITS],                                    # after ByteLevel: bytes
]
_NOT_DEEPSEEK_V3_IDS = ["two-of-three", "reversed", "changed", "removed", "after-bytelevel"]


def test_shared_deepseek_v3_file():
    from datasources import VOCAB_DIR, corpus_available, load_corpus

    path = VOCAB_DIR / "hf" / "deepseek-v3" / "tokenizer.json"
    if not path.exists():
        pytest.skip("no shared DeepSeek-V3 tokenizer.json (../shared/data/vocab/hf/deepseek-v3)")
    pre = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]
    assert tuple(s["pattern"]["Regex"] for s in pre["pretokenizers"][:3]) == P.DEEPSEEK_V3_SPLITS
    from fastbpe.hf import Tokenizer

    ours, ref = Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))
    assert ours.engine == "kernel" and ours._kind == KIND
    docs = list(TEXTS)
    for name in ("code", "multilingual", "large_en"):
        if corpus_available(name):
            text = load_corpus(name, 60_000)
            docs += [text[i:i + 2000] for i in range(0, len(text), 2000)]
    assert ours.encode_ids_batch(docs) == [e.ids for e in ref.encode_batch(docs)]


# -- CLIP: Split(CLIP_PATTERN, Removed, invert) then ByteLevel(use_regex) --

CLIP = pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(P.CLIP_PATTERN), "removed", invert=True),
                                pre_tokenizers.ByteLevel(add_prefix_space=False)])
CLIP_KIND = pt.KINDS["clip"]
CLIP_TEXTS = TEXTS + [
    "a<|startoftext|>b.<|endoftext|>. .<|startoftext|>x <|endoftext <|start",
    "''s 'S 'll 're 've 'm 'd 't 'x it's IT'S",
    "  <|endoftext|><|endoftext|>\n<|startoftext|>",
]
_CLIP_ALPHABET = _ALPHABET + ["<|startoftext|>", "<|endoftext|>", "<|", "|>", "'s", "'ll", "'re", "<"]


def clip_pieces(text: str) -> list[str]:
    return [text[a:b] for _, (a, b) in CLIP.pre_tokenize_str(text)]


def test_clip_kind_cuts_as_tokenizers(each_path):
    texts = CLIP_TEXTS + ["".join(CLIP_TEXTS), "".join(CLIP_TEXTS) * 3]

    def check(path):
        for text in texts:
            assert pt.split(text, CLIP_KIND) == clip_pieces(text), (path, text)
    each_path(check)


def test_clip_every_code_point_in_context():
    cps = [c for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    ctx = "{0}{0}a {0}1'{0}.{0}<|endoftext|>{0}\u0301"
    for i in range(0, len(cps), 8192):
        text = "".join(ctx.format(chr(c)) for c in cps[i:i + 8192])
        assert pt.split(text, CLIP_KIND) == clip_pieces(text), i


@settings(max_examples=300, deadline=None)
@given(text=st.lists(st.sampled_from(_CLIP_ALPHABET), max_size=120).map("".join))
def test_clip_generated_text(text):
    for t in (text, text * 3):
        assert pt.split(t, CLIP_KIND) == clip_pieces(t)


@settings(max_examples=150, deadline=None)
@given(text=st.lists(st.sampled_from(list("abs Z09.,'<|\n\t\x01") + ["'s", "'re", "'ll", "<|endoftext|>"]),
                     min_size=40, max_size=200).map("".join))
def test_clip_generated_ascii_on_every_path(text):
    _assert_on_every_path(text, CLIP_KIND, clip_pieces(text))


def test_clip_three_special_pieces_go_together():
    """A scan never starts inside a special string's pieces: with room for fewer than three, it
    stops before the string (a one-piece query gets "<|")."""
    from fastbpe import _testing

    data = "ab <|endoftext|> c".encode()
    assert _testing.piece_end_at(data, CLIP_KIND, 3) == 5
    text = "x<|startoftext|>." * 50_000            # more pieces than one scan call's buffer
    assert pt.split(text, CLIP_KIND) == clip_pieces(text)


BYTELEVEL_REGEX = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}


def test_clips_split_is_one_builtin_level():
    levels = _levels([_split(P.CLIP_PATTERN, "Removed", True), BYTELEVEL_REGEX])
    assert [(level.builtin, level.drop) for level in levels] == [(CLIP_KIND, "gaps")]
    assert clip_kind(force_regex=True) == -1


def test_clips_kind_is_no_level_of_a_longer_chain():
    """A chain reads a built-in level's piece ends without the DROPPED marks of the pieces the kind
    removes, and the level's pattern text (CLIP's regex + " → ByteLevel") is no regex to compile:
    such a chain is refused (the file then runs its pipeline), never cut otherwise."""
    from fastbpe.plan import Level
    from fastbpe.pretokenize import chain_kind

    clip = Level(P.CLIP_PATTERN + " \u2192 ByteLevel", "oniguruma", builtin=CLIP_KIND, drop="gaps")
    assert chain_kind([clip]) == (CLIP_KIND, None)
    for levels in ([Level(r"\n"), clip], [clip, Level(r"\p{N}")]):
        kind, why = chain_kind(levels)
        assert kind == -1 and "removes pieces" in why


_NOT_CLIP = [
    [_split(P.CLIP_PATTERN, "Removed", False), BYTELEVEL_REGEX],               # removes the matches
    [_split(P.CLIP_PATTERN, "Isolated", True), BYTELEVEL_REGEX],               # keeps the whitespace
    [_split(P.CLIP_PATTERN, "Removed", True), dict(BYTELEVEL_REGEX, use_regex=False)],
    [_split(P.CLIP_PATTERN, "Removed", True), dict(BYTELEVEL_REGEX, add_prefix_space=True)],
    [_split(P.CLIP_PATTERN.replace("[\\p{N}]", "[\\p{N}]+"), "Removed", True), BYTELEVEL_REGEX],
    [_split(P.CLIP_PATTERN, "Removed", True)],
]
_NOT_CLIP_IDS = ["removed", "isolated", "no-regex", "prefix-space", "changed", "no-bytelevel"]


@pytest.mark.parametrize("steps, kind", [(s, KIND) for s in _NOT_DEEPSEEK_V3] + [(s, CLIP_KIND) for s in _NOT_CLIP],
                         ids=[f"deepseek_v3-{i}" for i in _NOT_DEEPSEEK_V3_IDS] + [f"clip-{i}" for i in _NOT_CLIP_IDS])
def test_other_steps_are_not_the_kind(steps, kind):
    pytest.importorskip("onigurumacffi", reason="these chains lower with Oniguruma's classes")
    from fastbpe.plan import NotLowered

    try:
        levels = _levels(steps)
    except NotLowered:
        return
    assert kind not in [level.builtin for level in levels]


def test_shared_clip_file():
    from datasources import VOCAB_DIR, corpus_available, load_corpus

    path = VOCAB_DIR / "hf" / "clip" / "tokenizer.json"
    if not path.exists():
        pytest.skip("no shared CLIP tokenizer.json (../shared/data/vocab/hf/clip)")
    from fastbpe.hf import Tokenizer

    ours, ref = Tokenizer.from_file(str(path)), tokenizers.Tokenizer.from_file(str(path))
    assert ours.engine == "kernel" and ours._kind == CLIP_KIND
    docs = list(CLIP_TEXTS) + ["x<|STARTOFTEXT|>.<|EndOfText|> " * 3000]   # more pieces than one scan
    for name in ("code", "multilingual", "large_en"):
        if corpus_available(name):
            text = load_corpus(name, 40_000)
            docs += [text[i:i + 2000] for i in range(0, len(text), 2000)]
    assert ours.encode_ids_batch(docs) == [e.ids for e in ref.encode_batch(docs)]
    for got, want in zip(ours.encode_batch(docs), ref.encode_batch(docs)):
        assert (got.tokens, got.offsets, got.word_ids) == (want.tokens, want.offsets, want.word_ids)


# -- llama.cpp's pre-tokenizers (GGUF files) that spell a chain the scanner knows --

@pytest.mark.parametrize("name", ["deepseek-v3", "hunyuan-dense", "joyai-llm"])
def test_gguf_deepseek3_chain_is_the_kind(name):
    from fastbpe.gguf import pretokenizers as gp

    splitter = gp.Splitter(gp.PRE_TOKENIZERS[name])
    assert splitter.engine == "scanner" and splitter.scanner_kind == KIND
    reference = gp.Splitter(gp.PRE_TOKENIZERS[name], force_regex=True)    # llama.cpp's regexes on `regex`
    assert reference.scanner_kind == -1
    for text in TEXTS + ["".join(TEXTS)]:
        assert splitter.split(text) == reference.split(text) == hf_pieces(text), text


def test_gguf_tekken_is_not_tekkens_pattern():
    """llama.cpp's "tekken" regex reads upper and lower case as "a letter but a-z" and "a letter
    but A-Z", not as o200k's classes: another cut (here "Éa"), so not the built-in kind."""
    from fastbpe.gguf import pretokenizers as gp

    splitter = gp.Splitter(gp.PRE_TOKENIZERS["tekken"])
    assert splitter.scanner_kind != pt.KINDS["tekken"]
    assert splitter.split("xÉa") != pt.split("xÉa", pt.KINDS["tekken"])


def test_gguf_qwen35_is_not_the_kind():
    """llama.cpp's qwen35 regex spells the contractions (?:'[sS]|...), which reads "'ſ" before a
    letter otherwise than Qwen3.5's tokenizer.json text (?i:'s|...) does (long s folds to s): a
    different text, so not the built-in kind."""
    from fastbpe.gguf import pretokenizers as gp

    splitter = gp.Splitter(gp.PRE_TOKENIZERS["qwen35"])
    assert splitter.scanner_kind != pt.KINDS["qwen35"]
    assert splitter.split("x'ſa") == ["x", "'ſa"] and pt.split("x'ſa", pt.KINDS["qwen35"]) == ["x", "'ſ", "a"]
