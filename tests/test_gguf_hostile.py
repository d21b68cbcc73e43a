"""GGUF files from strangers (issue 29): nesting, amplification, quadratic vocabularies, merges
through non-tokens, values of the wrong type.  Every file is written here; each test is quick."""
from __future__ import annotations

import re
import struct
import tracemalloc

import pytest

import fastbpe
from fastbpe.formats.bytelevel import BYTE_TO_CHAR
from fastbpe.gguf import GGUFTokenizer, read_metadata

import gguf_files as gf

BYTELEVEL = [BYTE_TO_CHAR[b] for b in range(256)]


def _gpt2_tokens(*more: str) -> list[str]:
    return ["<|endoftext|>"] + BYTELEVEL + list(more)


def _write(tmp_path, kv, name="hostile.gguf", tail: bytes = b""):
    path = tmp_path / name
    path.write_bytes(gf.gguf_bytes(kv) + tail)
    return path


def _raw_key(key: str, body: bytes) -> bytes:
    """One key/value pair written by hand: the key, then `body` (its type and value)."""
    return gf._string(key) + body


def _file_with_raw_keys(kv: list, raw: list[bytes]) -> bytes:
    """A GGUF file with kv's keys and then the hand-written pairs in `raw`."""
    pairs = [gf._string(key) + struct.pack("<I", vtype) + gf._value(vtype, value, *etype)
             for key, vtype, value, *etype in kv]
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(kv) + len(raw)) + b"".join(pairs + raw)
    return out + b"\0" * (-len(out) % 32)


def _nested(depth: int) -> bytes:
    """An array of arrays `depth` deep around an empty array of uint8."""
    return b"".join(struct.pack("<IIQ", gf.ARRAY, gf.ARRAY, 1) if d else struct.pack("<I", gf.ARRAY)
                    for d in range(depth)) + struct.pack("<IQ", gf.UINT8, 0)


def _small_gpt2_kv(**extra):
    return gf.gpt2_kv(_gpt2_tokens("ab"), ["a b"], "gpt-2", **extra)


# -- item 1: nesting ---------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [2, 5000])
def test_nested_arrays_are_refused_by_name(tmp_path, depth):
    """llama.cpp's gguf reader refuses an array of arrays; so do we, at any depth, without recursing
    (5000 deep was a RecursionError)."""
    path = tmp_path / "nested.gguf"
    path.write_bytes(_file_with_raw_keys(_small_gpt2_kv(), [_raw_key("general.deep", _nested(depth))]))
    for read in (read_metadata, GGUFTokenizer.from_file, fastbpe.Tokenizer.from_file):
        with pytest.raises(ValueError, match="'general.deep' is an array of arrays") as info:
            read(path)
        assert str(path) in str(info.value)


# -- item 2: amplification ---------------------------------------------------------------------

def _open_measured(path):
    tracemalloc.start()
    try:
        tok = GGUFTokenizer.from_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return tok, peak


def test_million_empty_arrays_are_refused_at_once(tmp_path):
    """1.5 M empty arrays in an unused key (a 17 MB file) took ~5 s and +400 MB: now refused
    on reading the key's element type."""
    many = struct.pack("<IIQ", gf.ARRAY, gf.ARRAY, 1_500_000) + struct.pack("<IQ", gf.UINT8, 0) * 1_500_000
    path = tmp_path / "many.gguf"
    path.write_bytes(_file_with_raw_keys(_small_gpt2_kv(), [_raw_key("general.junk", many)]))
    with pytest.raises(ValueError, match="'general.junk' is an array of arrays"):
        GGUFTokenizer.from_file(path)


def test_unused_keys_are_skipped_without_objects(tmp_path):
    """Unused keys holding empty strings, a million numbers and a 4 MB string open with memory
    of the vocabulary: nothing of theirs becomes a Python object (tracemalloc slows the loop
    that steps over strings ~20x, so the string arrays are short here)."""
    n = 20_000
    kv = _small_gpt2_kv() + [("general.strings", gf.ARRAY, [""] * n, gf.STRING),
                             ("general.numbers", gf.ARRAY, [0] * 1_000_000, gf.UINT32),
                             ("general.text", gf.STRING, "x" * (4 << 20)),
                             ("tokenizer.ggml.unused", gf.ARRAY, [""] * n, gf.STRING)]
    path = _write(tmp_path, kv)
    tok, peak = _open_measured(path)
    assert tok.encode_ids("abc") == [257, 1 + ord("c")]
    assert peak < 4 << 20, f"{peak} bytes allocated to open a {path.stat().st_size}-byte file of unused keys"
    assert "general.strings" not in tok.metadata
    # read_metadata without keys still reads everything (arrays of strings as lists)
    meta = read_metadata(path)
    assert len(meta["general.strings"]) == n and meta.types["general.numbers"] == "array[uint32]"


