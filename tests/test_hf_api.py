"""fastbpe.Tokenizer against tokenizers.Tokenizer on the rest of HF's Python API: every public
method present, AddedToken's defaults, Encoding's alignment lookups, pre-tokenized input,
post_process, encode_batch_fast, serialization, stage setters and the async calls.

The model is trained here by HF's own trainer (no files needed), so this runs anywhere."""
from __future__ import annotations

import asyncio
import json
import pickle
import warnings

import pytest

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import decoders, models, pre_tokenizers, processors, trainers  # noqa: E402

from fastbpe.hf import AddedToken, Encoding, Tokenizer  # noqa: E402

CORPUS = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello, world! Tokenizers split text into pieces; BPE merges frequent pairs.",
    "Café, naïve, 日本語のテキスト, emoji 🙂 and numbers 12345.",
    "def main():\n    return 42  # code too\n",
] * 20

TEXTS = ["Hello world", "The lazy fox, again!", "Café 日本 🙂", "  spaces   and\ttabs\n", "", "[CLS] inside"]
PAIRS = [("Hello world", "The quick fox"), ("a", ""), ("Café 日本", "numbers 12345")]


def _hf_reference(template: bool = True, normalized_added: bool = True):
    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["[CLS]", "[SEP]", "[PAD]"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(CORPUS, trainer=trainer)
    if template:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    tok.add_tokens([tokenizers.AddedToken("<tool>", normalized=normalized_added),
                    tokenizers.AddedToken("brown fox", normalized=False)])
    return tok


@pytest.fixture(scope="module")
def hf_json():
    return _hf_reference().to_str()


@pytest.fixture
def pair(hf_json):
    return tokenizers.Tokenizer.from_str(hf_json), Tokenizer.from_str(hf_json)


FIELDS = ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "word_ids",
          "sequence_ids", "n_sequences")


def same(a, b) -> None:
    for f in FIELDS:
        assert getattr(b, f) == getattr(a, f), f
    assert len(b.overflowing) == len(a.overflowing)
    for x, y in zip(a.overflowing, b.overflowing):
        same(x, y)


# -- the whole public API is there ---------------------------------------------------------

@pytest.mark.parametrize("name", ["Tokenizer", "Encoding", "AddedToken"])
def test_every_public_attribute_exists(pair, name):
    hf, ours = pair
    instances = {"Tokenizer": (hf, ours), "Encoding": (hf.encode("x"), ours.encode("x")),
                 "AddedToken": (tokenizers.AddedToken("x"), AddedToken("x"))}
    theirs, mine = instances[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Encoding.words
        missing = [a for a in dir(theirs) if not a.startswith("_") and not hasattr(mine, a)]
    assert missing == []


# -- AddedToken ----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [{}, {"special": True}, {"normalized": False}, {"special": True, "normalized": True},
                                    {"lstrip": True, "rstrip": True, "single_word": True}])
def test_added_token_matches_hf(kwargs):
    theirs, mine = tokenizers.AddedToken("<mask>", **kwargs), AddedToken("<mask>", **kwargs)
    assert (str(mine), repr(mine)) == (str(theirs), repr(theirs))
    for f in ("content", "single_word", "lstrip", "rstrip", "normalized", "special"):
        assert getattr(mine, f) == getattr(theirs, f)
    assert pickle.loads(pickle.dumps(mine)) == mine
    assert AddedToken().content == tokenizers.AddedToken().content == ""


def test_add_special_tokens_marks_the_callers_token(hf_json):
    theirs = [tokenizers.AddedToken("<a>"), tokenizers.AddedToken("<b>", normalized=True)]
    mine = [AddedToken("<a>"), AddedToken("<b>", normalized=True)]
    hf, ours = tokenizers.Tokenizer.from_str(hf_json), Tokenizer.from_str(hf_json)
    assert ours.add_special_tokens(mine) == hf.add_special_tokens(theirs)
    assert [(t.special, t.normalized) for t in mine] == [(t.special, t.normalized) for t in theirs]
    text = "x<a>y <b> z"
    same(hf.encode(text), ours.encode(text))
    assert {i: repr(t) for i, t in ours.get_added_tokens_decoder().items()} == \
        {i: repr(t) for i, t in hf.get_added_tokens_decoder().items()}


