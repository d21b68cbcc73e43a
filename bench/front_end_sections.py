"""bench/peers.py's sections for the ways in other than an encode call: load (a fresh process's
import + load + first encode, tiktoken-style and tokenizer.json), transformers (AutoTokenizer
stock vs patched) and gguf (llama.cpp's vocab files vs HF tokenizers on the same vocabulary).
"""
from __future__ import annotations

import statistics
from pathlib import Path

import common as c
from common import fmt_mbs, log, speed
import gguf_libs
from peer_run import Run, rate_cell, summary

HF_MODEL = "qwen2.5"


# ------------------------------------------------------------------ load


LOAD_CASES = {
    'import + get_encoding("o200k_base") + first encode': {
        "fastbpe": "import fastbpe\nt = fastbpe.get_encoding('o200k_base')\nt.encode('hello world')",
        "tiktoken": "import tiktoken\nt = tiktoken.get_encoding('o200k_base')\nt.encode('hello world')",
        "fastokens": "import fastokens\nt = fastokens.Tokenizer.from_tiktoken({o200k!r}, encoding='o200k_base')\n"
                     "t.encode_ordinary('hello world')",
        "splintr-rs": "import splintr\nt = splintr.Tokenizer.from_pretrained('o200k_base')\n"
                      "t.encode_ordinary('hello world')",
        "quicktok-v1": "import quicktok\nt = quicktok.get_encoding('o200k_base')\nt.encode('hello world')",
        "rs-bpe": "from rs_bpe.bpe import openai\nt = openai.o200k_base()\nt.encode('hello world')",
        "kitoken": "import kitoken\nt = kitoken.Kitoken.from_tiktoken_file({o200k!r})\nt.encode('hello world')",
    },
    "import + Tokenizer.from_file(Qwen2.5 tokenizer.json) + first encode": {
        "fastbpe": "import fastbpe\nt = fastbpe.Tokenizer.from_file({qwen!r})\nt.encode('hello world')",
        "HF tokenizers": "import tokenizers\nt = tokenizers.Tokenizer.from_file({qwen!r})\nt.encode('hello world')",
        "fastokens": "import fastokens\nt = fastokens.Tokenizer.from_file({qwen!r})\nt.encode('hello world')",
        "splintr-rs": "import splintr\nt = splintr.from_json({qwen!r})\nt.encode_ordinary('hello world')",
        "tokie": "import tokie\nt = tokie.Tokenizer.from_json({qwen!r})\nt.encode('hello world')",
        "kitoken": "import kitoken\nt = kitoken.Kitoken.from_tokenizers_file({qwen!r})\nt.encode('hello world')",
    },
}


def load_section_rows(run: Run, libs: list) -> list[str]:
    import tempfile

    cache = Path(tempfile.mkdtemp(prefix="tiktoken-cache-", dir=run.dir))
    c.ds.populate_tiktoken_cache(cache)  # tiktoken reads its offline cache: no download
    try:
        o200k = c.tiktoken_file("o200k_base")
    except c.Unavailable:
        o200k = ""
    qwen = c.VOCABS["Qwen2.5 tokenizer.json"][1]
    lines = ["| case | library | seconds (median) | peak memory (MB) |", "|---|---|---:|---:|"]
    baseline = _load_once("", cache, run)
    lines.append(f"| interpreter alone | – | – | {baseline.get('peak_mb', 0):.0f} |")
    for case, snippets in LOAD_CASES.items():
        for lib, code in snippets.items():
            if lib not in libs:
                continue
            code = code.format(o200k=o200k, qwen=qwen)
            runs = [_load_once(code, cache, run) for _ in range(run.args.load_runs)]
            ok = [r for r in runs if "error" not in r]
            if not ok:
                why = runs[0]["error"]
                run.note(f"load:{lib}:{case}", f"{lib} load n/a ({case}): {why}")
                lines.append(f"| {case} | {lib} | n/a | |")
            else:
                secs = statistics.median(r["seconds"] for r in ok)
                peak = statistics.median(r["peak_mb"] for r in ok)
                lines.append(f"| {case} | {lib} | {secs:.3f} | {peak:.0f} |")
            log(f"load   {lib:<14} {lines[-1]}")
    return lines


