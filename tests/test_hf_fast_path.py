"""The tokenizer.json fast path (`encode_ids`, `encode_ids_batch`, `encode_to_numpy`) against
`tokenizers` where its shortcuts could go wrong: NFC on the spans the C scan finds, added tokens found
with the trie regex, batch shares that skip the per-document stitching, threads kept across
calls.  Built files only (no download)."""
from __future__ import annotations

import os
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hf_reference import TRAIN_TEXT, build

from tokenizers import AddedToken, Regex  # noqa: E402
from tokenizers import decoders as D  # noqa: E402
from tokenizers import normalizers as N  # noqa: E402
from tokenizers import pre_tokenizers as P  # noqa: E402
from tokenizers import processors as PP  # noqa: E402

from fastbpe.hf import Tokenizer  # noqa: E402
from fastbpe._nfc import nfc_spans  # noqa: E402
from fastbpe.hf.normalizers import nfc_changes, nfc_table, nfc  # noqa: E402
from fastbpe.patterns import LLAMA3_PATTERN  # noqa: E402

# the reference NFC is HF's (Unicode 9.0 tables), not this Python's unicodedata
_hf_nfc = N.NFC().normalize_str

# characters that compose with (or reorder around) their neighbours: a combining acute and
# cedilla, a Devanagari nukta, a Bengali vowel sign that composes with the one before it,
# Hangul jamo (L, V, T), a Tibetan vowel that decomposes, a singleton (Ohm sign)
TRICKY = "e\u0301 c\u0327\u0301 \u0915\u093c \u09c7\u09be \u1100\u1161\u11a8 \u0f73 \u2126 \u00e9"


def _tricky_lines() -> list[str]:
    marks = ["\u0301", "\u0327", "\u093c", "\u09be", "\u1161", "\u11a8", "\u0f73", "\u0344"]
    out = []
    for m in marks:
        out += [f"a\n{m}b", f"a{m}\nb", f"\n{m}", f"{m}\n", f"e\n\u0301{m}\n\u1100\n{m}", f"\u09c7\n\u09be"]
    return out


def test_nfc_is_hfs_nfc():
    for text in _tricky_lines() + [TRICKY, TRICKY.replace(" ", "\n"), "", "\n", "plain ascii\n", "déjà vu",
                                   "\U00011935\U00011930", "\U000105d2\u0307"]:
        assert nfc(text) == _hf_nfc(text), ascii(text)


def test_nfc_table_shortcut_is_the_full_computation():
    """nfc_stability_table sends only code points with a canonical decomposition (and Hangul
    syllables) through decompose and recompose: the same table as sending all of them."""
    from fastbpe._nfc import nfc_stability_table
    assert nfc_stability_table() == nfc_stability_table(every_code_point=True) == nfc_table()


def test_nfc_around_every_code_point_that_is_not_a_stable_starter():
    """Each such code point (marks of every class, backward-composing vowels and jamo,
    singletons) after a starter, between marks in and out of order, at the ends of the
    text, and next to another of them."""
    table = nfc_table()
    points = [chr(cp) for cp in range(0x40000)
              if table[cp] and not 0xD800 <= cp <= 0xDFFF and unicodedata.category(chr(cp)) != "Cn"]
    # 0x11930 composes backwards in Unicode 13, not in HF's 9.0 tables: a stable starter
    assert len(points) > 1500 and table[ord("a")] == 0 and table[0x05B0] == 10 and table[0x11930] == 0
    for k in range(0, len(points), 64):
        chunk = points[k:k + 64]
        for c in chunk:
            for text in (f"a{c}", f"{c}a", f"e\u0323{c}\u0301x", f"\u1100{c}\u11a8", f"{c}{c}\u094d\u0e48"):
                assert nfc(text) == _hf_nfc(text), ascii(text)
        joined = "a".join(chunk) + "".join(chunk)
        assert nfc(joined) == _hf_nfc(joined)


_NFC_ALPHABET = ("ae \n\u0301\u0327\u0300\u0323\u0334\u093c\u094d\u0915\u0e01\u0e48\u0e38\u05b0\u05b4"
                 "\u09c7\u09be\u1100\u1161\u11a8\uac00\u0f71\u0f72\u0f73\u2126\u00e9\u0344\u0340日\U000e0100")