# -- Encoding's alignment lookups ----------------------------------------------------------

def test_alignment_lookups_match_hf(pair):
    hf, ours = pair
    for args in [(t,) for t in TEXTS] + PAIRS:
        a, b = hf.encode(*args), ours.encode(*args)
        n = len(a.ids)
        for k in range(n + 2):
            assert b.token_to_sequence(k) == a.token_to_sequence(k), (args, k)
            assert b.token_to_chars(k) == a.token_to_chars(k), (args, k)
            assert b.token_to_word(k) == a.token_to_word(k), (args, k)
        for lookup in ("token_to_sequence", "token_to_chars", "token_to_word", "word_to_tokens", "char_to_token"):
            with pytest.raises(OverflowError):
                getattr(b, lookup)(-1)
        for seq in (0, 1):
            for w in range(12):
                assert b.word_to_tokens(w, seq) == a.word_to_tokens(w, seq), (args, w, seq)
                assert b.word_to_chars(w, seq) == a.word_to_chars(w, seq), (args, w, seq)
            for c in range(max(map(len, args)) + 2):
                assert b.char_to_token(c, seq) == a.char_to_token(c, seq), (args, c, seq)
                assert b.char_to_word(c, seq) == a.char_to_word(c, seq), (args, c, seq)


def test_words_is_deprecated_alias(pair):
    _, ours = pair
    e = ours.encode("Hello world")
    with pytest.warns(DeprecationWarning):
        assert e.words == e.word_ids


def test_merge_pad_truncate_as_hf(pair):
    hf, ours = pair
    a1, a2 = hf.encode("Hello world", add_special_tokens=False), hf.encode("lazy dog", add_special_tokens=False)
    b1, b2 = ours.encode("Hello world", add_special_tokens=False), ours.encode("lazy dog", add_special_tokens=False)
    for growing in (True, False):
        m_a = tokenizers.Encoding.merge([a1, a2], growing_offsets=growing)
        m_b = Encoding.merge([b1, b2], growing_offsets=growing)
        for f in ("ids", "tokens", "offsets", "word_ids"):
            assert getattr(m_b, f) == getattr(m_a, f)
    a1.truncate(2, 1, "left")
    b1.truncate(2, 1, "left")
    same(a1, b1)
    a2.pad(6, direction="left", pad_id=7, pad_token="[PAD]")
    b2.pad(6, direction="left", pad_id=7, pad_token="[PAD]")
    same(a2, b2)
    with pytest.raises(ValueError, match="Invalid truncation direction value : up"):
        b2.truncate(1, 0, "up")


# -- inputs and post-processing ------------------------------------------------------------

@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_pretokenized_input_matches_hf(pair, add_special_tokens):
    hf, ours = pair
    words, other = ["Hello", "world", "brown fox", " the<tool>x"], ("Café", "日本", "")
    same(hf.encode(words, is_pretokenized=True, add_special_tokens=add_special_tokens),
         ours.encode(words, is_pretokenized=True, add_special_tokens=add_special_tokens))
    same(hf.encode(words, list(other), is_pretokenized=True, add_special_tokens=add_special_tokens),
         ours.encode(words, list(other), is_pretokenized=True, add_special_tokens=add_special_tokens))
    batch = [words, (words, other), [["a"], ["b", "c"]]]
    for a, b in zip(hf.encode_batch(batch, is_pretokenized=True, add_special_tokens=add_special_tokens),
                    ours.encode_batch(batch, is_pretokenized=True, add_special_tokens=add_special_tokens)):
        same(a, b)


