"""tiktoken's modules and private methods on fastbpe: code that imports `tiktoken.load`,
`tiktoken.core`, `tiktoken._educational`, or registers a `tiktoken_ext` plugin runs unchanged
after `fastbpe.install_as_tiktoken()` (or `import fastbpe as tiktoken`), with tiktoken's results."""
from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import threading
from pathlib import Path

import pytest

import datasources as ds
from cli_run import run_python
import fastbpe
from conftest import encoding_pair, require_encoding

REPO = Path(__file__).resolve().parents[1]


# -- module layout and install_as_tiktoken ----------------------------------------------------

def test_install_as_tiktoken_serves_every_module():
    proc = run_python("""
        import fastbpe
        fastbpe.install_as_tiktoken()
        import tiktoken, tiktoken.core, tiktoken.load, tiktoken.model, tiktoken.registry
        import tiktoken._educational
        from tiktoken.load import load_tiktoken_bpe, data_gym_to_mergeable_bpe_ranks, dump_tiktoken_bpe
        from tiktoken.core import Encoding
        assert tiktoken is fastbpe and Encoding is fastbpe.Encoding
        assert tiktoken.load.__name__ == "fastbpe.load"
        assert tiktoken.registry.get_encoding is fastbpe.get_encoding
        assert tiktoken.model.encoding_name_for_model("gpt-4o") == "o200k_base"
        print(tiktoken._educational.SimpleBytePairEncoding.__module__)
    """)
    assert proc.stdout.strip() == "fastbpe._educational"


def test_submodules_are_attributes_of_the_package():
    """`import fastbpe as tiktoken` and then tiktoken's submodules as attributes, without
    importing them first; the rarely used ones load only when asked for."""
    proc = run_python("""
        import sys
        import fastbpe as tiktoken
        assert "fastbpe._educational" not in sys.modules  # `import fastbpe` stays light
        assert tiktoken.core.Encoding is tiktoken.Encoding
        assert tiktoken.core.raise_disallowed_special_token
        assert tiktoken._educational.SimpleBytePairEncoding.__module__ == "fastbpe._educational"
        assert tiktoken.load.load_tiktoken_bpe and tiktoken.model.encoding_for_model
        assert tiktoken.registry.get_encoding is tiktoken.get_encoding
        assert {"core", "_educational", "load"} <= set(dir(tiktoken))
        try:
            tiktoken.no_such_module
        except AttributeError:
            print("ok")
    """)
    assert proc.stdout.strip() == "ok"


# -- Llama 3's tokenizer class: built on tiktoken.load and tiktoken.core ----------------------

LLAMA3_STYLE = '''
import tiktoken
from tiktoken.load import load_tiktoken_bpe


class Llama3StyleTokenizer:
    """The shape of Meta's Llama 3 tokenizer: ranks from a .tiktoken file, reserved special
    tokens after them, BOS/EOS, long inputs cut into slices before encoding."""

    pat_str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"
    num_reserved = 256

    def __init__(self, model_path):
        ranks = load_tiktoken_bpe(model_path)
        base = len(ranks)
        names = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>",
                 "<|end_header_id|>", "<|eot_id|>"]
        names += [f"<|reserved_special_token_{i}|>" for i in range(self.num_reserved - len(names))]
        self.special_tokens = {name: base + i for i, name in enumerate(names)}
        self.model = tiktoken.Encoding(name=model_path, pat_str=self.pat_str,
                                       mergeable_ranks=ranks, special_tokens=self.special_tokens)
        self.bos_id = self.special_tokens["<|begin_of_text|>"]
        self.eos_id = self.special_tokens["<|end_of_text|>"]
        self.n_words = self.model.n_vocab

    def encode(self, s, *, bos, eos, allowed_special=set(), disallowed_special=()):
        t = []
        for i in range(0, len(s), 400_000):
            t.extend(self.model.encode(s[i:i + 400_000], allowed_special=allowed_special,
                                       disallowed_special=disallowed_special))
        return ([self.bos_id] if bos else []) + t + ([self.eos_id] if eos else [])

    def decode(self, ids):
        return self.model.decode(ids)


tok = Llama3StyleTokenizer(MODEL_PATH)
dialog = "<|start_header_id|>user<|end_header_id|>\\n\\nWhat is a llama?<|eot_id|>"
ids = tok.encode(dialog, bos=True, eos=False, allowed_special="all")
plain = tok.encode("Llamas live in the Andes. 日本語 😀 " * 50, bos=True, eos=True)
result = (tok.n_words, ids, plain, tok.decode(ids) == "<|begin_of_text|>" + dialog,
          tok.encode("<|eot_id|>", bos=False, eos=False))
'''


