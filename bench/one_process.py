#!/usr/bin/env python3
"""The encode rows a second way: every library in one process, on text the encode section never reads.

    python bench/one_process.py                        # 5 vocabularies x 3 corpora, 3 runs
    python bench/one_process.py --vocabs cl100k_base --corpora English --runs 1 --no-write

bench/peers.py's encode section gives each library a process of its own. A user's process holds
several libraries, and a library tuned on the encode section's text could fit that text; so here,
per vocabulary, one child process (pinned to one core) loads every library and warms each up on
the encode section's first part, then each run times each library on corpus text the encode
section does not read (the lines between its chunks): per corpus, 4 parts of `--mb` / 4 MB
mixing the whole corpus, each timed once, the first time any library sees that text, on a str object of its own (new for
each library: CPython caches a str's UTF-8 inside it once a binding asks). The libraries' order
turns with every part so none is always first after another's work. Ids are checked after
timing against the reference (tiktoken / HF tokenizers); a peer that differs is "inexact". Each
run uses text no earlier run read. Cells: MB/s of the four timed parts, median over runs; the
ratio column is fastbpe over the best exact peer (issue 31 asks >= 1.2 on every row).
Writes the `one-process` section of bench/RESULTS.md (or --out), or prints only (--no-write).
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common as c  # noqa: E402
from common import fmt_mbs, log  # noqa: E402

SECTION = "one-process"
VOCABS = ["cl100k_base", "o200k_base", "Qwen2.5 tokenizer.json", "DeepSeek-R1-Distill-Llama tokenizer.json"]
SECTION_MB = 2.0  # the encode section's parts: 2 MB in 4 parts of 16 regions (common.parts)


def other_parts(corpus: str, mb: float, n: int, runs: int) -> list[list[str]]:
    """runs x n parts of up to `mb` MB each run, from the text between the encode section's chunks.

    common.parts(corpus, 2.0) takes, in each of 16 regions of the first 16 MB, 4 line-cut chunks
    at the start of 4 slots; what lies after each chunk up to its slot's end is read by no other
    section. Each such gap is cut into runs x n line-cut pieces; part (run, i) joins piece
    run * n + i of every gap, so every part mixes the whole corpus and no two parts overlap.
    A corpus with less text between the chunks (multilingual: about 1.8 MB) gives smaller parts."""
    data = c.corpus_bytes(corpus, int(16e6))
    regions, slots = 16, 4
    step = len(data) // regions
    sub = step // slots
    chunk = int(SECTION_MB * 1e6 / slots / regions)
    gaps = []
    for r in range(regions):
        for s in range(slots):
            start = r * step + s * sub
            used = c._line_cut(data, start, chunk)  # the encode section's chunk starts here
            gaps.append((data.find(b"\n", start + len(used) + 1) + 1, start + sub))
    want = min(int(mb * 1e6 / n / len(gaps)), min(e - b for b, e in gaps) // (n * runs))
    if want < 1000:
        raise c.Unavailable(f"{corpus}: {len(data) / 1e6:.1f} MB leaves too little text beside the "
                            f"encode section's for {runs} runs x {n} parts")
    out = [[[] for _ in range(n)] for _ in range(runs)]
    for b, e in gaps:
        for k in range(runs * n):
            out[k // n][k % n].append(_lines_within(data, b + k * want, want, e))
    return [[b"".join(p).decode("utf-8", "ignore") for p in run] for run in out]


def _lines_within(data: bytes, start: int, size: int, limit: int) -> bytes:
    """The whole lines that start in data[start:start+size], none reaching past `limit`."""
    if start and data[start - 1:start] != b"\n":
        start = data.find(b"\n", start) + 1 or limit
    end = data.find(b"\n", min(start + size, limit) - 1) + 1 if start < limit else start
    if not end or end > limit:
        end = data.rfind(b"\n", start, limit) + 1 or start
    return data[start:end]


def child(job: dict) -> dict:
    """One vocabulary: every library loaded in this process, each run's parts timed."""
    sys.path.insert(0, str(c.ROOT))  # the fastbpe checkout this script belongs to
    fns, unavailable = {}, {}
    for lib in job["libs"]:
        try:
            fns[lib] = c.encoder(lib, job["vocab"])
        except c.Unavailable as e:
            unavailable[lib] = str(e)
    libs = list(fns)
    rows = {}
    for corpus, runs in job["parts"].items():
        warm = c.read_text(job["warm"][corpus])
        for lib in libs:  # the encode section's warm-up part: seen text, untimed
            fns[lib]((warm + ".")[:-1])
        per_run = []
        for k, paths in enumerate(runs):
            texts = [c.read_text(p) for p in paths]
            res = {lib: {"seconds": [], "digests": []} for lib in libs}
            for i, text in enumerate(texts):
                order = libs[(i + k) % len(libs):] + libs[:(i + k) % len(libs)]
                for lib in order:
                    s = (text + ".")[:-1]  # a str no library has touched
                    gc.collect()
                    t0 = time.perf_counter()
                    ids = fns[lib](s)
                    dt = time.perf_counter() - t0
                    res[lib]["seconds"].append(dt)
                    res[lib]["digests"].append(c.digest(ids))
            nbytes = sum(len(t.encode()) for t in texts)
            per_run.append({lib: {"mbs": nbytes / sum(r["seconds"]) / 1e6, "digests": r["digests"]}
                            for lib, r in res.items()})
        rows[corpus] = per_run
    return {"rows": rows, "unavailable": unavailable}