def test_skipped_keys_are_still_bounds_checked(tmp_path):
    kv = _small_gpt2_kv()
    for raw in [struct.pack("<IIQ", gf.ARRAY, gf.STRING, 3) + struct.pack("<Q", 0) + struct.pack("<Q", 1 << 40),
                struct.pack("<IIQ", gf.ARRAY, gf.UINT64, 1 << 58),
                struct.pack("<IQ", gf.STRING, 1 << 50)]:
        path = tmp_path / "cut.gguf"
        path.write_bytes(_file_with_raw_keys(kv, [_raw_key("general.bad", raw)]))
        with pytest.raises(ValueError, match="general.bad") as info:
            GGUFTokenizer.from_file(path)
        assert str(path) in str(info.value)


def test_duplicate_and_empty_keys_are_refused(tmp_path):
    """As llama.cpp's gguf reader: a key given twice, or an empty key, makes the file invalid."""
    kv = _small_gpt2_kv() + [("tokenizer.ggml.pre", gf.STRING, "llama-bpe")]
    with pytest.raises(ValueError, match="'tokenizer.ggml.pre' is given twice"):
        GGUFTokenizer.from_file(_write(tmp_path, kv))
    with pytest.raises(ValueError, match="key 5 is empty"):
        GGUFTokenizer.from_file(_write(tmp_path, _small_gpt2_kv() + [("", gf.UINT8, 1)], "empty.gguf"))


# -- item 5: values of the wrong type ----------------------------------------------------------

@pytest.mark.parametrize("key,vtype,value,etype", [
    ("tokenizer.ggml.add_bos_token", gf.STRING, "false", None),
    ("tokenizer.ggml.add_eos_token", gf.UINT8, 1, None),
    ("tokenizer.ggml.add_space_prefix", gf.INT32, 0, None),
    ("tokenizer.ggml.model", gf.ARRAY, ["gpt2"], gf.STRING),
    ("tokenizer.ggml.pre", gf.ARRAY, ["gpt-2"], gf.STRING),
    ("tokenizer.ggml.bos_token_id", gf.INT64, 0, None),
    ("tokenizer.ggml.eos_token_id", gf.STRING, "0", None),
    ("tokenizer.ggml.scores", gf.ARRAY, ["0"], gf.STRING),
    ("tokenizer.ggml.token_type", gf.ARRAY, [1.0] * 258, gf.FLOAT32),
    ("tokenizer.ggml.tokens", gf.STRING, "a", None),
    ("tokenizer.chat_template", gf.UINT32, 7, None),
    ("general.name", gf.ARRAY, [1], gf.UINT8),
])
def test_values_of_the_wrong_type_are_named(tmp_path, key, vtype, value, etype):
    """llama.cpp's loader checks each key's GGUF type exactly and refuses another: a ValueError
    naming the file and the key ("false" as a string added BOS; an array as the model name gave
    "truth value of an array is ambiguous"; an array as pre "unhashable")."""
    kv = [entry for entry in _small_gpt2_kv() if entry[0] != key]
    kv.append((key, vtype, value) + ((etype,) if etype is not None else ()))
    path = _write(tmp_path, kv)
    with pytest.raises(ValueError, match=re.escape(key)) as info:
        GGUFTokenizer.from_file(path)
    assert str(path) in str(info.value) and "llama.cpp reads it only as" in str(info.value)


@pytest.mark.parametrize("key,value", [("tokenizer.ggml.add_bos_token", "false"),
                                       ("tokenizer.ggml.model", ["gpt2"]),
                                       ("tokenizer.ggml.pre", ["gpt-2"]),
                                       ("tokenizer.ggml.bos_token_id", "1")])
