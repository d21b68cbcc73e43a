"""tokenizer.json's model arrays read from the file's bytes (`_tokenizer_json`, `_nodes.read_document`)
give exactly what `json.loads` + `hf_merge_rows` give, or None (then the whole file goes through
json.loads, with its errors); files of every shape load to the same tokenizer either way."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import datasources as ds

from fastbpe._formats import bytelevel_token_bytes, hf_merge_rows, kept_merge_rows, tokens_by_id
from fastbpe._json_vocab import JsonVocab
from fastbpe.hf import Tokenizer
from fastbpe._tokenizer_json import nesting_depth
from fastbpe.hf._nodes import MAX_DEPTH, LazyMerges, parse, read_document


def _doc(vocab: dict, merges: list, **model) -> dict:
    return {"version": "1.0", "added_tokens": [], "normalizer": None, "pre_tokenizer": None,
            "post_processor": None, "decoder": None,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, **model, "vocab": vocab, "merges": merges}}


def _tiny(list_form: bool = False, prefix: str = "") -> dict:
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "é": 5, "aé": 6, "\"q\\": 7, "\u2028": 8}
    merges = [["a", "b"], ["ab", "c"], ["a", "é"]] if list_form else ["a b", "ab c", "a é"]
    return _doc(vocab, merges, **({"continuing_subword_prefix": prefix} if prefix else {}))


def _same_vocab(table: JsonVocab, vocab: dict) -> None:
    """The table answers as json.loads' dict: the dict itself (order too), lookups, size,
    largest id, tokens by id and the byte-level bytes of every id."""
    assert isinstance(table, JsonVocab)
    made = table.to_dict()
    assert made == vocab and list(made.items()) == list(vocab.items())
    assert len(table) == len(vocab) and table.max_id == max(vocab.values(), default=-1)
    for token, i in vocab.items():
        assert token in table and table[token] == i and table.get(token) == i
    for miss in ["", "\ud800", "a\ud800", "zz\u0100zz", 3, None, b"a"]:
        if miss not in vocab:
            assert miss not in table and table.get(miss, -5) == -5
            with pytest.raises(KeyError):
                table[miss]
    assert table.tokens_by_id() == tokens_by_id(vocab)
    n_ids = max(vocab.values(), default=-1) + 1
    assert table.token_bytes(n_ids) == bytelevel_token_bytes(vocab, n_ids, True)


def _same_as_json(data: bytes) -> bool:
    """read_document(data) is None, or equals json.loads with the merges looked up the same."""
    got = read_document(data)
    if got is None:
        return False
    want = json.loads(data)
    lazy = got["model"]["merges"]
    assert isinstance(lazy, LazyMerges)
    assert list(lazy.source()) == [m if isinstance(m, str) else tuple(m) for m in want["model"]["merges"]]
    vocab = want["model"]["vocab"]
    _same_vocab(got["model"]["vocab"], vocab)
    prefix = want["model"].get("continuing_subword_prefix") or ""
    assert list(kept_merge_rows(lazy.rows)) == list(hf_merge_rows(want["model"]["merges"], vocab, len(prefix)))
    got["model"]["merges"], want["model"]["merges"] = [], []
    got["model"]["vocab"], want["model"]["vocab"] = {}, {}
    assert got == want
    return True


@pytest.mark.parametrize("list_form", [False, True])
@pytest.mark.parametrize("dump", [dict(ensure_ascii=False), dict(ensure_ascii=True), dict(indent=2),
                                  dict(separators=(",", ":"), ensure_ascii=False)])
def test_plain_files_read_from_bytes(list_form, dump):
    assert _same_as_json(json.dumps(_tiny(list_form), **dump).encode())


def test_prefix_and_key_order():
    doc = _doc({"a": 0, "##b": 1, "ab": 2, "b": 3}, ["a ##b"], continuing_subword_prefix="##")
    model = doc["model"]
    doc["model"] = {"merges": model.pop("merges"), **model}   # merges before vocab and prefix
    assert _same_as_json(json.dumps(doc).encode())


def test_byte_level_alphabet_tokens():
    """Tokens of GPT-2's alphabet, one outside it (a raw space, U+0144, a CJK character, an
    emoji), an empty token, two tokens of one id (the later with bytes wins), ids with no
    token."""
    vocab = {"Ġ": 0, "Ġa": 1, "ĠĠ": 2, " a": 3, "Ń": 4, "中": 5, "😀": 6, "": 7, "ÿ": 8, "Ā": 10, "b": 12, "x y": 12}
    assert _same_as_json(json.dumps(_doc(vocab, []), ensure_ascii=False).encode())
    assert _same_as_json(json.dumps(_doc({"Ġa": 0, " a": 0, "c": 1, "Ġc": 1}, [])).encode())


def test_a_load_makes_no_vocabulary_dict():
    """A byte-level file read from its bytes loads and encodes (its Encoding's tokens too)
    with the vocabulary in the C table: the {token: id} dict (~35M instructions of a fresh
    process's load of GPT-2's) is made when asked for, then equal to the file's."""
    vocab = {"a": 0, "b": 1, "ab": 2, "Ġ": 3, "Ġab": 4}
    text = json.dumps(_doc(vocab, ["a b", "Ġ ab"], unk_token=None))
    doc = json.loads(text)
    doc["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    tok = Tokenizer.from_str(json.dumps(doc))
    assert isinstance(tok.model.lookup, JsonVocab)
    assert tok.encode("ab ab").tokens == ["ab", "Ġab"] and tok.token_to_id("Ġab") == 4
    assert tok.model._vocab is None   # (not made)
    assert tok.get_vocab() == vocab and tok.model.vocab == vocab and tok.model.lookup is tok.model.vocab


def test_repeated_vocab_keys_and_merges_as_json():
    text = ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "a": 2, "ab": 3}, '
            '"merges": ["a b", "a b"]}, "added_tokens": []}')
    assert _same_as_json(text.encode())