def test_input_type_errors_as_hf(pair):
    _, ours = pair
    with pytest.raises(TypeError, match="TextInputSequence must be str"):
        ours.encode("my name", ["pair"])
    with pytest.raises(TypeError, match="PreTokenizedInputSequence must be"):
        ours.encode("my name", is_pretokenized=True)
    with pytest.raises(TypeError):
        ours.encode_batch(123)


def test_post_process_matches_hf(pair):
    hf, ours = pair
    texts = ("The quick brown fox jumps", "over the lazy dog")
    a1, a2 = (hf.encode(t, add_special_tokens=False) for t in texts)
    b1, b2 = (ours.encode(t, add_special_tokens=False) for t in texts)
    for t in (hf, ours):  # turned on after encoding, as HF's own test does
        t.enable_truncation(16)
        t.enable_padding(length=20, pad_id=t.token_to_id("[PAD]"), pad_token="[PAD]")
    same(hf.post_process(a1), ours.post_process(b1))
    # Pairs: all but sequence_ids.  HF's post_process keeps the second Encoding's own
    # sequence 0 range next to the new one, so its first sequence shows as None; and windows
    # of Encodings that overflow keep the type ids they had.  fastbpe gives what encode gives.
    for flag in (True, False):
        a, b = hf.post_process(a1, a2, add_special_tokens=flag), ours.post_process(b1, b2, add_special_tokens=flag)
        for f in ("ids", "type_ids", "tokens", "offsets", "attention_mask", "special_tokens_mask", "word_ids"):
            assert getattr(b, f) == getattr(a, f), f


def test_encode_batch_fast_matches_hf(pair):
    hf, ours = pair
    batch = TEXTS + [list(p) for p in PAIRS]
    for a, b in zip(hf.encode_batch_fast(batch), ours.encode_batch_fast(batch)):
        same(a, b)
    hf.enable_padding(pad_id=hf.token_to_id("[PAD]"))
    ours.enable_padding(pad_id=ours.token_to_id("[PAD]"))
    for a, b in zip(hf.encode_batch_fast(batch), ours.encode_batch_fast(batch)):
        same(a, b)


def test_encode_batch_fast_of_texts_is_lazy_and_hfs(pair):
    """encode_batch_fast of str inputs takes encode_batch's path (the kernel call, Encodings
    holding their ids, the other fields made when first read: it made every field of every
    Encoding, with offsets, then dropped them), its fields HF's without offsets; with truncation
    (overflowing pieces) and padding to the longest too."""
    hf, ours = pair
    got = ours.encode_batch_fast(TEXTS)
    assert all(e.lazy_source is not None for e in got)
    for a, b in zip(hf.encode_batch_fast(TEXTS), got):
        same(a, b)
    for tok in (hf, ours):
        tok.enable_truncation(4, stride=1)
        tok.enable_padding(pad_id=tok.token_to_id("[PAD]"))
    for flag in (True, False):
        for a, b in zip(hf.encode_batch_fast(TEXTS, add_special_tokens=flag),
                        ours.encode_batch_fast(TEXTS, add_special_tokens=flag)):
            same(a, b)


def test_async_calls_give_the_sync_results(pair):
    _, ours = pair

    async def run():
        return (await ours.async_encode("Hello world", "pair"), await ours.async_encode_batch(TEXTS),
                await ours.async_encode_batch_fast(TEXTS), await ours.async_decode_batch([[1, 2, 3]]))

    one, batch, fast, decoded = asyncio.run(run())
    same(ours.encode("Hello world", "pair"), one)
    for a, b in zip(ours.encode_batch(TEXTS), batch):
        same(a, b)
    for a, b in zip(ours.encode_batch_fast(TEXTS), fast):
        same(a, b)
    assert decoded == ours.decode_batch([[1, 2, 3]])


# -- vocabulary, options, serialization ----------------------------------------------------

def test_vocab_lookups_match_hf(pair):
    hf, ours = pair
    for flag in (True, False):
        assert ours.get_vocab(with_added_tokens=flag) == hf.get_vocab(with_added_tokens=flag)
        assert ours.get_vocab_size(with_added_tokens=flag) == hf.get_vocab_size(with_added_tokens=flag)
    for i in range(hf.get_vocab_size() + 2):
        assert ours.id_to_token(i) == hf.id_to_token(i)
    for token in list(hf.get_vocab())[:200] + ["<tool>", "brown fox", "not a token"]:
        assert ours.token_to_id(token) == hf.token_to_id(token)


