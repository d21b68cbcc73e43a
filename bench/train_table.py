"""Training benchmark: fastbpe vs rustbpe, bpeasy and HF tokenizers, side by side.

Each (trainer, text size, vocab size) runs in its own process (``bench/bench_train.py``);
we report its training wall time and the peak resident memory of that process
(ru_maxrss from ``os.wait4``; it includes the text held in memory, the same for all --
the ``baseline`` row is a process that only loads the text).  Texts are the first N MB
of ``large_en.txt.xz``.  Writes the train section of ``bench/RESULTS.md`` (other sections are kept).

    python bench/train_table.py                                # 10/100/250 MB x 8k/32k/100k
    python bench/train_table.py --sizes 10 --vocab 8000 32000  # a few minutes
    python bench/train_table.py --minbpe                       # also minbpe-compatible training
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import lzma
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, ".work")
CORPUS = os.environ.get("FASTBPE_CORPUS", "/work/shared/data/corpus")
sys.path.insert(0, ROOT)
MODULES = {"fastbpe": "fastbpe", "fastbpe-regex": "fastbpe", "rustbpe": "rustbpe", "bpeasy": "bpeasy", "hf": "tokenizers"}


def text_slice(mb: int) -> str:
    """bench/.work/large_en_<mb>MB.txt, cut from large_en.txt.xz (made once)."""
    os.makedirs(WORK, exist_ok=True)
    path = os.path.join(WORK, f"large_en_{mb}MB.txt")
    if os.path.exists(path):
        return path
    src = os.path.join(CORPUS, "large_en.txt.xz")
    if not os.path.exists(src):
        sys.exit(f"missing {src} (set FASTBPE_CORPUS)")
    want = mb * 1_000_000
    with lzma.open(src, "rb") as f:
        data = f.read(want)
    if len(data) < want:
        print(f"note: corpus has only {len(data) / 1e6:.0f} MB; using all of it", file=sys.stderr)
    # don't end inside a UTF-8 character
    data = data.decode("utf-8", errors="ignore").encode("utf-8")
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


def run_one(trainer: str, path: str, vocab: int, timeout: float) -> dict:
    cmd = [sys.executable, os.path.join(HERE, "bench_train.py"), "--trainer", trainer,
           "--text", path, "--vocab", str(vocab)]
    if trainer == "baseline":
        cmd = [sys.executable, "-c",
               "import sys; sys.path.insert(0, sys.argv[1]); import bench_train as b;"
               " d = b.documents(sys.argv[2]); print('{}')", HERE, path]
    return run_measured(cmd, timeout)


def run_measured(cmd: list, timeout: float, env: dict | None = None) -> dict:
    """Run cmd from the repository root; its last stdout line as JSON plus "peak_mb" (the
    child's ru_maxrss, from os.wait4), or {"error": why}.  Also used by corpus_table.py."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env)
    start = time.monotonic()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - start > timeout:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return {"error": f"timeout after {timeout:.0f}s"}
        time.sleep(0.05)
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        return {"error": (err.strip().splitlines() or ["failed"])[-1][:120]}
    result = json.loads(out.strip().splitlines()[-1])
    result["peak_mb"] = usage.ru_maxrss / 1024  # Linux: KiB
    return result


def minbpe_rows(vocab: int = 512) -> list:
    """minbpe-compatible training (fastbpe.minbpe.RegexTokenizer / BasicTokenizer) vs the
    pure-Python minbpe algorithm in tests/reference.py, on taylorswift."""
    sys.path.insert(0, ROOT)
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import regex

    import reference
    from fastbpe.minbpe import BasicTokenizer, RegexTokenizer
    from fastbpe.patterns import GPT4_PATTERN

    with lzma.open(os.path.join(CORPUS, "taylorswift.txt.xz"), "rt", encoding="utf-8") as f:
        text = f.read()
    rows = []
    for name, cls, chunks in (
        ("RegexTokenizer", RegexTokenizer,
         [c.encode() for c in regex.findall(GPT4_PATTERN, text)]),
        ("BasicTokenizer", BasicTokenizer, [text.encode()]),
    ):
        t0 = time.perf_counter()
        tok = cls()
        tok.train(text, vocab)
        fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = reference.train_minbpe(chunks, vocab - 256)
        slow = time.perf_counter() - t0
        same = [tuple(m[:2]) for m in ref] == list(tok.merges)
        rows.append((name, fast, slow, same))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 250], help="MB")
    ap.add_argument("--vocab", type=int, nargs="+", default=[8000, 32000, 100000])
    ap.add_argument("--trainers", nargs="+",
                    default=["fastbpe", "fastbpe-regex", "rustbpe", "bpeasy", "hf"])
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per cell; report the fastest time and the largest peak")
    ap.add_argument("--minbpe", action="store_true",
                    help="also time minbpe-compatible training vs the minbpe algorithm")
    ap.add_argument("--out", default=os.path.join(HERE, "RESULTS.md"),
                    help="markdown file; its <!-- train:... --> section is (re)written, the rest kept")
    args = ap.parse_args(argv)

    trainers = [t for t in args.trainers
                if t not in MODULES or importlib.util.find_spec(MODULES[t]) is not None]
    skipped = sorted(set(args.trainers) - set(trainers))
    lines = [
        "## Training (wall time and peak memory; lower is better)",
        "",
        f"`python bench/train_table.py {' '.join(argv if argv is not None else sys.argv[1:])}`"
        f" on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()},"
        f" load average at start {os.getloadavg()[0]:.1f}.",
        "Texts: the first N MB of `large_en.txt.xz`; GPT-4 split pattern; each run in its",
        "own process. Time = training wall time (text already in memory); peak = ru_maxrss",
        "of the process (includes the text; `baseline` only loads it). `fastbpe` splits with",
        "the C pre-tokenizer (`fastbpe._pretokenize`), `fastbpe-regex` with the `regex` package",
        "(what custom patterns use). Other jobs share the machine: compare within a run.",
        "",
        "| text | vocab | trainer | time (s) | peak RSS (MB) | vocab out |",
        "|---:|---:|---|---:|---:|---:|",
    ]
    if skipped:
        lines.insert(6, f"Not installed, skipped: {', '.join(skipped)}.")
    for mb in args.sizes:
        path = text_slice(mb)
        base = run_one("baseline", path, 0, args.timeout)
        lines.append(f"| {mb} MB | - | baseline | - | {base.get('peak_mb', 0):.0f} | - |")
        print(lines[-1], flush=True)
        for vocab in args.vocab:
            for t in trainers:
                runs = [run_one(t, path, vocab, args.timeout) for _ in range(args.repeat)]
                ok = [x for x in runs if "error" not in x]
                r = runs[0] if not ok else dict(min(ok, key=lambda x: x["seconds"]),
                                                peak_mb=max(x["peak_mb"] for x in ok))
                if t == "fastbpe" and r.get("c_scanner") is False:
                    t = "fastbpe (no C scanner: regex)"
                if "error" in r:
                    lines.append(f"| {mb} MB | {vocab} | {t} | {r['error']} | | |")
                else:
                    lines.append(f"| {mb} MB | {vocab} | {t} | {r['seconds']:.2f} | "
                                 f"{r['peak_mb']:.0f} | {r['n_vocab']} |")
                print(lines[-1], flush=True)
    if args.minbpe:
        lines += ["", "## minbpe-compatible training (taylorswift, vocab 512)", "",
                  "| class | fastbpe (s) | minbpe algorithm, pure Python (s) | speed-up | same merges |",
                  "|---|---:|---:|---:|---|"]
        for name, fast, slow, same in minbpe_rows():
            lines.append(f"| {name} | {fast:.3f} | {slow:.2f} | {slow / fast:.0f}x | {same} |")
            print(lines[-1], flush=True)
    from compare import MARKERS, write_section  # the same section-preserving writer

    start, end = MARKERS["train"]
    write_section(Path(args.out), "train", "\n".join([start, *lines, end]))
    print(f"wrote the train section of {args.out}")


if __name__ == "__main__":
    main()
