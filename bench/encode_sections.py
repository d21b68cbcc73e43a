"""bench/peers.py's sections that time fastbpe and its peers encoding text on the shared
vocabularies: encode, short, batch, encodings (full Encodings), worst (worst cases), pretokenize
(the split patterns alone) and --compare-with (before / after).  Each returns markdown rows
(the encode section also charts.py's rows); peers.py's `main` writes them.
"""
from __future__ import annotations

import json
import statistics
from pathlib import Path

import common as c
from common import WORST_CASES, fmt_mbs, log, speed
from peer_run import Run, rate_cell, ratio, reference_lib, summary

SHORT_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]
BATCH_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]


# ------------------------------------------------------------------ encode + short



def encode_jobs(run: Run, libs: list, vocabs: list, corpora: list, short: bool) -> dict:
    """{(lib, vocab): child result} for the encode rows (and short strings on SHORT_VOCABS)."""
    a = run.args
    short_file = None
    if short:
        short_file = run.dir / "short.json"
        if not short_file.exists():
            short_file.write_text(json.dumps(c.short_strings(a.short_n)), encoding="utf-8")
    parts = {label: run.parts(c.CORPORA[label], a.mb) for label in corpora}
    if c.EXPORTED in vocabs:
        try:
            c.export_tokenizer_json(a.root)
        except Exception as e:  # the row shows n/a for every library
            log(f"cannot export cl100k_base to tokenizer.json: {e}")
    results = {}
    # references first, so a peer's "inexact" is known as soon as it finishes
    order = sorted(libs, key=lambda lib: lib not in c.REFERENCE.values())
    for vocab in vocabs:
        for lib in order:
            job = {"kind": "encode", "lib": lib, "vocab": vocab, "parts": parts,
                   "short": str(short_file) if short and vocab in SHORT_VOCABS else None}
            r = run.child(job)
            results[lib, vocab] = r
            log(f"encode {vocab:<42} {lib:<14} " + summary(r))
    return results


def exact(results: dict, lib: str, vocab: str, label: str) -> bool | None:
    """Whether lib's ids equal the reference on every part of (vocab, label); None: no reference."""
    ref = results.get((reference_lib(vocab), vocab), {}).get("rows", {}).get(label)
    row = results.get((lib, vocab), {}).get("rows", {}).get(label)
    if ref is None or row is None:
        return None
    return row["digests"] == ref["digests"]


def cell(run: Run, results: dict, lib: str, vocab: str, label: str) -> tuple[str, float | None]:
    """(text, MB/s when exact) of one encode cell."""
    r = results.get((lib, vocab))
    if r is None:
        return "–", None
    if "unavailable" in r:
        run.note(f"enc:{lib}:{r['unavailable']}", f"{lib} n/a on {vocab}: {r['unavailable']}")
        return "n/a", None
    if "error" in r:
        run.note(f"enc:{lib}:{vocab}:error", f"{lib} on {vocab} failed: {r['error']}")
        return "error", None
    row = r["rows"][label]
    v = speed(row)
    ok = exact(results, lib, vocab, label)
    if ok is False:
        return "inexact", None
    return fmt_mbs(v) + ("" if ok else " (unchecked)"), v


def encode_value(run: Run, results_runs: list, lib: str, vocab: str, label: str) -> tuple:
    """(cell text, median, min, max) of one library's MB/s over the runs; the numbers are None
    unless the library was exact and measured in every run."""
    texts, values = [], []
    for results in results_runs:
        t, v = cell(run, results, lib, vocab, label)
        texts.append(t)
        values.append(v)
    if any(t == "inexact" for t in texts):
        return "inexact", None, None, None
    if not all(v is not None for v in values):
        return texts[0], None, None, None
    v = statistics.median(values)
    shown = fmt_mbs(v) + (f" ({fmt_mbs(min(values))}–{fmt_mbs(max(values))})" if len(values) > 1 else "")
    return shown, v, min(values), max(values)


