"""encode_files / encode_documents: the same ids as encoding each document alone, documents and
separators, bad UTF-8, the uint16 guard, atomic output and the memory bound."""
from __future__ import annotations

import os

import numpy as np
import pytest

import fastbpe
from fastbpe import corpus
from fastbpe.pretokenize import Splitter

TEXTS = [  # none ends in a newline, so "\n\n".join(TEXTS).split("\n\n") == TEXTS
    "Hello world! This is the first document.\nIt has two lines.",
    "Ünïcödé, 中文, русский, emoji 🎉🎉 and <|endoftext|> as ordinary text.",
    "    indented code:\n\tfor i in range(10):\n\t\tprint(i)  # 12345678\n ",
    "x" * 300 + " " * 50 + "y",
]


@pytest.fixture(scope="module")
def cl100k():
    try:
        return fastbpe.get_encoding("cl100k_base")
    except fastbpe.VocabNotFoundError as e:  # pragma: no cover - no data source at all
        pytest.skip(f"cl100k_base data not available: {e}")


@pytest.fixture(scope="module")
def small(cl100k):
    """cl100k's first 30,000 tokens: a vocabulary that fits uint16."""
    ranks = {cl100k.decode_single_token_bytes(i): i for i in range(30000)}
    return fastbpe.Encoding("small", pat_str=cl100k._pat_str, mergeable_ranks=ranks,
                            special_tokens={"<|endoftext|>": 30000})


def expected(enc, documents, separator=None, keep_empty=False):
    """The reference: encode_ordinary of each document, then the separator."""
    sep = enc.eot_token if separator is None else separator
    ids, offsets = [], [0]
    for doc in documents:
        if not doc and not keep_empty:
            continue
        ids += enc.encode_ordinary(doc)
        if sep >= 0:
            ids.append(sep)
        offsets.append(len(ids))
    return ids, offsets


def assert_result(got, want):
    ids, offsets = got
    assert offsets.dtype == np.int64
    assert ids.tolist() == want[0]
    assert offsets.tolist() == want[1]


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return path


def test_files_equal_per_document_encodes(cl100k, tmp_path):
    paths = [write(tmp_path, f"{i}.txt", t) for i, t in enumerate(TEXTS)]
    want = expected(cl100k, TEXTS)
    for threads in (1, 2, 3):
        for buffer_bytes in (1, 500, 1 << 20):  # one document per batch .. all in one batch
            got = cl100k.encode_files(paths, num_threads=threads, buffer_bytes=buffer_bytes)
            assert_result(got, want)
            assert got[0].dtype == np.uint32


def test_split_on_equal_to_str_split(cl100k, tmp_path):
    text = "\n\n".join(TEXTS * 5) + "\n\n"
    path = write(tmp_path, "a.txt", text)
    want = expected(cl100k, text.split("\n\n"))
    for buffer_bytes in (3, 64, 100_000):  # tiny buffers: separators straddle read blocks
        assert_result(cl100k.encode_files(path, split_on="\n\n", buffer_bytes=buffer_bytes), want)
    # a multi-byte separator, found only on character boundaries
    text = "§§".join(TEXTS) + "a§b§§§c"
    path = write(tmp_path, "b.txt", text)
    for buffer_bytes in (2, 7, 4096):
        assert_result(cl100k.encode_files(path, split_on="§§", buffer_bytes=buffer_bytes),
                      expected(cl100k, text.split("§§")))


def test_separator_choices(cl100k, tmp_path):
    path = write(tmp_path, "a.txt", "one\n\ntwo")
    docs = ["one", "two"]
    assert_result(cl100k.encode_files(path, split_on="\n\n", separator=None),
                  expected(cl100k, docs, separator=-1))
    assert_result(cl100k.encode_files(path, split_on="\n\n", separator="<|fim_prefix|>"),
                  expected(cl100k, docs, separator=cl100k.encode_single_token("<|fim_prefix|>")))
    assert_result(cl100k.encode_files(path, split_on="\n\n", separator="\n"),
                  expected(cl100k, docs, separator=198))
    assert_result(cl100k.encode_files(path, split_on="\n\n", separator=np.int64(13)),
                  expected(cl100k, docs, separator=13))
    with pytest.raises(ValueError, match="not a token"):
        cl100k.encode_files(path, separator="not one token")
    with pytest.raises(ValueError, match="not a token id"):
        cl100k.encode_files(path, separator=10**9)
    with pytest.raises(TypeError):
        cl100k.encode_files(path, separator=1.5)
    with pytest.raises(ValueError, match="empty"):
        cl100k.encode_files(path, split_on="")
    with pytest.raises(TypeError):
        cl100k.encode_files(path, split_on=b"\n")