def test_metadata_dicts_of_the_wrong_type_are_named(key, value):
    """The same checks on metadata handed over as a dict (not read from a file)."""
    meta = {k: v for k, _, v, *_ in _small_gpt2_kv()}
    meta[key] = value
    with pytest.raises(ValueError, match=re.escape(f"my.gguf: {key} must be a")):
        GGUFTokenizer(meta, "my.gguf")


def _spm_with_byte_tokens(tmp_path, byte_texts: list[str]):
    tokens = ["<unk>", "<s>", "</s>", "\u2581", "a"] + byte_texts
    types = [2, 3, 3, 1, 1] + [6] * len(byte_texts)
    scores = [0.0] * len(tokens)
    return _write(tmp_path, gf.spm_kv(tokens, scores, types), "bytes.gguf")


def test_byte_tokens_decode_as_llama_cpp(tmp_path):
    """llama.cpp's token_to_byte is strtol(text[3:5], 16): "<0x41>" is A, a text it cannot read
    gives what strtol gives (it loaded, then decode raised "invalid literal for int()")."""
    texts = ["<0x41>", "<0xZZ>", "<0x4G>", "<0x-1>", "<0x ", "abcdef", "<0x"]
    tok = GGUFTokenizer.from_file(_spm_with_byte_tokens(tmp_path, texts))
    got = [tok.decode_bytes([5 + k]) for k in range(len(texts))]
    assert got == [b"A", b"\0", b"\x04", b"\xff", b"\0", b"\xde", b"\0"]


def test_byte_token_shorter_than_three_bytes_is_refused(tmp_path):
    """llama.cpp throws on loading such a file (substr(3) past the end, building its piece cache)."""
    path = _spm_with_byte_tokens(tmp_path, ["<0x41>", "ab"])
    with pytest.raises(ValueError, match=r"token 6 'ab' has type BYTE \(tokenizer\.ggml\.token_type\)") as info:
        GGUFTokenizer.from_file(path)
    assert str(path) in str(info.value)


# -- item 3: a SentencePiece vocabulary with a very long token ---------------------------------

class _CountingDict(dict):
    """A text -> id dict that adds up the length of every key looked up (the hashing work)."""

    looked_up = 0

    def get(self, key, default=None):
        self.looked_up += len(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.looked_up += len(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.looked_up += len(key)
        return super().__contains__(key)


def _long_token_spm(size: int):
    """a, aa, a^4, ... a^size (longer ones score lower: a text of a's merges pairwise), and one
    more long token with a different first character."""
    powers = [1 << j for j in range(size.bit_length())]
    tokens = ["<unk>", "<s>", "</s>", "\u2581", "b"] + ["a" * k for k in powers] + ["b" + "a" * (size - 1)]
    scores = [0.0, 0.0, 0.0, -1.0, -1.0] + [-float(j) for j in range(len(powers))] + [-99.0]
    return tokens, scores, [2, 3, 3] + [1] * (len(tokens) - 3)


def _long_file(tmp_path, size: int):
    tokens, scores, types = _long_token_spm(size)
    return _write(tmp_path, gf.spm_kv(tokens, scores, types, add_space_prefix=(gf.BOOL, False)), "long.gguf"), tokens


def test_spm_long_token_loads_in_linear_work(tmp_path):
    """Cutting each token at every position and looking both halves up hashed O(L^2) characters
    for one L-character token (200k characters: seconds); the splits now come from the sorted
    texts, and the lookups hash O(L) characters."""
    from fastbpe.gguf.models import SentencePieceBPE
    from fastbpe.gguf.vocab import KEYS, Vocab

    path, tokens = _long_file(tmp_path, 1 << 16)
    vocab = Vocab(read_metadata(path, KEYS), str(path))
    vocab.text_to_id = _CountingDict(vocab.text_to_id)
    model = SentencePieceBPE(vocab)
    assert vocab.text_to_id.looked_up <= 4 * sum(map(len, tokens)), vocab.text_to_id.looked_up
    assert model.encode("a" * (1 << 16)) == [tokens.index("a" * (1 << 16))]


def test_spm_long_token_encodes_as_the_reference(tmp_path):
    from reference_gguf import spm_tokenize

    size = 1 << 18
    path, tokens = _long_file(tmp_path, size)
    tok = GGUFTokenizer.from_file(path)
    assert tok.encode_ids("a" * size) == [tokens.index("a" * size)]
    # pairwise, leftmost first: the powers of two, longest first
    assert tok.encode_ids("a" * (size - 1)) == [tokens.index("a" * (1 << j)) for j in reversed(range(18))]
    scores = [0.0, 0.0, 0.0, -1.0, -1.0] + [-float(j) for j in range(size.bit_length())] + [-99.0]
    for text in ["a" * 300, "b" + "a" * 300, "ab" * 10 + "a" * 77, "aab", "ba" * 40]:
        ids = tok.encode_ids(text)
        assert ids == spm_tokenize(text, tokens, scores, add_space_prefix=False), text
        assert tok.decode(ids) == text


def test_spm_token_splits_are_every_cut_into_two_symbols():
    """_spm_model.split_rows with stand-ins (the SentencePiece vocabulary's merge rows, shared
    with .model files) against its definition: every cut of every text whose two halves are
    tokens or single characters (random small alphabets make many prefix and suffix chains)."""
    import random

    from fastbpe._spm_model import split_rows

    rng = random.Random(29)
    for _ in range(300):
        alphabet = "ab\u2581\udcff"[:rng.randint(1, 4)]
        texts = list({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7))) for _ in range(rng.randint(1, 40))})
        rng.shuffle(texts)
        t2i = {t: i for i, t in enumerate(texts)}
        symbol = lambda s: s if s in t2i or len(s) == 1 else None  # noqa: E731
        want = {(t[:k], t[k:], c) for t, c in t2i.items() for k in range(1, len(t))
                if symbol(t[:k]) is not None and symbol(t[k:]) is not None}
        extra: dict = {}
        flat, _ = split_rows(texts, [0] * len(texts), extra)
        rows = [tuple(flat[k:k + 3]) for k in range(0, len(flat), 3)]
        name = {i: t for t, i in t2i.items()} | {i: t for t, i in extra.items()}
        got = [(name[a], name[b], c) for a, b, c in rows]
        assert len(got) == len(set(got)) and set(got) == want, texts