@settings(max_examples=400, deadline=None)
@given(st.text(st.sampled_from(_NFC_ALPHABET), max_size=40))
def test_nfc_on_generated_text(text):
    assert nfc(text) == _hf_nfc(text)
    # the short path's test: whether NFC changes the text, without building its NFC
    assert nfc_changes(text) == (_hf_nfc(text) != text)


def test_nfc_changes_on_texts_that_have_spans_nfc_leaves_alone():
    """Spans the C scan finds that normalize to themselves (a composed é, a lone mark after
    a space) are no change; one changed span among them is."""
    assert not nfc_changes("déjà vu, caf\u00e9 na\u00efve " * 100)
    assert not nfc_changes("plain ascii\n")
    assert nfc_changes("déjà vu " * 100 + "e\u0301")
    for text in _tricky_lines() + [TRICKY]:
        assert nfc_changes(text) == (_hf_nfc(text) != text), ascii(text)


_RUNS = st.lists(st.tuples(st.integers(0, 11), st.sampled_from(_NFC_ALPHABET + "\u01ff\u0250")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(_RUNS, st.sampled_from(["", "\u4e00", "\U0001f600"]))
def test_nfc_spans_word_skip_is_the_per_character_scan(runs, wide):
    """nfc_spans skips runs below U+0200 a word at a time (latin-1 text at once); with a table
    that marks one such code point, the scan goes a character at a time, and both agree."""
    from fastbpe._nfc import nfc_spans
    text = wide + "".join("ab cd\n\u00e9fg"[:k] + c for k, c in runs)
    table = nfc_table()
    per_char = bytearray(table)
    per_char[0x1FE] = 1   # U+01FE is never in text: only the fast skips see the change
    assert nfc_spans(text, table) == nfc_spans(text, bytes(per_char))
    assert nfc(text) == _hf_nfc(text)


def _spans_by_character(text: str, table, gap: int = 8) -> list:
    """find_spans' definition, a character at a time (code points past the table: UNSTABLE)."""
    out, boundary, prev, i, n = [], 0, 0, 0, len(text)
    while i < n:
        c = ord(text[i])
        v = table[c] if c < len(table) else 255
        if v == 0 or (v != 255 and v >= prev):
            boundary, prev = (i, 0) if v == 0 else (boundary, v)
            i += 1
            continue
        i += 1
        while i < n and not (ord(text[i]) < len(table) and table[ord(text[i])] == 0):
            i += 1
        prev = 0
        if out and boundary - out[-1][1] < gap:
            out[-1] = (out[-1][0], i)
        else:
            out.append((boundary, i))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["a", " ", "\u00e9", "\u0301", "\u0327", "\u4e00", "\u4e8c", "\uac00", "\u1100",
                                 "\u1161", "\u0416", "\u2126", "\U0001f600", "\U000105d2", "\u0307", "\n"]),
                max_size=40),
       st.sampled_from([None, 0x100, 0x3000, 0x10000]))
def test_nfc_spans_runs_of_stable_starters_per_kind(chars, size):
    """find_spans passes a run of stable starters in one loop per string kind (Latin-1, UCS-2,
    UCS-4), the table read without a bound test where it covers every unit: the spans are the
    character-at-a-time definition's, with the whole table and with a short one."""
    text = "".join(chars)
    table = bytes(nfc_table()) if size is None else bytes(nfc_table())[:size]
    assert nfc_spans(text, table) == ([] if text.isascii() else _spans_by_character(text, table))


def _ref(normalizer=None, added=(), post_processor=None):
    """A byte-level file on the fast path: Llama-3's split (the C scanner) + ByteLevel."""
    pre = P.Sequence([P.Split(Regex(LLAMA3_PATTERN), "isolated"), P.ByteLevel(add_prefix_space=False, use_regex=False)])
    ref = build(normalizer=normalizer, pre_tokenizer=pre, decoder=D.ByteLevel(), byte_level_alphabet=True,
                post_processor=post_processor)
    for token, special in added:
        (ref.add_special_tokens if special else ref.add_tokens)([token])
    ours = Tokenizer.from_str(ref.to_str())
    assert ours._uses_fast_path() and ours._kind >= 0
    return ref, ours