def test_no_eot_in_the_vocabulary_is_a_clear_error(cl100k, tmp_path):
    ranks = {bytes([i]): i for i in range(256)}
    enc = fastbpe.Encoding("bytes", pat_str=cl100k._pat_str, mergeable_ranks=ranks, special_tokens={})
    path = write(tmp_path, "a.txt", "abc")
    with pytest.raises(ValueError, match="separator=None"):
        enc.encode_files(path)
    assert_result(enc.encode_files(path, separator=None), ([97, 98, 99], [0, 3]))


def test_empty_documents_and_empty_files(cl100k, tmp_path):
    paths = [write(tmp_path, "empty.txt", ""), write(tmp_path, "a.txt", "\n\nA\n\n\n\nB\n\n"),
             write(tmp_path, "empty2.txt", b"")]
    docs = ["", "", "A", "", "B", "", ""]
    assert_result(cl100k.encode_files(paths, split_on="\n\n"), expected(cl100k, docs))
    got = cl100k.encode_files(paths, split_on="\n\n", keep_empty=True)
    assert_result(got, expected(cl100k, docs, keep_empty=True))
    assert got[0].tolist()[:2] == [cl100k.eot_token] * 2  # an empty document is its separator
    ids, offsets = cl100k.encode_files([paths[0]])
    assert ids.shape == (0,) and offsets.tolist() == [0]
    ids, offsets = cl100k.encode_files([])
    assert ids.shape == (0,) and offsets.tolist() == [0]


def test_huge_document_with_a_small_buffer(cl100k, tmp_path):
    big = ("The quick brown fox jumps over the lazy dog. " * 20 + "\n") * 3500  # ~3.2 MB
    text = "small one\n\n\n" + big + "\n\nlast"
    path = write(tmp_path, "big.txt", text)
    docs = text.split("\n\n")
    assert max(map(len, docs)) > 3_000_000
    assert_result(cl100k.encode_files(path, split_on="\n\n", buffer_bytes=4096, num_threads=2),
                  expected(cl100k, docs))


def test_bad_utf8_is_replaced_like_decode_replace(cl100k, tmp_path):
    raw = (b"ok \xff\xfe bad\n\ntruncated \xe2\x82\n\n\xe2\x82\n\nlone \x80 continuation"
           b"\n\n\xf0\x9f\x8e\x89 fine\n\nend \xe2")
    path = write(tmp_path, "bad.txt", raw)
    docs = raw.decode("utf-8", "replace").split("\n\n")
    for buffer_bytes in (1, 16, 4096):
        assert_result(cl100k.encode_files(path, split_on="\n\n", buffer_bytes=buffer_bytes),
                      expected(cl100k, docs))
    assert_result(cl100k.encode_files(path), expected(cl100k, [raw.decode("utf-8", "replace")]))
    assert_result(cl100k.encode_documents([raw, "lone \ud800 surrogate"]),
                  expected(cl100k, [raw.decode("utf-8", "replace"), "lone \ufffd surrogate"]))


def test_documents_iterable(cl100k):
    docs = (t for t in TEXTS * 3)  # consumed lazily, once
    assert_result(cl100k.encode_documents(docs, buffer_bytes=100, num_threads=2),
                  expected(cl100k, TEXTS * 3))
    with pytest.raises(TypeError, match="single str"):
        cl100k.encode_documents("one string")
    with pytest.raises(TypeError, match="str or bytes"):
        cl100k.encode_documents(["fine", 3])


def test_dtype_choice_and_the_uint16_guard(cl100k, small, tmp_path):
    path = write(tmp_path, "a.txt", "\n\n".join(TEXTS))
    got = small.encode_files(path, split_on="\n\n")
    assert got[0].dtype == np.uint16  # chosen: every id fits
    assert_result(got, expected(small, TEXTS))
    assert small.encode_files(path, dtype="uint32")[0].dtype == np.uint32
    assert cl100k.encode_files(path, dtype=np.uint32)[0].dtype == np.uint32
    with pytest.raises(ValueError, match="uint16"):
        cl100k.encode_files(path, dtype=np.uint16)
    with pytest.raises(ValueError, match="uint16"):
        cl100k.encode_documents(["x"], dtype="uint16")
    with pytest.raises(ValueError, match="dtype"):
        cl100k.encode_files(path, dtype="int8")
    with pytest.raises(ValueError, match="dtype"):
        cl100k.encode_files(path, dtype="no such type")


