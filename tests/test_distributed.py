"""fastbpe.distributed on a real dask.distributed LocalCluster (2 worker processes).

Counting on the cluster must equal counting on one machine, piece for piece, so the
vocabulary equals `train_files`'; encoding must give the ids of a local encode; a worker
that dies mid-job must not leave a partial result.
"""
from __future__ import annotations

import os
import pickle
import random

import pytest

pytest.importorskip("distributed", reason="the [dask] extra (dask[distributed]) is not installed")

import dask  # noqa: E402
import dask.bag as db  # noqa: E402
import distributed  # noqa: E402
import numpy as np  # noqa: E402

import datasources as ds  # noqa: E402
import fastbpe  # noqa: E402
import fastbpe.corpus  # noqa: E402
from fastbpe import trainer  # noqa: E402
from fastbpe.distributed import (  # noqa: E402
    MANIFEST, count_pieces_dask, encode_files_dask, load_encoded, shards_of, train_dask)
from fastbpe.patterns import BY_NAME  # noqa: E402
from fastbpe.shards import plan_shards, read_shard, shard_blocks  # noqa: E402

pytestmark = pytest.mark.dask

# Characters that stress the cut rule: newlines followed by ASCII and Unicode spaces,
# \r\n, multi-byte characters, and (in bytes) invalid UTF-8.
_ALPHABET = ["a", "Bb", " ", "\n", "\r", "\r\n", "\t", "\u3000", "é", "\u2028", "x1",
             "\n ", "\n\n", "'s", "日本", "😀", "123", "!?"]


def _random_bytes(rng: random.Random, n_parts: int) -> bytes:
    data = "".join(rng.choice(_ALPHABET) for _ in range(n_parts)).encode("utf-8")
    if rng.random() < 0.3:
        data = data.replace("é".encode(), b"\xff")  # a byte that is never valid UTF-8
    return data


def _cluster(**config):
    with dask.config.set(config):
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
    return cluster


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def text_files(tmp_path_factory):
    """Generated files (a few hundred KB, adversarial for cuts) and, when the shared data
    is there, slices of two corpora."""
    d = tmp_path_factory.mktemp("dask_texts")
    rng = random.Random(12)
    paths = []
    for i in range(3):
        p = d / f"generated{i}.txt"
        p.write_bytes(_random_bytes(rng, 40_000))
        paths.append(str(p))
    (d / "empty.txt").write_bytes(b"")
    (d / "one_line.txt").write_text("word, " * 20_000)  # no cut point: later shards empty
    paths += [str(d / "empty.txt"), str(d / "one_line.txt")]
    for name in ("tinyshakespeare", "multilingual"):
        if ds.corpus_available(name):
            p = d / f"{name}.txt"
            p.write_text(ds.load_corpus(name, 300_000), encoding="utf-8", newline="")
            paths.append(str(p))
    return paths


def _file_texts(paths):
    for p in paths:
        with open(p, "rb") as f:
            yield f.read().decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------
# shards (no cluster)
# ---------------------------------------------------------------------------------------

def test_shards_tile_the_decoded_file(tmp_path):
    rng = random.Random(3)
    path = tmp_path / "f.txt"
    for _ in range(120):
        data = _random_bytes(rng, rng.randint(0, 50))
        path.write_bytes(data)
        whole = data.decode("utf-8", "replace")
        for blocksize in (1, 2, 3, 7, 64):
            shards = plan_shards(str(path), len(data), blocksize)
            assert "".join(read_shard(s) for s in shards) == whole
            for s in shards:
                blocks = list(shard_blocks(s, block_bytes=3))
                assert "".join(blocks) == read_shard(s)
                # blocks end at cut points: a letter or digit, then whitespace
                assert all(b[-1].isalnum() for b in blocks[:-1])
                assert all(b[0] in " \t\r\n" for b in blocks[1:])


