#!/usr/bin/env python3
"""Encode throughput of fastbpe and its peers side by side, plus pre-tokenizing alone, in one run.

Encode section: for each encoding x corpus x mode, MB/s (UTF-8 input bytes / best wall time of
--repeat runs) and the ratio to tiktoken for

    fastbpe        fastbpe.get_encoding(name) (C scanner for the split pattern)
    fastbpe-regex  the same encoding with the `regex` package splitting (the custom-pattern path)
    tiktoken       the baseline
    bpe-openai     bpe_openai.get_encoding(name) (cl100k_base / o200k_base only)
    tokendagger    tokendagger.Encoding(...) built from tiktoken's arguments
    fastokens      fastokens.Tokenizer.from_tiktoken(path, encoding=name), encode_ordinary(text).ids
    HF tokenizers  r50k_base only: GPT-2's tokenizer.json has the same ids

(see bench/peers.py for how each is built).  Modes: "1 doc" = `encode_ordinary(text)` on
distinct slices of --slice-mb (0.5 MB): the first slice warms the library up, each of the
others is encoded once, timed, and its ids checked equal to tiktoken's (no slice is timed
twice, so a cache that outlives a call cannot replay one; MB/s = timed bytes / summed time);
"batch, k thr" = the library's batch API on ~4 kB documents with k threads
(`encode_ordinary_batch(docs, num_threads=k)`; tokendagger `encode_batch`; HF
`encode_batch_fast` in a child process with RAYON_NUM_THREADS=k, since rayon's pool size is
fixed at start).  Every library's ids are checked against tiktoken's before it is timed (the
checking call is the warm-up); a library whose ids differ shows "ids differ", not a number.

Pre-tokenize section: per split pattern and corpus, the C scanner (piece ends only, and as a
list of str) against `regex.findall`, after checking the pieces are identical.

Load-time table: import + get_encoding("cl100k_base") in a fresh process.

Worst-case section: 1 MiB of one repeated character, of letters without spaces, of spaces
and of digits: seconds per call (wall and CPU) for tiktoken, fastbpe and fastokens, ids checked.

Sections go to stdout and into bench/RESULTS.md between `<!-- encode:start -->` /
`<!-- encode:end -->`, `<!-- pretokenize:start -->` / `<!-- pretokenize:end -->` and
`<!-- worst:start -->` / `<!-- worst:end -->`; the rest
of the file (e.g. the `<!-- train:start -->` section) is kept as it is.

    python bench/compare.py                 # the full run (all defaults) -> bench/RESULTS.md
    python bench/compare.py --quick         # smoke run: small slices, 1 repeat ->
                                            #   bench/.work/RESULTS-quick.md (git-ignored)
    python bench/compare.py --encodings cl100k_base --libs fastbpe,bpe-openai --no-write
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import datasources as ds  # noqa: E402
import peers  # noqa: E402  (also sets FASTBPE_DATA_DIR to shared/data/vocab when present)

MARKERS = {
    "encode": ("<!-- encode:start -->", "<!-- encode:end -->"),
    "pretokenize": ("<!-- pretokenize:start -->", "<!-- pretokenize:end -->"),
    "worst": ("<!-- worst:start -->", "<!-- worst:end -->"),
    "train": ("<!-- train:start -->", "<!-- train:end -->"),  # written by bench/train_table.py
    "corpus": ("<!-- corpus:start -->", "<!-- corpus:end -->"),  # written by bench/corpus_table.py
    "dask": ("<!-- dask:start -->", "<!-- dask:end -->"),  # bench/dask_count.py
    "minbpe_torch": ("<!-- minbpe_torch:start -->", "<!-- minbpe_torch:end -->"),  # bench/minbpe_torch.py
    "hf": ("<!-- hf:start -->", "<!-- hf:end -->"),  # written by bench/compare_hf.py
    "hf_encodings": ("<!-- hf_encodings:start -->", "<!-- hf_encodings:end -->"),  # bench/hf_encodings.py
}
CORPORA = {  # label -> corpus files to try in order
    "english": ["large_en", "tinyshakespeare"],
    "code": ["code"],
    "multilingual": ["multilingual"],
}
COLUMNS = ["tiktoken", "fastbpe", "fastokens", "fastbpe-regex", "bpe-openai", "tokendagger", "HF tokenizers"]
THREADS = (1, 2)


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


def best_time(fn, repeat: int) -> float:
    """Best wall time of `repeat` calls (the caller has already warmed fn up)."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def distinct_slices(text: str, slice_mb: float) -> list[str]:
    """text cut at line breaks into consecutive slices of about slice_mb MB of UTF-8 each (the
    last, shorter one is dropped unless it is the only one)."""
    size = int(slice_mb * 1e6)
    data = text.encode()
    out, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        out.append(data[start:end].decode("utf-8"))
        start = end
    if len(out) > 1 and len(out[-1].encode()) < size // 2:
        out.pop()
    return out


