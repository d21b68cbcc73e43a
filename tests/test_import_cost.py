"""What `import fastbpe` and a tokenizer.json load pull in (issue 28: loading in a fresh process
no slower than HF tokenizers, whose import is ~10 ms).  Each check runs a fresh interpreter and
reads its `sys.modules`: a module imported at the package's top again fails here."""
from __future__ import annotations

import json

import pytest

from cli_run import run_python

HEAVY = ("numpy", "regex", "dask", "hypothesis", "fastbpe.encoding", "fastbpe.hf", "fastbpe.trainer")


def test_import_fastbpe_loads_no_submodule():
    """`import fastbpe` runs only the package's __init__: every public name loads on first use."""
    out = run_python("""
        import json, sys
        import fastbpe
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("fastbpe") or m.split(".")[0] in
                                ("numpy", "regex", "dask", "hypothesis", "onigurumacffi"))))
    """)
    assert json.loads(out.stdout) == ["fastbpe"]


def test_every_public_name_resolves_and_is_listed():
    """The lazy names behave as eager ones: each in __all__ resolves (in a fresh process, in
    order, so no earlier import makes a later one work), is in dir(), and `from fastbpe import *`
    binds them all; an unknown name is an AttributeError."""
    out = run_python("""
        import fastbpe
        names = list(fastbpe.__all__)
        missing = [n for n in names if n not in dir(fastbpe)]
        assert not missing, missing
        for n in names:
            assert getattr(fastbpe, n) is not None, n
        ns = {}
        exec("from fastbpe import *", ns)
        assert set(names) <= set(ns), set(names) - set(ns)
        assert fastbpe.Encoding.__module__ == "fastbpe.encoding"
        assert fastbpe.Tokenizer.__module__ == "fastbpe.hf.tokenizer"
        try:
            fastbpe.no_such_name
        except AttributeError as e:
            assert "no_such_name" in str(e)
        else:
            raise AssertionError("no AttributeError")
        print("ok")
    """)
    assert out.stdout.strip() == "ok"


def test_names_resolve_one_at_a_time():
    """Each public name works as the first thing a fresh process asks for (no name depends on
    another having been loaded first)."""
    import fastbpe
    for name in fastbpe.__all__:
        out = run_python(f"import fastbpe\nassert fastbpe.{name} is not None\nprint('ok')")
        assert out.stdout.strip() == "ok", name


@pytest.mark.parametrize("shape", ["plain", "NFC", "removed"])
def test_loading_a_byte_level_file_imports_no_regex_numpy_or_dataclasses(tmp_path, shape):
    """A tokenizer.json whose split the C scanner knows, plain (GPT-2), with a normalizer
    (GPT-NeoX) or with normalized text and removed pieces (CLIP's shape), loads and encodes (a
    short call, ids batches, lazy Encodings: their offsets too) without `regex`, numpy,
    `dataclasses`, hashlib or the training modules (~60M, ~220M, ~35M and ~12M instructions
    of a fresh process: HF tokenizers' whole GPT-2 load is ~360M)."""
    from hf_reference import build, tokenizers
    from tokenizers import normalizers as hn, pre_tokenizers as hp
    byte_level = hp.ByteLevel(add_prefix_space=False, use_regex=shape != "removed")
    ref = build(pre_tokenizer=hp.Sequence([hp.Split(" ", "removed"), byte_level]) if shape == "removed" else byte_level,
                normalizer={"plain": None, "NFC": hn.NFC(), "removed": hn.Sequence([hn.NFD(), hn.Lowercase()])}[shape],
                decoder=tokenizers.decoders.ByteLevel(), byte_level_alphabet=True)
    path = tmp_path / "tokenizer.json"
    path.write_text(ref.to_str(), encoding="utf-8")
    code = """
        import json, sys, fastbpe
        tok = fastbpe.Tokenizer.from_file(sys.argv[1])
        enc = tok.encode("Hello  wörld, it's 2024")
        tok.encode_ids("hello world 123"); tok.encode_ids_batch(["a b", "c 1"]); tok.encode_batch(["x y"])[0].ids
        heavy = ("numpy", "regex", "onigurumacffi", "dataclasses", "hashlib", "fastbpe.trainers", "fastbpe.counting")
        print(json.dumps([enc.ids, enc.offsets, tok.engine, sorted(m for m in heavy if m in sys.modules)]))
    """
    if shape == "removed":   # its split is a compiled program: the first load compiles and keeps it
        run_python(code, path)
    out = run_python(code, path)
    ids, offsets, engine, heavy = json.loads(out.stdout)
    want = ref.encode("Hello  wörld, it's 2024")
    assert (ids, [tuple(o) for o in offsets], engine) == (want.ids, want.offsets, "kernel")
    assert heavy == []


@pytest.mark.parametrize("shape", ["Metaspace", "Prepend+Replace"])
def test_loading_a_char_level_file_imports_no_regex_numpy_or_oniguruma(tmp_path, shape):
    """A SentencePiece-style tokenizer.json (char-level BPE with byte_fallback, a Metaspace
    pre-tokenizer or Llama-2's Prepend + Replace normalizers, a template post-processor adding
    <s>, as Yi's, ChatGLM3's, Mistral's files) loads and gives its first Encoding, whose fields
    the post-processor makes, without `regex`, numpy or Oniguruma (~60M, ~100M and ~6M
    instructions of a fresh process: HF tokenizers' whole load of such a file is ~650M)."""
    from hf_reference import build, tokenizers
    from tokenizers import decoders as hd, normalizers as hn, pre_tokenizers as hp, processors as hpp
    if shape == "Metaspace":
        stages = dict(pre_tokenizer=hp.Metaspace(replacement="\u2581", prepend_scheme="first"))
    else:
        stages = dict(normalizer=hn.Sequence([hn.Prepend("\u2581"), hn.Replace(" ", "\u2581")]))
    ref = build(model_kwargs={"byte_fallback": True, "unk_token": "<unk>"},
                post_processor=hpp.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", 1)]),
                decoder=hd.Metaspace(), vocab_size=700,
                special_tokens=("<unk>", "<s>", "</s>", *(f"<0x{b:02X}>" for b in range(256))), **stages)
    path = tmp_path / "tokenizer.json"
    path.write_text(ref.to_str(), encoding="utf-8")
    code = """
        import json, sys, fastbpe
        tok = fastbpe.Tokenizer.from_file(sys.argv[1])
        enc = tok.encode("Hello  wörld, it's 2024")
        heavy = ("numpy", "regex", "onigurumacffi")
        print(json.dumps([enc.ids, enc.tokens, enc.offsets, tok.engine, sorted(m for m in heavy if m in sys.modules)]))
    """
    ids, tokens, offsets, engine, heavy = json.loads(run_python(code, path).stdout)
    want = ref.encode("Hello  wörld, it's 2024")
    assert (ids, tokens, [tuple(o) for o in offsets], engine) == (want.ids, want.tokens, want.offsets, "kernel")
    assert heavy == []