def test_truncation_and_padding_round_trip(pair):
    hf, ours = pair
    for t in (hf, ours):
        t.enable_truncation(9, stride=1, strategy="only_second", direction="left")
        t.enable_padding(direction="left", pad_id=3, pad_type_id=1, pad_token="[PAD]", pad_to_multiple_of=4)
    assert ours.truncation == hf.truncation and ours.padding == hf.padding
    ours.enable_truncation(**ours.truncation)
    ours.enable_padding(**ours.padding)
    assert ours.truncation == hf.truncation and ours.padding == hf.padding
    same(hf.encode("Hello world", "The lazy fox jumps"), ours.encode("Hello world", "The lazy fox jumps"))
    assert json.loads(ours.to_str())["truncation"] == json.loads(hf.to_str())["truncation"]
    assert json.loads(ours.to_str())["padding"] == json.loads(hf.to_str())["padding"]


def test_to_str_save_from_pretrained_round_trip(pair, tmp_path):
    hf, ours = pair
    ours.add_special_tokens(["<new>"])
    hf.add_special_tokens(["<new>"])
    ours.enable_truncation(8)
    hf.enable_truncation(8)
    text = ours.to_str()
    again, hf_again = Tokenizer.from_str(text), tokenizers.Tokenizer.from_str(text)
    ours.save(tmp_path / "tokenizer.json")
    from_folder = Tokenizer.from_pretrained(str(tmp_path))
    for t in TEXTS + ["x<new>y brown fox"]:
        expected = hf.encode(t)
        for tok in (again, hf_again, from_folder):
            same(expected, tok.encode(t))
    assert json.loads(ours.to_str(pretty=True)) == json.loads(text)
    with pytest.raises(OSError):
        Tokenizer.from_pretrained(str(tmp_path / "missing-folder"))
    assert repr(ours) == repr(hf_again)


def test_stages_take_tokenizers_objects(pair):
    hf, ours = pair
    for t in (hf, ours):
        t.post_processor = processors.ByteLevel(trim_offsets=True)
        t.decoder = decoders.ByteLevel()
    for t in TEXTS:
        same(hf.encode(t), ours.encode(t))
    ours.pre_tokenizer = None
    assert ours.pre_tokenizer is None
    ours.pre_tokenizer = hf.pre_tokenizer
    other = Tokenizer(models.BPE())
    other.pre_tokenizer = ours.pre_tokenizer   # a fastbpe stage object moves over too
    assert json.loads(other.to_str())["pre_tokenizer"] == json.loads(ours.to_str())["pre_tokenizer"]
    for t in TEXTS:
        same(hf.encode(t), ours.encode(t))


def test_tokenizer_of_a_model_object_as_hf():
    hf, ours = tokenizers.Tokenizer(models.BPE()), Tokenizer(models.BPE())
    for t in (hf, ours):
        t.add_tokens(["my", "name", AddedToken("is") if t is ours else tokenizers.AddedToken("is")])
    same(hf.encode("my name is john"), ours.encode("my name is john"))
    assert ours.decode([0, 1, 2]) == hf.decode([0, 1, 2])
    assert repr(ours) == repr(hf)


def test_encode_special_tokens_flag(pair):
    hf, ours = pair
    for t in (hf, ours):
        t.add_special_tokens(["<sp>"])
        t.encode_special_tokens = True
    assert ours.encode_special_tokens is True
    same(hf.encode("a<sp>b <tool>"), ours.encode("a<sp>b <tool>"))
    for t in (hf, ours):
        t.encode_special_tokens = False
    same(hf.encode("a<sp>b <tool>"), ours.encode("a<sp>b <tool>"))