# -- item 4: merges through symbols that are no tokens ------------------------------------------

def _gpt2_file(tmp_path, tokens, merges, pre="gpt-2", name="merges.gguf"):
    return GGUFTokenizer.from_file(_write(tmp_path, gf.gpt2_kv(tokens, merges, pre), name))


@pytest.mark.parametrize("pre", ["gpt-2", "llama-bpe"])   # llama-bpe: ignore_merges
def test_merge_through_an_intermediate_that_is_no_token(tmp_path, pre):
    """`a b` then `ab c` with `ab` absent: llama.cpp merges by text and looks up only the final
    symbol, giving `abc` (both merges were dropped: a, b, c)."""
    tokens = _gpt2_tokens("abc")
    tok = _gpt2_file(tmp_path, tokens, ["a b", "ab c"], pre)
    abc, a, b, c = tokens.index("abc"), tokens.index("a"), tokens.index("b"), tokens.index("c")
    assert tok.encode_ids("abc") == [abc]
    assert tok.encode_ids("abcab") == [abc, a, b]       # a final `ab`: its bytes' tokens
    assert tok.decode(tok.encode_ids("abcab")) == "abcab"


def test_merge_into_no_token_still_takes_its_symbols(tmp_path):
    """`a b` (rank 0, `ab` absent) comes before `b c` (`bc` a token): llama.cpp merges a and b,
    so `b c` cannot apply and the final `ab` falls back to its bytes: a, b, c (not a, bc)."""
    tokens = _gpt2_tokens("bc")
    tok = _gpt2_file(tmp_path, tokens, ["a b", "b c"])
    assert tok.encode_ids("abc") == [tokens.index(x) for x in "abc"]
    assert tok.encode_ids("bc") == [tokens.index("bc")]


def test_ignore_merges_does_not_take_a_non_token_whole(tmp_path):
    """With ignore_merges a piece that is a token is emitted whole, but a piece whose text is only
    a merged symbol (no token) is merged: `b c` first leaves a, bc (not the bytes of `abc`)."""
    tokens = _gpt2_tokens("bc")
    merges = ["b c", "a b", "ab c"]
    tok = _gpt2_file(tmp_path, tokens, merges, "llama-bpe")
    assert tok.encode_ids("abc") == [tokens.index("a"), tokens.index("bc")]


