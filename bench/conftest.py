"""pytest-benchmark suite: `python -m pytest bench/ --benchmark-only` (see bench/README.md).

The benchmark file is named `bench_peers.py`, so the normal test run (testpaths = tests) never
collects it; the hook below collects `bench_*.py` when `bench/` is passed explicitly.  One
thread everywhere a pool reads the environment (the Rust peers size theirs at start-up), set
here before any peer is imported.
"""
from __future__ import annotations

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
for _p in (HERE, os.path.dirname(HERE)):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import common  # noqa: E402

os.environ.update(common.thread_env(1))


def pytest_collect_file(file_path, parent):
    # a file named on the command line is collected by pytest itself: don't collect it twice
    if (file_path.suffix == ".py" and file_path.name.startswith("bench_")
            and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)
    return None
