"""The command line as users meet it: options, outputs, and errors (one stderr line, exit 1;
usage errors exit 2; no tracebacks), run as `python -m fastbpe` in a subprocess."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import fastbpe
from cli_run import run_cli
from conftest import require_encoding
from fastbpe.cli import SUBCOMMANDS, main

REPO = Path(__file__).resolve().parents[1]
CORPUS = "the cat sat on the mat. the dog sat on the log.\nlogs and mats and cats.\n" * 200


def cli(*args, stdin: str | bytes | None = None, check_rc: int | None = 0, cwd=None):
    rc, out, err = run_cli(*args, stdin=stdin, cwd=cwd)
    out = out.decode("utf-8", "replace")
    if check_rc is not None:
        assert rc == check_rc, f"rc {rc}\n{out}\n{err}"
    return rc, out, err


def assert_one_line_error(err: str):
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbpe: error: "), err
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli-model")
    corpus = d / "corpus.txt"
    corpus.write_text(CORPUS, encoding="utf-8")
    path = d / "model.json"
    assert main(["train", str(corpus), "-v", "290", "-o", str(path), "--special", "<|eot|>",
                 "--no-progress"]) == 0
    return path


def test_subcommands_are_registered_in_one_place():
    assert {"encode", "decode", "count", "list", "show", "train"} <= set(SUBCOMMANDS)
    for command in SUBCOMMANDS.values():
        for a in command.arguments:  # every option documents itself
            assert a.kwargs.get("help"), (command.name, a.args)


def test_version_and_help():
    rc, out, _ = cli("--version")
    assert out.strip() == f"fastbpe {fastbpe.__version__}"
    rc, out, _ = cli("train", "--help")
    assert "--threads" in out and "(default: gpt4)" in out and "--no-progress" in out


@pytest.mark.parametrize("args, code", [
    (["encode", "-e", "no_such_encoding", "x"], 1),
    (["count", "/no/such/file.txt"], 1),
    (["decode", "-m", "/no/such/model.json", "1"], 1),
    (["decode", "--", "-5"], 1),
    (["decode", "abc"], 1),
    (["nosuchcommand"], 2),
    (["encode", "--numpy", "x"], 2),
    (["train", "CORPUS", "-v", "300", "-o", "out.bin"], 2),
    (["train", "CORPUS", "-v", "300", "-o", "out.json", "--pattern", "gpt5"], 2),
    (["train", "CORPUS", "-v", "10", "-o", "out.json"], 1),
    (["train", "CORPUS", "-v", "300", "-o", "out.json", "--threads", "0"], 2),
    (["encode", "-e", "cl100k_base", "-m", "MODEL", "x"], 2),
])
def test_user_errors_are_one_line(tmp_path, model, args, code):
    (tmp_path / "c.txt").write_text(CORPUS, encoding="utf-8")
    args = [str(tmp_path / "c.txt") if a == "CORPUS" else str(model) if a == "MODEL"
            else str(tmp_path / a) if a.startswith("out.") else a for a in args]
    rc, out, err = cli(*args, check_rc=code)
    if code == 2 and args[0] == "nosuchcommand":
        assert "invalid choice" in err and "Traceback" not in err
    else:
        assert_one_line_error(err)
    assert not any(p.name.startswith("out.") for p in tmp_path.iterdir())


def test_unknown_id_with_a_named_encoding():
    require_encoding("cl100k_base")
    _, _, err = cli("decode", "99999999", check_rc=1)
    assert_one_line_error(err)
    assert "99999999" in err


def test_broken_pipe_is_quiet(model):
    """`fastbpe encode ... | head`: the reader leaves before the output is written; no
    traceback, no complaint, exit 1."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "fastbpe", "encode", "-m", str(model), "--show"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # the reader is gone before fastbpe has read its input
    proc.stdin.write(b"the cat sat\n" * 20_000)
    proc.stdin.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 1
    assert err == "", err


def test_encode_decode_with_a_model_file(model, tmp_path):
    enc = fastbpe.load_model(model).to_encoding()
    text = "the cat sat on the log <|eot|>"
    _, out, _ = cli("encode", "-m", model, "--allowed-special", "all", text)
    ids = json.loads(out)
    assert ids == enc.encode(text, allowed_special="all") and ids[-1] == enc.n_vocab - 1
    _, out, _ = cli("decode", "-m", model, *ids)
    assert out == text + "\n"
    _, out, _ = cli("decode", "-m", model, stdin=json.dumps(ids))  # ids on stdin
    assert out == text + "\n"
    # specials are refused by default, like the API; or encoded as text on request
    rc, _, err = cli("encode", "-m", model, text, check_rc=1)
    assert_one_line_error(err)
    assert "--allowed-special" in err
    _, out, _ = cli("encode", "-m", model, "--disallowed-special", "none", text)
    assert json.loads(out) == enc.encode(text, disallowed_special=())
    # -o writes the JSON to a file; --numpy writes a .npy of uint32
    _, out, _ = cli("encode", "-m", model, "-o", tmp_path / "ids.json", "the cat")
    assert out == "" and json.loads((tmp_path / "ids.json").read_text()) == enc.encode("the cat")
    np = pytest.importorskip("numpy")
    cli("encode", "-m", model, "--numpy", "-o", tmp_path / "ids.npy", stdin="the cat sat")
    arr = np.load(tmp_path / "ids.npy")
    assert arr.dtype == np.uint32 and arr.tolist() == enc.encode("the cat sat")