@pytest.mark.parametrize("text", [
    '{"model": {"vocab": {"a": 0}, "merges": []}, "model": {"vocab": {}, "merges": []}}',   # model twice
    '{"model": {"vocab": {"a": 0}, "vocab": {"a": 1}, "merges": []}}',                      # vocab twice
    '{"mod\\u0065l": {"vocab": {"a": 0}, "merges": []}}',                                   # escaped key
    '{"model": {"vocab": {"a": 0.0}, "merges": []}}',
    '{"model": {"vocab": {"a": -1}, "merges": []}}',
    '{"model": {"vocab": {"a": 01}, "merges": []}}',
    '{"model": {"vocab": {"a": 4294967296}, "merges": []}}',
    '{"model": {"vocab": {"\\ud800": 0}, "merges": []}}',                                   # lone surrogate
    '{"model": {"vocab": {"a": 0, "b": 1}, "merges": ["a c"]}}',                            # unknown token
    '{"model": {"vocab": {"a": 0, "b": 1, "a b": 2}, "merges": ["a  b"]}}',                  # two spaces
    '{"model": {"vocab": {"a": 0,}, "merges": []}}',
    '{"model": {"vocab": {"a": 0}, "merges": [1]}}',
    '{"model": {"vocab": {"a": 0}, "merges": []}} x',
    '\ufeff{"model": {"vocab": {"a": 0}, "merges": []}}',
    '{"model": {"vocab": {"a\tb": 0}, "merges": []}}',                                      # a raw tab
    '{"model": {"vocab": {"a": 0}, "merges": []}, "x": [}',
])
def test_other_shapes_are_left_to_json(text):
    assert read_document(text.encode("utf-8")) is None


@pytest.mark.parametrize("value", [0, 9, 10, 4294967295])
def test_ids_up_to_u32_max_are_read(value):
    """The digit loop's bound (2**32 - 1, as HF's u32) is a C comparison: the largest id reads,
    one past it is left to json (test_other_shapes_are_left_to_json)."""
    data = json.dumps(_doc({"a": value, "b": 1}, [])).encode()
    assert read_document(data)["model"]["vocab"].to_dict() == {"a": value, "b": 1}


@pytest.mark.parametrize("key", [b"\xc3(", b"\xe0\x80\x80", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80",
                                 b"\xe2\x82", b"\xff"])
def test_keys_not_utf8_are_left_to_json(key):
    """Invalid UTF-8 in a token (overlong, surrogate, cut short, above U+10FFFF): None, so
    the file's reader reports it as before."""
    assert read_document(b'{"model": {"vocab": {"' + key + b'": 0}, "merges": []}}') is None


@pytest.mark.parametrize("key", ["\u0080", "\u07ff", "\u0800", "\uffff", "\U00010000", "\U0010ffff", "Ġ", "a\u00e9\u4e2d"])
def test_keys_at_utf8_boundaries(key):
    vocab = {key: 0, "x": 1}
    data = json.dumps(_doc(vocab, []), ensure_ascii=False).encode("utf-8", "surrogatepass")
    assert list(read_document(data)["model"]["vocab"].to_dict()) == [key, "x"]


@pytest.mark.parametrize("text", [
    '{"model": {"type": "BPE", "vocab": {"a": 0.0}, "merges": []}}',
    '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a c"]}}',
    '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a  b"]}}',
    '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, "x": [}',
    '{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": [1]}}',
])
def test_errors_as_before(tmp_path, text):
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises((ValueError, TypeError)) as from_str:
        Tokenizer.from_str(text)
    with pytest.raises((ValueError, TypeError)) as from_file:
        Tokenizer.from_file(path)
    assert type(from_file.value) is type(from_str.value)
    assert str(from_file.value) in (str(from_str.value), f"{path}: {from_str.value}")


