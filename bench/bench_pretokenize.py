"""Pre-tokenizing alone: the C scanner against regex.findall, per split pattern.

    python -m pytest bench/bench_pretokenize.py              # pytest-benchmark tables
    python bench/bench_pretokenize.py [--mb 2]               # a plain MB/s table

`python bench/compare.py` writes the same measurement (`measure` below), on the slices its
encode table uses, into bench/RESULTS.md.

Texts: slices of shared/data/corpus (English: large_en, code, multilingual) when present,
else generated text of the same flavours.  Throughput is MB of UTF-8 per second, one core.
"""
from __future__ import annotations

import lzma
import os
import random
import sys
import time
from pathlib import Path

import regex

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fastbpe import _pretokenize as pt  # noqa: E402
from fastbpe import patterns as P  # noqa: E402

PATTERNS = P.BY_NAME
CORPUS_FILES = {"english": "large_en", "code": "code", "multilingual": "multilingual"}
MB = float(os.environ.get("FASTBPE_BENCH_MB", "1"))


def _corpus_dir():
    for c in (os.environ.get("FASTBPE_CORPUS_DIR"), ROOT.parent / "shared" / "data" / "corpus", "/work/shared/data/corpus"):
        if c and Path(c).is_dir():
            return Path(c)
    return None


def _generated(kind: str, nbytes: int) -> str:
    rng = random.Random(0)
    if kind == "english":
        words = "the of and to in a is that it was for on are as with his they I at be this have from".split()
        words += ["don't", "It's", "we'll", "Hello,", "world.", "1984", "3.14", "(see", "below)"]
    elif kind == "code":
        words = ["def", "return", "self.x", "=", "==", "(a,", "b):", "{", "}", "//", "#", "0x1F", "i++;", "\n    ", "\n\n", "\t"]
    else:
        words = ["Привет", "мир", "中文字符", "日本語の", "한국어", "العربية", "हिन्दी", "ελληνικά", "😀", "über", "Straße", "١٢٣"]
    out, size = [], 0
    while size < nbytes:
        w = rng.choice(words)
        out.append(w)
        out.append(rng.choice(" \n") if rng.random() < 0.1 else " ")
        size += len(w.encode()) + 1
    return "".join(out)


def load_text(kind: str, mb: float = MB) -> str:
    nbytes = int(mb * 1_000_000)
    d = _corpus_dir()
    if d is not None and (d / (CORPUS_FILES[kind] + ".txt.xz")).exists():
        with lzma.open(d / (CORPUS_FILES[kind] + ".txt.xz"), "rt", encoding="utf-8") as f:
            text = f.read(nbytes)  # characters; trimmed to about nbytes bytes below
        data = text.encode()[:nbytes]
        return data.decode("utf-8", "ignore")
    return _generated(kind, nbytes)


_TEXTS: dict = {}


def text_for(kind: str) -> str:
    if kind not in _TEXTS:
        _TEXTS[kind] = load_text(kind)
    return _TEXTS[kind]


# ---------------------------------------------------------------------------------------
# pytest-benchmark
# ---------------------------------------------------------------------------------------

try:
    import pytest
except ImportError:  # pragma: no cover - plain script use
    pytest = None

if pytest is not None:

    @pytest.mark.parametrize("corpus", list(CORPUS_FILES))
    @pytest.mark.parametrize("pattern", list(PATTERNS))
    @pytest.mark.parametrize("impl", ["scanner", "regex"])
    def test_pretokenize(benchmark, impl, pattern, corpus):
        text = text_for(corpus)
        data = text.encode()
        benchmark.group = "%s-%s" % (pattern, corpus)
        benchmark.extra_info["bytes"] = len(data)
        if impl == "scanner":
            kind = pt.pattern_kind(PATTERNS[pattern])
            result = benchmark(pt.piece_boundaries, data, kind)
            n = len(result)
        else:
            rx = regex.compile(PATTERNS[pattern])
            result = benchmark.pedantic(rx.findall, args=(text,), rounds=3, iterations=1)
            n = len(result)
        benchmark.extra_info["pieces"] = n
        if benchmark.stats is not None:  # None under --benchmark-disable
            benchmark.extra_info["MB/s"] = round(len(data) / benchmark.stats.stats.min / 1e6, 1)


# ---------------------------------------------------------------------------------------
# Plain table
# ---------------------------------------------------------------------------------------


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def measure(text: str, pat_str: str, repeat_scan: int = 7, repeat_regex: int = 2) -> dict:
    """Best times (s) of the C scanner's piece_boundaries (ends only), of _pretokenize.split
    (the pieces as a list of str, like findall) and of regex.findall on `text`, after checking
    that split() gives exactly regex.findall's pieces.  Keys: bytes, pieces, scan, split,
    regex, same (False when the pieces differ; the times are then None)."""
    data = text.encode()
    kind = pt.pattern_kind(pat_str)
    if kind < 0:
        raise ValueError("no C scanner for this pattern")
    rx = regex.compile(pat_str)
    want = rx.findall(text)  # also the warm-up
    got = pt.split(text, kind)
    out = {"bytes": len(data), "pieces": len(want), "same": got == want,
           "scan": None, "split": None, "regex": None}
    del got, want
    if out["same"]:
        out["scan"] = _best(lambda: pt.piece_boundaries(data, kind), repeat_scan)
        out["split"] = _best(lambda: pt.split(text, kind), max(1, repeat_scan // 2))
        out["regex"] = _best(lambda: rx.findall(text), repeat_regex)
    return out


def main(argv):
    mb = float(argv[argv.index("--mb") + 1]) if "--mb" in argv else MB
    print("regex %s, tables from regex %s (Unicode %s) on Unicode %s (%s); %.1f MB per text; best of runs, one core"
          % (regex.__version__, pt.REGEX_VERSION, pt.REGEX_UNICODE_VERSION, pt.UNICODE_VERSION, pt.UNICODE_SOURCE, mb))
    print("%-8s %-13s %10s %10s %10s %8s %9s" % (
        "pattern", "text", "scan MB/s", "split MB/s", "regex MB/s", "speedup", "pieces"))
    for corpus in CORPUS_FILES:
        text = load_text(corpus, mb)
        for name, pat in PATTERNS.items():
            m = measure(text, pat)
            if not m["same"]:
                # (or the text has characters on which the tables follow tiktoken's Unicode
                # version rather than regex's: tools/tiktoken_unicode_overrides.txt)
                print("%-8s %-13s pieces differ from regex.findall" % (name, corpus))
                continue
            n = m["bytes"] / 1e6
            print("%-8s %-13s %10.1f %10.1f %10.1f %7.0fx %9d" % (
                name, corpus, n / m["scan"], n / m["split"], n / m["regex"],
                m["regex"] / m["scan"], m["pieces"]))


if __name__ == "__main__":
    main(sys.argv[1:])