ADDED = [
    (AddedToken("<|eot|>", special=True, normalized=False), True),
    (AddedToken("<|eom|>", special=True, normalized=False), True),
    (AddedToken("<tool>", special=False, normalized=False), False),
    (AddedToken("[L]", lstrip=True, normalized=False), False),
    (AddedToken("[R]", rstrip=True, normalized=False), False),
    (AddedToken("[B]", lstrip=True, rstrip=True, special=True, normalized=False), True),
    (AddedToken("café", special=False, normalized=True), False),  # matched after NFC
]

BATCH = [
    "",                                   # empty documents, alone and between others
    "<|eot|>",                            # only added tokens
    "<|eot|><|eom|><tool><|eot|>",
    "<|eot|>starts and ends<|eom|>",
    "plain text without any added token, the common case.\n",
    "",
    "  [L]  lstrip takes the spaces before  [R]  rstrip the ones after [B]  both ",
    "[L][R][B]",
    "<|eo <|eot| <|eot|<|eot|>>",         # partial matches around a whole one
    "cafe\u0301 and café: normalized added tokens match the NFC text",
    TRICKY + "\n" + TRICKY,
    "<tool>code</tool> x < y && y <| z",
    "\u1100\n\u1161 <|eot|>\u0301 after a token",
]


def _assert_batch(ref, ours, texts, add: bool):
    want = [e.ids for e in ref.encode_batch(texts, add_special_tokens=add)]
    for threads in (None, 1, 2, 3):
        assert ours.encode_ids_batch(texts, add_special_tokens=add, num_threads=threads) == want, threads
    for text, w in zip(texts, want):
        assert ours.encode_ids(text, add_special_tokens=add) == w, text
        assert ours.encode_to_numpy(text, add_special_tokens=add).tolist() == w, text


@pytest.mark.parametrize("normalizer", [None, "nfc"])
@pytest.mark.parametrize("post", [False, True], ids=["no-post", "template"])
@pytest.mark.parametrize("added", ["raw", "raw+normalized"])
def test_batches_with_added_tokens_at_every_place(normalizer, post, added):
    """Raw added tokens only: texts without one skip the matching; a normalized one makes
    every text go through it."""
    template = PP.TemplateProcessing(single="<s> $A </s>", special_tokens=[("<s>", 1), ("</s>", 2)]) if post else None
    ref, ours = _ref(N.NFC() if normalizer else None, ADDED if added == "raw+normalized" else ADDED[:-1], template)
    for add in (True, False):
        _assert_batch(ref, ours, BATCH, add)
        _assert_batch(ref, ours, BATCH[::-1], add)         # other neighbours at the share edges
        _assert_batch(ref, ours, [t for t in BATCH if "<" not in t and "[" not in t], add)  # no added token
        _assert_batch(ref, ours, ["<|eot|>"] * 9 + [""] * 4, add)
        _assert_batch(ref, ours, [], add)


@pytest.mark.parametrize("normalized", [("<|extra_0|>", "<|extra_1|>"), ("<|extra_0|>", "X<y>")])
def test_raw_and_normalized_tokens_without_a_normalizer(normalized):
    """GPT-J's shape: a raw <|endoftext|> and normalized tokens, no normalizer: a text holding
    no first character of either kind goes to the kernel whole, the others are cut (one
    shared first character "<", or several: then every text is cut)."""
    added = [(AddedToken("<|endoftext|>", special=True, normalized=False), True)]
    added += [(AddedToken(t, special=False, normalized=True), False) for t in normalized]
    ref, ours = _ref(None, added)
    texts = ["plain text, no token", "a <|extra_0|> b", "<|endoftext|>x<|extra_1|>", "x < y <| z <|extra_0",
             "X<y> and X<y", "", "no angle here", "<|extra_1|><|endoftext|>", "tail <|extra_0|>"]
    for add in (True, False):
        _assert_batch(ref, ours, texts, add)
        _assert_batch(ref, ours, [t for t in texts if "<" not in t], add)
        assert [e.ids for e in ours.encode_batch(texts, add_special_tokens=add)] == \
            [e.ids for e in ref.encode_batch(texts, add_special_tokens=add)]
        for text in texts:
            assert ours.encode(text, add_special_tokens=add).ids == ref.encode(text, add_special_tokens=add).ids, text


