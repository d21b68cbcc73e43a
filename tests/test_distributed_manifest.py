"""load_encoded reads only what its manifest names inside its folder, and a malformed
manifest is a ValueError naming it (no Dask needed: the manifest is written here)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from fastbpe import corpus
from fastbpe.distributed import MANIFEST, load_encoded


def _row(name, n_tokens, ends_document=True):
    return {"bin": name, "offsets": f"{name}.offsets", "path": "a.txt", "start": 0, "end": 1,
            "n_tokens": n_tokens, "ends_document": ends_document}


@pytest.fixture
def out(tmp_path):
    """A folder as encode_files_dask leaves it: two shards and the manifest."""
    folder = tmp_path / "out"
    folder.mkdir()
    corpus.save(folder / "shard-00000.bin", np.array([1, 2, 3], dtype=np.uint16), [0, 3])
    corpus.save(folder / "shard-00001.bin", np.array([4, 5], dtype=np.uint16), [0, 2])
    write(folder, [_row("shard-00000.bin", 3, False), _row("shard-00001.bin", 2)])
    return folder


def write(folder, rows, **fields):
    manifest = {"format": "fastbpe-encoded-shards", "version": 1, "encoding": "x",
                "dtype": "uint16", "separator": None, "n_tokens": 5, "shards": rows}
    manifest.update(fields)
    (folder / MANIFEST).write_text(json.dumps(manifest))


def test_a_good_manifest_loads(out):
    ids, ends = load_encoded(out)
    assert ids.tolist() == [1, 2, 3, 4, 5] and ends.tolist() == [0, 5]


@pytest.mark.parametrize("name", ["../outside.bin", "/etc/passwd", "sub/shard.bin", "..", "", 7, None])
def test_bin_outside_the_folder_is_refused(out, tmp_path, name):
    corpus.save(tmp_path / "outside.bin", np.array([9], dtype=np.uint16), [0, 1])
    write(out, [_row(name, 1)])
    with pytest.raises(ValueError, match="file name in the manifest's folder"):
        load_encoded(out)


@pytest.mark.parametrize("manifest", [
    "{", "[]", '"text"', json.dumps({"format": "other"}),
])
def test_not_a_manifest(out, manifest):
    (out / MANIFEST).write_text(manifest)
    with pytest.raises(ValueError, match=MANIFEST):
        load_encoded(out)


@pytest.mark.parametrize("fields", [
    {"shards": {"a": 1}}, {"shards": None}, {"dtype": "int8"}, {"dtype": None}, {"version": 2},
    {"shards": ["shard-00000.bin"]}, {"shards": [{"bin": "shard-00000.bin"}]},
    {"shards": [_row("shard-00000.bin", "3")]}, {"shards": [_row("shard-00000.bin", -1)]},
    {"shards": [{**_row("shard-00000.bin", 3), "ends_document": "yes"}]},
])
def test_malformed_manifest_is_a_value_error(out, fields):
    write(out, [_row("shard-00000.bin", 3)], **fields)
    with pytest.raises(ValueError, match=MANIFEST):
        load_encoded(out)
