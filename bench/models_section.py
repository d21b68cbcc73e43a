"""The `models` section of bench/peers.py: every shared tokenizer.json, fastbpe against HF
tokenizers and fastokens, and issue 28's targets row by row.

Files: every `vocab/hf/<family>/tokenizer.json` of the shared data (`common.model_files`,
discovered, none named here).  Per file, each in a fresh process pinned to one core
(RAYON_NUM_THREADS=1), on the encode section's parts of each corpus cut into ~2 kB documents:
fastbpe `encode_batch` with `.ids` read, fastbpe `encode_ids_batch`, HF tokenizers
`encode_batch`, fastokens `encode_batch` (all without special tokens, truncation off); the
first part warms up, each other part is timed once, the first time that process sees it; ids
checked after timing against HF's.  Then the engine fastbpe reports for the file
(`Tokenizer.engine`), loading in a fresh process (import + from_file + first encode, fastbpe vs
HF) and the worst cases (1 MiB of one kind of character, fastbpe's `encode_ids`, ids checked
against HF's).

Child side: `child_batch`, `child_worst` (registered in peers.py's CHILDREN as "models_batch",
"models_worst").  Parent side: `rows(run, corpora)` -> the section's markdown lines.
"""
from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import common as c
from common import fmt_mbs, log, read_text, speed, timed_parts

TITLE = ("## Every shared tokenizer.json: fastbpe vs HF tokenizers vs fastokens "
         "(`encode_batch`, MB/s, one core; higher is better)")
TARGET_VS_HF = 5.0        # issue 28: every file >= 5x HF tokenizers ...
TARGET_VS_FASTOKENS = 1.0  # ... and at least as fast as fastokens ...
TARGET_VS_PLAIN = 0.5      # ... and no file more than 2x slower than the plain byte-level rows
TARGET_WORST_S = 0.1       # worst cases: < 0.1 s a call
LOAD_CODE = {
    "fastbpe": "import fastbpe\nt = fastbpe.Tokenizer.from_file({path!r})\nt.encode('hello world')",
    "HF tokenizers": "import tokenizers\nt = tokenizers.Tokenizer.from_file({path!r})\nt.encode('hello world')",
}


def method(a) -> list[str]:
    return [
        f"Method: every `tokenizer.json` under the shared data's `vocab/hf/*/` (found, not listed); "
        f"each corpus's {a.mb:g} MB in 4 parts (the encode section's) cut into ~{a.doc_size}-character "
        "documents; per file and library a fresh process pinned to one core (RAYON_NUM_THREADS=1): the "
        "first part warms up, each other part is one timed call, the first time that process sees it "
        "(documents are fresh str objects in each process); MB/s = timed bytes / summed time. Ids of "
        "every part checked after timing against HF tokenizers': \"inexact\" when any part differs.",
        "Calls (no special tokens, `no_truncation()` on every side): fastbpe `Tokenizer.from_file(p)"
        ".encode_batch(docs, add_special_tokens=False, num_threads=1)` then `.ids` of each, and "
        "`.encode_ids_batch(docs, add_special_tokens=False, num_threads=1)`; HF tokenizers and fastokens "
        "`Tokenizer.from_file(p).encode_batch(docs, add_special_tokens=False)` then `.ids` of each. "
        "engine = fastbpe's `Tokenizer.engine` for the file (\"?\": this build has none; the notes give "
        "a pipeline's reason). fastbpe/HF and fastbpe/fastokens use fastbpe's `encode_batch` column.",
        f"Loading: `python -c` timing import + `Tokenizer.from_file` + one encode inside a fresh process, "
        f"median of {a.load_runs}. Worst cases: one `encode_ids(text, add_special_tokens=False)` call on "
        "1 MiB of one character / letters / spaces / digits, a fresh fastbpe process per call, wall / "
        "CPU seconds (the target is judged on CPU seconds: on a shared machine wall time counts "
        "other jobs); ids checked against HF's `encode(text, add_special_tokens=False).ids`.",
    ]


# ================================================================== child side