def test_batches_on_longer_text_keep_threads_and_ids():
    ref, ours = _ref(N.NFC(), ADDED)
    docs = [TRAIN_TEXT[i:i + 300] + ("<|eot|>" if i % 600 else "") for i in range(0, len(TRAIN_TEXT), 150)]
    want = [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)]
    for _ in range(3):  # again on the kept threads, their caches now warm
        assert ours.encode_ids_batch(docs, add_special_tokens=False, num_threads=2) == want


def test_kept_threads_are_made_again_after_fork():
    if not hasattr(os, "fork"):
        pytest.skip("no os.fork on this platform")
    ref, ours = _ref(None, ADDED)
    docs = ["hello <|eot|> world", "more text here", "x"] * 4
    want = [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)]
    assert ours.encode_ids_batch(docs, add_special_tokens=False, num_threads=2) == want  # the parent's pool
    pid = os.fork()
    if pid == 0:  # the child: a batch on threads must not wait for the parent's (absent) threads
        ok = ours.encode_ids_batch(docs, add_special_tokens=False, num_threads=2) == want
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("normalizer", [None, "nfc"])
def test_lone_surrogates_raise_anywhere_in_a_batch(normalizer):
    _, ours = _ref(N.NFC() if normalizer else None, ADDED)
    for texts in (["ok", "a\ud800b"], ["<|eot|>\udfff", "ok"], ["ok"] * 5 + ["\ud83d<|eot|>x"]):
        for threads in (1, 2):
            with pytest.raises(UnicodeEncodeError):
                ours.encode_ids_batch(texts, num_threads=threads)
    with pytest.raises(UnicodeEncodeError):
        ours.encode_ids("x <|eot|> \ud800")


def test_str_subclasses_and_wrong_types():
    ref, ours = _ref(N.NFC(), ADDED)

    class Text(str):   # encoded by its contents, as HF reads them, not by its own __str__
        def __str__(self):
            return "other"

    texts = [Text("hello <|eot|> café"), Text("plain"), Text("")]
    want = [e.ids for e in ref.encode_batch([str.__str__(t) for t in texts])]
    assert want == [e.ids for e in ref.encode_batch(texts)]
    assert ours.encode_ids_batch(texts, num_threads=1) == want
    assert [ours.encode_ids(t) for t in texts] == want
    assert [list(e.ids) for e in ours.encode_batch(texts)] == want
    assert [list(ours.encode(t).ids) for t in texts] == want
    for bad in (["ok", b"bytes"], ["ok", None]):
        with pytest.raises(TypeError):
            ours.encode_ids_batch(bad, num_threads=1)


@pytest.mark.parametrize("n_tokens", [1, 4, 7], ids=lambda n: f"{n}-first-chars")
def test_added_tokens_with_few_and_many_first_characters(n_tokens):
    """Up to a few distinct first characters are looked for before the regex runs; more
    go straight to the regex."""
    words = ["alpha", "beta", "gamma", "delta", "eps", "zeta", "theta"][:n_tokens]
    ref, ours = _ref(None, [(AddedToken(w, normalized=False), False) for w in words])
    texts = ["no token here at all", "alpha beta gamma delta eps zeta theta", "xalphax zet theta!", "",
             "an alph, a bet", "thetatheta"]
    for add in (True, False):
        _assert_batch(ref, ours, texts, add)


@pytest.mark.parametrize("template", [False, True])
def test_compiled_short_call_is_exact(template):
    """Added tokens that all start with "<" (as Qwen's, Llama-3's): a text is one compiled call
    (ShortCall, the kernel encoding its NFC, normalized by the file's program; a text holding a
    token cut at it inside the call), its lazy Encoding equal to HF's in every field; tokens that
    strip are cut inside the call too."""
    post = PP.TemplateProcessing(single="<|eot|> $A <|eom|>", special_tokens=[("<|eot|>", 0), ("<|eom|>", 1)]) \
        if template else None
    ref, ours = _ref(normalizer=N.NFC(), added=ADDED[:3], post_processor=post)
    ours.encode("x")
    call = ours._short[7]
    for text in ["Hello world", "a < b <|eot|> c", "Caf\u00e9 e\u0301", "", "  \n\n x1234 don't",
                 "Caf\u00e9 na\u00efve", "\u0416\u0443\u043a \u2603 \U0001F600 \u4e2d\u6587", "\u1100\u1161"]:
        for flag in (False, True):
            made = call(text, flag)
            assert made is not None, text
            enc, want = ours.encode(text, add_special_tokens=flag), ref.encode(text, add_special_tokens=flag)
            assert enc.ids == want.ids and enc.tokens == want.tokens and enc.offsets == want.offsets
            assert enc.attention_mask == want.attention_mask and enc.type_ids == want.type_ids
            assert made.ids == want.ids and made.word_ids == want.word_ids
    ref, ours = _ref(normalizer=N.NFC(), added=ADDED[:6], post_processor=post)   # [L], [R], [B] strip
    ours.encode("x")
    call = ours._short[7]
    for text in ["a [L] b", "x <tool> y", "plain", "[ x < y", " [B]  [R]\u3000c"]:
        made, want = call(text, False), ref.encode(text, add_special_tokens=False)
        assert made.ids == want.ids and made.offsets == want.offsets, text   # cut in the kernel call
        assert ours.encode(text).ids == ref.encode(text).ids, text