def test_shard_cut_points_keep_pieces_whole(tmp_path):
    """Counting shard by shard equals counting the whole text, for every known pattern."""
    rng = random.Random(5)
    data = _random_bytes(rng, 3000)
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    whole = data.decode("utf-8", "replace")
    for name, pattern in BY_NAME.items():
        expected = trainer.count_pieces([whole], pattern, num_threads=1).to_dict()
        counter = None
        for s in plan_shards(str(path), len(data), 13):  # nearly every cut point is used
            counter = trainer.count_pieces(shard_blocks(s, block_bytes=8), pattern,
                                           counter=counter, num_threads=1)
        assert counter.to_dict() == expected, name


def test_one_line_file_is_cut_between_words(tmp_path):
    path = tmp_path / "line.txt"
    path.write_text("word " * 10_000)
    shards = plan_shards(str(path), path.stat().st_size, 1000)
    texts = [read_shard(s) for s in shards]
    assert "".join(texts) == "word " * 10_000
    assert all(990 <= len(t) <= 1010 for t in texts)
    assert all(len(b) <= 110 for b in shard_blocks(shards[3], block_bytes=100))


def test_file_without_cut_points_is_one_shard(tmp_path):
    path = tmp_path / "line.txt"
    path.write_text("word, " * 10_000)  # whitespace only after punctuation
    shards = plan_shards(str(path), path.stat().st_size, 6000)
    texts = [read_shard(s) for s in shards]
    assert texts[0] == "word, " * 10_000 and not any(texts[1:])


# ---------------------------------------------------------------------------------------
# counting and training on the cluster
# ---------------------------------------------------------------------------------------

def test_count_equals_counting_whole_files(client, text_files):
    expected = trainer.count_pieces(_file_texts(text_files), num_threads=1).to_dict()
    got = count_pieces_dask(text_files, blocksize=50_000)
    assert len(shards_of(text_files, 50_000)) > len(text_files)  # files really are cut
    assert got.to_dict() == expected


@pytest.mark.parametrize("pattern_name", ["gpt2", "gpt4", "o200k"])
def test_train_dask_equals_train_files(client, text_files, pattern_name):
    pattern = BY_NAME[pattern_name]
    options = dict(pattern=pattern, special_tokens=["<|endoftext|>"], min_frequency=2)
    local = trainer.train_files(text_files, 700, num_threads=1, **options)
    dist = train_dask(text_files, 700, blocksize=40_000, **options)
    assert dist.bpe_model.merges.tolist() == local.bpe_model.merges.tolist()
    assert dist._mergeable_ranks == local._mergeable_ranks
    assert dist._special_tokens == local._special_tokens
    # and both equal training on the whole files at once
    whole = trainer.train(_file_texts(text_files), 700, num_threads=1, **options)
    assert whole.bpe_model.merges.tolist() == local.bpe_model.merges.tolist()


def test_custom_pattern_one_shard_per_file(client, text_files):
    pattern = r"\w+|\s+|[^\w\s]+"  # no proven cut points, not one the C scanner knows
    assert len(shards_of(text_files, 30_000, pattern=pattern)) == len(text_files)
    local = trainer.count_pieces(_file_texts(text_files[:2]), pattern, num_threads=1).to_dict()
    assert count_pieces_dask(text_files[:2], pattern, blocksize=30_000).to_dict() == local


def test_bag_of_texts(client):
    rng = random.Random(9)
    texts = [_random_bytes(rng, 200).decode("utf-8", "replace") for _ in range(60)]
    expected = trainer.count_pieces(texts, num_threads=1).to_dict()
    got = count_pieces_dask(db.from_sequence(texts, npartitions=7))
    assert got.to_dict() == expected


def test_min_frequency_prunes_each_shard(client, text_files):
    """The result is, per piece, the sum of its counts over the shards where it was seen
    at least k times."""
    paths, k, blocksize = text_files[:2], 3, 60_000
    expected = {}
    for s in shards_of(paths, blocksize):
        for piece, n in trainer.count_pieces(shard_blocks(s), num_threads=1).items():
            if n >= k:
                expected[piece] = expected.get(piece, 0) + n
    got = count_pieces_dask(paths, blocksize=blocksize, min_frequency=k).to_dict()
    assert got == expected
    exact = count_pieces_dask(paths, blocksize=blocksize).to_dict()
    assert len(got) < len(exact) and all(n <= exact[p] for p, n in got.items())


