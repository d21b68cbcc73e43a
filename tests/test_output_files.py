"""Every output path writes through to what is not a regular file (a device, FIFO or socket)
and renames only over regular files or nothing; a missing folder is a clear error.

Nothing real is ever at risk here: /dev/null is only written while `os.replace` and
`os.rename` refuse (and report) any rename over a non-regular file, so code that would
replace it fails the test instead of deleting it."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading

import numpy as np
import pytest

import fastbpe
from fastbpe import corpus
from cli_run import assert_one_line_error, run_cli
from fastbpe.cli import main
from fastbpe.formats.atomic import atomic_write_bytes, atomic_write_many, atomic_writer

CORPUS = ["hello world, hello there", "the quick brown fox jumps over the lazy dog"] * 20


@pytest.fixture(scope="module")
def enc():
    return fastbpe.train(CORPUS, 300, special_tokens=["<|endoftext|>"])


@pytest.fixture(autouse=True)
def renames_never_replace_special_files(monkeypatch):
    """Fail (before any harm) on a rename over a device, FIFO or socket."""
    refused = []

    def guarded(real):
        def rename(src, dst, *args, **kwargs):
            try:
                mode = os.stat(dst).st_mode
            except OSError:
                mode = None
            if mode is not None and not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
                refused.append(os.fspath(dst))
                raise AssertionError(f"renamed over the special file {dst}")
            return real(src, dst, *args, **kwargs)
        return rename

    monkeypatch.setattr(os, "replace", guarded(os.replace))
    monkeypatch.setattr(os, "rename", guarded(os.rename))
    yield
    assert not refused, f"tried to replace special files: {refused}"


@contextlib.contextmanager
def fifo_reader(path):
    """A FIFO at `path` and what is written into it, collected by a thread.  An extra
    read-write handle keeps the pipe open, so the reader never blocks on open and a test
    of code that replaces the FIFO fails (no data, not a FIFO) instead of hanging."""
    os.mkfifo(path)
    keep = os.open(path, os.O_RDWR)
    reader = open(path, "rb")  # does not wait: `keep` is a writer
    got = bytearray()

    def read():
        with reader:
            while chunk := reader.read(1 << 16):
                got.extend(chunk)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        os.close(keep)  # the last writer gone: the reader sees the end
        thread.join(10)
    assert not thread.is_alive()
    assert stat.S_ISFIFO(os.lstat(path).st_mode), "the FIFO was replaced"


def test_write_helpers_write_into_a_fifo(tmp_path):
    from fastbpe.formats.atomic import atomic_file_set

    fifo = tmp_path / "out"
    with fifo_reader(fifo) as got:
        atomic_write_bytes(fifo, b"one")
        atomic_write_many({fifo: b" two", tmp_path / "beside.txt": b"regular"})
        with atomic_writer(fifo) as f:
            f.write(b" three")
        with atomic_file_set([fifo, tmp_path / "mark"]) as (f, mark):
            f.write(b" four")
            mark.write(b"m")
    assert bytes(got) == b"one two three four"
    assert (tmp_path / "beside.txt").read_bytes() == b"regular"
    assert (tmp_path / "mark").read_bytes() == b"m"
    assert sorted(os.listdir(tmp_path)) == ["beside.txt", "mark", "out"]  # no temporaries


def test_large_output_streams_through_a_fifo(tmp_path):
    """More than a pipe's buffer: the writer waits for the reader, nothing is lost."""
    data = os.urandom(1 << 20)
    fifo = tmp_path / "big"
    with fifo_reader(fifo) as got:
        atomic_write_bytes(fifo, data)
    assert bytes(got) == data


def test_save_model_into_a_fifo(enc, tmp_path):
    fifo = tmp_path / "model.json"
    with fifo_reader(fifo) as got:
        fastbpe.save_model(enc, fifo)
    assert json.loads(got)["format"] == "fastbpe-bpe"