def test_compiled_short_call_objects():
    """The compiled call's results: fields set straight into their slots, the object not
    tracked by the cycle collector (as HF's Encoding; its source tuple and its ids are, see
    the next test), each call's ids a list of its own (the kernel's output buffer is reused)."""
    import gc
    from fastbpe._short_call import ShortCall

    ref, ours = _ref(normalizer=None, added=ADDED[:3])
    ours.encode("x")
    call = ours._short[7]
    a, b = call("first text", False), call("second one", False)
    assert a.ids == ref.encode("first text", add_special_tokens=False).ids
    assert b.ids == ref.encode("second one", add_special_tokens=False).ids and a.ids is not b.ids
    assert not gc.is_tracked(a) and gc.is_tracked(a.lazy_source) and gc.is_tracked(a.ids)
    assert a.tokens == ref.encode("first text", add_special_tokens=False).tokens   # made from the source

    class Plain:   # no __slots__: the fields are set by name
        pass

    table, kind = ours.model.table, ours._short[1]
    call = ShortCall(table, kind, False, None, None, {False: ((), ()), True: ((), ())}, Plain, "owner",
                     ("ids", "source", "seqs", "text"))
    assert not call.results_alive()
    plain = call("a plain text", True)
    assert type(plain) is Plain and plain.ids == table.encode_text("a plain text", kind)
    assert plain.source[:3] == ("owner", None, True) and plain.seqs == () and plain.text == "a plain text"
    assert call("another", True).source is plain.source and call.results_alive()   # one source a flag
    del plain
    assert not call.results_alive()


def test_short_call_first_character_check():
    """ShortCall's test for an added token's first character (memchr on an ASCII str's data,
    PyUnicode_FindChar on others) says what `first in text` says: ASCII and non-ASCII firsts,
    texts of every str kind, empty, lone surrogates; several first characters (any one in a
    text sends it the general way); firsts that are not a str of 1 to 16 characters are refused."""
    from fastbpe._short_call import ShortCall, plain_texts

    _, ours = _ref(normalizer=None, added=ADDED[:3])
    table, kind = ours.model.table, ours._kind
    shapes = {False: ((), ()), True: ((), ())}

    class Plain:
        pass

    texts = ["", "<", "a<b", "plain ascii", "caf\u00e9 < x", "caf\u00e9", "\u00e9", "x\u00e9",
             "\u4e2d\u6587<", "\u4e2d\u6587", "\U0001F600\u00e9", "\U0001F600", "a\ud800b\u00e9", "\u0100\u00e9"]
    for first in ["<", "\u00e9", "\U0001F600", "\x00", "\ud800"]:
        call = ShortCall(table, kind, True, first, None, shapes, Plain, None, ("ids", "source", "seqs", "text"))
        assert plain_texts(texts, True, first) == [first not in t for t in texts], first
        for text in texts:
            if "\ud800" in text and first not in text:
                with pytest.raises(UnicodeEncodeError):
                    call(text, False)
            else:
                assert (call(text, False) is None) == (first in text), (first, text)
    for firsts in ["<[", "[<", "\u00e9<", "x\U0001F600", "ab<\u4e2d",   # several first characters
                   "[<\u00f5\u00f7\u00c1x", "\u4e2d[<\u00e9\U0001F600\u0100\u00ff", "0123456789abcdef"]:
        call = ShortCall(table, kind, True, firsts, None, shapes, Plain, None, ("ids", "source", "seqs", "text"))
        held = [not any(c in t for c in firsts) for t in texts]
        assert plain_texts(texts, True, firsts) == held, firsts
        for text, plain in zip(texts, held):
            if "\ud800" in text and plain:
                with pytest.raises(UnicodeEncodeError):
                    call(text, False)
            else:
                assert (call(text, False) is None) == (not plain), (firsts, text)
    for bad in ["x" * 17, "", b"<", ("<",)]:
        with pytest.raises(ValueError, match="1 to 16"):
            ShortCall(table, kind, True, bad, None, shapes, Plain, None, ("ids", "source", "seqs", "text"))
        with pytest.raises(ValueError, match="1 to 16"):
            plain_texts(["x"], True, bad)


