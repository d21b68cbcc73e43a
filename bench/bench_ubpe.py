"""UBPE: fastbpe.ubpe against the reference `ubpe-native` 0.3.0 (pure Python) on tinyshakespeare.

Documents are the corpus's paragraphs (split at blank lines), the alphabet its characters, the
split regex words with their leading space.  For UBPE and UBPEClassic we time (CPU seconds) `fit`
(n_tokens 1024, n_candidates 50) and `encode` of every document (UBPE: top_n 1 and 3), check that both
libraries give the same model (dumps JSON) and the same encodings (ids and weights), and print
the table; it also replaces the `<!-- ubpe:start -->`...`<!-- ubpe:end -->` section of
bench/RESULTS.md.  The reference runs in a Python >= 3.12 subprocess (tests/datasources.py finds
or installs it) and times itself inside that process, so start-up and JSON are not counted; its
results are kept in bench/.work/ for the same cases (`--fresh-reference` re-runs it).

    python bench/bench_ubpe.py                  # whole corpus (~1.1 MB); the reference takes minutes
    python bench/bench_ubpe.py --kb 200 --no-write
"""
from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import datasources as ds  # noqa: E402
import fastbpe.ubpe as ours  # noqa: E402
from fastbpe.formats.atomic import atomic_write_text  # noqa: E402
from ubpe_reference_runner import run_case  # noqa: E402

START, END = "<!-- ubpe:start -->", "<!-- ubpe:end -->"
REGEX = r" ?\w+| ?[^\w\s]+|\s+"


def documents(kb: float | None) -> list:
    path = ds.corpus_path("tinyshakespeare")
    if not path.is_file():
        sys.exit(f"missing {path} (set FASTBPE_SHARED)")
    with lzma.open(path, "rt", encoding="utf-8") as f:
        text = f.read()
    if kb:
        text = text[: int(kb * 1000)]
    return [p for p in text.split("\n\n") if p.strip()]


def cases(docs: list, n_tokens: int) -> list:
    alphabet = sorted(set("".join(docs)))
    init = {"alphabet": alphabet, "n_tokens": n_tokens, "regex_str": REGEX}
    fit = {"n_candidates": 50, "quiet": True}
    return [
        {"cls": "UBPE", "init": init, "fit": fit, "corpus": docs, "encode": docs, "top_n": [1]},
        {"cls": "UBPE", "init": init, "fit": fit, "corpus": docs, "encode": docs, "top_n": [3]},
        {"cls": "UBPEClassic", "init": init, "fit": fit, "corpus": docs, "encode": docs, "top_n": [1]},
    ]


def reference_results(todo: list, fresh: bool) -> tuple:
    """The reference's results and wall time; kept in bench/.work/ (git-ignored) per set of cases,
    since a whole-corpus reference run takes many minutes."""
    runner = ds.UBPE_RUNNER.read_bytes()
    key = hashlib.sha256(runner + json.dumps(todo, sort_keys=True).encode()).hexdigest()[:16]
    cache = HERE / ".work" / f"ubpe_reference_{key}.json"
    if cache.exists() and not fresh:
        saved = json.loads(cache.read_text(encoding="utf-8"))
        return saved["results"], saved["wall"]
    t0 = time.perf_counter()
    results = ds.run_ubpe_reference(todo, timeout=24 * 3600)
    wall = time.perf_counter() - t0
    cache.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(cache, json.dumps({"results": results, "wall": wall}))
    return results, wall


def comparable(result: dict) -> tuple:
    dump = json.loads(result["dump"])
    return dump, json.loads(json.dumps(result["encodings"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kb", type=float, default=None, help="use only the first KB of the corpus")
    ap.add_argument("--n-tokens", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3, help="fastbpe runs per case; the best counts")
    ap.add_argument("--fresh-reference", action="store_true",
                    help="re-run the reference even if bench/.work/ has its results for these cases")
    ap.add_argument("--no-write", action="store_true", help="print only; leave RESULTS.md alone")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    args = ap.parse_args(argv)

    docs = documents(args.kb)
    todo = cases(docs, args.n_tokens)
    n_bytes = sum(len(d.encode()) for d in docs)
    load = os.getloadavg()[0]
    print(f"{len(docs)} documents, {n_bytes / 1e6:.2f} MB; running the reference...", file=sys.stderr)
    reference, ref_wall = reference_results(todo, fresh=args.fresh_reference)

    rows = []
    for case, ref in zip(todo, reference):
        if "error" in ref:
            sys.exit(f"the reference failed on {case['cls']}: {ref['error']}")
        best = None
        for _ in range(args.repeat):
            mine = run_case(case, ours)
            if best is None or mine["fit_cpu"] + mine["encode_cpu"] < best["fit_cpu"] + best["encode_cpu"]:
                best = mine
        same = comparable(best) == comparable(ref)
        name = case["cls"] + (f" top_n={case['top_n'][0]}" if case["cls"] == "UBPE" else "")
        rows.append((name, ref["fit_cpu"], best["fit_cpu"], ref["encode_cpu"], best["encode_cpu"], same))

    lines = [
        START,
        "## UBPE: fastbpe.ubpe vs ubpe-native 0.3.0 (CPU seconds; higher speed-up is better)",
        "",
        f"tinyshakespeare{f' (first {args.kb:g} kB)' if args.kb else ''}: {len(docs)} paragraphs, "
        f"{n_bytes / 1e6:.2f} MB; alphabet = its characters, regex `{REGEX}`, n_tokens {args.n_tokens}, "
        f"n_candidates 50; encode = every paragraph.  Times are CPU seconds (`time.process_time()` "
        f"around `fit` and around all the encodes, in each library's process; both run on one core), "
        f"which a shared, loaded machine disturbs less than wall time.  \"identical\": same dumps() "
        f"JSON and the same encodings (ids and float weights).",
        "",
        "| model | fit ubpe-native | fit fastbpe | fit speed-up | encode ubpe-native | encode fastbpe | encode speed-up | identical |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, rf, mf, re_, me, same in rows:
        lines.append(f"| {name} | {rf:.2f} | {mf:.3f} | {rf / mf:.0f}x | {re_:.2f} | {me:.3f} | "
                     f"{re_ / me:.0f}x | {'yes' if same else 'NO'} |")
    lines += [
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores, load average {load:.1f} at the start; "
        f"fastbpe best of {args.repeat} on Python {platform.python_version()}, the reference once on "
        f"its own Python >= 3.12 (whole reference run {ref_wall:.0f} s).",
        f"Command: `python bench/bench_ubpe.py{f' --kb {args.kb:g}' if args.kb else ''}`",
        END,
    ]
    section = "\n".join(lines)
    print(section)
    if not args.no_write:
        out = Path(args.out)
        old = out.read_text(encoding="utf-8") if out.exists() else "# fastbpe benchmark results\n"
        if START in old and END in old:
            head, rest = old.split(START, 1)
            new = head + section + rest.split(END, 1)[1]
        else:
            new = old.rstrip("\n") + "\n\n" + section + "\n"
        atomic_write_text(out, new)
    return 0 if all(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