def test_llama3_style_tokenizer_on_tiktoken_load(tmp_path):
    require_encoding("cl100k_base")
    model = tmp_path / "tokenizer.model"
    model.write_bytes(ds.official_bytes("cl100k_base.tiktoken"))
    src = LLAMA3_STYLE.replace("MODEL_PATH", repr(str(model)))
    real: dict = {}
    exec(compile(src, "<llama3 real>", "exec"), real)
    proc = run_python("import fastbpe\nfastbpe.install_as_tiktoken()\n" + src + "\nprint(repr(result))")
    assert proc.stdout.strip() == repr(real["result"])
    assert real["result"][0] == 100256 + 256


# -- tiktoken_ext plugins -----------------------------------------------------------------------

PLUGIN = '''
def toy_bytes():
    ranks = {bytes([b]): b for b in range(256)}
    for token in [b"ab", b"abab", b" x", b"xyz"]:
        ranks[token] = len(ranks)
    return {"name": "toy_bytes", "pat_str": r" ?\\w+| ?[^\\w\\s]+|\\s+",
            "mergeable_ranks": ranks, "special_tokens": {"<|toy|>": 300}}

ENCODING_CONSTRUCTORS = {"toy_bytes": toy_bytes}
'''


def test_tiktoken_ext_plugin_is_found(tmp_path):
    pkg = tmp_path / "tiktoken_ext"  # a namespace package: no __init__.py, as tiktoken wants
    pkg.mkdir()
    (pkg / "fastbpe_test_plugin.py").write_text(PLUGIN, encoding="utf-8")
    proc = run_python("""
        import fastbpe, tiktoken
        text = "abab ab x xyz <|toy|>"
        ours = fastbpe.get_encoding("toy_bytes")
        real = tiktoken.get_encoding("toy_bytes")
        assert "toy_bytes" in fastbpe.list_encoding_names()
        assert ours.encode(text, allowed_special="all") == real.encode(text, allowed_special="all")
        print(ours.encode(text, allowed_special="all"))
        try:
            fastbpe.get_encoding("no_such_toy")
        except ValueError as e:
            assert "fastbpe_test_plugin" in str(e), e
    """, extra_path=[tmp_path])
    assert "300" in proc.stdout


def test_plugin_without_constructors_is_a_clear_error(tmp_path):
    pkg = tmp_path / "tiktoken_ext"
    pkg.mkdir()
    (pkg / "broken_plugin.py").write_text("X = 1\n", encoding="utf-8")
    proc = run_python("""
        import fastbpe
        assert fastbpe.get_encoding("cl100k_base").name == "cl100k_base"  # built-ins unaffected
        try:
            fastbpe.get_encoding("from_a_plugin")
        except ValueError as e:
            print(e)
    """, extra_path=[tmp_path], env={"FASTBPE_OFFLINE": "1"}, check=False)
    if "could not find" in proc.stderr:
        pytest.skip("cl100k_base data not available")
    assert "broken_plugin does not define ENCODING_CONSTRUCTORS" in proc.stdout, proc.stderr


# -- tiktoken.load: paths, URLs and the download cache -----------------------------------------