def test_encode_files_streams_ids_into_a_fifo(enc, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text("\n\n".join(CORPUS))
    fifo = tmp_path / "ids.bin"
    with fifo_reader(fifo) as got:
        ids, offsets = enc.encode_files(text, fifo, split_on="\n\n", dtype="uint16")
    want_ids, want_offsets = enc.encode_files(text, split_on="\n\n", dtype="uint16")
    assert ids is None and offsets.tolist() == want_offsets.tolist()
    assert bytes(got) == want_ids.astype("<u2").tobytes()
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "ids.bin"]  # nothing written beside it


def test_corpus_save_into_a_fifo(tmp_path):
    fifo = tmp_path / "ids.bin"
    with fifo_reader(fifo) as got:
        corpus.save(fifo, np.array([1, 2, 3], dtype=np.uint32), [0, 3])
    assert bytes(got) == np.array([1, 2, 3], dtype="<u4").tobytes()
    assert os.listdir(tmp_path) == ["ids.bin"]


def test_write_into_a_unix_socket(tmp_path):
    path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(os.fspath(path))
    server.listen(1)
    server.settimeout(10)
    got = bytearray()

    def serve():
        try:
            conn, _ = server.accept()
        except OSError:  # nobody came: the socket was replaced
            return
        with conn:
            while chunk := conn.recv(1 << 16):
                got.extend(chunk)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        atomic_write_bytes(path, b"through the socket")
    finally:
        thread.join(15)
        server.close()
    assert bytes(got) == b"through the socket"
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_dev_null_and_a_link_to_it_are_written_to_not_replaced(enc, tmp_path):
    link = tmp_path / "null-link.json"
    link.symlink_to(os.devnull)
    atomic_write_bytes(os.devnull, b"discarded")
    fastbpe.save_model(enc, link)
    fastbpe.save_model(enc, os.devnull, format="native")
    ids, offsets = enc.encode_documents(["some text"], os.devnull)
    assert ids is None and offsets.tolist() == [0, len(enc.encode_ordinary("some text")) + 1]
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode) and link.is_symlink()
    assert os.listdir(tmp_path) == ["null-link.json"]


def test_cli_outputs_to_dev_null_and_a_fifo(tmp_path, capsys):
    text = tmp_path / "a.txt"
    text.write_text("hello world")
    assert main(["encode", "-m", _model(tmp_path), "hello", "-o", os.devnull]) == 0
    assert main(["show", "-m", _model(tmp_path), "hello", "--html", os.devnull]) == 0
    fifo = tmp_path / "ids.json"
    with fifo_reader(fifo) as got:
        assert main(["encode", "-m", _model(tmp_path), "hello", "-o", str(fifo)]) == 0
    assert json.loads(got) == fastbpe.load_model(_model(tmp_path)).to_encoding().encode("hello")
    fifo = tmp_path / "page.html"
    with fifo_reader(fifo) as got:
        assert main(["show", "-m", _model(tmp_path), "hello", "--html", str(fifo)]) == 0
    assert got.startswith(b"<!DOCTYPE html>") or b"<html" in got[:200]


def _model(tmp_path) -> str:
    path = tmp_path / "m.json"
    if not path.exists():
        fastbpe.save_model(fastbpe.train(CORPUS, 280), path)
    return str(path)


def test_cli_encode_to_dev_stdout(tmp_path):
    """/dev/stdout is a link to the pipe: written into, as `> /dev/stdout` would."""
    code, out, err = run_cli("encode", "hello", "-m", _model(tmp_path), "-o", "/dev/stdout")
    assert code == 0, err
    assert json.loads(out) == fastbpe.load_model(_model(tmp_path)).to_encoding().encode("hello")


def test_a_folder_as_output_is_refused(tmp_path):
    with pytest.raises(IsADirectoryError, match="folder"):
        atomic_write_bytes(tmp_path, b"x")


