#!/usr/bin/env python3
"""Encode throughput of fastbpe vs tiktoken (and HF tokenizers for GPT-2/r50k) in one run.

For each encoding x corpus it measures MB/s (UTF-8 input bytes / best wall time of --repeat
runs) for: one document (`encode_ordinary(text)`), and a batch of ~4 kB documents
(`encode_ordinary_batch(docs, num_threads=k)`, k = 1, 2).  HF tokenizers runs only for
r50k_base (GPT-2's tokenizer.json has the same ids) with `encode` / `encode_batch_fast`; its
batch runs in a child process per thread count because rayon's pool size is fixed at start
(RAYON_NUM_THREADS).  Every library's ids are checked against tiktoken's before timing.
It also measures the load time of get_encoding("cl100k_base") in a fresh process each time.

The table goes to stdout and into bench/RESULTS.md between `<!-- encode:start -->` and
`<!-- encode:end -->` (other sections of the file are kept).

    python bench/compare.py                       # defaults below
    python bench/compare.py --mb 2 --repeat 3 --encodings cl100k_base,o200k_base,r50k_base
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import datasources as ds  # noqa: E402

if ds.VOCAB_DIR.is_dir():
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))

START, END = "<!-- encode:start -->", "<!-- encode:end -->"
CORPORA = {  # label -> corpus files to try in order
    "english": ["large_en", "tinyshakespeare"],
    "code": ["code"],
    "multilingual": ["multilingual"],
}


# ------------------------------------------------------------------ inputs


def corpus_text(label: str, mb: float) -> tuple[str, str] | None:
    """(source name, text of about `mb` MB) for a corpus label, spread over the whole file
    for the smaller corpora (code.txt is Python, then C, then Rust)."""
    n = int(mb * (1 << 20))
    for name in CORPORA[label]:
        if not ds.corpus_available(name):
            continue
        if name == "large_en":
            return name, ds.load_corpus(name, n)
        full = ds.load_corpus(name)
        if len(full.encode()) <= n:
            return name, full
        # take 8 evenly spaced slices (sized in UTF-8 bytes), cut at line breaks
        k, step = 8, len(full) // 8
        chars = int(n * len(full) / len(full.encode()))
        parts = []
        for i in range(k):
            chunk = full[i * step: i * step + chars // k]
            parts.append(chunk[: chunk.rfind("\n") + 1])
        return name, "".join(parts)
    return None


def documents(text: str, size: int = 4000) -> list[str]:
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def best_time(fn, repeat: int) -> float:
    fn()  # warm up (also builds lazily built tables)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


# ------------------------------------------------------------------ HF child process


def hf_worker(args) -> None:
    """Child: time HF tokenizers on one input file with the rayon pool size from the env."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(ds.HF_GPT2_JSON))
    tok.no_truncation()
    text = Path(args.hf_input).read_text(encoding="utf-8")
    docs = documents(text)
    out = {}
    if args.hf_mode == "single":
        out["ids"] = tok.encode(text, add_special_tokens=False).ids
        out["t"] = best_time(lambda: tok.encode(text, add_special_tokens=False), args.repeat)
    else:
        out["ids"] = [i for e in tok.encode_batch_fast(docs, add_special_tokens=False) for i in e.ids]
        out["t"] = best_time(lambda: tok.encode_batch_fast(docs, add_special_tokens=False), args.repeat)
    print(json.dumps(out))


def hf_time(text: str, mode: str, threads: int | None, repeat: int, want_ids: list[int]) -> float | None:
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    env = dict(os.environ, TOKENIZERS_PARALLELISM="true")
    if threads is not None:
        env["RAYON_NUM_THREADS"] = str(threads)
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--hf-worker", "--hf-input", path, "--hf-mode", mode,
             "--repeat", str(repeat)], capture_output=True, text=True, env=env, timeout=1800)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        print(f"  HF worker failed: {proc.stderr[-500:]}", file=sys.stderr)
        return None
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if out["ids"] != want_ids:
        print("  HF ids differ from tiktoken r50k_base; not reported", file=sys.stderr)
        return None
    return out["t"]