@pytest.fixture
def http_server(tmp_path):
    """Serves tmp_path/www over http://127.0.0.1:PORT/ and counts the requests."""
    root = tmp_path / "www"
    root.mkdir()
    hits = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *a):
            hits.append(self.path)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", hits
    server.shutdown()
    server.server_close()


SMALL = b"YQ== 0\nYg== 1\nYWI= 2\n"
SMALL_RANKS = {b"a": 0, b"b": 1, b"ab": 2}


def test_load_tiktoken_bpe_from_url_uses_tiktokens_cache(http_server, tmp_path, monkeypatch):
    from tiktoken.load import load_tiktoken_bpe as tt_load

    from fastbpe.load import load_tiktoken_bpe

    root, base, hits = http_server
    (root / "small.tiktoken").write_bytes(SMALL)
    url = f"{base}/small.tiktoken"
    cache = tmp_path / "cache"
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    sha = hashlib.sha256(SMALL).hexdigest()
    assert load_tiktoken_bpe(url, expected_hash=sha) == SMALL_RANKS
    cached = cache / hashlib.sha1(url.encode()).hexdigest()
    assert cached.read_bytes() == SMALL  # the file tiktoken itself would look for
    n = len(hits)
    assert load_tiktoken_bpe(url) == SMALL_RANKS == tt_load(url)
    assert len(hits) == n, "the second load comes from the cache"
    # a cached copy with the wrong hash is fetched again, as tiktoken does
    cached.write_bytes(b"YQ== 0\n")
    assert load_tiktoken_bpe(url, expected_hash=sha) == SMALL_RANKS
    assert cached.read_bytes() == SMALL
    # a download that does not match the hash is an error, and is not cached
    with pytest.raises(ValueError, match="Hash mismatch"):
        load_tiktoken_bpe(f"{base}/small.tiktoken?v=2", expected_hash="0" * 64)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # "" disables the cache
    assert load_tiktoken_bpe(url) == SMALL_RANKS
    with pytest.raises(OSError):
        load_tiktoken_bpe(f"{base}/missing.tiktoken")


def test_data_gym_to_mergeable_bpe_ranks_matches_tiktoken(http_server, tmp_path, monkeypatch):
    from tiktoken.load import data_gym_to_mergeable_bpe_ranks as tt_data_gym

    from fastbpe.load import data_gym_to_mergeable_bpe_ranks

    try:
        vocab_bpe, encoder_json = ds.official_bytes("vocab.bpe"), ds.official_bytes("encoder.json")
    except ds.MissingData as e:
        pytest.skip(str(e))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    root, base, _ = http_server
    (root / "vocab.bpe").write_bytes(vocab_bpe)
    (root / "encoder.json").write_bytes(encoder_json)
    args = (f"{base}/vocab.bpe", f"{base}/encoder.json",
            ds.OFFICIAL_FILES["vocab.bpe"][1], ds.OFFICIAL_FILES["encoder.json"][1])
    assert data_gym_to_mergeable_bpe_ranks(*args) == tt_data_gym(*args)


def test_dump_then_load_local(tmp_path):
    from fastbpe.load import dump_tiktoken_bpe, load_tiktoken_bpe

    path = tmp_path / "out.tiktoken"
    dump_tiktoken_bpe(SMALL_RANKS, str(path))
    assert path.read_bytes() == SMALL
    assert load_tiktoken_bpe(path) == SMALL_RANKS


# -- tiktoken._educational ---------------------------------------------------------------------

EDU_TEXT = "hello world, hello there! the quick brown fox jumps over the lazy dog. " * 8