def _walk_depth(node) -> int:
    if isinstance(node, (dict, list)):
        return 1 + max([_walk_depth(v) for v in (node.values() if isinstance(node, dict) else node)], default=0)
    return 0


_json_value = st.recursive(st.none() | st.integers() | st.text(alphabet='"\\[]{}ab'),
                           lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text('"\\[]{}', max_size=3), kids, max_size=3))


@settings(max_examples=200, deadline=None)
@given(_json_value)
def test_nesting_depth_is_the_documents(value):
    """read_document bounds the nesting from the bytes (`nesting_depth`), as check_nesting walks it."""
    assert nesting_depth(json.dumps(value).encode()) == _walk_depth(value)


@pytest.mark.parametrize("depth", [MAX_DEPTH - 2, MAX_DEPTH - 1])
def test_nesting_past_the_bound_is_the_same_error(tmp_path, depth):
    doc = _tiny()
    doc["padding"] = {"x": json.loads("[" * depth + "]" * depth)}   # the top-level object is level 1
    text = json.dumps(doc)
    if depth + 2 <= MAX_DEPTH:
        assert read_document(text.encode())["padding"] == doc["padding"]
        return
    assert read_document(text.encode()) is None
    path = tmp_path / "tokenizer.json"
    path.write_text(text, encoding="utf-8")
    for load in (lambda: Tokenizer.from_str(text), lambda: Tokenizer.from_file(path)):
        with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels deep"):
            load()


_token = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(st.lists(_token, min_size=2, max_size=30, unique=True), st.booleans(), st.booleans(), st.data())
def test_generated_vocabularies(tokens, ascii_only, list_form, data):
    vocab = {t: i for i, t in enumerate(tokens)}
    merges = []
    for _ in range(data.draw(st.integers(0, 10))):
        a, b = data.draw(st.sampled_from(tokens)), data.draw(st.sampled_from(tokens))
        if " " in a or " " in b:
            continue
        vocab.setdefault(a + b, len(vocab))
        merges.append([a, b] if list_form else f"{a} {b}")
    data_bytes = json.dumps(_doc(vocab, merges), ensure_ascii=ascii_only).encode()
    assert _same_as_json(data_bytes)


def test_written_back_unchanged(tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(_tiny()), encoding="utf-8")
    assert json.loads(Tokenizer.from_file(path).to_str()) == json.loads(Tokenizer.from_str(path.read_text()).to_str())


@pytest.mark.parametrize("path", sorted((ds.VOCAB_DIR / "hf").glob("*/tokenizer.json")), ids=lambda p: p.parent.name)
def test_shared_files(path):
    data = path.read_bytes()
    assert _same_as_json(data)
    assert parse(data.decode())["model"]["vocab"] == read_document(data)["model"]["vocab"].to_dict()


def test_shared_files_present_or_skipped():
    if not list((ds.VOCAB_DIR / "hf").glob("*/tokenizer.json")):
        pytest.skip(f"no shared tokenizer.json under {ds.VOCAB_DIR / 'hf'}")


def test_vocabulary_tables_are_not_walked_by_the_collector():
    """The id -> token dict (a dict subclass, so tracked by default) holds ints and strs only:
    untracked, the first garbage collection after loading does not walk a 150k-entry table
    inside a user's call; a str put in keeps it so."""
    import gc

    tok = Tokenizer.from_str(json.dumps(_tiny()))
    table = tok.model.id_to_token
    assert not gc.is_tracked(table) and table(0) == "a"
    table[100] = "new"
    assert not gc.is_tracked(table) and table(100) == "new"


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2000)), max_size=3000), st.integers(0, 1 << 31))
@settings(max_examples=40, deadline=None)
def test_kept_rows_keep_each_pair_at_its_last_place(pairs, far):
    """kept_merge_rows drops every earlier place of a pair listed again (HF's map keeps the last),
    whatever the ids: pairs that share their right id and differ in the left one's high bits
    (which the table's hash once ignored, clustering them), and ids near 2^31."""
    from array import array
    rows = []
    for n, (left, right) in enumerate(pairs):
        rows += [(left << 20) + far % 7, right if n % 5 else far, n]
    m = len(rows) // 3
    last = {(rows[3 * k], rows[3 * k + 1]): k for k in range(m)}
    want = [x for k in range(m) if last[(rows[3 * k], rows[3 * k + 1])] == k for x in rows[3 * k:3 * k + 3]]
    assert list(kept_merge_rows(array("q", rows))) == want
