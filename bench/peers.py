#!/usr/bin/env python3
"""fastbpe against every exact peer installed, side by side in one run; writes bench/RESULTS.md.

    python bench/peers.py                     # everything (about 10 minutes on 2 cores)
    python bench/peers.py --quick             # smoke run, small inputs (about 2 minutes) ->
                                              #   bench/.work/RESULTS-quick.md (git-ignored)
    python bench/peers.py --sections encode,short --libs fastbpe,fastokens --no-write
    python bench/peers.py --compare-with ../other-checkout   # before/after ratios of fastbpe

Sections (--sections, default all):

  encode        MB/s of UTF-8 input, one core: cl100k_base, o200k_base, Qwen2.5 and
                DeepSeek-R1-Distill-Llama tokenizer.json x English, code, multilingual.  2 MB of
                each corpus in 4 disjoint parts: the first warms up, the other three are each timed
                once (the first time the library sees that text), ids checked after timing against
                tiktoken / HF tokenizers; a peer whose ids differ on any part is "inexact".
  short         µs per call on distinct 100-character English strings (no whole-call cache can
                help): encode_ordinary (cl100k_base) and the tokenizer.json path (Qwen2.5,
                `encode(s, add_special_tokens=False).ids`), ids checked.
  batch         each library's batch API on 2 kB documents, 1 and 2 threads (2 thr / 1 thr).
  encodings     tokenizer.json full Encodings (ids, tokens, offsets, word ids): fastbpe's
                encode_batch vs HF tokenizers' (the one peer that computes offsets), each Encoding
                checked equal; MB/s up to reading ids + attention_mask and up to every field.
  load          fresh process: import + get_encoding("o200k_base") + first encode, and import +
                Tokenizer.from_file(Qwen2.5) + first encode; seconds and peak resident memory.
  transformers  AutoTokenizer on the Qwen2.5 folder: tok(docs) on 2 kB documents and
                tok(long_doc) on 800 kB, stock vs fastbpe.patch_transformers() vs
                fastokens.patch_transformers(), one core and two; input_ids checked equal.
  gguf          llama.cpp vocab files (shared data): fastbpe's GGUFTokenizer vs HF tokenizers on the
                equivalent tokenizer.json, the encode rows' protocol, ids checked.
  models        every shared tokenizer.json (vocab/hf/*/, discovered): fastbpe encode_batch (ids
                read) and encode_ids_batch vs HF tokenizers and fastokens encode_batch on 2 kB
                documents, one core, ids checked against HF's; the engine fastbpe reports, loading
                in a fresh process (fastbpe vs HF), worst cases; issue 28's targets row by row
                (bench/models_section.py).
  worst         1 MiB of one character, letters, spaces, digits: seconds of one call.
  pretokenize   the split patterns alone: fastbpe's Splitter vs regex.findall, pieces checked.
  train         training wall time and peak memory: fastbpe, rustbpe, bpeasy, HF tokenizers,
                gigatok on the first N MB of large_en.
  corpus        encode_files on large_en as book files and as one file split at blank lines:
                fastbpe (numpy, .bin) vs tokie's encode_files vs tiktoken + numpy, both cores.

The encode and models sections also draw their table as a chart (bench/charts.py; SVG in
charts/ beside the results file, or --charts DIR).

Every measurement runs in a fresh child process pinned with sched_setaffinity to the first k
cores (taskset -c 0 for one core) with RAYON_NUM_THREADS=k (and OMP/BLAS/TOKENIZERS_PARALLELISM).
A library that is not installed or cannot load a vocabulary shows "n/a" (the notes say why).
"""
from __future__ import annotations

import argparse
import shlex
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import charts  # noqa: E402
import common as c  # noqa: E402
from common import log  # noqa: E402
from encode_sections import (SHORT_VOCABS, batch_results, batch_table, compare_rows, encode_chart_rows,  # noqa: E402
                             encode_jobs, encode_table, encodings_rows, pretokenize_rows, short_table,
                             worst_rows)