def test_regex_split_path_gives_the_same_ids(small, tmp_path):
    enc = fastbpe.Encoding("small-regex", pat_str=small._pat_str,
                           mergeable_ranks=small._mergeable_ranks,
                           special_tokens={"<|endoftext|>": 30000})
    enc._splitter = Splitter(small._pat_str, force_regex=True)
    assert enc._splitter.kind < 0
    path = write(tmp_path, "a.txt", "\n\n".join(TEXTS))
    assert_result(enc.encode_files(path, split_on="\n\n", num_threads=2, buffer_bytes=64),
                  expected(small, TEXTS))


def test_out_file_layout_and_load(small, cl100k, tmp_path):
    path = write(tmp_path, "a.txt", "\n\n".join(TEXTS))
    want = expected(small, TEXTS)
    out = tmp_path / "train.bin"
    ids, offsets = small.encode_files(path, out, split_on="\n\n", buffer_bytes=50)
    assert_result((ids, offsets), want)
    # the documented layout: raw little-endian ids, raw little-endian int64 offsets
    assert out.read_bytes() == np.array(want[0], dtype="<u2").tobytes()
    assert (tmp_path / "train.bin.offsets").read_bytes() == np.array(want[1], dtype="<i8").tobytes()
    assert_result(corpus.load(out, mmap=False), want)
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "train.bin", "train.bin.manifest.json",
                                            "train.bin.offsets"]
    cl100k.encode_files(path, out, split_on="\n\n")  # overwrites, now uint32
    assert_result(corpus.load(out), expected(cl100k, TEXTS))
    (tmp_path / "train.bin").write_bytes(b"\x00" * 7)
    with pytest.raises(ValueError, match="holds 7 bytes, its manifest"):
        corpus.load(out)


def test_out_is_atomic_when_encoding_fails(cl100k, tmp_path):
    out = tmp_path / "train.bin"
    ids_before, _ = cl100k.encode_documents(["old content"], out)

    def documents():
        yield from TEXTS * 50
        raise RuntimeError("the source broke")

    with pytest.raises(RuntimeError, match="the source broke"):
        cl100k.encode_documents(documents(), out, buffer_bytes=200)
    assert_result(corpus.load(out), expected(cl100k, ["old content"]))
    # no temp files
    assert sorted(os.listdir(tmp_path)) == ["train.bin", "train.bin.manifest.json", "train.bin.offsets"]
    with pytest.raises(FileNotFoundError):
        cl100k.encode_documents(["x"], tmp_path / "no such dir" / "train.bin")


