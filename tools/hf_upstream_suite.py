"""Run Hugging Face tokenizers' own Python tests against `fastbpe.Tokenizer`.

    python tools/hf_upstream_suite.py /path/to/huggingface/tokenizers [pytest args...]

The tests are read from that checkout (bindings/python/tests; nothing of theirs lives in this
repo), copied to a temporary folder with a conftest that makes `tokenizers.Tokenizer`,
`tokenizers.AddedToken`, `tokenizers.Encoding` and `tokenizers.decoders.DecodeStream`
fastbpe's before the test modules import them.  HF's models, normalizers, pre-tokenizers,
processors and decoders stay HF's: fastbpe's Tokenizer takes them as it takes their JSON.

Only the tests that apply to a BPE model without network access run (SELECTED below);
the others build Unigram/WordPiece models, train, or download files.  Left out on purpose:
test_has_expected_type_and_methods (asserts `tokenizer.model` is a Rust `tokenizers.models.Model`)
and test_multiprocessing_with_parallelism (asserts that a forked child *hangs* when Rust's
thread pool was used before the fork; fastbpe's child finishes).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

# test ids (relative to bindings/python/tests) that concern a BPE Tokenizer offline
SELECTED = [
    "bindings/test_tokenizer.py::TestAddedToken",
    "bindings/test_tokenizer.py::TestTokenizer::test_add_tokens",
    "bindings/test_tokenizer.py::TestTokenizer::test_add_tokens_with_normalizer",
    "bindings/test_tokenizer.py::TestTokenizer::test_normalizer_change_refreshes_added_tokens",
    "bindings/test_tokenizer.py::TestTokenizer::test_add_special_tokens",
    "bindings/test_tokenizer.py::TestTokenizer::test_encode",
    "bindings/test_tokenizer.py::TestTokenizer::test_truncation",
    "bindings/test_tokenizer.py::TestTokenizer::test_padding",
    "bindings/test_tokenizer.py::TestTokenizer::test_decode",
    "bindings/test_tokenizer.py::TestTokenizer::test_decode_stream_copy_and_prefix_ids",
    "bindings/test_tokenizer.py::TestTokenizer::test_get_vocab",
    "bindings/test_tokenizer.py::TestTokenizer::test_get_vocab_size",
    "bindings/test_tokenizer.py::TestTokenizer::test_post_process",
    "bindings/test_tokenizer.py::TestTokenizer::test_multithreaded_concurrency",
    "bindings/test_tokenizer.py::TestTokenizer::test_decode_special",
    "bindings/test_tokenizer.py::TestTokenizer::test_weakref_support",
    "bindings/test_tokenizer.py::TestTokenizer::test_weakref_with_multiple_references",
    "bindings/test_tokenizer.py::TestTokenizer::test_setting_to_none",
    "test_serialization.py::TestSerialization::test_repr_str",
    "bindings/test_tokenizer.py::TestTokenizerRepr",
]

CONFTEST = '''
import pytest
import tokenizers
import tokenizers.decoders
import fastbpe.hf as fhf

tokenizers.Tokenizer = fhf.Tokenizer
tokenizers.AddedToken = fhf.AddedToken
tokenizers.Encoding = fhf.Encoding
tokenizers.decoders.DecodeStream = fhf.DecodeStream


def pytest_configure(config):
    config.addinivalue_line("markers", "network: needs the Hugging Face Hub")
    config.addinivalue_line("markers", "asyncio: async test")
'''


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    checkout, extra = argv[0], argv[1:]
    tests = os.path.join(checkout, "bindings", "python", "tests")
    if not os.path.isdir(tests):
        print(f"{tests}: not a folder (give the root of a huggingface/tokenizers checkout)", file=sys.stderr)
        return 2
    repo_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with tempfile.TemporaryDirectory() as tmp:
        python = os.path.join(tmp, "python")  # their utils.py checks the cwd ends with "python"
        shutil.copytree(tests, os.path.join(python, "tests"))
        with open(os.path.join(python, "conftest.py"), "w") as f:
            f.write(CONFTEST)
        ids = [f"tests/{t}" for t in SELECTED]
        env = dict(os.environ, PYTHONPATH=repo_root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", python,
               "-m", "not network", *ids, *extra]
        return subprocess.call(cmd, cwd=python, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