def test_educational_train_and_encode_match_tiktoken(capsys):
    from tiktoken import _educational as tt_edu

    from fastbpe import _educational as edu

    pat = fastbpe.patterns.GPT2_PATTERN
    ours = edu.bpe_train(EDU_TEXT, 280, pat, visualise=None)
    assert ours == tt_edu.bpe_train(EDU_TEXT, 280, pat, visualise=None)
    enc = edu.SimpleBytePairEncoding(pat_str=pat, mergeable_ranks=ours)
    ids = enc.encode("hello brown dog", visualise=None)
    assert ids == tt_edu.SimpleBytePairEncoding(pat_str=pat, mergeable_ranks=ours).encode(
        "hello brown dog", visualise=None)
    assert enc.decode(ids) == "hello brown dog"
    assert enc.decode_tokens_bytes(ids)[0] == b"hello"
    capsys.readouterr()
    edu.visualise_tokens([b"hel", b"lo", b" \xe4\xbd", b"\xa0"])
    ours_out = capsys.readouterr().out
    tt_edu.visualise_tokens([b"hel", b"lo", b" \xe4\xbd", b"\xa0"])
    assert ours_out == capsys.readouterr().out
    # the step-by-step picture is printed while encoding
    edu.bpe_encode(ours, b"hello", visualise="simple")
    assert "[b'h', b'e', b'l', b'l', b'o']" in capsys.readouterr().out
    with pytest.raises(ValueError):
        edu.bpe_train("abc", 100, pat)


def test_educational_from_tiktoken():
    from fastbpe import _educational as edu

    fb, _ = encoding_pair("cl100k_base")
    simple = edu.SimpleBytePairEncoding.from_tiktoken("cl100k_base")
    text = "antidisestablishmentarianism, 日本語"
    assert simple.encode(text, visualise=None) == fb.encode(text)


# -- Encoding's private and unstable methods ---------------------------------------------------

UNSTABLE_TEXTS = ["hello fanta", "hello world ", "hi\n", "x  ", "abc\n\n", "我们", "<|endoftext|>",
                  "foo<|endoftext|>bar", "def f():\n    ", "", " ", "the quick brown fo", "résumé"]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_encode_with_unstable_matches_tiktoken(name):
    fb, tt = encoding_pair(name)
    # texts ending in whitespace have ~100k completions: one such text is enough for o200k
    texts = UNSTABLE_TEXTS if name == "cl100k_base" else [
        t for t in UNSTABLE_TEXTS if not t[-1:].isspace()] + ["x  "]
    for text in texts:
        for allowed in ("all", set()) if "<|" in text else ("all",):
            if not allowed:
                with pytest.raises(ValueError):
                    fb.encode_with_unstable(text, allowed_special=allowed)
                continue
            stable, completions = fb.encode_with_unstable(text, allowed_special=allowed)
            want_stable, want_completions = tt.encode_with_unstable(text, allowed_special=allowed)
            assert stable == want_stable, text
            assert sorted(map(tuple, completions)) == sorted(map(tuple, want_completions)), text


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_private_encoders_match_tiktoken(name):
    fb, tt = encoding_pair(name)
    for data in [b"hello \xe4\xbd", b"\xff", b"abc\xe4", b"  \xe4\xbd\xa0\xe5", b"", b"ok",
                 "naïve café 😀".encode()[:-1], b"x\n\n\xf0\x9f"]:
        assert fb._encode_bytes(data) == tt._encode_bytes(data), data
    assert fb._encode_single_piece("") == [] == fb._encode_only_native_bpe("")  # tiktoken panics
    # lone surrogates: tiktoken raises UnicodeEncodeError here; we replace them as encode does
    assert fb._encode_only_native_bpe("ab\ud800cd x") == fb.encode_ordinary("ab\ud800cd x")
    for text in ["hello world", "ünï 😀 x", "  spaces\n\nand lines"]:
        assert fb._encode_only_native_bpe(text) == tt._encode_only_native_bpe(text)
        assert fb._encode_single_piece(text) == tt._encode_single_piece(text)
        assert fb._encode_single_piece(text.encode()) == tt._encode_single_piece(text.encode())