def test_bad_paths_are_clear_errors(cl100k, tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        cl100k.encode_files([tmp_path / "missing.txt"])
    with pytest.raises(IsADirectoryError):
        cl100k.encode_files(tmp_path)
    with pytest.raises(TypeError):
        cl100k.encode_files(b"a.txt")
    with pytest.raises(TypeError):
        cl100k.encode_files([3])
    with pytest.raises(ValueError, match="num_threads"):
        cl100k.encode_files([], num_threads=0)
    with pytest.raises(ValueError, match="buffer_bytes"):
        cl100k.encode_files([], buffer_bytes=0)


class RecordingPipeline(corpus._Pipeline):
    peaks: list = []

    def run(self, batches):
        super().run(batches)
        RecordingPipeline.peaks.append(self.peak_text_bytes)


def test_memory_is_bounded_by_the_buffer(cl100k, tmp_path, monkeypatch):
    """By construction: the text held in batches (queued, encoding or waiting to be written)
    never exceeds the buffer, however large the corpus; only a document larger than a batch
    may exceed it, by its own size."""
    monkeypatch.setattr(corpus, "_Pipeline", RecordingPipeline)
    text = "\n\n".join(TEXTS * 400)  # ~170 kB
    path = write(tmp_path, "a.txt", text)
    for threads in (1, 2):
        for buffer_bytes in (6_000, 20_000):  # batches larger than any one document
            RecordingPipeline.peaks.clear()
            assert_result(cl100k.encode_files(path, split_on="\n\n", num_threads=threads,
                                              buffer_bytes=buffer_bytes),
                          expected(cl100k, text.split("\n\n")))
            settings = corpus._Settings(cl100k, None, None, threads, buffer_bytes)
            # (max_in_flight + 1) batches at most: room is left for the reader's block
            assert 0 < RecordingPipeline.peaks[0] <= buffer_bytes - settings.batch_bytes
    big = "word " * 200_000  # 1 MB: one document larger than the buffer
    RecordingPipeline.peaks.clear()
    cl100k.encode_documents(TEXTS * 50 + [big] + TEXTS * 50, buffer_bytes=10_000, num_threads=2)
    assert len(big) <= RecordingPipeline.peaks[0] <= len(big) + 10_000


def test_kernel_utf8_check_agrees_with_python():
    from fastbpe._testing import is_valid_utf8

    rng = np.random.default_rng(9)
    edge = [b"\xc0\x80", b"\xc2\x80", b"\xe0\x9f\xbf", b"\xe0\xa0\x80", b"\xed\x9f\xbf", b"\xed\xa0\x80",
            b"\xef\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf0\x90\x80\x80", b"\xf4\x8f\xbf\xbf",
            b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\x80", b"\xe2\x82", b"abcdefgh\xe2\x82\xac"]
    samples = edge + [e + b"x" * 9 for e in edge] + [b"y" * 7 + e for e in edge]
    alphabet = np.frombuffer(b"a \n\x80\xbf\xc2\xdf\xe0\xed\xef\xf0\xf4\xa0\x90\x8f\xff", dtype=np.uint8)
    samples += [rng.choice(alphabet, size=rng.integers(0, 24)).tobytes() for _ in range(3000)]
    samples += [s.encode("utf-8") for s in TEXTS]
    for s in samples:
        try:
            s.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        assert is_valid_utf8(s) == valid, s


def test_cli_encode_files(cl100k, tmp_path, capsys):
    from fastbpe.cli import main

    path = write(tmp_path, "a.txt", "\n\n".join(TEXTS).encode("utf-8") + b"\n\nbad \xff byte")
    out = tmp_path / "train.bin"
    assert main(["encode-files", str(path), "-o", str(out), "--split-on", r"\n\n",
                 "--threads", "2", "--no-progress"]) == 0
    docs = (path.read_bytes().decode("utf-8", "replace")).split("\n\n")
    assert_result(corpus.load(out), expected(cl100k, docs))
    assert "5 documents" in capsys.readouterr().err
    assert main(["encode-files", str(path), "-o", str(out), "--separator", "none",
                 "--dtype", "uint32"]) == 0
    assert_result(corpus.load(out), expected(cl100k, ["\n\n".join(docs)], separator=-1))
    assert main(["encode-files", str(path), "-o", str(out), "--separator", "198"]) == 0
    assert corpus.load(out)[0][-1] == 198
    capsys.readouterr()
    # errors in the input or output: 1, with a message; nothing written
    for argv, message in [([str(tmp_path / "missing.txt")], "no such file"),
                          ([str(path), "--dtype", "uint16"], "uint16"),
                          ([str(path), "--separator", "no such token"], "not a token"),
                          ([str(path), "--threads", "0"], "num_threads")]:
        assert main(["encode-files", *argv, "-o", str(tmp_path / "x.bin")]) == 1
        assert message in capsys.readouterr().err
    assert not (tmp_path / "x.bin").exists()
    # bad arguments: 2
    for bad in ("-1", "nan", "0"):
        assert main(["encode-files", str(path), "-o", str(tmp_path / "x.bin"), "--buffer-mb", bad]) == 2
        assert "--buffer-mb" in capsys.readouterr().err
    assert main(["encode-files", str(path)]) == 2  # no -o
    assert main(["encode-files", "--help"]) == 0
    assert "default: 64" in capsys.readouterr().out


def test_save_writes_the_same_layout(small, tmp_path):
    path = write(tmp_path, "a.txt", "\n\n".join(TEXTS))
    ids, offsets = small.encode_files(path, split_on="\n\n")
    corpus.save(tmp_path / "saved.bin", ids, offsets)
    small.encode_files(path, tmp_path / "direct.bin", split_on="\n\n")
    for suffix in ("", ".offsets"):  # the manifests differ only in the names they hold
        assert ((tmp_path / f"saved.bin{suffix}").read_bytes()
                == (tmp_path / f"direct.bin{suffix}").read_bytes())
    with pytest.raises(ValueError, match="uint16 or uint32"):
        corpus.save(tmp_path / "x.bin", ids.astype(np.int64), offsets)
    with pytest.raises(ValueError, match="offsets"):
        corpus.save(tmp_path / "x.bin", ids, offsets[:-1])
    with pytest.raises(ValueError, match="offsets"):
        corpus.save(tmp_path / "x.bin", ids, offsets[::-1])
    assert not (tmp_path / "x.bin").exists()


def test_many_small_files_are_joined_into_batches(cl100k, tmp_path):
    texts = [("\n\n".join(TEXTS[i % 4:]) + "\n\n" * (i % 3))[: 40 + 37 * i] for i in range(60)]
    paths = [write(tmp_path, f"{i:02d}.txt", t) for i, t in enumerate(texts)]
    docs = [d for t in texts for d in t.split("\n\n")]
    for keep_empty in (False, True):
        for buffer_bytes in (300, 5_000, 1 << 20):
            assert_result(cl100k.encode_files(paths, split_on="\n\n", keep_empty=keep_empty,
                                              buffer_bytes=buffer_bytes, num_threads=2),
                          expected(cl100k, docs, keep_empty=keep_empty))