def test_encode_with_a_tokenizer_json(tmp_path):
    hf = pytest.importorskip("fastbpe.hf")
    import datasources as ds

    if not ds.HF_GPT2_JSON.is_file():
        pytest.skip(f"{ds.HF_GPT2_JSON} not found (shared data absent)")
    tok = hf.Tokenizer.from_file(str(ds.HF_GPT2_JSON))
    text = "Hello world, tokenizer.json!"
    _, out, _ = cli("encode", "-m", ds.HF_GPT2_JSON, text)
    ids = json.loads(out)
    assert ids == tok.encode_ids(text, add_special_tokens=False)
    _, out, _ = cli("decode", "-m", ds.HF_GPT2_JSON, *ids)
    assert out == tok.decode(ids) + "\n"
    _, out, _ = cli("count", "-m", ds.HF_GPT2_JSON, stdin=text)
    assert out.split("\t")[0] == str(len(ids))


def test_count_streams_files_and_stdin(model, tmp_path):
    enc = fastbpe.load_model(model).to_encoding()
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(CORPUS * 30, encoding="utf-8")  # several blocks' worth of text
    b.write_text("x y z\n", encoding="utf-8")
    _, out, _ = cli("count", "-m", model, a, b)
    lines = [line.split("\t") for line in out.splitlines()]
    want_a, want_b = len(enc.encode_ordinary(CORPUS * 30)), len(enc.encode_ordinary("x y z\n"))
    assert lines == [[str(want_a), str(a)], [str(want_b), str(b)], [str(want_a + want_b), "total"]]
    _, out, _ = cli("count", "-m", model, stdin=CORPUS)
    assert out == f"{len(enc.encode_ordinary(CORPUS))}\t-\n"


def test_count_blocks_equal_whole_text(model, monkeypatch, tmp_path, capsys):
    """Files are counted in blocks: make the blocks tiny and check nothing changes."""
    from fastbpe import counting

    enc = fastbpe.load_model(model).to_encoding()
    text = "\n".join(f"line {i}:  the  cat\n\n  sat  {i * 7}" for i in range(500)) + "\n"
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setattr(counting, "_FILE_BLOCK_CHARS", 97)
    monkeypatch.setattr(counting.read_blocks, "__defaults__", (97,))
    assert main(["count", "-m", str(model), str(path)]) == 0
    assert capsys.readouterr().out == f"{len(enc.encode_ordinary(text))}\t{path}\n"


def test_train_from_dev_stdin_and_options(tmp_path):
    out = tmp_path / "m.model"
    rc, _, err = cli("train", "/dev/stdin", "-v", "400", "-o", out, "--threads", "1",
                     "--no-progress", stdin=CORPUS)
    assert "warning: the corpus yields only" in err  # a tiny corpus: fewer tokens than asked
    assert out.exists() and (tmp_path / "m.vocab").exists()
    from_file = tmp_path / "c.txt"
    from_file.write_text(CORPUS, encoding="utf-8")
    cli("train", from_file, "-v", "400", "-o", tmp_path / "f.model", "--threads", "1")
    assert out.read_text() == (tmp_path / "f.model").read_text()  # stdin == the same file
    rc, _, err = cli("train", "-", "-v", "260", "-o", tmp_path / "p.json", "--progress",
                     stdin=CORPUS)
    assert "merges" in err  # the progress bar, forced on although stderr is not a terminal
    cli("train", from_file, "-v", "260", "-o", tmp_path / "ok.tiktoken")
    # .tiktoken holds ranks only: the pattern and special tokens go in a file beside it
    cli("train", from_file, "-v", "260", "-o", tmp_path / "sp.tiktoken", "--special", "<|x|>",
        "--pattern", "o200k")
    back = fastbpe.load_model(tmp_path / "sp.tiktoken")
    assert "<|x|>" in back.special_tokens and back.pattern == fastbpe.patterns.BY_NAME["o200k"]


def test_show_in_the_terminal(model):
    _, out, err = cli("show", "-m", model, "the cat sat")
    assert "\x1b[48;5;" in out and out.rstrip("\n").endswith("\x1b[0m")
    assert "tokens" in err


def test_list_includes_the_builtins():
    _, out, _ = cli("list")
    assert {"cl100k_base", "o200k_harmony", "gpt2"} <= set(out.split())


@pytest.mark.parametrize("model_dir", ["gpt2", "qwen2.5", "deepseek-r1-distill-llama-8b"])
def test_count_a_tokenizer_json_in_blocks(model_dir, monkeypatch, tmp_path, capsys):
    """Blocks of a tokenizer.json count are cut where its own split pattern's pieces end."""
    hf = pytest.importorskip("fastbpe.hf")
    import datasources as ds
    from fastbpe import counting

    path = ds.VOCAB_DIR / "hf" / model_dir / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (shared data absent)")
    tok = hf.Tokenizer.from_file(str(path))
    tok.no_truncation()  # the shared GPT-2 file truncates at 50 tokens; the CLI counts them all
    text = "".join(f"line {i}:  the  cat 12345678\n\n  sat  {i * 7}'s\r\n" for i in range(300))
    src = tmp_path / "t.txt"
    src.write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(counting, "_FILE_BLOCK_CHARS", 97)
    monkeypatch.setattr(counting.read_blocks, "__defaults__", (97,))
    assert main(["count", "-m", str(path), str(src)]) == 0
    want = len(tok.encode_ids(text, add_special_tokens=False))
    assert capsys.readouterr().out == f"{want}\t{src}\n"