def test_merges_match_llama_cpp_on_random_vocabularies(tmp_path):
    """Random merges over a small alphabet, many of whose parts and results are no tokens, against
    the reference twin of llama.cpp's BPE session (one piece: letters only), with and without
    ignore_merges."""
    import random

    from reference_gguf import bpe_tokenize

    rng = random.Random(4)
    for trial in range(40):
        alphabet = "abcd"[:rng.randint(2, 4)]
        word = lambda lo, hi: "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))  # noqa: E731
        merges = [f"{word(1, 3)} {word(1, 3)}" for _ in range(rng.randint(1, 25))]
        extra = sorted({word(2, 5) for _ in range(rng.randint(0, 12))} | {m.replace(" ", "") for m in merges
                                                                          if rng.random() < 0.4})
        tokens = _gpt2_tokens(*extra)
        for pre in ("gpt-2", "llama-bpe"):
            tok = _gpt2_file(tmp_path, tokens, merges, pre, f"r{trial}{pre}.gguf")
            for _ in range(15):
                text = word(1, 9)
                want = bpe_tokenize(text, tokens, merges, ignore_merges=pre == "llama-bpe")
                assert tok.encode_ids(text) == want, (merges, extra, pre, text)


# -- item 11: SentencePiece ties ----------------------------------------------------------------

def _spm_tokenizer(tokens, scores, add_space_prefix=False):
    import numpy as np

    meta = {"tokenizer.ggml.model": "llama", "tokenizer.ggml.tokens": list(tokens),
            "tokenizer.ggml.scores": np.array(scores, dtype=np.float32),
            "tokenizer.ggml.token_type": np.array([2, 3, 3] + [1] * (len(tokens) - 3), dtype=np.int32),
            "tokenizer.ggml.add_space_prefix": add_space_prefix}
    return GGUFTokenizer(meta, "ties.gguf")


def test_spm_equal_scores_go_leftmost_not_by_id():
    """Equal scores merge leftmost first (llama.cpp's bigram queue), whatever the ids: here the
    token on the right (bc) has the lower id, so breaking ties by id would give a, bc."""
    from reference_gguf import spm_tokenize

    tokens = ["<unk>", "<s>", "</s>", "a", "b", "c", "\u2581", "bc", "ab", "cab"]
    scores = [0, 0, 0, -1, -1, -1, -1, -5, -5, -5]
    tok = _spm_tokenizer(tokens, scores)
    assert tok.encode_ids("abc") == [8, 5]
    assert tok.encode_ids("cabc") == [9, 5]        # ca is no token: c, ab, c -> cab, c
    assert tok.encode_ids("bcab") == [7, 8]
    for text in ["abc", "cabc", "bcab", "abcabc", "cbcab", "ab\u2581bc"]:
        assert tok.encode_ids(text) == spm_tokenize(text, tokens, scores, add_space_prefix=False), text


def _spm_vocabularies():
    from hypothesis import strategies as st

    alphabet = "abc\u2581"
    # short pieces, so most can be reached by merging; texts long enough for pairs to overlap
    piece = st.text(alphabet=alphabet, min_size=2, max_size=4)
    return st.tuples(st.lists(st.tuples(piece, st.sampled_from([-1.0, -2.0, -3.0])), min_size=6, max_size=25,
                              unique_by=lambda t: t[0]),
                     st.lists(st.text(alphabet=alphabet, min_size=4, max_size=14), min_size=4, max_size=8),
                     st.booleans())