def child_batch(job: dict) -> dict:
    """One library on one file: the timed parts of every corpus."""
    try:
        fn, engine = c.model_batcher(job["lib"], job["path"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    out = {"engine": engine, "rows": {}}
    for label, paths in job["parts"].items():
        batches = [c.documents(read_text(p), job["doc_size"]) for p in paths]
        seconds, results = timed_parts(fn, batches)
        out["rows"][label] = {"seconds": seconds,
                              "bytes": [sum(len(d.encode()) for d in b) for b in batches[1:]],
                              "digests": [c.digest_many(r) for r in results]}
    return out


def child_worst(job: dict) -> dict:
    """fastbpe: one timed encode_ids call per case; HF tokenizers: the reference ids of each case."""
    lib = job["lib"]
    try:
        tok = c.load_model(lib, job["path"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    if lib == "fastbpe":
        def fn(s):
            return tok.encode_ids(s, add_special_tokens=False)
    else:
        def fn(s):
            return tok.encode(s, add_special_tokens=False).ids
    fn("warm up")
    cases = {}
    for case in job["cases"]:
        text = c.WORST_CASES[case]()
        t0, p0 = time.perf_counter(), time.process_time()
        try:
            ids = fn(text)
        except Exception as e:
            cases[case] = {"error": f"{type(e).__name__}: {str(e)[:100]}"}
            continue
        cases[case] = {"wall": time.perf_counter() - t0, "cpu": time.process_time() - p0, "digest": c.digest(ids)}
    return {"cases": cases}


CHILDREN = {"models_batch": child_batch, "models_worst": child_worst}


# ================================================================== parent side


def _byte_symbols() -> set[str]:
    """GPT-2's 256 byte symbols (the ByteLevel alphabet)."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    extra = [b for b in range(256) if b not in printable]
    return {chr(b) for b in printable} | {chr(256 + i) for i in range(len(extra))}


def plain_byte_level(spec: dict) -> bool:
    """The shape fastbpe ran on its kernel before issue 28: no normalizer or NFC; ByteLevel with
    its regex, or one Isolated Split then ByteLevel without; a BPE model with every byte symbol,
    no prefix/suffix, no byte fallback."""
    norm = spec.get("normalizer") or {}
    if norm.get("type") == "Sequence" and not norm.get("normalizers"):
        norm = {}
    if norm and norm.get("type") != "NFC":
        return False
    pre = spec.get("pre_tokenizer") or {}
    steps = pre.get("pretokenizers", []) if pre.get("type") == "Sequence" else [pre]
    kinds = [s.get("type") for s in steps]
    if kinds == ["ByteLevel"]:
        shape = steps[0].get("use_regex", True)
    elif kinds == ["Split", "ByteLevel"]:
        shape = (steps[0].get("behavior") == "Isolated" and not steps[0].get("invert")
                 and not steps[1].get("use_regex", True))
    else:
        shape = False
    model = spec.get("model") or {}
    return bool(shape and model.get("type") == "BPE" and not model.get("byte_fallback")
                and not model.get("continuing_subword_prefix") and not model.get("end_of_word_suffix")
                and _byte_symbols() <= set(model.get("vocab", {})))


def _engine_cell(run, name: str, res: dict) -> str:
    for lib in ("fastbpe", "fastbpe ids"):
        r = res.get((name, lib), {})
        if "engine" in r:
            engine = r["engine"]
            short, _, why = engine.partition(" (")
            if why:
                run.note(f"models:engine:{name}", f"{name}: fastbpe's engine is {engine}")
            return short
    return "fails to load" if "unavailable" in res.get((name, "fastbpe"), {}) else "–"


def _value(run, res: dict, name: str, lib: str, label: str) -> tuple[str, float | None]:
    """(cell text, MB/s when exact) of one library on one file and corpus."""
    r = res.get((name, lib), {})
    if "rows" not in r:
        why = r.get("unavailable") or r.get("error") or "not run"
        run.note(f"models:{lib}:{name}", f"{lib} n/a on {name}: {why}")
        return "n/a", None
    ref = res.get((name, "HF tokenizers"), {}).get("rows", {}).get(label)
    row = r["rows"][label]
    v = speed(row)
    if ref is None and lib != "HF tokenizers":
        return fmt_mbs(v) + " (unchecked)", v
    if ref is not None and row["digests"] != ref["digests"]:
        return "inexact", None
    return fmt_mbs(v), v


def _mark(value: float | None, target: float, shown: str) -> str:
    if value is None:
        return "–"
    return f"met ({shown})" if value >= target else f"**missed** ({shown})"


def _load_seconds(run, lib: str, path: str) -> float | None:
    runs = [c.fresh_process_seconds(LOAD_CODE[lib].format(path=path), run.args.root)
            for _ in range(run.args.load_runs)]
    ok = [r["seconds"] for r in runs if "seconds" in r]
    if not ok:
        run.note(f"models:load:{lib}:{path}", f"loading {path} with {lib} failed: {runs[0].get('error')}")
        return None
    return statistics.median(ok)


def _worst(run, path: str) -> tuple[list[str], str]:
    """(a cell per worst case, the target's mark) for fastbpe on one file: one fresh process per
    call (as the worst section), then HF tokenizers' ids of every case in one process."""
    got = {}
    for case in c.WORST_CASES:
        r = run.child({"kind": "models_worst", "lib": "fastbpe", "path": path, "cases": [case]}, timeout=300)
        if "unavailable" in r:
            return ["n/a"] * len(c.WORST_CASES), "–"
        got[case] = r.get("cases", {}).get(case) or {"error": r.get("error", "no result")}
    ref = run.child({"kind": "models_worst", "lib": "HF tokenizers", "path": path, "cases": list(c.WORST_CASES)},
                    timeout=run.args.timeout)
    if "cases" not in ref:
        run.note(f"models:worst-ref:{path}", f"HF tokenizers' worst-case ids for {path}: "
                 f"{ref.get('unavailable') or ref.get('error')}")
    cells, met = [], True
    for case, g in got.items():
        if "error" in g:
            run.note(f"models:worst:{path}:{case}", f"worst case {case!r} on {path}: {g['error']}")
            cells.append("fails")
            met = False
            continue
        want = ref.get("cases", {}).get(case, {}).get("digest")
        times = f"{g['wall']:.3f} / {g['cpu']:.3f}"
        if want is not None and g["digest"] != want:
            cells.append(f"inexact ({times})")
            met = False
            continue
        cells.append(times + ("" if want else " (unchecked)"))
        met = met and g["cpu"] < TARGET_WORST_S
    return cells, "met" if met else "**missed**"


CHART_LIBS = {"fastbpe": "fastbpe encode_batch", "fastbpe ids": "fastbpe encode_ids_batch", "HF tokenizers": "HF tokenizers",
              "fastokens": "fastokens"}


def chart_rows(speeds: dict, files: dict, corpora: list) -> list[dict]:
    """The exact cells as bench/charts.py's rows (one run: median = low = high)."""
    return [{"group": name, "corpus": label,
             "values": {shown: (v, v, v) for lib, shown in CHART_LIBS.items()
                        if (v := speeds.get((name, label, lib))) is not None}}
            for name in files for label in corpora]


def rows(run, corpora: list) -> list[str]:
    a = run.args
    files = c.model_files(a.model_dir)
    if not files:
        return [f"n/a: no tokenizer.json under {a.model_dir or c.HF_DIR} (shared data absent)"]
    parts = {label: run.parts(c.CORPORA[label], a.mb) for label in corpora}
    res: dict = {}
    for name, path in files.items():
        for lib in c.MODEL_LIBS:  # HF first: the reference
            res[name, lib] = r = run.child({"kind": "models_batch", "lib": lib, "path": path, "parts": parts,
                                            "doc_size": a.doc_size}, timeout=a.timeout)
            bits = ("error: " + r["error"] if "error" in r else "n/a" if "unavailable" in r
                    else ", ".join(f"{lb} {speed(row):.1f}" for lb, row in r["rows"].items()))
            log(f"models {name:<30} {lib:<14} {bits}")
    plain = [name for name, path in files.items()
             if plain_byte_level(json.loads(Path(path).read_text(encoding="utf-8")))]

    lines = ["| file | engine | corpus | fastbpe encode_batch | fastbpe encode_ids_batch | HF | fastokens "
             "| fastbpe/HF | fastbpe/fastokens |", "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    speeds: dict = {}
    for name in files:
        engine = _engine_cell(run, name, res)
        for label in corpora:
            cells = {}
            for lib in ("fastbpe", "fastbpe ids", "HF tokenizers", "fastokens"):
                cells[lib], speeds[name, label, lib] = _value(run, res, name, lib, label)
            ours, hf, fo = (speeds[name, label, lib] for lib in ("fastbpe", "HF tokenizers", "fastokens"))
            vs_hf = f"{ours / hf:.1f}×" if ours and hf else "–"
            vs_fo = f"{ours / fo:.2f}×" if ours and fo else "–"
            lines.append(f"| {name} | {engine} | {label} | {cells['fastbpe']} | {cells['fastbpe ids']} | "
                         f"HF {cells['HF tokenizers']} | {cells['fastokens']} | {vs_hf} | {vs_fo} |")

    run.charts["models"] = chart_rows(speeds, files, corpora)
    base = {}
    for label in corpora:
        vals = [speeds[n, label, "fastbpe"] for n in plain if speeds.get((n, label, "fastbpe"))]
        base[label] = statistics.median(vals) if vals else None
    lines += ["", "Targets (issue 28), judged on fastbpe's `encode_batch`: every file ≥ 5× HF tokenizers, at "
              "least as fast as fastokens, and no file more than 2× slower than fastbpe's own plain "
              "byte-level rows (≥ ½ the median of the plain files on the same corpus: "
              + (", ".join(plain) or "none here") + "; "
              + ", ".join(f"{label} {fmt_mbs(base[label])} MB/s" for label in corpora) + "). "
              "Plain byte-level = no normalizer or NFC, ByteLevel alone or after one Isolated Split, "
              "BPE with all 256 byte symbols, no prefix/suffix/byte fallback.", "",
              "| file | corpus | ≥ 5× HF | ≥ fastokens | ≥ ½ plain byte-level |", "|---|---|---|---|---|"]
    counts = {"hf": [0, 0], "fo": [0, 0], "plain": [0, 0]}
    for name in files:
        for label in corpora:
            ours, hf, fo = (speeds[name, label, lib] for lib in ("fastbpe", "HF tokenizers", "fastokens"))
            marks = {"hf": (ours / hf if ours and hf else None, TARGET_VS_HF, "×"),
                     "fo": (ours / fo if ours and fo else None, TARGET_VS_FASTOKENS, "×"),
                     "plain": (ours / base[label] if ours and base[label] else None, TARGET_VS_PLAIN, "× plain")}
            texts = []
            for key, (v, target, unit) in marks.items():
                texts.append(_mark(v, target, f"{v:.2f}{unit}" if v is not None else ""))
                if v is not None:
                    counts[key][0] += v >= target
                    counts[key][1] += 1
            if ours is None:  # fastbpe failed or is inexact: every target missed
                texts = ["**missed** (no exact fastbpe result)"] * 3
                for key in counts:
                    counts[key][1] += 1
            lines.append(f"| {name} | {label} | " + " | ".join(texts) + " |")
    lines += ["", "Rows meeting each target: " + ", ".join(
        f"{what} {m} of {n}" for what, (m, n) in zip(("≥ 5× HF", "≥ fastokens", "≥ ½ plain"), counts.values())) + "."]

    log("models: the speed table and its targets (the per-file table follows)\n" + "\n".join(lines))
    lines += ["", "Per file: the engine, loading in a fresh process (seconds, median; target: no slower than HF "
              "tokenizers) and the worst cases (wall / CPU seconds of one fastbpe `encode_ids` call on 1 MiB; "
              f"target < {TARGET_WORST_S:g} CPU seconds each, ids equal to HF's):", "",
              "| file | engine | load fastbpe (s) | load HF (s) | load ≤ HF | "
              + " | ".join(c.WORST_CASES) + " | worst < 0.1 s CPU |", "|---|---|---:|---:|---|" + "---:|" * len(c.WORST_CASES) + "---|"]
    for name, path in files.items():
        ours, hf = _load_seconds(run, "fastbpe", path), _load_seconds(run, "HF tokenizers", path)
        load_mark = _mark(hf / ours if ours and hf else None, 1.0, f"{ours / hf:.2f}× HF" if ours and hf else "")
        worst, worst_mark = _worst(run, path)
        lines.append(f"| {name} | {_engine_cell(run, name, res)} | "
                     + " | ".join("n/a" if x is None else f"{x:.3f}" for x in (ours, hf))
                     + f" | {load_mark} | " + " | ".join(worst) + f" | {worst_mark} |")
        log(f"models {lines[-1]}")
    return lines