def _load_once(code: str, cache: Path, run: Run) -> dict:
    return c.fresh_process_seconds(code, run.args.root, {"TIKTOKEN_CACHE_DIR": str(cache)})


# ------------------------------------------------------------------ transformers


def transformers_rows(run: Run) -> list[str]:
    a = run.args
    model_dir = str(c.HF_DIR / HF_MODEL)
    docs = run.parts("large_en", a.mb, tag="tf-docs")
    long = run.parts("large_en", a.long_mb * 4, tag="tf-long")
    results = {}
    for k in (1, 2):
        for mode in ("stock", "fastbpe", "fastokens"):
            job = {"kind": "transformers", "mode": mode, "model_dir": model_dir, "docs": docs,
                   "long": long, "doc_size": a.doc_size}
            r = run.child(job, cores=k)
            results[mode, k] = r
            log(f"transformers {mode:<10} {k} core(s) " + summary(r))
    lines = ["| input | cores | stock transformers | fastbpe.patch_transformers() | "
             "fastokens.patch_transformers() | fastbpe / stock |", "|---|---:|---:|---:|---:|---:|"]
    for label, desc in (("docs", f"`tok(docs)`, {a.doc_size / 1000:g} kB English documents"),
                        ("long", f"`tok(long_doc)`, {a.long_mb * 1000:g} kB English")):
        for k in (1, 2):
            ref = results[("stock", k)].get("rows", {}).get(label)
            cells, vals = [], {}
            for mode in ("stock", "fastbpe", "fastokens"):
                text, v = rate_cell(run, results[mode, k], label, ref, (f"tf:{mode}", f"transformers, {mode}: n/a: "))
                cells.append(text)
                if v is not None:
                    vals[mode] = v
            sp = f"{vals['fastbpe'] / vals['stock']:.2f}×" if "fastbpe" in vals and "stock" in vals else "n/a"
            lines.append(f"| {desc} | {k} | " + " | ".join(cells) + f" | {sp} |")
    return lines


# ------------------------------------------------------------------ GGUF


def gguf_rows(run: Run, corpora: list) -> list[str]:
    parts = {label: run.parts(c.CORPORA[label], run.args.mb) for label in corpora}
    lines = ["| GGUF vocab | fastbpe path | corpus | fastbpe `GGUFTokenizer` | HF tokenizers | fastbpe / HF |",
             "|---|---|---|---:|---:|---:|"]
    for name in gguf_libs.GGUF_NAMES:
        res = {lib: run.child({"kind": "gguf", "lib": lib, "name": name, "parts": parts})
               for lib in ("fastbpe", "HF tokenizers")}
        log(f"gguf   {name:<16} " + " | ".join(f"{lib}: {summary(r)}" for lib, r in res.items()))
        ours, ref = res["fastbpe"], res["HF tokenizers"]
        for label in corpora:
            cells, vals = [], {}
            for lib, r in res.items():
                if "rows" not in r:
                    why = r.get("unavailable") or r.get("error")
                    run.note(f"gguf:{lib}:{why}", f"GGUF {name}, {lib}: {why}")
                    cells.append("n/a")
                    continue
                vals[lib] = speed(r["rows"][label])
                cells.append(fmt_mbs(vals[lib]))
            same = ("rows" in ours and "rows" in ref
                    and ours["rows"][label]["digests"] == ref["rows"][label]["digests"])
            if "rows" in ours and "rows" in ref and not same:
                cells[0] = "inexact"
            rt = f"{vals['fastbpe'] / vals['HF tokenizers']:.1f}×" if same and len(vals) == 2 else "–"
            lines.append(f"| {name} | {ours.get('how', '–')} | {label} | " + " | ".join(cells) + f" | {rt} |")
    return lines