def test_train_from_iterator_takes_the_trained_model():
    hf, ours = tokenizers.Tokenizer(models.BPE()), Tokenizer(models.BPE())
    for t in (hf, ours):
        t.pre_tokenizer = pre_tokenizers.ByteLevel()
        t.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, show_progress=False))
    assert ours.get_vocab() == hf.get_vocab()
    same(hf.encode("The quick brown fox"), ours.encode("The quick brown fox"))


def test_bytelevel_normalizer_matches_hf():
    """HF's ByteLevel normalizer (bytes to the byte-level alphabet, aligned to their character)."""
    from tokenizers import normalizers

    hf = tokenizers.Tokenizer(models.BPE())
    hf.normalizer = normalizers.ByteLevel()
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    hf.decoder = decoders.ByteLevel()
    hf.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=300, show_progress=False,
                                                       initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    hf.add_tokens([tokenizers.AddedToken("Začnimo", normalized=False, special=True), "kuća"])
    ours = Tokenizer.from_str(hf.to_str())
    for t in TEXTS + ["Začnimokuća međa", "kuća!"]:
        same(hf.encode(t), ours.encode(t))
        assert ours.decode(ours.encode(t).ids, False) == hf.decode(hf.encode(t).ids, False)


@pytest.mark.parametrize("template", [True, False])
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_short_call_path_is_lazy_and_exact(template, add_special_tokens):
    """A plain byte-level file (added tokens matched in the raw text): encode's ids come from
    one kernel call and every other field is made when first read; both equal HF's.  The
    compiled call takes any script and up to 16 added tokens' first characters (round 15, short)."""
    hf = _hf_reference(template, normalized_added=False)
    ours = Tokenizer.from_str(hf.to_str())
    for text in TEXTS + ["brown fox <tool> x", "Café\u0301 e\u0301"]:  # an added token; marks
        enc = ours.encode(text, add_special_tokens=add_special_tokens)
        assert enc.ids == hf.encode(text, add_special_tokens=add_special_tokens).ids
        same(hf.encode(text, add_special_tokens=add_special_tokens), enc)
    lazy = ours.encode("Hello world", add_special_tokens=add_special_tokens)
    assert lazy._pending is not None  # nothing but ids made yet
    assert pickle.loads(pickle.dumps(lazy)).tokens == hf.encode("Hello world", add_special_tokens=add_special_tokens).tokens
    assert ours.encode_ids("Hello world", add_special_tokens=add_special_tokens) == lazy.ids
    call = ours._short[7]   # the compiled short call: any exact str (one holding an added token cut at it
    assert call(b"Hello", add_special_tokens) is None   # in the kernel call: no token strips here), else None
    same(hf.encode("brown fox <tool> x", add_special_tokens=add_special_tokens), call("brown fox <tool> x",
                                                                                      add_special_tokens))
    pattern, first = ours._short[3], ours._short[4]
    for text in ("Hello world", "Caf\u00e9", "Cafe\u0301 x", "\u4e2d\u6587 words"):
        made = call(text, 1 if add_special_tokens else 0)
        if pattern is None or first is not None:   # no added token, or their first characters are known
            same(hf.encode(text, add_special_tokens=add_special_tokens), made)
        else:   # more first characters than the compiled test takes: every text takes the Python path
            assert made is None


def test_remaining_methods_match_hf(pair, hf_json):
    hf, ours = pair
    assert Tokenizer.from_buffer(hf_json.encode("utf-8")).encode("Hello world").ids == hf.encode("Hello world").ids
    for is_pair in (False, True):
        assert ours.num_special_tokens_to_add(is_pair) == hf.num_special_tokens_to_add(is_pair)
    ids = [hf.encode(t).ids for t in TEXTS]
    for flag in (True, False):
        assert ours.decode_batch(ids, skip_special_tokens=flag) == hf.decode_batch(ids, skip_special_tokens=flag)
    for t in (hf, ours):
        t.no_truncation()
        t.no_padding()
    assert ours.truncation is hf.truncation is None and ours.padding is hf.padding is None
