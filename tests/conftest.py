"""Shared fixtures: data locations, (fastbpe, tiktoken) encoding pairs, corpora.

* The shared data dir is `$FASTBPE_SHARED` or `<repo root>/../shared`.  When its vocab dir
  exists, `FASTBPE_DATA_DIR` points there for the whole session (unless already set), so
  fastbpe finds r50k/p50k/gpt2 without a download.
* `pair` gives `(fastbpe.get_encoding(name), reference)` for every named encoding whose files
  exist locally; the reference is tiktoken's own constructor fed the official files, so no
  download is needed (see `datasources.py`).  Missing data is a skip with the reason.
* `corpus(name, max_bytes=None)` loads an xz corpus once per session.
* Compiled split programs and Oniguruma class answers go to a cache folder of this session
  (`FASTBPE_CACHE_DIR`, unless already set): a run neither reads what an older build left in
  ~/.cache/fastbpe nor leaves anything there.
"""
from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import datasources as ds  # noqa: E402

if ds.VOCAB_DIR.is_dir():
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))

if "FASTBPE_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    _session_cache = tempfile.mkdtemp(prefix="fastbpe-test-cache-")
    os.environ["FASTBPE_CACHE_DIR"] = _session_cache
    atexit.register(shutil.rmtree, _session_cache, ignore_errors=True)


# tests that ask for threads get them however small their batch (fastbpe.threads.batch_threads
# runs a small batch on the calling thread; test_small_batches_run_on_the_calling_thread checks that)
from fastbpe import threads as _threads  # noqa: E402

_threads.SMALL_BATCH_CHARS = 0


def regex_oracle_mismatch() -> str | None:
    """Why tests whose oracle is the `regex` package cannot run here, or None: the scanner's
    Unicode tables and their override list were made from one regex version (the [test] pin);
    another version classifies newer characters otherwise, and those tests would fail (or
    pass) for that reason alone."""
    import regex

    from fastbpe import _pretokenize

    if regex.__version__ != _pretokenize.REGEX_VERSION:
        return (f"oracle is the regex package: the scanner's tables come from regex "
                f"{_pretokenize.REGEX_VERSION} (the [test] pin), installed is {regex.__version__}; "
                "pip install -e '.[test]', or refresh the tables (docs/pretokenize.md)")
    return None


def pytest_runtest_setup(item):
    # the one version gate of every test whose oracle is regex (marked regex_oracle, or fuzz)
    if item.get_closest_marker("regex_oracle") or item.get_closest_marker("fuzz"):
        why = regex_oracle_mismatch()
        if why is not None:
            pytest.skip(why)


def pytest_report_header(config):
    have = ds.available_encodings()
    return [f"regex oracle: {regex_oracle_mismatch() or 'the pinned version'}",
        f"fastbpe shared data: {ds.SHARED} ({'found' if ds.SHARED.is_dir() else 'absent'})",
        f"FASTBPE_DATA_DIR={os.environ.get('FASTBPE_DATA_DIR', '')}",
        f"encodings with local vocab: {', '.join(have) or 'none'}",
    ]


def require_encoding(name: str):
    """The tiktoken reference for `name`, or skip saying which files were looked for."""
    reason = ds.missing_reason(name)
    if reason is not None:
        pytest.skip(reason)
    return ds.reference_encoding(name)


def encoding_pair(name: str):
    import fastbpe

    tt = require_encoding(name)
    return fastbpe.get_encoding(name), tt


@pytest.fixture(params=ds.ALL_ENCODINGS)
def enc_name(request):
    return request.param


@pytest.fixture
def pair(enc_name):
    """(fastbpe encoding, tiktoken reference) for every named encoding."""
    return encoding_pair(enc_name)


# The four distinct (pattern, vocab) combinations; the other names only add special tokens.
DISTINCT_BPE = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]


@pytest.fixture(params=DISTINCT_BPE)
def bpe_pair(request):
    """(fastbpe, tiktoken) for each distinct pattern+vocab, for the expensive tests."""
    return encoding_pair(request.param)


@pytest.fixture
def corpus():
    def load(name: str, max_bytes: int | None = None) -> str:
        if not ds.corpus_available(name):
            pytest.skip(f"corpus {ds.corpus_path(name)} not found (shared data absent)")
        return ds.load_corpus(name, max_bytes)

    return load