@dataclass
class Cell:
    """One library's result for one row: a time, or why there is none."""

    seconds: float | None = None
    text: str = "—"  # shown when there is no time: "ids differ", "n/a", "error"
    mark: str = ""  # footnote mark after the number

    def mbs(self, nbytes: int) -> float | None:
        return None if self.seconds is None else nbytes / self.seconds / 1e6


# ------------------------------------------------------------------ HF child process


def hf_worker(args) -> None:
    """Child: time HF tokenizers on one input file with the rayon pool size from the env."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(ds.HF_GPT2_JSON))
    tok.no_truncation()  # this copy of tokenizer.json sets truncation to 50 tokens
    text = Path(args.hf_input).read_text(encoding="utf-8")
    want = json.loads(Path(args.hf_want).read_text())
    out = {}
    if args.hf_mode == "single":
        fn = lambda: tok.encode(text, add_special_tokens=False)  # noqa: E731
        ids = fn().ids
    else:
        docs = peers.documents(text)
        fn = lambda: tok.encode_batch_fast(docs, add_special_tokens=False)  # noqa: E731
        ids = [e.ids for e in fn()]
    out["same"] = ids == want
    out["t"] = best_time(fn, args.repeat) if out["same"] else None
    print(json.dumps(out))


def hf_cell(text: str, mode: str, threads: int, repeat: int, want) -> Cell:
    with tempfile.TemporaryDirectory(prefix="fastbpe-hf-") as tmp:
        inp, wantf = Path(tmp, "input.txt"), Path(tmp, "want.json")
        inp.write_text(text, encoding="utf-8")
        wantf.write_text(json.dumps(want))
        env = dict(os.environ, TOKENIZERS_PARALLELISM="true", RAYON_NUM_THREADS=str(threads))
        proc = subprocess.run(
            [sys.executable, __file__, "--hf-worker", "--hf-input", str(inp), "--hf-want", str(wantf),
             "--hf-mode", mode, "--repeat", str(repeat)],
            capture_output=True, text=True, env=env, timeout=1800)
    if proc.returncode != 0:
        print(f"  HF worker failed: {proc.stderr[-500:]}", file=sys.stderr)
        return Cell(text="error")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    if not out["same"]:
        return Cell(text="ids differ")
    return Cell(out["t"])


# ------------------------------------------------------------------ load time


LOAD_SNIPPET = {
    "fastbpe": "import fastbpe as m",
    "tiktoken": "import tiktoken as m",
    "bpe-openai": "import bpe_openai as m",
}


def load_times(runs: int, libs) -> dict[str, tuple[float, float]]:
    """Median (import + get_encoding, get_encoding alone) in seconds, fresh process each."""
    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-"))
    ds.populate_tiktoken_cache(cache)  # tiktoken reads its cache; no download
    res = {}
    for lib, imp in LOAD_SNIPPET.items():
        if lib not in libs:
            continue
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


# ------------------------------------------------------------------ run info


def loadavg() -> str:
    try:
        return "%.2f / %.2f / %.2f" % os.getloadavg()
    except OSError:
        return "?"


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
    mem = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = ", %.0f GiB RAM" % (int(line.split()[1]) / (1 << 20))
                break
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} logical cores ({usable} usable){mem}, {platform.system()} {platform.release()}"


def versions_line() -> str:
    try:
        rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        rev, dirty = "", ""
    v = peers.versions()
    rev = (rev or "?") + (" + local changes" if dirty else "")
    return (f"Python {platform.python_version()}, fastbpe {v['fastbpe']} (git {rev}), "
            + ", ".join(f"{k} {x}" for k, x in v.items() if k != "fastbpe"))


def run_info(args, started: str, load_start: str) -> list[str]:
    quick = " — **quick smoke run: small slices, not for comparison**" if args.quick else ""
    return [
        f"- Machine: {machine()}",
        f"- Load average (1 / 5 / 15 min): {load_start} at the start, {loadavg()} at the end "
        "of the run (other jobs make thread scaling unreliable)",
        f"- Versions: {versions_line()}",
        f"- Date: {started}",
        f"- Command: `{args.command}` (from the repository root, after "
        f"`python setup.py build_ext --inplace`){quick}",
    ]


# ------------------------------------------------------------------ encode section


def fmt_cell(cell: Cell, base: Cell, nbytes: int, is_base: bool = False) -> str:
    v = cell.mbs(nbytes)
    if v is None:
        return cell.text
    s = f"{v:.1f}{cell.mark}"
    b = base.mbs(nbytes)
    if not is_base and b is not None:
        s += f" ({v / b:.2f}×)"
    return s


def build_available(libs, enc_name: str, notes: dict[str, str]) -> dict:
    """{lib: built encoder} for the libraries that have `enc_name`; the others get a note."""
    built = {}
    for lib in libs:
        try:
            built[lib] = peers.build(lib, enc_name)
        except peers.Unavailable as e:
            notes[f"{lib} {enc_name}"] = f"{lib}: {e}"
            print(f"  {lib} unavailable for {enc_name}: {e}", file=sys.stderr)
    return built


def run_encode(args, notes: dict[str, str]) -> list[tuple]:
    """Rows (encoding, corpus label, nbytes, mode, {column: Cell})."""
    libs = [lib for lib in peers.LIBS if lib in args.libs]
    rows = []
    for enc_name in args.encodings:
        reason = ds.missing_reason(enc_name)
        if reason:
            print(f"skip {enc_name}: {reason}", file=sys.stderr)
            notes[f"skip {enc_name}"] = reason
            continue
        built = build_available(libs, enc_name, notes)
        use_hf = "HF tokenizers" in args.libs and enc_name == "r50k_base" and ds.HF_GPT2_JSON.is_file()
        tt = built["tiktoken"]
        for label in CORPORA:
            got = corpus_text(label, args.mb)
            if got is None:
                print(f"skip corpus {label}: not found", file=sys.stderr)
                continue
            source, text = got
            nbytes = len(text.encode())
            docs = peers.documents(text)
            slices = distinct_slices(text, args.slice_mb)
            want = [tt.encode_ordinary(s) for s in slices]
            want_docs = tt.batch(docs, 1)
            timed_bytes = sum(len(s.encode()) for s in slices[1:])
            corpus = f"{label} ({source}, {nbytes / 1e6:.1f} MB)"
            for threads in (None,) + THREADS:
                mode = "1 doc" if threads is None else f"batch, {threads} thr"
                want_mode = want if threads is None else want_docs
                cells = {}
                for lib in libs:
                    peer = built.get(lib)
                    if peer is None:
                        cells[lib] = Cell(text="n/a")
                        continue
                    if threads is None:
                        cells[lib] = time_slices(peer, slices, want, nbytes / timed_bytes, notes)
                    else:
                        cells[lib] = time_peer(peer, docs, threads, want_mode, args.repeat, notes)
                if use_hf:  # HF's "1 doc" is the whole text, best of --repeat (a child process)
                    cells["HF tokenizers"] = hf_cell(text, "single" if threads is None else "batch",
                                                     threads or 1, args.repeat,
                                                     tt.encode_ordinary(text) if threads is None else want_mode)
                rows.append((enc_name, corpus, nbytes, mode, cells))
                base = cells["tiktoken"]
                print(f"{enc_name:<12} {label:<13} {mode:<13} " + "  ".join(
                    f"{c} {fmt_cell(cells[c], base, nbytes, c == 'tiktoken')}" for c in COLUMNS if c in cells),
                    file=sys.stderr)
        del built
    return rows


def _failed(peer, e: Exception, notes) -> Cell:
    """A peer that crashes on some input: say so, go on."""
    notes[f"{peer.lib} error {type(e).__name__}"] = f"{peer.lib}: {type(e).__name__}: {str(e)[:200]}"
    return Cell(text="error")


def _differ(peer, notes) -> Cell:
    notes[f"{peer.lib} ids"] = (f"{peer.lib}: \"ids differ\" = its ids are not tiktoken's on that "
                                "input, so no time is reported")
    return Cell(text="ids differ")


def time_slices(peer, slices, want, scale, notes) -> Cell:
    """The distinct-slices protocol: slices[0] warms up, each other slice is encoded once
    (timed) and its ids compared with tiktoken's.  The Cell's seconds are scaled to the whole
    text (`scale` = all bytes / timed bytes) so MB/s is computed like the other modes."""
    total, fallback = 0.0, False
    for i, s in enumerate(slices):
        try:
            t = time.perf_counter()
            fn, ids, fb = peer.single(s)
            dt = time.perf_counter() - t
        except Exception as e:
            return _failed(peer, e, notes)
        if ids != want[i]:
            return _differ(peer, notes)
        fallback |= fb
        if i > 0 or len(slices) == 1:
            total += dt
    if len(slices) == 1:
        notes["one slice"] = "only one slice: it was timed after itself as the warm-up"
        total = best_time(fn, 1)
    mark = ""
    if fallback:
        mark = "†"
        notes["bpe-openai fallback"] = "† " + peers.BPE_OPENAI_FALLBACK_NOTE
    return Cell(total * scale, mark=mark)


def time_peer(peer, docs, threads, want, repeat, notes) -> Cell:
    """A batch mode: the first call checks the ids (and warms up), then best of `repeat`."""
    if peer.batch is None:
        notes[f"{peer.lib} batch"] = (f"{peer.lib}: no batch number — its batch API runs on its "
                                      "own thread pool, whose size cannot be set per call")
        return Cell(text="n/a")
    try:
        fn = lambda: peer.batch(docs, threads)  # noqa: E731
        ids = fn()
    except Exception as e:
        return _failed(peer, e, notes)
    if ids != want:
        return _differ(peer, notes)
    return Cell(best_time(fn, repeat))


def encode_section(args, rows, loads, notes, started, load_start) -> str:
    start, end = MARKERS["encode"]
    cols = [c for c in COLUMNS if c in args.libs]
    lines = [
        start,
        "## Encode throughput (MB/s of UTF-8 input, and the ratio to tiktoken; higher is better)",
        "",
        *run_info(args, started, load_start),
        f"- Method: all numbers measured in this one run on this machine. \"1 doc\" = "
        f"`encode_ordinary(text)` on distinct slices of {args.slice_mb} MB: the first warms up, each "
        "other slice is encoded once, timed, and its ids checked against tiktoken's; MB/s = timed "
        "bytes / summed time (HF tokenizers: the whole text, best of "
        f"{args.repeat}). Batch modes: best of {args.repeat} timed runs after one warm-up call, "
        "which also checks the ids (\"ids differ\" instead of a number when they are not "
        "equal). \"batch, k thr\" = the library's batch API "
        "on ~4 kB documents with k threads: `encode_ordinary_batch(docs, num_threads=k)` "
        "(tokendagger: `encode_batch`; HF: `encode_batch_fast` with RAYON_NUM_THREADS=k).",
        "- Libraries: fastbpe = `fastbpe.get_encoding(name)` (C scanner); fastbpe-regex = the "
        "same encoding with `Splitter(pat, force_regex=True)`, i.e. the `regex` package cuts the "
        "text, as for any custom pattern; bpe-openai = `bpe_openai.get_encoding(name)`; "
        "tokendagger = `tokendagger.Encoding(name, pat_str=..., mergeable_ranks=..., "
        "special_tokens=...)` from tiktoken's arguments; fastokens = "
        "`fastokens.Tokenizer.from_tiktoken(path, encoding=name)` (r50k_base: its pattern and "
        "special tokens), timed as `encode_ordinary(text).ids`; HF tokenizers = GPT-2's tokenizer.json "
        "(same ids as r50k_base; there is none here with cl100k_base's or o200k_base's ids). "
        "n/a = not available for that encoding (notes below).",
        "",
        "| encoding | corpus | mode | " + " | ".join(cols) + " |",
        "|---|---|---|" + "---:|" * len(cols),
    ]
    for enc_name, corpus, nbytes, mode, cells in rows:
        base = cells["tiktoken"]
        lines.append(f"| {enc_name} | {corpus} | {mode} | " + " | ".join(
            fmt_cell(cells.get(c, Cell(text="n/a")), base, nbytes, c == "tiktoken") for c in cols) + " |")
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in sorted(set(notes.values()))]
    if loads:
        lines += ["", f"Load time of `get_encoding(\"cl100k_base\")`, fresh process, median of "
                  f"{args.load_runs} (tiktoken reads its offline cache; fastbpe reads "
                  "FASTBPE_DATA_DIR or package data; bpe-openai its package data; tokendagger "
                  "has no get_encoding):", "",
                  "| library | import + get_encoding (s) | get_encoding alone (s) |", "|---|---:|---:|"]
        for lib, (tot, get) in loads.items():
            lines.append(f"| {lib} | {tot:.3f} | {get:.3f} |")
    lines.append(end)
    return "\n".join(lines)


# ------------------------------------------------------------------ pretokenize section


def pretokenize_section(args, started, load_start) -> str:
    import regex

    import bench_pretokenize as bp
    from fastbpe import _pretokenize as pt

    start, end = MARKERS["pretokenize"]
    rep_scan, rep_rx = 2 * args.repeat + 1, args.repeat
    rows = []
    for label in CORPORA:
        got = corpus_text(label, args.mb)
        if got is None:
            continue
        source, text = got
        for name, pat in bp.PATTERNS.items():
            m = bp.measure(text, pat, rep_scan, rep_rx)
            n = m["bytes"] / 1e6
            corpus = f"{label} ({source}, {n:.1f} MB)"
            if not m["same"]:
                rows.append(f"| {name} | {corpus} | {m['pieces']} | pieces differ from regex.findall | | | |")
            else:
                rows.append(f"| {name} | {corpus} | {m['pieces']} | {n / m['scan']:.1f} | "
                            f"{n / m['split']:.1f} | {n / m['regex']:.1f} | {m['regex'] / m['scan']:.0f}× |")
            print(f"pretokenize {name:<7} {label:<13} " + rows[-1], file=sys.stderr)
    lines = [
        start,
        "## Pre-tokenize only (MB/s of UTF-8 input, one core; higher is better)",
        "",
        *run_info(args, started, load_start),
        f"- Method: per split pattern (fastbpe.patterns) on the same slices as the encode table: "
        f"the C scanner `_pretokenize.piece_boundaries` (piece end offsets, what the encode "
        f"kernel uses; best of {rep_scan}), `_pretokenize.split` (the pieces as a list of str, "
        f"best of {max(1, rep_scan // 2)}) and `regex.findall` (regex {regex.__version__}, best "
        f"of {rep_rx}), after checking split() gives exactly findall's pieces. Scanner tables "
        f"from regex {pt.REGEX_VERSION} (Unicode {pt.UNICODE_VERSION}). Also: "
        "`python bench/bench_pretokenize.py`.",
        "",
        "| pattern | corpus | pieces | scanner (ends) | scanner (list of str) | regex.findall | "
        "findall time / scanner time |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
        end,
    ]
    return "\n".join(lines)


# ------------------------------------------------------------------ worst-case section

WORST_MB = 1 << 20
WORST_CASES = {
    "one repeated character": "a" * WORST_MB,
    "letters, no spaces": ("abcdefghijklmnopqrstuvwxyz" * (WORST_MB // 26 + 1))[:WORST_MB],
    "spaces": " " * WORST_MB,
    "digits": ("0123456789" * (WORST_MB // 10 + 1))[:WORST_MB],
}
WORST_LIBS = ["tiktoken", "fastbpe", "fastokens"]


def worst_cell(peer, text: str, want, repeat: int, notes) -> str:
    try:
        fn, ids, _ = peer.single(text)
    except BaseException as e:  # tiktoken's regex panics (stack overflow) on some of these
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        notes[f"{peer.lib} {type(e).__name__}"] = f"{peer.lib}: {type(e).__name__}: {str(e)[:120]}"
        return f"fails ({type(e).__name__})"
    if want is not None and ids != want:
        return "ids differ"
    wall, cpu = [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w)
        cpu.append(time.process_time() - c)
    return f"{min(wall):.3f} / {min(cpu):.3f}"


def worst_section(args, started, load_start) -> str:
    """1 MiB inputs that make one huge piece (or a million tiny ones): seconds per call."""
    start, end = MARKERS["worst"]
    notes: dict[str, str] = {}
    rows = []
    for enc_name in args.encodings:
        if ds.missing_reason(enc_name):
            continue
        built = build_available(WORST_LIBS, enc_name, notes)
        for case, text in WORST_CASES.items():
            want = None
            try:
                want = built["tiktoken"].encode_ordinary(text)
            except BaseException as e:
                if isinstance(e, (KeyboardInterrupt, SystemExit)):
                    raise
                # the reference ids without tiktoken's regex: its BPE on the pattern's pieces
                import regex
                tt = built["tiktoken"].obj
                want = [i for piece in regex.findall(tt._pat_str, text) for i in tt._encode_single_piece(piece)]
            cells = [worst_cell(built[lib], text, want, args.repeat, notes) if lib in built else "n/a"
                     for lib in WORST_LIBS]
            rows.append(f"| {enc_name} | {case} | " + " | ".join(cells) + " |")
            print(f"worst {enc_name:<12} {case:<24} " + "  ".join(cells), file=sys.stderr)
    lines = [
        start,
        "## Worst cases (1 MiB of one kind of character; seconds per `encode_ordinary` call, lower is better)",
        "",
        *run_info(args, started, load_start),
        f"- Method: each cell is \"wall / CPU\": the best wall time and the best CPU time "
        f"(`time.process_time`, which other jobs on the machine disturb less) of {args.repeat} calls "
        "after a first call that checks the ids against tiktoken's (where tiktoken's own regex "
        "fails, against tiktoken's BPE of the pattern's pieces: `_encode_single_piece`).",
        "",
        "| encoding | input | " + " | ".join(WORST_LIBS) + " |",
        "|---|---|" + "---:|" * len(WORST_LIBS),
        *rows,
    ]
    if notes:
        lines += ["", "Notes:", ""] + [f"- {n}" for n in sorted(set(notes.values()))]
    lines.append(end)
    return "\n".join(lines)


# ------------------------------------------------------------------ output


def write_section(path: Path, name: str, section: str) -> None:
    start, end = MARKERS[name]
    old = path.read_text(encoding="utf-8") if path.exists() else "# fastbpe benchmark results\n"
    if start in old and end in old:
        head, rest = old.split(start, 1)
        _, tail = rest.split(end, 1)
        new = head + section + tail
    else:
        new = old.rstrip("\n") + "\n\n" + section + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(new, encoding="utf-8")


def write_marked_lines(path, name: str, lines: list) -> None:
    """Write `lines` as the `name` section of the results file, between its markers."""
    start, end = MARKERS[name]
    write_section(Path(path), name, "\n".join([start, *lines, end]))
    print(f"wrote the {name} section of {path}")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--encodings", default="cl100k_base,o200k_base,r50k_base")
    p.add_argument("--libs", default=",".join(c for c in COLUMNS if c != "tiktoken"),
                   help="comma list of peers besides tiktoken (default: all): " + ", ".join(COLUMNS[1:]))
    p.add_argument("--sections", default="encode,pretokenize,worst",
                   help="comma list of encode, pretokenize, worst (default: all three)")
    p.add_argument("--mb", type=float, default=3.0, help="MB of text per corpus (default 3)")
    p.add_argument("--slice-mb", type=float, default=0.5,
                   help="MB per distinct slice of the \"1 doc\" rows (default 0.5; the first warms up)")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per measurement; the best counts")
    p.add_argument("--load-runs", type=int, default=5, help="fresh processes for the load-time table (0: skip)")
    p.add_argument("--no-hf", action="store_true", help="skip HF tokenizers (same as leaving it out of --libs)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: --mb 0.1 --repeat 1 --load-runs 1, written to bench/.work/RESULTS-quick.md")
    p.add_argument("--out", default=None, help="results file (default bench/RESULTS.md)")
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--hf-worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--hf-input", help=argparse.SUPPRESS)
    p.add_argument("--hf-want", help=argparse.SUPPRESS)
    p.add_argument("--hf-mode", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.hf_worker:
        return hf_worker(args)

    given = {a.split("=")[0] for a in argv}
    if args.quick:
        if "--mb" not in given:
            args.mb = 0.1
        if "--slice-mb" not in given:
            args.slice_mb = 0.025
        if "--repeat" not in given:
            args.repeat = 1
        if "--load-runs" not in given:
            args.load_runs = 1
    if args.out is None:
        args.out = str(HERE / ".work" / "RESULTS-quick.md") if args.quick else str(HERE / "RESULTS.md")
    args.command = shlex.join(["python", "bench/compare.py", *argv])
    args.encodings = [e for e in args.encodings.split(",") if e]
    args.libs = {"tiktoken", *(x.strip() for x in args.libs.split(",") if x.strip())}
    if args.no_hf:
        args.libs.discard("HF tokenizers")
    unknown = args.libs - set(COLUMNS)
    if unknown:
        p.error(f"unknown --libs {', '.join(sorted(unknown))}; known: {', '.join(COLUMNS)}")
    sections = [s for s in args.sections.split(",") if s]
    if set(sections) - {"encode", "pretokenize", "worst"}:
        p.error("--sections takes encode, pretokenize, worst")

    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = loadavg()
    t0 = time.perf_counter()
    out = {}
    if "encode" in sections:
        notes: dict[str, str] = {}
        rows = run_encode(args, notes)
        loads = load_times(args.load_runs, args.libs) if args.load_runs > 0 else {}
        out["encode"] = encode_section(args, rows, loads, notes, started, load_start)
    if "pretokenize" in sections:
        out["pretokenize"] = pretokenize_section(args, started, load_start)
    if "worst" in sections:
        out["worst"] = worst_section(args, started, load_start)
    for name, section in out.items():
        print(section + "\n")
        if not args.no_write:
            write_section(Path(args.out), name, section)
    if not args.no_write:
        print(f"written to {args.out}", file=sys.stderr)
    print(f"total time {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
