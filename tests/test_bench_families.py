"""bench/families.py --build-only --dir D: a later run for other families removes the files it
wrote for the earlier ones (the models section measures every tokenizer.json in D), and never a
file it did not write."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if not (BENCH / "families.py").is_file():   # an unpacked sdist carries tests/ but not bench/
    pytest.skip("bench/ is not here (an sdist has no benchmarks)", allow_module_level=True)
sys.path.insert(0, str(BENCH))

import families  # noqa: E402


def _fake_build(names, out_dir):
    built = {}
    for name in names:
        path = out_dir / name / "tokenizer.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
        built[name] = str(path)
    return built


def test_build_only_removes_only_what_it_wrote(tmp_path, monkeypatch):
    monkeypatch.setattr(families, "build", _fake_build)
    mine = tmp_path / "my-model" / "tokenizer.json"
    theirs = tmp_path / "gemma" / "tokenizer.json"    # a family's name, but not written by the script
    for path in (mine, theirs):
        path.parent.mkdir()
        path.write_text("keep")
    (tmp_path / "notes.txt").write_text("keep")
    assert families.main(["--families", "gpt-j,roberta", "--build-only", "--dir", str(tmp_path)]) == 0
    assert families.main(["--families", "roberta", "--build-only", "--dir", str(tmp_path)]) == 0
    assert not (tmp_path / "gpt-j").exists()
    assert (tmp_path / "roberta" / "tokenizer.json").is_file()
    assert mine.read_text() == theirs.read_text() == (tmp_path / "notes.txt").read_text() == "keep"