def table(results: dict, libs: list, corpora: list) -> tuple[list[str], list[str]]:
    """(markdown table, notes): a column per library, then fastbpe / best exact peer."""
    head = ["vocabulary", "corpus", *libs, "fastbpe / best exact peer"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(libs) + 1)]
    notes = []
    for vocab, r in results.items():
        if "error" in r:
            notes.append(f"{vocab}: the child failed: {r['error']}")
            continue
        for lib, why in r["unavailable"].items():
            notes.append(f"{lib} n/a on {vocab}: {why[:160]}")
        ref = c.REFERENCE[c.VOCABS[vocab][0]]
        for corpus in corpora:
            runs = r["rows"].get(corpus)
            if not runs:
                continue
            cells, exact_mbs = [], {}
            for lib in libs:
                if lib not in runs[0]:
                    cells.append("n/a")
                    continue
                mbs = statistics.median(run[lib]["mbs"] for run in runs)
                same = all(run[lib]["digests"] == run[ref]["digests"] for run in runs) if ref in runs[0] else None
                if same is False:
                    cells.append("inexact")
                    continue
                exact_mbs[lib] = mbs
                lo, hi = min(run[lib]["mbs"] for run in runs), max(run[lib]["mbs"] for run in runs)
                cells.append(fmt_mbs(mbs) + (f" ({fmt_mbs(lo)}–{fmt_mbs(hi)})" if len(runs) > 1 else ""))
            peers = {k: v for k, v in exact_mbs.items() if k != "fastbpe"}
            best = max(peers, key=peers.get) if peers else None
            ratio = (f"{exact_mbs['fastbpe'] / peers[best]:.2f} ({best})"
                     if best and "fastbpe" in exact_mbs else "–")
            lines.append(f"| {vocab} | {corpus} | " + " | ".join(cells) + f" | {ratio} |")
    return lines, notes


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--libs", default=",".join(c.ENCODE_LIBS))
    p.add_argument("--vocabs", default=",".join(VOCABS))
    p.add_argument("--corpora", default=",".join(c.CORPORA))
    p.add_argument("--mb", type=float, default=1.0,
                   help="MB per run of each corpus, in 4 parts (1.0; less where the corpus has less text)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out", default=None, help="results file (default bench/RESULTS.md)")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        print(json.dumps(child(json.loads(Path(a.child).read_text(encoding="utf-8")))))
        return 0
    libs = [x for x in a.libs.split(",") if x]
    corpora = [x for x in a.corpora.split(",") if x]
    started, load0 = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), c.loadavg()
    work = c.WORK / f"one-process-{time.time_ns()}"
    work.mkdir(parents=True)
    parts, warm, sizes = {}, {}, {}
    for corpus in corpora:
        warm[corpus] = str(work / f"{corpus}-warm.txt")
        Path(warm[corpus]).write_text(c.parts(c.CORPORA[corpus], SECTION_MB)[0], encoding="utf-8", newline="")
        runs = other_parts(c.CORPORA[corpus], a.mb, 4, a.runs)
        sizes[corpus] = sum(len(t.encode()) for t in runs[0]) / 1e6
        parts[corpus] = []
        for k, run in enumerate(runs):
            paths = []
            for i, text in enumerate(run):
                path = work / f"{corpus}-{k}-{i}.txt"
                path.write_text(text, encoding="utf-8", newline="")
                paths.append(str(path))
            parts[corpus].append(paths)
    results = {}
    for vocab in [x for x in a.vocabs.split(",") if x]:
        if vocab == c.EXPORTED:
            c.export_tokenizer_json()
        job = work / f"job-{len(results)}.json"
        job.write_text(json.dumps({"vocab": vocab, "libs": libs, "parts": parts, "warm": warm}), encoding="utf-8")
        log(f"one process: {vocab}")
        results[vocab] = c.run_child([sys.executable, str(HERE / "one_process.py"), "--child", str(job)],
                                     env=c.thread_env(1), cores=1, timeout=3600)
    lines, notes = table(results, libs, corpora)
    text = "\n".join([
        "## Every library in one process, on other text (MB/s, one core; higher is better)", "",
        f"- Machine: {c.machine()}",
        f"- Load average (1 / 5 / 15 min): {load0} at the start, {c.loadavg()} at the end",
        f"- Versions: {c.versions_line(libs)}",
        f"- Date: {started}",
        f"- Command: `python bench/one_process.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
        "- Method: bench/one_process.py's docstring: per vocabulary one process holds every library, each "
        "warmed up on the encode section's first part; each run "
        f"{a.mb:g} MB of each corpus (less where it has less: the sizes below) in 4 parts, text the encode "
        "section does not read, "
        "each library timed once per part on a str of its own, the order turned every part; "
        f"{a.runs} run(s), each on new text; cells median (min–max); ids checked against tiktoken / HF tokenizers.",
        "- Timed text per run: " + ", ".join(f"{k} {v:.2f} MB" for k, v in sizes.items()),
        "", *lines, "", *[f"- {n}" for n in notes]])
    print(text)
    if not a.no_write:
        out = Path(a.out) if a.out else HERE / "RESULTS.md"
        c.write_section(out, SECTION, f"<!-- {SECTION}:start -->\n{text}\n<!-- {SECTION}:end -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