from front_end_sections import gguf_rows, load_section_rows, transformers_rows  # noqa: E402
import models_section  # noqa: E402
from peer_children import child_main  # noqa: E402
from peer_run import Run, draw_chart, header, notes_lines  # noqa: E402
from train_sections import corpus_rows, train_rows  # noqa: E402

SECTIONS = ["encode", "short", "batch", "encodings", "load", "transformers", "gguf", "models", "worst",
            "pretokenize", "train", "corpus"]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated: {','.join(SECTIONS)}")
    p.add_argument("--libs", default=",".join(c.ENCODE_LIBS), help="comma-separated libraries (columns)")
    p.add_argument("--vocabs", default=",".join(c.VOCABS), help="comma-separated encode rows' vocabularies")
    p.add_argument("--corpora", default=",".join(c.CORPORA), help="English,code,multilingual")
    p.add_argument("--quick", action="store_true", help="small inputs; writes bench/.work/RESULTS-quick.md")
    p.add_argument("--mb", type=float, default=None, help="MB of each corpus, in 4 parts (default 2)")
    p.add_argument("--runs", type=int, default=1,
                   help="repeat the encode rows (and --compare-with) in fresh processes; cells show "
                        "median (min–max)")
    p.add_argument("--short-n", type=int, default=None, help="short strings (default 5000)")
    p.add_argument("--doc-size", type=int, default=2000, help="characters per batch document")
    p.add_argument("--long-mb", type=float, default=None, help="transformers long document (0.8)")
    p.add_argument("--load-runs", type=int, default=None, help="fresh processes per load cell (3)")
    p.add_argument("--train-mb", type=float, nargs="+", default=None, help="training text sizes (100)")
    p.add_argument("--train-vocab", type=int, nargs="+", default=None, help="training vocab sizes (32000)")
    p.add_argument("--corpus-mb", type=float, default=None, help="corpus section size (250)")
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--compare-with", default=None, metavar="CHECKOUT",
                   help="another fastbpe checkout (kernels built in place): print after/before ratios "
                        "of fastbpe on the encode rows and short strings; no other section runs")
    p.add_argument("--root", default=str(c.ROOT), help=argparse.SUPPRESS)
    p.add_argument("--no-write", action="store_true", help="print only")
    p.add_argument("--out", default=None, help="results file (default bench/RESULTS.md)")
    p.add_argument("--model-dir", default=None, metavar="DIR",
                   help="the models section's files: DIR/<family>/tokenizer.json (default: the shared "
                        "data's vocab/hf; bench/families.py passes the files it builds)")
    p.add_argument("--charts", default=None, metavar="DIR",
                   help="where the encode and models sections' charts go (encode.svg, models.svg; default: "
                        "charts/ beside the results file; none with --no-write unless given)")
    p.add_argument("--redraw", action="store_true",
                   help="measure nothing: draw the encode and models charts again from the results file's "
                        "tables (--out, default bench/RESULTS.md) into --charts (default charts/ beside it)")
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--callgrind-parts", type=int, default=None, metavar="N",
                   help="no timing: fastbpe encodes part 0 and then N more parts of the first --vocabs and "
                        "--corpora in this process, for instruction counts (see bench/README.md)")
    a = p.parse_args(argv)
    if a.child:
        return child_main(a.child)
    if a.callgrind_parts is not None:
        vocab, label = a.vocabs.split(",")[0], a.corpora.split(",")[0]
        sys.path.insert(0, a.root)
        fn = c.encoder("fastbpe", vocab)
        texts = c.parts(c.CORPORA[label], a.mb or 2.0)
        for t in texts[: a.callgrind_parts + 1]:
            fn(t)
        return 0

    if a.redraw:
        results = Path(a.out) if a.out else HERE / "RESULTS.md"
        if not charts.available():
            p.error("--redraw needs matplotlib (pip install -e '.[bench]')")
        for path in charts.redraw(results, Path(a.charts) if a.charts else results.parent / "charts"):
            log(f"wrote {path}")
        return 0

    quick = a.quick
    defaults = dict(mb=(0.2, 2.0), short_n=(500, 5000), long_mb=(0.1, 0.8), load_runs=(1, 3),
                    train_mb=([5], [100]), train_vocab=([2000], [32000]), corpus_mb=(10, 250))
    for k, (q, full) in defaults.items():
        if getattr(a, k) is None:
            setattr(a, k, q if quick else full)
    a.command = "python bench/peers.py " + " ".join(shlex.quote(x) for x in argv)
    out = Path(a.out) if a.out else (c.WORK / "RESULTS-quick.md" if quick else HERE / "RESULTS.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    sections = [s for s in a.sections.split(",") if s]
    for s in sections:
        if s not in SECTIONS:
            p.error(f"unknown section {s!r}; choose from {', '.join(SECTIONS)}")
    libs = [x for x in a.libs.split(",") if x]
    vocabs = [x for x in a.vocabs.split(",") if x]
    corpora = [x for x in a.corpora.split(",") if x]
    for lst, allowed, what in ((libs, c.ENCODE_LIBS, "library"), (vocabs, c.VOCABS, "vocab"),
                               (corpora, c.CORPORA, "corpus")):
        for x in lst:
            if x not in allowed:
                p.error(f"unknown {what} {x!r}; choose from {', '.join(allowed)}")
    if "fastbpe" not in libs:
        libs.insert(0, "fastbpe")
    run = Run(a)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load_start = c.loadavg()
    t_start = time.monotonic()
    log(f"fastbpe from {a.root}; writing to {'stdout only' if a.no_write else out}")

    chart_dir = Path(a.charts) if a.charts else (None if a.no_write else out.parent / "charts")

    def emit(name: str, title: str, method: list[str], rows: list[str], note_prefix: tuple) -> None:
        text = "\n".join([f"<!-- {name}:start -->",
                          *header(run, title, started, load_start, method),
                          *rows, *notes_lines(run, note_prefix), f"<!-- {name}:end -->"])
        print(text + "\n", flush=True)
        if not a.no_write:
            c.write_section(out, name, text)
        if name in run.charts and chart_dir is not None:
            draw_chart(run, name, chart_dir / f"{name}.svg", started)

    if a.compare_with:
        rows = compare_rows(run, vocabs, corpora)
        emit("compare", f"## Before / after: fastbpe here vs {a.compare_with}",
             [f"Encode rows as in the encode section ({a.mb:g} MB in 4 parts, one core) and short "
              f"strings, the two checkouts interleaved {a.runs} time(s) in fresh processes; the best "
              "speed of each (the run least disturbed by other jobs); after / before ≥ 0.97 on every "
              "row: no regression."], rows, ("compare",))
        log(f"fastbpe measured: {', '.join(sorted(run.fastbpe_files))}")
        log(f"done in {time.monotonic() - t_start:.0f} s")
        return 0

    if "encode" in sections or "short" in sections:
        enc_vocabs = vocabs if "encode" in sections else [v for v in vocabs if v in SHORT_VOCABS]
        enc_corpora = corpora if "encode" in sections else corpora[:1]
        runs = [encode_jobs(run, libs, enc_vocabs, enc_corpora, "short" in sections)
                for _ in range(a.runs if "encode" in sections else 1)]
        if "encode" in sections:
            run.charts["encode"] = encode_chart_rows(run, runs, libs, vocabs, corpora)
            emit("encode", "## Encode: fastbpe and its exact peers (MB/s of UTF-8 input, one core; higher is better)",
                 [f"Method: {a.mb:g} MB of each corpus in 4 disjoint parts (each mixes 16 places of the "
                  "corpus); in a fresh process per library and vocabulary, pinned to one core "
                  "(RAYON_NUM_THREADS=1), the first part warms up and each other part is encoded once, "
                  "the first time the library sees it; MB/s = timed bytes / summed time. Ids of every "
                  "part are checked after timing against tiktoken (cl100k_base, o200k_base) or HF "
                  "tokenizers (tokenizer.json): \"inexact\" when any part differs. "
                  + (f"{a.runs} runs: median (min–max). " if a.runs > 1 else "")
                  + "best exact / fastbpe = the fastest exact peer's MB/s over fastbpe's (< 1: fastbpe leads).",
                  "Calls: fastbpe `get_encoding(name).encode_ordinary` / `Tokenizer.from_file(p).encode_ids"
                  "(t, add_special_tokens=False)`; tiktoken, splintr-rs, quicktok-v1 `encode_ordinary`; "
                  "rs-bpe, gigatok, kitoken `encode`; fastokens `encode_ordinary(t).ids` / "
                  "`encode(t, add_special_tokens=False).ids`; HF tokenizers and tokie `encode(t, "
                  "add_special_tokens=False).ids`. quicktok-v1 loads a tokenizer.json through its "
                  "verified `import_tokenizer`."],
                 encode_table(run, runs, libs, vocabs, corpora), ("enc",))
        if "short" in sections:
            emit("short", "## Short strings (µs per call, one core; lower is better)",
                 [f"Method: {int(a.short_n * 0.8)} distinct 100-character English strings, each encoded "
                  f"once after {a.short_n // 5} others warmed up (no cache keyed by the whole call can "
                  "help), with one gc.collect() between warm-up and timing for every library; total time / calls, ids of all calls checked against tiktoken / HF tokenizers. "
                  "best exact / fastbpe = fastbpe's µs over the fastest exact peer's (< 1: fastbpe leads)."],
                 short_table(run, runs[0], libs), ("short",))
    if "batch" in sections:
        blibs = [lib for lib in libs if lib != "rs-bpe"]
        res = batch_results(run, blibs, corpora)
        emit("batch", "## Batches of 2 kB documents (MB/s, 1 and 2 threads; higher is better)",
             [f"Method: each corpus's {a.mb:g} MB in 4 parts cut into ~{a.doc_size}-character documents; "
              "each library's batch API (fastbpe/tiktoken `encode_ordinary_batch(docs, num_threads=k)`, "
              "fastbpe tokenizer.json `encode_ids_batch`, HF `encode_batch_fast`, fastokens/tokie "
              "`encode_batch`, quicktok `encode_batch(docs, k)`, splintr `encode_batch`, kitoken "
              "`encode_all`) in a fresh process pinned to k cores with RAYON_NUM_THREADS=k; the first "
              "part warms up, the other three are timed once each; ids checked. On the 2-thread rows, "
              "(×) = 2 threads / 1 thread of the same library."],
             batch_table(run, res, blibs, corpora), ("batch",))
    if "encodings" in sections:
        emit("encodings", "## tokenizer.json: full Encodings with offsets (`encode_batch`, MB/s; higher is better)",
             [f"Method: the batch section's ~{a.doc_size}-character documents; `encode_batch(docs, "
              "add_special_tokens=False)` (fastbpe with num_threads=k) in a fresh process pinned to k cores "
              "(RAYON_NUM_THREADS=k), timed up to reading every Encoding's ids and attention_mask, and up "
              "to reading every other field too; ids, tokens, offsets and word ids checked equal to HF's. "
              "fastokens, tokie and kitoken compute no offsets, so only HF tokenizers builds the same thing."],
             encodings_rows(run, vocabs, corpora), ("encodings",))
    if "load" in sections:
        emit("load", "## Loading (fresh process; lower is better)",
             [f"Method: `python -c` timing import + load + one encode inside the process (interpreter "
              f"start-up excluded), median of {a.load_runs}; peak memory = the process's ru_maxrss. "
              "tiktoken reads its offline cache (no download)."],
             load_section_rows(run, libs), ("load",))
    if "transformers" in sections:
        emit("transformers", "## transformers: AutoTokenizer patched vs stock (MB/s; higher is better)",
             [f"Method: `AutoTokenizer.from_pretrained` on the Qwen2.5 folder; `tok(docs)` on "
              f"{a.mb / 4:g} MB of ~{a.doc_size}-character English documents and `tok(long_doc)` on "
              f"{a.long_mb:g} MB of English, each 4 distinct inputs (first warms up, three timed once); "
              "fresh process per column pinned to k cores (RAYON_NUM_THREADS=k, TOKENIZERS_PARALLELISM). "
              "input_ids checked equal to stock (\"differs\" otherwise). Targets (issue 21): ≥ 2× on "
              "batches, ≥ 5× on the long document."],
             transformers_rows(run), ("tf",))
    if "gguf" in sections:
        emit("gguf", "## GGUF files: fastbpe vs HF tokenizers on the same vocabulary (MB/s, one core; higher is better)",
             [f"Method: llama.cpp's vocab files; fastbpe `GGUFTokenizer.from_file(path).encode_ids(text)` "
              "(no BOS/EOS) against HF tokenizers on an equivalent tokenizer.json (the file's tokens and "
              "merges, llama.cpp's split regexes as isolated Splits then ByteLevel; SentencePiece files: "
              "Llama's pipeline with merges by score), each in a fresh process on one core; the encode "
              f"rows' protocol ({a.mb:g} MB in 4 parts, first warms up), ids checked after timing. "
              "The fastbpe path column says how fastbpe splits (C scanner, regex chain, SPM)."],
             gguf_rows(run, corpora), ("gguf",))
    if "models" in sections:
        emit("models", models_section.TITLE, models_section.method(a), models_section.rows(run, corpora),
             ("models",))
    if "worst" in sections:
        emit("worst", "## Worst cases (1 MiB of one kind of character; seconds of one call, lower is better)",
             ["Method: one `encode_ordinary` call per input in a process pinned to one core, after a "
              "short warm-up; cells are wall / CPU seconds; ids checked against tiktoken (where "
              "tiktoken fails, against the ids most peers agree on). Target (issue 19): < 0.1 s."],
             worst_rows(run, libs), ("worst",))
    if "pretokenize" in sections:
        emit("pretokenize", "## Pre-tokenizing alone (MB/s of UTF-8 input, one core; higher is better)",
             ["Method: per split pattern of `fastbpe.patterns` and corpus, `Splitter(pat).findall(text)` "
              "(the C scanner when it knows the pattern, else `regex`) against `regex.findall`, on the "
              "encode section's parts (first warms up, three timed once); pieces checked equal."],
             pretokenize_rows(run, corpora), ("pretok",))
    if "train" in sections:
        emit("train", "## Training (wall time and peak memory; lower is better)",
             ["Method: the first N MB of large_en, GPT-4 split pattern (gigatok: its own), ~64 kB "
              "documents; each trainer in a fresh process on both cores; time = training only (text "
              "in memory); peak = ru_maxrss (includes the text: see the baseline row). \"fastbpe, "
              "streamed 5×\" trains from a generator reading the file's lines five times (never held "
              "whole): its peak must follow the unique pieces, not the stream."],
             train_rows(run), ("train",))
    if "corpus" in sections:
        emit("corpus", "## Corpus encoding for training data (`encode_files`, both cores; higher MB/s is better)",
             ["Method: r50k_base (the vocabulary tokie loads here, from GPT-2's tokenizer.json), 2 "
              "threads, no separator token; each peer once in a fresh process; peak = ru_maxrss; "
              "every peer's ids and offsets checked against fastbpe's (a digest). CPU = user + "
              "system seconds of the process."],
             corpus_rows(run), ("corpus",))
    used = sorted(run.fastbpe_files)
    log(f"fastbpe measured: {', '.join(used) or '(not imported)'}")
    log(f"done in {time.monotonic() - t_start:.0f} s" + ("" if a.no_write else f"; wrote {out}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
