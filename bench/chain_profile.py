"""A tokenizer.json's Split regexes as one scanner program, built-in kinds bypassed: what any
regex that is not a built-in kind pays (the generic automaton and chain), on one corpus part.

    python bench/chain_profile.py deepseek-v3 --corpus code
    valgrind --tool=callgrind --instr-atstart=no python bench/chain_profile.py deepseek-v3 --callgrind

`deepseek-v3` is a folder of the shared data's vocab/hf/ (or a path to a tokenizer.json); its
pre-tokenizer's Split steps (Isolated; in order) become the levels of one chain, compiled with
Oniguruma's classes as the file's loader does, but never replaced by a built-in scanner kind.
With `--whole` the scanner kind the loaded file encodes with is cut instead (Digits, Punctuation,
built-in levels and all: what the encode kernel's scan pays for that file).  `--levels k` keeps
the first k Split levels only (the chain cut after level k; a level's cost is the difference
between k and k - 1).
The piece ends of the corpus's second models-section part (0.5 MB) are cut once after a short
warm-up; with `--callgrind` only that scan is instrumented.  Not a test: no timing in tests/.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # common.py, and fastbpe built in place
import common as c  # noqa: E402


def split_levels(path: str) -> list:
    from fastbpe.plan import Level
    node = json.load(open(path, encoding="utf-8"))["pre_tokenizer"] or {}
    steps = node.get("pretokenizers", [node])
    pats = [s["pattern"]["Regex"] for s in steps if s.get("type") == "Split" and "Regex" in s.get("pattern", {})]
    if not pats:
        raise SystemExit(f"{path}: no Split regex in its pre-tokenizer")
    return [Level(p, "oniguruma") for p in pats]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a folder name under vocab/hf/ of the shared data, or a tokenizer.json path")
    ap.add_argument("--corpus", choices=sorted(c.CORPORA), default="English")
    ap.add_argument("--callgrind", action="store_true", help="instrument the scan only")
    ap.add_argument("--whole", action="store_true", help="the loaded file's own scanner kind, every level")
    ap.add_argument("--levels", type=int, metavar="K", help="the first K Split levels only (not with --whole)")
    a = ap.parse_args(argv)
    if a.levels is not None and (a.whole or a.levels < 1):
        raise SystemExit("--levels K needs K >= 1 and no --whole")
    path = a.model if a.model.endswith(".json") else c.model_files().get(a.model)
    if path is None:
        raise SystemExit(f"no tokenizer.json for {a.model!r}")
    from fastbpe import _pretokenize
    from fastbpe.pretokenize import chain_kind
    if a.whole:
        import fastbpe
        tok = fastbpe.Tokenizer.from_file(path)
        kind, why = tok._kind, f"engine {tok.engine}"
    else:
        levels = split_levels(path)
        if a.levels is not None and a.levels > len(levels):
            raise SystemExit(f"{path} has {len(levels)} Split levels, not {a.levels}")
        kind, why = chain_kind(levels[:a.levels])
    if kind < 0:
        raise SystemExit(f"not a scanner program: {why}")
    data = c.parts(c.CORPORA[a.corpus])[1].encode("utf-8")
    _pretokenize.piece_boundaries(data[:4096], kind)
    if a.callgrind:
        c.callgrind_instrument(True)
    t0 = time.perf_counter()
    ends = _pretokenize.piece_boundaries(data, kind)
    dt = time.perf_counter() - t0
    if a.callgrind:
        c.callgrind_instrument(False)
    print(f"{a.model} {a.corpus}: {len(data) / 1e6:.2f} MB, {len(ends)} pieces, {len(data) / 1e6 / dt:.1f} MB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