def test_encode_is_the_compiled_call():
    """Tokenizer.encode and encode_ids are C methods (_short_call.CompiledEncode) that take the
    short-call plan and come back to the Python `_encode` / `_encode_ids` for everything else:
    the same results either way, a subclass's own encode wins, and a bound `encode` outlives
    its name."""
    from fastbpe._short_call import CompiledEncode

    ref, ours = _ref(N.NFC(), ADDED[:3])
    assert Tokenizer.encode is CompiledEncode.encode
    for args, kwargs in [(("Hello world",), {}), (("Hello world",), {"add_special_tokens": False}),
                         (("Caf\u00e9 <|eot|> x",), {}), (("a", "b"), {}), ((["a b", "c"],), {"is_pretokenized": True}),
                         (("x", None, False, False), {}), (("",), {"pair": "y"})]:
        want = ref.encode(*args, **kwargs)
        for enc in (ours.encode(*args, **kwargs), Tokenizer._encode(ours, *(args + (None, False, True)[len(args) - 1:]))
                    if not kwargs else ours.encode(*args, **kwargs)):
            assert (enc.ids, enc.tokens, enc.offsets, enc.word_ids, enc.type_ids) == \
                (want.ids, want.tokens, want.offsets, want.word_ids, want.type_ids), (args, kwargs)
    with pytest.raises(TypeError):
        ours.encode(b"bytes")
    for text in ["Hello world", "Caf\u00e9 e\u0301", "x <|eot|> y", "", "\u4e2d\u6587 words"]:
        for flag in (False, True):
            want = ref.encode(text, add_special_tokens=flag).ids
            assert ours.encode_ids(text, flag) == ours._encode_ids(text, flag) == want, text
            assert ours.encode_ids(text, add_special_tokens=flag) == want

    class Mine(Tokenizer):
        def encode(self, *args, **kwargs):
            return "mine"
    assert Mine.from_str(ours.to_str()).encode("x") == "mine"
    encode = Tokenizer.from_str(ours.to_str()).encode
    assert encode("Hello world").ids == ref.encode("Hello world").ids


def test_short_call_encodings_keep_the_tokenizer_they_were_encoded_with():
    """A short call's Encoding makes its tokens and offsets when first read, from the
    tokenizer as it was at encode time: read after add_tokens, encode_special_tokens or a
    new normalizer, they are still those of its ids.  No copy of the tokenizer is made when
    no such Encoding is alive."""
    ref, ours = _ref(None, ADDED[:3])
    texts = ["hello world foo", "Caf\u00e9 world"]   # the short call, and the plan's Python way
    kept = [ours.encode(t, add_special_tokens=False) for t in texts]
    want = [ref.encode(t, add_special_tokens=False) for t in texts]
    ours.add_tokens(["world"])
    ours.encode_special_tokens = True
    later = ours.encode(texts[0], add_special_tokens=False)
    ours.add_tokens(["foo"])
    for enc, w in zip(kept, want):
        assert (enc.ids, enc.tokens, enc.offsets, enc.word_ids) == (w.ids, w.tokens, w.offsets, w.word_ids)
    ref.add_tokens(["world"])
    assert later.tokens == ref.encode(texts[0], add_special_tokens=False).tokens
    del kept, later, enc
    ours.encode("dropped at once")
    ours.to_str = None   # a copy would call it
    ours.add_tokens(["mat"])
    ref.add_tokens(["foo", "mat"])
    assert ours.encode("the mat foo").tokens == ref.encode("the mat foo").tokens
    del ours.to_str
    enc = ours.encode("a cat")   # kept while the plan is dropped (no_padding), then a change
    want = ref.encode("a cat")
    ours.no_padding()
    ours.add_tokens(["cat"])
    assert (enc.ids, enc.tokens, enc.offsets) == (want.ids, want.tokens, want.offsets)
    ref, ours = _ref(None, ADDED[:3])
    enc = ours.encode("a cat sat")   # kept while the plan is dropped and a new one made, then a change
    want = ref.encode("a cat sat")
    ours.no_padding()
    assert ours.encode("another text")._text == "another text"   # a new plan's short call
    ours.add_tokens(["cat"])
    assert (enc.ids, enc.tokens, enc.offsets) == (want.ids, want.tokens, want.offsets)