def test_bad_arguments(client, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("hello\n")
    with pytest.raises(FileNotFoundError, match="no such file"):
        count_pieces_dask([str(path), str(tmp_path / "missing.txt")])
    with pytest.raises(ValueError, match="blocksize"):
        count_pieces_dask([str(path)], blocksize=0)
    with pytest.raises(ValueError, match="min_frequency"):
        count_pieces_dask([str(path)], min_frequency=0)
    with pytest.raises(ValueError, match="invalid split pattern"):
        count_pieces_dask([str(path)], "(")
    with pytest.raises(ValueError, match="no paths"):
        count_pieces_dask([])
    with pytest.raises(TypeError, match="paths"):
        count_pieces_dask([1.5])
    with pytest.raises(TypeError, match="must contain str"):
        count_pieces_dask(db.from_sequence([b"bytes"], npartitions=1))
    with pytest.raises(ValueError, match="vocab_size"):
        train_dask([str(path)], 10)
    with pytest.raises(TypeError, match="client"):
        count_pieces_dask([str(path)], client="tcp://nowhere")


# ---------------------------------------------------------------------------------------
# encoding on the cluster
# ---------------------------------------------------------------------------------------

def _local_encode(enc, paths):
    ids, ends = [], [0]
    for text in _file_texts(paths):
        if text:
            ids += enc.encode_ordinary(text) + [enc.eot_token]
            ends.append(len(ids))
    return ids, ends


def test_encode_files_dask_equals_local_encode(client, text_files, tmp_path):
    enc = fastbpe.get_encoding("cl100k_base")
    assert len(pickle.dumps(enc)) < 100  # by name: each worker rebuilds it from its files
    manifest = encode_files_dask(text_files, enc, tmp_path / "out", blocksize=50_000)
    ids, ends = load_encoded(tmp_path / "out")
    expected_ids, expected_ends = _local_encode(enc, text_files)
    assert ids.dtype == np.dtype("<u4")  # 100k ids do not fit uint16
    assert ids.tolist() == expected_ids
    assert ends.tolist() == expected_ends
    assert manifest["n_tokens"] == len(expected_ids)
    for row in manifest["shards"]:  # each shard pair reads back with corpus.load
        shard_ids, offsets = fastbpe.corpus.load(str(tmp_path / "out" / row["bin"]))
        assert offsets[-1] == row["n_tokens"] == shard_ids.shape[0]
        assert row["offsets"] == row["bin"] + ".offsets"
    assert not [n for n in os.listdir(tmp_path / "out") if n.endswith(".tmp")]


def test_encodings_pickle_small(text_files, tmp_path):
    """What each worker is sent: a name, the merges, or a file path."""
    enc = trainer.train_files(text_files[:2], 2000, num_threads=1)
    n_merges = enc.bpe_model.n_merges
    # the merges (2 x int32) and their counts (int64), not the token bytes
    assert len(pickle.dumps(enc)) < 16 * n_merges + 2000
    fastbpe.save_model(enc, tmp_path / "m.json")
    loaded = fastbpe.load_model(tmp_path / "m.json").to_encoding("mine")
    assert len(pickle.dumps(loaded)) < 600  # the path
    again = pickle.loads(pickle.dumps(loaded))
    assert again._mergeable_ranks == enc._mergeable_ranks


def test_encode_trained_vocabulary_uint16(client, text_files, tmp_path):
    enc = train_dask(text_files[:2], 400, special_tokens=["<|endoftext|>"], blocksize=40_000)
    encode_files_dask(text_files[:2], enc, tmp_path / "out", dtype="uint16", blocksize=40_000)
    ids, ends = load_encoded(tmp_path / "out", mmap=False)
    assert ids.dtype == np.dtype("<u2")
    assert (ids.tolist(), ends.tolist()) == _local_encode(enc, text_files[:2])


def test_encode_bad_arguments(client, text_files, tmp_path):
    enc = fastbpe.get_encoding("cl100k_base")
    with pytest.raises(ValueError, match="more than uint16 holds"):
        encode_files_dask(text_files[:1], enc, tmp_path / "o", dtype="uint16")
    with pytest.raises(ValueError, match="dtype"):
        encode_files_dask(text_files[:1], enc, tmp_path / "o", dtype="int8")
    with pytest.raises(ValueError, match="not a token"):
        encode_files_dask(text_files[:1], enc, tmp_path / "o", separator="<|nope|>")
    with pytest.raises(TypeError, match="Encoding"):
        encode_files_dask(text_files[:1], "cl100k_base", tmp_path / "o")
    assert not (tmp_path / "o" / MANIFEST).exists()


# ---------------------------------------------------------------------------------------
# a worker killed mid-job
# ---------------------------------------------------------------------------------------

def _die_once(text, marker):
    """Kill this worker process the first time any task gets here (marker file)."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return text
    os.close(fd)
    os._exit(1)


def _always_die(text):
    os._exit(1)


def test_worker_killed_mid_job_is_retried(tmp_path):
    """The job finishes with the complete counts: the dead worker's task is rerun."""
    rng = random.Random(1)
    texts = [_random_bytes(rng, 300).decode("utf-8", "replace") for _ in range(40)]
    expected = trainer.count_pieces(texts, num_threads=1).to_dict()
    bag = db.from_sequence(texts, npartitions=8).map(_die_once, str(tmp_path / "died"))
    with _cluster() as cluster, distributed.Client(cluster) as c:
        got = count_pieces_dask(bag, client=c)
    assert (tmp_path / "died").exists()  # a worker really died
    assert got.to_dict() == expected


class _KillOnceWhileCounting(distributed.WorkerPlugin):
    """Kill the worker process when it starts its first counting task (once per marker)."""

    def __init__(self, marker):
        self.marker = marker

    def transition(self, key, start, finish, **kwargs):
        if finish != "executing" or "_file_size" in str(key):
            return
        try:
            os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            return
        os._exit(1)


def test_worker_killed_while_counting_files(text_files, tmp_path):
    """train_dask on files with a worker killed as it starts counting a shard: the
    vocabulary is still exactly train_files'."""
    expected = trainer.train_files(text_files, 500, num_threads=1)
    marker = tmp_path / "died"
    with _cluster() as cluster, distributed.Client(cluster) as c:
        c.register_plugin(_KillOnceWhileCounting(str(marker)))
        got = train_dask(text_files, 500, blocksize=40_000, client=c)
    assert marker.exists()
    assert got._mergeable_ranks == expected._mergeable_ranks


def test_worker_always_killed_fails_cleanly():
    """A task that kills every worker it lands on: the call raises, nothing is returned."""
    bag = db.from_sequence(["some text"] * 4, npartitions=2).map(_always_die)
    with _cluster(**{"distributed.scheduler.allowed-failures": 1}) as cluster, \
            distributed.Client(cluster) as c:
        with pytest.raises(distributed.KilledWorker):
            count_pieces_dask(bag, client=c)


def test_without_a_client_a_local_cluster_is_started_and_closed(text_files):
    """No client in the process: train_dask starts a local cluster and closes it (the
    child process exits, so nothing of the cluster is left behind)."""
    import subprocess
    import sys

    code = (
        "import sys, distributed\n"
        "from fastbpe import trainer\n"
        "from fastbpe.distributed import train_dask\n"
        "paths = sys.argv[1:]\n"
        "enc = train_dask(paths, 300, blocksize=50_000)\n"
        "assert enc._mergeable_ranks == trainer.train_files(paths, 300)._mergeable_ranks\n"
        "try:\n"
        "    distributed.get_client()\n"
        "except ValueError:\n"
        "    print('closed')\n")
    out = subprocess.run([sys.executable, "-c", code, *text_files[:2]], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("closed")