def test_missing_folder_names_the_folder_not_a_temporary(enc, tmp_path):
    missing = tmp_path / "no-such-folder"
    for save in (lambda: fastbpe.save_model(enc, missing / "m.json"),
                 lambda: enc.encode_documents(["x"], missing / "ids.bin"),
                 lambda: atomic_write_many({missing / "a": b"a"})):
        with pytest.raises(FileNotFoundError) as e:
            save()
        assert "no such folder" in str(e.value) and str(missing) in str(e.value)
        assert "fastbpe-tmp" not in str(e.value)
    assert os.listdir(tmp_path) == []


def test_cli_missing_output_folder_is_one_clear_line(tmp_path):
    code, _, err = run_cli("encode", "hello", "-m", _model(tmp_path), "-o", "missing/ids.json",
                           cwd=tmp_path)
    assert code == 1
    assert_one_line_error(err)
    assert "no such folder" in err and "fastbpe-tmp" not in err


def test_cli_encode_files_to_dev_null_and_a_fifo(enc, tmp_path, capsys):
    text = tmp_path / "a.txt"
    text.write_text("hello world")
    # in this process, where the guard above stands between the code and /dev/null
    assert main(["encode-files", str(text), "-o", os.devnull, "--separator", "none"]) == 0
    assert "1 documents" in capsys.readouterr().err
    fifo = tmp_path / "ids.bin"
    with fifo_reader(fifo) as got:
        assert main(["encode-files", str(text), "-o", str(fifo), "--separator", "none",
                     "--dtype", "uint32"]) == 0
    cl100k = fastbpe.get_encoding("cl100k_base")
    assert np.frombuffer(bytes(got), dtype="<u4").tolist() == cl100k.encode("hello world")
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "ids.bin"]


def test_tokenizer_save_writes_into_a_fifo(enc, tmp_path):
    fastbpe.save_model(enc, tmp_path / "tokenizer.json")
    tok = fastbpe.Tokenizer.from_file(tmp_path / "tokenizer.json")
    fifo = tmp_path / "out.json"
    with fifo_reader(fifo) as got:
        tok.save(fifo)
    assert json.loads(got) == json.loads(tok.to_str())
    tok.save(os.devnull)


# -- saved files behave like open(path, "w"): umask, symlinks, stale temporaries --

@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    yield
    os.umask(old)


def test_saved_file_mode_follows_umask(tmp_path, umask_027):
    from fastbpe.formats.atomic import atomic_write_text

    atomic_write_text(tmp_path / "new.txt", "x")
    assert os.stat(tmp_path / "new.txt").st_mode & 0o777 == 0o640
    existing = tmp_path / "existing.txt"
    existing.write_text("old")
    os.chmod(existing, 0o604)
    fastbpe.save_model(fastbpe.train(["hello hello world"], 260), existing, format="native")
    assert os.stat(existing).st_mode & 0o777 == 0o604


def test_save_writes_through_a_symlink(tmp_path):
    from fastbpe.formats.atomic import atomic_write_text

    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_stale_temporaries_are_cleaned(tmp_path):
    from fastbpe.formats.atomic import atomic_write_text

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".m.json.fastbpe-tmp-{dead}-abcd1234"
    stale.write_text("half a save")
    live = tmp_path / f".m.json.fastbpe-tmp-{os.getppid()}-abcd1234"  # a live writer's
    live.write_text("in progress")
    other = tmp_path / ".other.json.fastbpe-tmp-999999999-abcd1234"
    other.write_text("not ours to judge")
    atomic_write_text(tmp_path / "m.json", "{}")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name, "m.json"])


def test_write_many_changes_nothing_on_error(tmp_path):
    from fastbpe.formats.atomic import atomic_write_many

    a = tmp_path / "a.model"
    a.write_text("old a")
    with pytest.raises(OSError):
        atomic_write_many({a: b"new a", tmp_path / "missing-dir" / "a.vocab": b"new vocab"})
    assert a.read_text() == "old a" and os.listdir(tmp_path) == ["a.model"]
    atomic_write_many({a: b"new a", tmp_path / "a.vocab": b"new vocab"})
    assert a.read_text() == "new a" and (tmp_path / "a.vocab").read_text() == "new vocab"
    assert sorted(os.listdir(tmp_path)) == ["a.model", "a.vocab"]
