"""encode_files' input and output under hostile conditions: the ids/offsets pair is one unit
(an interrupted write never reads back as wrong ids), a file that grows while read, an
unseekable input (FIFO, stdin), and a separator whose id lies far from the vocabulary."""
from __future__ import annotations

import json
import os
import shutil
import threading

import numpy as np
import pytest

import fastbpe
from cli_run import run_cli
from fastbpe import corpus

DOCS = ["hello world, hello there", "the quick brown fox jumps over the lazy dog",
        "pack my box with five dozen liquor jugs", "ünïcödé and 中文 text"] * 10


@pytest.fixture(scope="module")
def enc():
    return fastbpe.train(DOCS, 320, special_tokens=["<|endoftext|>"])


def expected(enc, docs):
    ids, offsets = [], [0]
    for doc in docs:
        ids += enc.encode_ordinary(doc) + [enc.eot_token]
        offsets.append(len(ids))
    return ids, offsets


# --- item 2: the pair is one unit ----------------------------------------------------------

class Interrupted(BaseException):
    pass


@pytest.mark.parametrize("stop_at", [0, 1, 2])
def test_an_interrupted_overwrite_never_reads_as_wrong_ids(enc, tmp_path, monkeypatch, stop_at):
    """Old uint16 ids, then a uint32 rewrite of other documents interrupted after `stop_at`
    of its renames: load gives the old corpus, the new one, or a ValueError; never new
    offsets read over old ids."""
    out = tmp_path / "train.bin"
    old = expected(enc, DOCS[:3])
    new = expected(enc, DOCS[3:20])
    enc.encode_documents(DOCS[:3], out, dtype="uint16")
    real_replace, done = os.replace, []

    def replace(src, dst):
        if len(done) == stop_at:
            raise Interrupted
        done.append(dst)
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(Interrupted):
        enc.encode_documents(DOCS[3:20], out, dtype="uint32")
    monkeypatch.setattr(os, "replace", real_replace)
    try:
        ids, offsets = corpus.load(out)
    except ValueError as e:
        assert "train.bin" in str(e)
        return
    assert (ids.tolist(), offsets.tolist()) in (old, new)