def test_spm_ties_match_the_reference_rule():
    """Random vocabularies whose scores tie often (three values) against the reference rule:
    the highest score first, then the leftmost pair (llama.cpp's llm_tokenizer_spm)."""
    from hypothesis import HealthCheck, given, settings

    from reference_gguf import spm_tokenize

    @settings(max_examples=50, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_spm_vocabularies())
    def check(case):
        learned, texts, space_prefix = case
        tokens = ["<unk>", "<s>", "</s>", "a", "b", "c", "\u2581"] + [t for t, _ in learned]
        scores = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0] + [s for _, s in learned]
        tok = _spm_tokenizer(tokens, scores, space_prefix)
        for text in texts:
            text = text.replace("\u2581", " ")
            want = spm_tokenize(text, tokens, scores, add_space_prefix=space_prefix)
            assert tok.encode_ids(text) == want, (learned, text)

    check()


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("read", [True, False])
def test_string_arrays_read_in_c_refuse_lengths_past_the_end(tmp_path, order, read):
    """Arrays of strings are read (or stepped over, for a key the tokenizer does not read) in C
    (`_gguf_strings`): invalid UTF-8 round-trips as surrogateescape, as llama.cpp keeps raw
    bytes; a length cut by the end of the file, or claiming more bytes than are left, is a
    ValueError naming the file, the key and the string's index, in either byte order."""
    def array(count: int, parts: list) -> bytes:
        out = gf._string("k", order) + struct.pack(order + "IIQ", gf.ARRAY, gf.STRING, count)
        for p in parts:
            out += p if isinstance(p, bytes) else struct.pack(order + "Q", p)
        return b"GGUF" + struct.pack(order + "IQQ", 3, 0, 1) + out

    keys = {"k": None} if read else {"other": None}
    words = [b"a", b"", b"\xff\xfe", "\u00fc\u2581".encode(), b"x" * 300]
    good = tmp_path / "good.gguf"
    good.write_bytes(array(len(words), [q for w in words for q in (len(w), w)]))
    meta = read_metadata(good, keys)
    assert meta.get("k") == ([w.decode("utf-8", "surrogateescape") for w in words] if read else None)
    for data, problem in [(array(2, [1, b"a", 300, b"x" * 10]), r"'k'\[1\] claims 300 bytes, only 10 are left"),
                          (array(2, [1, b"a", 1 << 62, b"x" * 10]), r"'k'\[1\] claims 4611686018427387904 bytes"),
                          (array(2, [50, b"x" * 50, b"\x01\x00"]), r"file ends inside 'k'\[1\]")]:
        bad = tmp_path / "bad.gguf"
        bad.write_bytes(data)
        with pytest.raises(ValueError, match="bad.gguf: not a valid GGUF file: " + problem):
            read_metadata(bad, keys)


def test_long_user_defined_token_costs_linear_memory_on_first_encode(tmp_path):
    # 16e3ac8's overlap check held every prefix of every special: ~n^2/2 characters (~72 MB here)
    n = 12_000
    tokens = _gpt2_tokens("ab" * (n // 2))
    types = [3] + [1] * 256 + [4]   # the long one USER_DEFINED: cut as a special in every mode
    path = _write(tmp_path, gf.gpt2_kv(tokens, [], "deepseek-coder", types), "long-special.gguf")
    tok = GGUFTokenizer.from_file(path)
    tracemalloc.start()
    try:
        ids = tok.encode_ids("x " + "ab" * (n // 2) + " y")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(tokens) - 1 in ids
    assert peak < 8 * 1024 * 1024, f"first encode peaked at {peak / 1e6:.0f} MB"


def _overlap_by_pairs(words) -> bool:
    run = lambda w: w[0] if w.count(w[0]) == len(w) else None   # noqa: E731
    return any(a != b and a[k:] == b[:len(a) - k] and (run(a) is None or run(a) != run(b))
               for a in words for b in words for k in range(1, len(a)) if len(a) - k < len(b))


def test_overlap_check_equals_the_pairwise_definition():
    import random
    from fastbpe.gguf.special_cut import can_overlap as _can_overlap
    rng = random.Random(7)
    for _ in range(3000):
        words = list({"".join(rng.choice("ab ") for _ in range(rng.randint(1, 5)))
                      for _ in range(rng.randint(1, 5))})
        assert _can_overlap(words) == _overlap_by_pairs(words), words


@pytest.mark.parametrize("tail", ["", "c"])
def test_long_periodic_special_is_found_in_linear_time(tmp_path, tail):
    # `regex` searched an alternation holding "abab...ab" in time quadratic in its length (214 s
    # at 12k characters); the trie walk from each position of "abab..." would cost its length
    n = 200_000
    special = "ab" * (n // 2) + tail
    path = _write(tmp_path, gf.gpt2_kv(_gpt2_tokens(special), [], "deepseek-coder", [3] + [1] * 256 + [4]))
    tok = GGUFTokenizer.from_file(path)
    text = "x " + "ab" * n + " y"
    ids = tok.encode_ids(text)
    assert (len(_gpt2_tokens()) in ids) == (tail == "")
    assert tok.decode(ids) == text
