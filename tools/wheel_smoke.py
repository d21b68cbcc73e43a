"""Smoke test of an installed fastbpe wheel: run from outside the source tree, with only the
wheel and its dependencies installed (no Cython, no compiler).  cibuildwheel runs it on every
wheel it builds (`test-command` in pyproject.toml); tests/test_packaging.py runs it on the
wheel built here.  Exit status 0 and one line per check on success; AssertionError otherwise.

Checks: the installed package (not a source tree) is imported and every kernel is there; the
version agrees with the package metadata and `fastbpe --version`; training, saving and loading
a tokenizer.json made here (no third-party vocabulary) give the same ids; every scan path
this CPU has (SIMD or portable) cuts text identically; a 2-thread batch equals one by one."""
from __future__ import annotations

import glob
import importlib
import importlib.machinery
import importlib.metadata
import os
import subprocess
import sys
import tempfile
import time

START = time.perf_counter()


def check(what: str) -> None:
    print(f"ok  {what}  ({time.perf_counter() - START:.2f} s)", flush=True)


import fastbpe  # noqa: E402  (after START: the import is part of what is timed)

package_dir = os.path.dirname(os.path.abspath(fastbpe.__file__))
assert not os.path.exists(os.path.join(package_dir, os.pardir, "setup.py")), (
    f"imported fastbpe from a source tree ({package_dir}), not the installed wheel")
check(f"import fastbpe from {package_dir}")

kernels = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(package_dir, "*.pyx")))
assert kernels, "the wheel carries no .pyx sources to list the kernels from"
for name in kernels:
    module = importlib.import_module(f"fastbpe.{name}")
    assert module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)), (
        f"fastbpe.{name} is not a compiled extension: {module.__file__}")
check(f"{len(kernels)} compiled kernels import")

version = importlib.metadata.version("fastbpe")
assert fastbpe.__version__ == version, (fastbpe.__version__, version)
out = subprocess.run([sys.executable, "-m", "fastbpe", "--version"], capture_output=True, text=True)
assert out.returncode == 0 and out.stdout.strip() == f"fastbpe {version}", (out.stdout, out.stderr)
check(f"version {version}: fastbpe.__version__, metadata and `fastbpe --version` agree")

texts = ["The quick brown fox jumps over the lazy dog. 1234 + 5678 = 6912!\n",
         "def encode(self, text):\n    return [ord(c) for c in text]  # naïve\n",
         "Grüße aus Köln — 東京タワー and Москва; emoji 🙂🙂, tabs\tand  spaces."] * 40
enc = fastbpe.train(texts, vocab_size=400, special_tokens=["<|endoftext|>"])
sample = "".join(texts[:3]) + "<|endoftext|>unseen words: zebra, Zürich, 42!"
ids = enc.encode(sample, allowed_special="all")
assert enc.decode(ids) == sample
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "tokenizer.json")
    fastbpe.save_model(enc, path)
    tok = fastbpe.Tokenizer.from_file(path)
    encoding = tok.encode(sample)
assert encoding.ids == ids, "tokenizer.json loaded back gives other ids than the trained encoding"
assert tok.decode(encoding.ids, skip_special_tokens=False) == sample
check(f"train, save and load a tokenizer.json: {len(ids)} ids, decoded back")

from fastbpe import _pretokenize  # noqa: E402  (the scan-path switch, for this check only)

paths = list(dict.fromkeys(_pretokenize.use_scanner(name) for name in ("char", "swar", "sse2", "avx2")))
try:
    cut = {}
    for name in paths:
        _pretokenize.use_scanner(name)
        cut[name] = [enc.encode_ordinary(text * 5) for text in texts[:3]]
finally:
    _pretokenize.use_scanner("auto")
assert all(c == cut["char"] for c in cut.values()), f"scan paths disagree: {sorted(cut)}"
check(f"scan paths {', '.join(paths)} give identical ids (auto: {_pretokenize.scanner_in_use()})")

batch = enc.encode_ordinary_batch(texts, num_threads=2)
assert batch == [enc.encode_ordinary(t) for t in texts]
check("a 2-thread batch equals one call per text")