# ------------------------------------------------------------------ load time


LOAD_SNIPPET = {
    "fastbpe": "import fastbpe as m",
    "tiktoken": "import tiktoken as m",
}


def load_times(runs: int) -> dict[str, tuple[float, float]]:
    """Median (import + get_encoding, get_encoding alone) in seconds, fresh process each."""
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-"))
    ds.populate_tiktoken_cache(cache)  # tiktoken reads its cache; no download
    res = {}
    for lib, imp in LOAD_SNIPPET.items():
        code = (
            "import time\nt0 = time.perf_counter()\n" + imp + "\nt1 = time.perf_counter()\n"
            "e = m.get_encoding('cl100k_base')\nt2 = time.perf_counter()\n"
            "assert e.encode('hello world') == [15339, 1917]\n"
            "print(t2 - t0, t2 - t1)"
        )
        env = dict(os.environ, TIKTOKEN_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
        totals, gets = [], []
        for _ in range(runs):
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=str(ROOT))
            if p.returncode != 0:
                print(f"  load time {lib} failed: {p.stderr[-300:]}", file=sys.stderr)
                break
            a, b = map(float, p.stdout.split())
            totals.append(a)
            gets.append(b)
        if totals:
            res[lib] = (statistics.median(totals), statistics.median(gets))
    return res


# ------------------------------------------------------------------ main


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = ", load average %.2f / %.2f / %.2f at the end of the run (other jobs make thread scaling unreliable)" % os.getloadavg()
    except OSError:
        load = ""
    return f"{cpu}, {os.cpu_count()} logical cores ({usable} usable), {platform.system()} {platform.release()}{load}"


def versions() -> str:
    import importlib.metadata as md

    def v(pkg):
        try:
            return md.version(pkg)
        except md.PackageNotFoundError:
            return "absent"

    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
    except OSError:
        rev = "?"
    import fastbpe

    return (f"Python {platform.python_version()}, fastbpe {fastbpe.__version__} (git {rev or '?'}), "
            f"tiktoken {v('tiktoken')}, tokenizers {v('tokenizers')}, regex {v('regex')}, numpy {v('numpy')}")


def fmt(x):
    return "—" if x is None else f"{x:.1f}"


def ratio(a, b):
    return "—" if a is None or b is None else f"{a / b:.2f}×"