def encode_table(run: Run, results_runs: list, libs: list, vocabs: list, corpora: list) -> list[str]:
    """Markdown rows; with several runs a cell is "median (min–max)"."""
    peers = [lib for lib in libs if lib not in c.REFERENCE.values()]
    head = ["vocab", "corpus", *peers, "tiktoken / HF", "best exact / fastbpe"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|" + "---:|" * (len(head) - 2)]
    for vocab in vocabs:
        for label in corpora:
            cells, best, ours = [], None, None
            for lib in peers + [reference_lib(vocab)]:
                shown, v, _, _ = encode_value(run, results_runs, lib, vocab, label)
                if lib == reference_lib(vocab) and lib == "HF tokenizers" and v is not None:
                    shown = "HF " + shown
                cells.append(shown)
                if lib == "fastbpe":
                    ours = v
                elif v is not None:
                    best = v if best is None else max(best, v)
            lines.append(f"| {vocab} | {label} | " + " | ".join(cells) + f" | {ratio(best, ours)} |")
    lines += same_kernel_lines(results_runs, corpora)
    return lines


def encode_chart_rows(run: Run, results_runs: list, libs: list, vocabs: list, corpora: list) -> list[dict]:
    """The encode table's exact cells as charts.py's rows (cl100k_base as tokenizer.json is left
    out: it is fastbpe's second front end on the same vocabulary, not a row of the comparison)."""
    rows = []
    for vocab in vocabs:
        if vocab == c.EXPORTED:
            continue
        for label in corpora:
            values = {}
            for lib in libs:
                _, v, lo, hi = encode_value(run, results_runs, lib, vocab, label)
                if v is not None:
                    values[lib] = (v, lo, hi)
            rows.append({"group": vocab.replace(" tokenizer.json", "").replace("DeepSeek-R1-Distill-",
                                                                                "DeepSeek-"),
                         "corpus": label, "values": values})
    return rows


def same_kernel_lines(results_runs: list, corpora: list) -> list[str]:
    """fastbpe behind tokenizer.json vs behind get_encoding on the same vocabulary (cl100k_base)."""
    out = []
    for label in corpora:
        rt = []
        for results in results_runs:
            j = results.get(("fastbpe", c.EXPORTED), {}).get("rows", {}).get(label)
            g = results.get(("fastbpe", "cl100k_base"), {}).get("rows", {}).get(label)
            if j and g:
                rt.append(speed(j) / speed(g))
        if rt:
            out.append(f"{label} {statistics.median(rt):.2f}")
    if not out:
        return []
    return ["", "Same kernel, two front ends: fastbpe `Tokenizer.from_file(cl100k_base exported as tokenizer.json)"
            "`.encode_ids over `get_encoding(\"cl100k_base\")`.encode_ordinary, MB/s ratio (target ≥ 0.90): "
            + ", ".join(out) + "."]


def short_table(run: Run, results: dict, libs: list) -> list[str]:
    peers = [lib for lib in libs if lib not in c.REFERENCE.values()]
    head = ["call", *peers, "tiktoken / HF", "best exact / fastbpe"]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for vocab in SHORT_VOCABS:
        ref = results.get((reference_lib(vocab), vocab), {}).get("short")
        cells, best, ours = [], None, None
        for lib in peers + [reference_lib(vocab)]:
            r = results.get((lib, vocab), {})
            s = r.get("short")
            if s is None:
                why = r.get("short_unavailable") or r.get("unavailable") or r.get("error") or "not run"
                run.note(f"short:{lib}:{why}", f"{lib} short strings n/a on {vocab}: {why}")
                cells.append("n/a")
                continue
            if ref is not None and s["digest"] != ref["digest"]:
                cells.append("inexact")
                continue
            cells.append(("HF " if lib == "HF tokenizers" else "") + f"{s['us']:.2f}")
            if lib == "fastbpe":
                ours = s["us"]
            else:
                best = s["us"] if best is None else min(best, s["us"])
        call = ("`encode_ordinary(s)`, " if c.VOCABS[vocab][0] == "tiktoken"
                else "`encode(s, add_special_tokens=False).ids`, ") + vocab
        lines.append(f"| {call} | " + " | ".join(cells) + f" | {ratio(ours, best)} |")
    return lines


# ------------------------------------------------------------------ batch


def batch_results(run: Run, libs: list, corpora: list) -> dict:
    a = run.args
    parts = {label: run.parts(c.CORPORA[label], a.mb) for label in corpora}
    results = {}
    for vocab in BATCH_VOCABS:
        for k in (1, 2):
            for lib in sorted(libs, key=lambda lib: lib not in c.REFERENCE.values()):
                job = {"kind": "batch", "lib": lib, "vocab": vocab, "threads": k, "parts": parts,
                       "doc_size": a.doc_size}
                r = run.child(job, cores=k)
                results[lib, vocab, k] = r
                log(f"batch  {vocab:<24} {k} thr {lib:<14} " + summary(r))
    return results


def batch_table(run: Run, results: dict, libs: list, corpora: list) -> list[str]:
    peers = [lib for lib in libs if lib not in c.REFERENCE.values()]
    head = ["vocab", "corpus", "threads", *peers, "tiktoken / HF", "best exact / fastbpe"]
    lines = ["| " + " | ".join(head) + " |", "|---|---|---:|" + "---:|" * (len(head) - 3)]
    for vocab in BATCH_VOCABS:
        ref_lib = reference_lib(vocab)
        for label in corpora:
            for k in (1, 2):
                ref = results.get((ref_lib, vocab, k), {}).get("rows", {}).get(label)
                cells, best, ours = [], None, None
                for lib in peers + [ref_lib]:
                    text, v = rate_cell(run, results.get((lib, vocab, k), {}), label, ref,
                                        (f"batch:{lib}", f"{lib} batch n/a on {vocab}: "), "inexact")
                    if v is None:
                        cells.append(text)
                        continue
                    text = ("HF " if lib == "HF tokenizers" else "") + text
                    one = results.get((lib, vocab, 1), {}).get("rows", {}).get(label)
                    if k == 2 and one:
                        text += f" ({v / speed(one):.2f}×)"
                    cells.append(text)
                    if lib == "fastbpe":
                        ours = v
                    else:
                        best = v if best is None else max(best, v)
                lines.append(f"| {vocab} | {label} | {k} | " + " | ".join(cells)
                             + f" | {ratio(best, ours)} |")
    return lines


# ------------------------------------------------------------------ full Encodings


ENCODINGS_LIBS = ["fastbpe", "HF tokenizers"]


def encodings_rows(run: Run, vocabs: list, corpora: list) -> list[str]:
    parts = {label: run.parts(c.CORPORA[label], run.args.mb) for label in corpora}
    vocabs = [v for v in vocabs if c.VOCABS[v][0] == "json"]
    res = {}
    for vocab in vocabs:
        for k in (1, 2):
            for lib in ENCODINGS_LIBS:
                res[lib, vocab, k] = run.child({"kind": "encodings", "lib": lib, "vocab": vocab, "threads": k,
                                                "parts": parts, "doc_size": run.args.doc_size}, cores=k)
                log(f"encodings {vocab:<42} {k} thr {lib:<14} "
                    + json.dumps({kk: v for kk, v in res[lib, vocab, k].items() if kk != "rows"})[:80])
    lines = ["| vocab | corpus | threads | fields read | fastbpe | HF tokenizers | fastbpe / HF |",
             "|---|---|---:|---|---:|---:|---:|"]
    for vocab in vocabs:
        for label in corpora:
            for k in (1, 2):
                ref = res["HF tokenizers", vocab, k].get("rows", {}).get(label)
                for field, desc in (("ids", "ids, attention_mask"), ("all", "every field")):
                    vals, cells = {}, []
                    for lib in ENCODINGS_LIBS:
                        text, v = rate_cell(run, res[lib, vocab, k], label, ref, (f"encodings:{lib}", f"{lib}: "),
                                            value=lambda row: sum(row["bytes"]) / sum(row[field]) / 1e6)
                        cells.append(text)
                        if v is not None:
                            vals[lib] = v
                    rt = (f"{vals['fastbpe'] / vals['HF tokenizers']:.1f}×"
                          if len(vals) == 2 else "–")
                    lines.append(f"| {vocab} | {label} | {k} | {desc} | " + " | ".join(cells) + f" | {rt} |")
    return lines


# ------------------------------------------------------------------ worst cases


def worst_rows(run: Run, libs: list) -> list[str]:
    """One fresh process per (library, vocabulary, input): some peers crash on these."""
    wl = [lib for lib in libs if lib not in ("HF tokenizers", "tokie")]
    lines = ["| encoding | input | " + " | ".join(wl) + " |", "|---|---|" + "---:|" * len(wl)]
    for vocab in ("cl100k_base", "o200k_base"):
        for case in WORST_CASES:
            res = {lib: run.child({"kind": "worst", "lib": lib, "vocab": vocab, "case": case}, timeout=300)
                   for lib in wl}
            digests = [r.get("digest") for r in res.values() if r.get("digest")]
            want = res.get("tiktoken", {}).get("digest")
            if want is None and digests:  # tiktoken failed: the ids most peers agree on
                want = max(set(digests), key=digests.count)
            cells = []
            for lib in wl:
                r = res[lib]
                if "unavailable" in r:
                    cells.append("n/a")
                elif "error" in r:
                    run.note(f"worst:{lib}:{r['error'][:40]}", f"worst case, {lib}: {r['error']}")
                    cells.append("fails")
                elif r["digest"] != want:
                    cells.append("inexact")
                else:
                    cells.append(f"{r['wall']:.3f} / {r['cpu']:.3f}")
            lines.append(f"| {vocab} | {case} | " + " | ".join(cells) + " |")
            log(f"worst  {lines[-1]}")
    return lines


# ------------------------------------------------------------------ pre-tokenizing


def pretokenize_rows(run: Run, corpora: list) -> list[str]:
    parts = {label: run.parts(c.CORPORA[label], run.args.mb) for label in corpora}
    r = run.child({"kind": "pretokenize", "parts": parts})
    if "rows" not in r:
        return [f"error: {r.get('error')}"]
    lines = ["| pattern | corpus | path | Splitter.findall (MB/s) | regex.findall (MB/s) | speed-up |",
             "|---|---|---|---:|---:|---:|"]
    for key, row in r["rows"].items():
        name, label = key.split("|")
        n = sum(row["bytes"])
        path = "C scanner" if row["scanner"] else "regex"
        if not row["same"]:
            lines.append(f"| {name} | {label} | {path} | pieces differ | | |")
            continue
        ours, theirs = n / sum(row["ours"]) / 1e6, n / sum(row["regex"]) / 1e6
        lines.append(f"| {name} | {label} | {path} | {fmt_mbs(ours)} | {fmt_mbs(theirs)} | {ours / theirs:.1f}× |")
    log("pretokenize done")
    return lines


# ------------------------------------------------------------------ before / after


def compare_rows(run: Run, vocabs: list, corpora: list) -> list[str]:
    """fastbpe of this checkout (after) vs --compare-with (before), encode rows and short strings,
    the two interleaved --runs times in fresh processes; best MB/s of each, after / before."""
    a = run.args
    other = str(Path(a.compare_with).resolve())
    parts = {label: run.parts(c.CORPORA[label], a.mb) for label in corpora}
    short_file = run.dir / "short.json"
    if not short_file.exists():
        short_file.write_text(json.dumps(c.short_strings(a.short_n)), encoding="utf-8")
    speeds: dict = {}
    for rnd in range(a.runs):
        for vocab in vocabs:
            for side, root in (("before", other), ("after", a.root)):
                job = {"kind": "encode", "lib": "fastbpe", "vocab": vocab, "parts": parts, "root": root,
                       "short": str(short_file) if vocab in SHORT_VOCABS else None}
                r = run.child(job)
                log(f"compare round {rnd + 1} {side:<6} {vocab:<42} " + summary(r))
                if "rows" not in r:
                    speeds.setdefault((vocab, "error"), r.get("error") or r.get("unavailable"))
                    continue
                for label, row in r["rows"].items():
                    speeds.setdefault((vocab, label, side), []).append(speed(row))
                    speeds.setdefault((vocab, label, side, "digests"), row["digests"])
                if "short" in r:
                    speeds.setdefault((vocab, "short", side), []).append(1 / r["short"]["us"])
    lines = ["| vocab | input | before (MB/s) | after (MB/s) | after / before | same ids |",
             "|---|---|---:|---:|---:|---|"]
    for vocab in vocabs:
        for label in [*corpora, "short"]:
            b, af = speeds.get((vocab, label, "before")), speeds.get((vocab, label, "after"))
            if not b or not af:
                continue
            mb, ma = max(b), max(af)
            same = speeds.get((vocab, label, "before", "digests")) == speeds.get((vocab, label, "after", "digests"))
            if label == "short":
                lines.append(f"| {vocab} | short strings (µs a call) | {1 / mb:.2f} | {1 / ma:.2f} | "
                             f"{ma / mb:.3f} | – |")
            else:
                lines.append(f"| {vocab} | {label} | {fmt_mbs(mb)} | {fmt_mbs(ma)} | {ma / mb:.3f} | "
                             f"{'yes' if same else '**no**'} |")
    return lines