def test_plain_texts_mask_is_the_short_calls_test():
    """plain_texts, the compiled per-text check of a batch: exact strs that hold no added
    token's first character go to the kernel whole (normalized by the file's program, NFC
    here); every other text takes the per-text plan.  The batch's ids equal HF's either way."""
    from fastbpe._short_call import plain_texts

    class Sub(str):
        pass

    ref, ours = _ref(N.NFC(), ADDED[:3])
    texts = ["plain text", "a < b", "x <|eot|> y", "Caf\u00e9", "e\u0301 acute", Sub("a subclass"), "",
             "\u4e2d\u6587 words", "tab\tand\nlines"]
    mask = ours._plain_texts(texts)
    assert mask == [True, False, False, True, True, False, True, True, True]
    assert plain_texts(["a", "<b"], True, "<") == [True, False]
    assert plain_texts(["a", "b"], True, None) == [False, False]   # added tokens, no single first character
    assert plain_texts(["a", 3], False, None) == [True, False]
    want = [e.ids for e in ref.encode_batch([str(t) for t in texts], add_special_tokens=False)]
    assert ours.encode_ids_batch(texts, add_special_tokens=False, num_threads=1) == want


def test_short_call_sets_only_its_own_classes_slots():
    """ShortCall writes a field straight into its slot only when it is a writable object
    slot of the class (or a base); another class's slot given as an attribute, or a class
    without slots, gets setattr."""
    from fastbpe._short_call import ShortCall

    class Owner:
        __slots__ = ("ids", "source", "seqs", "text")

    class Borrowing:   # its "ids" is Owner's slot descriptor: Owner's offset, not its own
        __slots__ = ("source", "seqs", "text", "__dict__")
        ids = Owner.ids

    class Child(Owner):
        __slots__ = ("extra",)

    _, ours = _ref(None, ADDED[:3])
    ours.encode("x")
    table, kind = ours.model.table, ours._short[1]
    shapes = {False: ((), ()), True: ((), ())}
    for cls in (Owner, Child):
        made = ShortCall(table, kind, False, None, None, shapes, cls, "owner", ("ids", "source", "seqs", "text"))("some text", False)
        assert type(made) is cls and made.ids == table.encode_text("some text", kind) and made.seqs == ()
    with pytest.raises(TypeError):   # setattr through Owner's descriptor on a Borrowing: refused, not written
        ShortCall(table, kind, False, None, None, shapes, Borrowing, "owner", ("ids", "source", "seqs", "text"))("text", False)


def test_kernel_encodings_hold_ids_as_a_buffer():
    """A short call's and a plain batch's Encodings hold the kernel's ids as bytes of uint32s
    (nothing for the cycle collector to count or walk); `ids` builds a new list from them each
    read; the pipeline's own list (`own("ids")`) is made once and then kept; a post-
    processor's ids around the sequence (BOS) are in the buffer too; pickles hold a list."""
    import pickle

    for post in (None, PP.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])):
        ref, ours = _ref(None, ADDED[:3], post)
        text = "hello world, held as a buffer"
        want = ref.encode(text).ids
        for enc in (ours.encode(text), ours.encode_batch([text, "x"], num_threads=1)[0]):
            assert type(enc._ids) is bytes
            ids = enc.ids
            assert ids == want and type(ids) is list and ids is not enc.ids and len(enc) == len(want)
            own = enc.own("ids")
            assert own == want and type(own) is list and enc.own("ids") is own and enc.ids is not own
            assert pickle.loads(pickle.dumps(enc)).ids == want and type(pickle.loads(pickle.dumps(enc))._ids) is list