def test_encode_single_token_keyerror_holds_the_bytes():
    fb, tt = encoding_pair("cl100k_base")
    for key in ["no such token here", b"no such\xff"]:
        with pytest.raises(KeyError) as ours:
            fb.encode_single_token(key)
        with pytest.raises(KeyError) as theirs:
            tt.encode_single_token(key)
        assert ours.value.args == theirs.value.args
    assert fb.encode_single_token("<|endoftext|>") == tt.encode_single_token("<|endoftext|>")


# -- vocabularies without all 256 single bytes --------------------------------------------------

@functools.lru_cache(maxsize=None)
def _sparse_ranks() -> dict:
    """Lowercase letters and space only; some tokens ("xy") are made of bytes that are not."""
    ranks = {bytes([b]): i for i, b in enumerate(range(97, 123))}
    for token in [b"ab", b"xy", b" ", b" x", b"xyz", b"abc", b"cd"]:
        ranks[token] = len(ranks)
    del ranks[b"x"], ranks[b"y"]
    return ranks


def _sparse_pair():
    import tiktoken

    args = dict(name="sparse", pat_str=r" ?\w+| ", mergeable_ranks=_sparse_ranks(),
                special_tokens={"<s>": 40})
    return fastbpe.Encoding(**args), tiktoken.Encoding(**args)


def test_vocabulary_lacking_single_bytes_encodes_covered_text():
    fb, tt = _sparse_pair()
    for text in ["abxy ab", "ab xy", "xyz abc", "cdab xyz", " x", "abcd"]:
        assert fb.encode(text) == tt.encode(text), text
        assert fb.decode(fb.encode(text)) == text
    assert fb._encode_single_piece(b"xyab") == tt._encode_single_piece(b"xyab")
    assert fb.n_vocab == tt.n_vocab and fb.max_token_value == tt.max_token_value
    assert fb.token_byte_values() == tt.token_byte_values()
    assert fb.encode("ab<s>", allowed_special="all") == tt.encode("ab<s>", allowed_special="all")


def test_vocabulary_lacking_single_bytes_refuses_uncovered_text():
    fb, _ = _sparse_pair()  # tiktoken panics (pyo3 PanicException) on these
    for text in ["A", "abx", "hello World"]:
        with pytest.raises(ValueError, match="no token for the byte"):
            fb.encode(text)
    with pytest.raises(ValueError):
        fb.encode_ordinary_batch(["ab", "Q"])
    with pytest.raises(ValueError):
        fb.encode_to_numpy("zz Z")
    # the stand-ins for missing bytes are not tokens: they neither decode nor count
    for token in range(fb.n_vocab, fb.n_vocab + 10):
        with pytest.raises(KeyError):
            fb.decode_single_token_bytes(token)
        with pytest.raises(KeyError):
            fb.decode([token])


def test_base64_helper_is_consistent():
    # the SMALL fixture above is what tiktoken's dump writes for SMALL_RANKS
    assert SMALL == b"".join(base64.b64encode(t) + b" %d\n" % r for t, r in SMALL_RANKS.items())


@pytest.mark.parametrize("specials", [
    {"<far>": 10**8},                  # kept out of the kernel's dense tables
    {"<a>": 1280, "<b>": 1281},        # <b> would be far, but sits where the stand-ins go
])
def test_vocabulary_lacking_single_bytes_with_high_special_ids(specials):
    import tiktoken

    args = dict(name="sparse", pat_str=r" ?\w+| ", mergeable_ranks=_sparse_ranks(),
                special_tokens=specials)
    fb, tt = fastbpe.Encoding(**args), tiktoken.Encoding(**args)
    for name, token in specials.items():
        text = f"ab{name} xy"
        assert fb.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
        assert fb.decode(fb.encode(text, allowed_special="all")) == text
        assert fb.decode_single_token_bytes(token) == name.encode()
    with pytest.raises(ValueError, match="no token for the byte"):
        fb.encode("abQ")
    with pytest.raises(KeyError):
        fb.decode([fb._phantom.start])