def run(args) -> str:
    import fastbpe

    encodings = [e for e in args.encodings.split(",") if e]
    rows = []
    for enc_name in encodings:
        reason = ds.missing_reason(enc_name)
        if reason:
            print(f"skip {enc_name}: {reason}", file=sys.stderr)
            continue
        fb = fastbpe.get_encoding(enc_name)
        tt = ds.reference_encoding(enc_name)
        for label in CORPORA:
            got = corpus_text(label, args.mb)
            if got is None:
                print(f"skip corpus {label}: not found", file=sys.stderr)
                continue
            source, text = got
            nbytes = len(text.encode())
            docs = documents(text)
            want = tt.encode_ordinary(text)
            want_docs = tt.encode_ordinary_batch(docs)
            assert fb.encode_ordinary(text) == want, f"fastbpe ids differ on {enc_name}/{source}"
            assert fb.encode_ordinary_batch(docs) == want_docs, f"fastbpe batch ids differ on {enc_name}/{source}"
            flat_docs = [i for d in want_docs for i in d]
            modes = [("1 doc", None)] + [(f"batch, {k} thr", k) for k in (1, 2)]
            for mode, threads in modes:
                if threads is None:
                    t_fb = best_time(lambda: fb.encode_ordinary(text), args.repeat)
                    t_tt = best_time(lambda: tt.encode_ordinary(text), args.repeat)
                else:
                    t_fb = best_time(lambda: fb.encode_ordinary_batch(docs, num_threads=threads), args.repeat)
                    t_tt = best_time(lambda: tt.encode_ordinary_batch(docs, num_threads=threads), args.repeat)
                t_hf = None
                if enc_name == "r50k_base" and ds.HF_GPT2_JSON.is_file() and not args.no_hf:
                    if threads is None:
                        t_hf = hf_time(text, "single", 1, args.repeat, want)
                    else:
                        t_hf = hf_time(text, "batch", threads, args.repeat, flat_docs)
                mbs = lambda t: None if t is None else nbytes / t / 1e6  # noqa: E731
                row = (enc_name, f"{label} ({source}, {nbytes / 1e6:.1f} MB)", mode,
                       mbs(t_fb), mbs(t_tt), mbs(t_hf))
                rows.append(row)
                print(f"{row[0]:<12} {row[1]:<36} {row[2]:<13} fastbpe {fmt(row[3]):>7}  "
                      f"tiktoken {fmt(row[4]):>7}  HF {fmt(row[5]):>7}  ratio {ratio(row[3], row[4])}",
                      file=sys.stderr)

    loads = load_times(args.load_runs)
    cmd = "python bench/compare.py " + " ".join(args.argv)
    lines = [
        START,
        "## Encode throughput (MB/s of UTF-8 input; higher is better)",
        "",
        f"- Machine: {machine()}",
        f"- Versions: {versions()}",
        f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- Command: `{cmd.strip()}` (from the repository root, after `python setup.py build_ext --inplace`)",
        f"- Method: best of {args.repeat} runs after one warm-up; ids checked equal to tiktoken's first. "
        "\"1 doc\" = `encode_ordinary(text)` on the whole slice; \"batch\" = "
        "`encode_ordinary_batch(docs, num_threads=k)` on ~4 kB documents. HF = `tokenizers` with "
        "GPT-2's tokenizer.json (same ids as r50k_base), `encode` / `encode_batch_fast` with "
        "RAYON_NUM_THREADS=k.",
        "",
        "| encoding | corpus | mode | fastbpe | tiktoken | fastbpe / tiktoken | HF tokenizers | HF / tiktoken |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for enc_name, corpus, mode, a, b, c in rows:
        lines.append(f"| {enc_name} | {corpus} | {mode} | {fmt(a)} | {fmt(b)} | {ratio(a, b)} | {fmt(c)} | {ratio(c, b)} |")
    lines += ["", f"Load time of `get_encoding(\"cl100k_base\")`, fresh process, median of {args.load_runs} "
              "(tiktoken reads its offline cache; fastbpe reads FASTBPE_DATA_DIR or package data):", "",
              "| library | import + get_encoding (s) | get_encoding alone (s) |", "|---|---:|---:|"]
    for lib, (tot, get) in loads.items():
        lines.append(f"| {lib} | {tot:.3f} | {get:.3f} |")
    lines.append(END)
    return "\n".join(lines)


def write_section(path: Path, section: str) -> None:
    old = path.read_text(encoding="utf-8") if path.exists() else "# fastbpe benchmark results\n"
    if START in old and END in old:
        head, rest = old.split(START, 1)
        _, tail = rest.split(END, 1)
        new = head + section + tail
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(new, encoding="utf-8")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encodings", default="cl100k_base,o200k_base,r50k_base")
    p.add_argument("--mb", type=float, default=2.0, help="MB of text per corpus (default 2)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--load-runs", type=int, default=5)
    p.add_argument("--no-hf", action="store_true", help="skip HF tokenizers")
    p.add_argument("--out", default=str(HERE / "RESULTS.md"))
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--hf-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--hf-input", help=argparse.SUPPRESS)
    p.add_argument("--hf-mode", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.argv = argv
    if args.hf_worker:
        return hf_worker(args)
    section = run(args)
    print(section)
    if not args.no_write:
        write_section(Path(args.out), section)
        print(f"\nwritten to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