def test_lazy_objects_are_what_the_short_call_makes():
    """_short_call.lazy_objects (encode_batch's Encodings, made in C) fills the same fields as
    lazy_encoding: ids, the source tuple with each body's index and length, sequences; into
    slots where the class has them, by setattr otherwise; a wrong count of indexes is refused."""
    from fastbpe._short_call import lazy_objects
    from fastbpe.hf.encoding import LAZY_FIELDS, SHORT_FIELDS, Encoding, lazy_encoding

    class Plain:   # no slots: setattr
        pass

    bodies, maker, shape = [[1, 2, 3], [], list(range(300))], object(), {"_type_ids": ((), 0, ())}
    made = lazy_objects(Encoding, LAZY_FIELDS, bodies, [7, 8, 900], maker, True, shape, ("s",))
    for enc, body, index in zip(made, bodies, [7, 8, 900]):
        want = lazy_encoding(body, (maker, index, True, shape, len(body), len(body), None), ("s",))
        assert type(enc) is Encoding and enc._ids is body
        assert enc.ids == body and enc.ids is not body   # a copy a read, as HF
        assert enc.lazy_source == want.lazy_source and enc._sequences == ("s",)
    plain = lazy_objects(Plain, ("ids", "source", "seqs"), [[5]], [0], maker, False, shape, None)
    assert plain[0].ids == [5] and plain[0].source == (maker, 0, False, shape, 1, 1, None) and plain[0].seqs is None
    # with the text field (encode_batch's): one source for the batch, each index in the text field
    shared = lazy_objects(Encoding, SHORT_FIELDS, bodies, [7, 8, 900], maker, True, shape, ("s",))
    assert {id(e.lazy_source) for e in shared} == {id(shared[0].lazy_source)}
    assert shared[0].lazy_source == (maker, None, True, shape, None, None, None)
    assert [e._text for e in shared] == [7, 8, 900] and [e.ids for e in shared] == bodies
    assert [e.type_ids for e in shared] == [[0] * len(b) for b in bodies]   # n = len(ids)
    plain = lazy_objects(Plain, ("ids", "source", "seqs", "text"), [[5]], [3], maker, False, shape, None)
    assert plain[0].source == (maker, None, False, shape, None, None, None) and plain[0].text == 3
    with pytest.raises(ValueError):
        lazy_objects(Encoding, LAZY_FIELDS, bodies, [0], maker, True, shape, None)


def test_short_call_encodings_padded_truncated_pickled_merged():
    """A short call's Encoding (its fields made from the text when first read) through
    Encoding's own methods, each on a fresh one, field by field against HF's: pad (it grows
    ids before reading the rest), truncate with overflow, pickle, copy, merge, lookups."""
    import copy
    import pickle

    import tokenizers

    ref, ours = _ref(None, ADDED[:3])
    fields = ("ids", "tokens", "offsets", "type_ids", "attention_mask", "special_tokens_mask", "word_ids",
              "sequence_ids")

    def same(got, want):
        assert [getattr(got, f) for f in fields] == [getattr(want, f) for f in fields]

    for text in ("hello world foo", "a b c", "the cat sat on the mat"):
        for flag in (True, False):
            def pair():
                got = ours.encode(text, add_special_tokens=flag)
                assert got.lazy_source is not None   # the short call's
                return got, ref.encode(text, add_special_tokens=flag)
            got, want = pair()
            got.pad(12, pad_id=3)
            want.pad(12, pad_id=3)
            same(got, want)
            got, want = pair()
            got.truncate(2, 1)
            want.truncate(2, 1)
            same(got, want)
            assert [o.ids for o in got.overflowing] == [o.ids for o in want.overflowing]
            got, want = pair()
            same(pickle.loads(pickle.dumps(got)), want)
            got, want = pair()
            same(copy.copy(got), want)
            got, want = pair()
            assert (got.char_to_token(3), got.word_to_tokens(0)) == (want.char_to_token(3), want.word_to_tokens(0))
    texts = ["hello world", "a b c"]
    same(type(ours.encode("x")).merge([ours.encode(t) for t in texts], growing_offsets=True),
         tokenizers.Encoding.merge([ref.encode(t) for t in texts], growing_offsets=True))