def test_load_refuses_files_from_different_runs(enc, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    enc.encode_documents(DOCS[:4], a / "x.bin", dtype="uint16")
    # the same number of bytes of ids as a's, as uint32: sizes alone would accept the mix
    n_a = len(expected(enc, DOCS[:4])[0])
    docs_b = next(DOCS[:k] for k in range(1, len(DOCS)) if len(expected(enc, DOCS[:k])[0]) * 2 >= n_a)
    enc.encode_documents(docs_b, b / "x.bin", dtype="uint32")
    shutil.copy(b / "x.bin.offsets", a / "x.bin.offsets")
    with pytest.raises(ValueError, match="x.bin"):
        corpus.load(a / "x.bin")
    # the manifest too: ids from a, offsets and manifest from b
    shutil.copy(b / "x.bin.manifest.json", a / "x.bin.manifest.json")
    with pytest.raises(ValueError, match="x.bin"):
        corpus.load(a / "x.bin")


def test_load_refuses_ids_of_another_run_with_the_same_sizes_and_offsets(tmp_path):
    """Issue 29 item 12: two runs whose offsets are equal (so the offsets CRC, the sizes and
    the dtype all match) but whose ids differ: only the CRC of the ids can refuse the mix."""
    offsets = np.array([0, 3, 5, 9], dtype=np.int64)
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    corpus.save(a, np.arange(1, 10, dtype=np.uint16), offsets)
    corpus.save(b, np.arange(101, 110, dtype=np.uint16), offsets)
    assert os.path.getsize(a) == os.path.getsize(b)
    assert (tmp_path / "a.bin.offsets").read_bytes() == (tmp_path / "b.bin.offsets").read_bytes()
    shutil.copy(a, b)   # a's ids under b's offsets and manifest
    with pytest.raises(ValueError, match="b.bin is not the ids its manifest"):
        corpus.load(b)


def test_load_refuses_a_pair_without_its_manifest(enc, tmp_path):
    out = tmp_path / "train.bin"
    enc.encode_documents(DOCS[:2], out)
    assert corpus.load(out)[0].tolist() == expected(enc, DOCS[:2])[0]
    os.unlink(tmp_path / "train.bin.manifest.json")
    with pytest.raises(ValueError, match="manifest"):
        corpus.load(out)


def test_load_refuses_a_malformed_manifest(enc, tmp_path):
    out = tmp_path / "train.bin"
    enc.encode_documents(DOCS[:2], out)
    manifest = tmp_path / "train.bin.manifest.json"
    good = json.loads(manifest.read_text())
    for bad in ("{", "[]", json.dumps({**good, "dtype": "int8"}),
                json.dumps({**good, "ids_bytes": "12"}), json.dumps({**good, "ids": "other.bin"})):
        manifest.write_text(bad)
        with pytest.raises(ValueError, match="manifest"):
            corpus.load(out)


def test_the_manifest_describes_the_pair(enc, tmp_path):
    out = tmp_path / "train.bin"
    ids, offsets = enc.encode_documents(DOCS[:5], out, dtype="uint16")
    manifest = json.loads((tmp_path / "train.bin.manifest.json").read_text())
    assert manifest["ids"] == "train.bin" and manifest["offsets"] == "train.bin.offsets"
    assert manifest["dtype"] == "uint16" and manifest["n_tokens"] == len(ids)
    assert manifest["n_documents"] == 5 and manifest["ids_bytes"] == os.path.getsize(out)


# --- item 14: a file that grows while it is read --------------------------------------------

def test_a_growing_file_is_read_in_blocks_not_bytes(enc, tmp_path, monkeypatch):
    """200 kB appended after the first read: a few reads, not one per byte."""
    path = tmp_path / "growing.txt"
    path.write_text("\n\n".join(DOCS) + "\n\n")
    appended = ("\n\n".join(DOCS) + "\n\n") * 120
    reads = []

    class Growing:
        def __init__(self, f):
            self.f = f

        def __getattr__(self, name):
            return getattr(self.f, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def _note(self):
            reads.append(1)
            if len(reads) == 1:
                with open(path, "a") as g:
                    g.write(appended)

        def read(self, *args):
            self._note()
            return self.f.read(*args)

        def readinto(self, buf):
            self._note()
            return self.f.readinto(buf)

    real_open = open
    monkeypatch.setattr(corpus, "open", lambda *a, **k: Growing(real_open(*a, **k)), raising=False)
    ids, offsets = enc.encode_files(path, split_on="\n\n", buffer_bytes=1 << 20, num_threads=1)
    docs = path.read_text().split("\n\n")
    want = expected(enc, [d for d in docs if d])
    assert ids.tolist() == want[0] and offsets.tolist() == want[1]
    assert len(reads) < 100, f"{len(reads)} reads for {len(appended)} bytes appended"


# --- item 19: unseekable input ---------------------------------------------------------------

def test_encode_files_reads_a_fifo_as_a_stream(enc, tmp_path):
    text = "\n\n".join(DOCS)
    fifo = tmp_path / "in.fifo"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "w") as f:
            f.write(text)

    for split_on in ("\n\n", None):
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        ids, offsets = enc.encode_files(fifo, split_on=split_on)
        writer.join(10)
        want = expected(enc, DOCS if split_on else [text])
        assert ids.tolist() == want[0] and offsets.tolist() == want[1]


def test_cli_encode_files_from_dev_stdin_with_split_on(tmp_path):
    text = "\n\n".join(DOCS)
    code, _, err = run_cli("encode-files", "/dev/stdin", "--split-on", "\\n\\n", "-o", "out.bin",
                           "-e", "cl100k_base", stdin=text, cwd=tmp_path)
    if code == 1 and "could not find" in err:
        pytest.skip(f"cl100k_base data not available: {err}")
    assert code == 0, err
    ids, offsets = corpus.load(tmp_path / "out.bin")
    cl100k = fastbpe.get_encoding("cl100k_base")
    assert len(offsets) == len(DOCS) + 1
    assert ids[:offsets[1]].tolist() == cl100k.encode_ordinary(DOCS[0]) + [cl100k.eot_token]


# --- item 18: a separator far from the other ids ---------------------------------------------

@pytest.fixture(scope="module")
def far(enc):
    """The encoding's vocabulary with <|endoftext|> at 70000, far above the other ids."""
    return fastbpe.Encoding("far", pat_str=enc._pat_str, mergeable_ranks=enc._mergeable_ranks,
                            special_tokens={"<|endoftext|>": 70000})


def test_a_far_special_token_is_a_separator(far, tmp_path):
    want_ids = []
    want_offsets = [0]
    for doc in DOCS[:6]:
        want_ids += far.encode_ordinary(doc) + [70000]
        want_offsets.append(len(want_ids))
    ids, offsets = far.encode_documents(DOCS[:6])
    assert ids.tolist() == want_ids and offsets.tolist() == want_offsets
    assert ids.dtype == np.uint32
    path = tmp_path / "a.txt"
    path.write_text("\n\n".join(DOCS[:6]))
    for got in (far.encode_files(path, split_on="\n\n", buffer_bytes=64, num_threads=2),
                far.encode_files(path, tmp_path / "out.bin", split_on="\n\n"),
                far.encode_documents(DOCS[:6], separator=70000)):
        assert got[0].tolist() == want_ids and got[1].tolist() == want_offsets
