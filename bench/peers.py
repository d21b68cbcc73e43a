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
import gc
import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import charts  # noqa: E402
import common as c  # noqa: E402
from common import WORST_CASES, fmt_mbs, log, read_text, speed, timed_parts  # noqa: E402
import gguf_libs  # noqa: E402
import models_section  # noqa: E402

SECTIONS = ["encode", "short", "batch", "encodings", "load", "transformers", "gguf", "models", "worst",
            "pretokenize", "train", "corpus"]
SHORT_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]
BATCH_VOCABS = ["cl100k_base", "Qwen2.5 tokenizer.json"]
HF_MODEL = "qwen2.5"
TRAINERS = ["fastbpe", "fastbpe, streamed 5×", "rustbpe", "bpeasy", "HF tokenizers", "gigatok"]
CORPUS_PEERS = ["fastbpe -> numpy", "fastbpe -> .bin", "tokie", "tiktoken + numpy"]


# ================================================================== child side


def child_encode(job: dict) -> dict:
    """One library on one vocabulary: the encode rows, then (when asked) the short strings."""
    out = {"rows": {}}
    try:
        fn = c.encoder(job["lib"], job["vocab"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    for label, paths in job["parts"].items():
        texts = [read_text(p) for p in paths]
        seconds, results = timed_parts(fn, texts)
        out["rows"][label] = {"seconds": seconds, "bytes": [len(t.encode()) for t in texts[1:]],
                              "digests": [c.digest(r) for r in results]}
    if job.get("short"):
        strings = json.loads(Path(job["short"]).read_text(encoding="utf-8"))
        try:
            sfn = c.short_encoder(job["lib"], job["vocab"])
        except c.Unavailable as e:
            out["short_unavailable"] = str(e)
            return out
        warm, timed = strings[: len(strings) // 5], strings[len(strings) // 5:]
        for s in warm:
            sfn(s)
        results = [None] * len(timed)
        # every library starts its timed calls with the collector's generations empty: whatever
        # its import, load and warm-up left would otherwise land a pass inside the window
        gc.collect()
        t0 = time.perf_counter()
        for i, s in enumerate(timed):
            results[i] = sfn(s)
        out["short"] = {"us": (time.perf_counter() - t0) / len(timed) * 1e6,
                        "digest": c.digest_many(results)}
    return out


def child_batch(job: dict) -> dict:
    try:
        fn = c.batcher(job["lib"], job["vocab"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    k = job["threads"]
    out = {"rows": {}}
    for label, paths in job["parts"].items():
        batches = [c.documents(read_text(p), job["doc_size"]) for p in paths]
        seconds, results = timed_parts(lambda docs: fn(docs, k), batches)
        out["rows"][label] = {"seconds": seconds,
                              "bytes": [sum(len(d.encode()) for d in b) for b in batches[1:]],
                              "digests": [c.digest_many(r) for r in results]}
    return out


def child_transformers(job: dict) -> dict:
    import logging

    logging.disable(logging.WARNING)  # "sequence longer than model_max_length" on the long document
    mode = job["mode"]
    try:
        import transformers
    except ImportError as e:
        return {"unavailable": f"transformers not installed ({e})"}
    if mode == "fastbpe":
        import fastbpe

        if not hasattr(fastbpe, "patch_transformers"):
            return {"unavailable": "fastbpe.patch_transformers() is not in this build"}
        fastbpe.patch_transformers()
    elif mode == "fastokens":
        try:
            import fastokens
        except ImportError as e:
            return {"unavailable": f"fastokens not installed ({e})"}
        fastokens.patch_transformers()
    tok = transformers.AutoTokenizer.from_pretrained(job["model_dir"])
    backend = type(getattr(tok, "backend_tokenizer", tok)).__module__
    if mode != "stock" and not backend.startswith(mode):
        return {"unavailable": f"{mode}'s patch left the backend at {backend}"}
    out = {"backend": backend, "rows": {}}
    docs = [c.documents(read_text(p), job["doc_size"]) for p in job["docs"]]
    longs = [read_text(p) for p in job["long"]]
    for label, inputs, size in (("docs", docs, lambda b: sum(len(d.encode()) for d in b)),
                                ("long", longs, lambda t: len(t.encode()))):
        seconds, results = timed_parts(lambda x: tok(x)["input_ids"], inputs)
        out["rows"][label] = {"seconds": seconds, "bytes": [size(x) for x in inputs[1:]],
                              "digests": [c.digest_many(r) if label == "docs" else c.digest(r)
                                          for r in results]}
    return out


def child_worst(job: dict) -> dict:
    try:
        fn = c.encoder(job["lib"], job["vocab"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    fn("warm up")
    text = WORST_CASES[job["case"]]()
    w, p = time.perf_counter(), time.process_time()
    try:
        ids = fn(text)
    except BaseException as e:  # tiktoken's regex panics on some of these
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return {"error": f"{type(e).__name__}: {str(e)[:100]}"}
    return {"wall": time.perf_counter() - w, "cpu": time.process_time() - p, "digest": c.digest(ids)}


def child_train(job: dict) -> dict:
    from fastbpe.patterns import GPT4_PATTERN

    trainer, vocab = job["trainer"], job["vocab"]
    streamed = trainer.startswith("fastbpe, streamed")
    text = None if streamed else read_text(job["text"])  # the streamed run never holds it whole
    docs = None if streamed else c.documents(text, 1 << 16)
    if trainer == "baseline":
        return {"seconds": 0.0}
    t0 = time.perf_counter()
    if trainer == "fastbpe":
        import fastbpe

        n = fastbpe.train(docs, vocab, pattern=GPT4_PATTERN, show_progress=False).n_vocab
    elif trainer == "fastbpe, streamed 5×":  # memory must follow the pieces, not the stream
        import fastbpe

        def stream():
            for _ in range(5):
                with open(job["text"], encoding="utf-8") as f:
                    yield from f

        n = fastbpe.train(stream(), vocab, pattern=GPT4_PATTERN, show_progress=False).n_vocab
    elif trainer == "rustbpe":
        import rustbpe

        tok = rustbpe.Tokenizer()
        tok.train_from_iterator(iter(docs), vocab, pattern=GPT4_PATTERN)
        n = tok.vocab_size
    elif trainer == "bpeasy":
        import bpeasy

        n = len(bpeasy.train_bpe(iter(docs), GPT4_PATTERN, 128, vocab))
    elif trainer == "HF tokenizers":
        from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(docs, trainer=trainers.BpeTrainer(
            vocab_size=vocab, min_frequency=0, show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        n = tok.get_vocab_size()
    elif trainer == "gigatok":
        import gigatok

        n = len(gigatok.train_bpe(text.encode("utf-8"), vocab, [])[0])
    else:
        raise SystemExit(f"unknown trainer {trainer!r}")
    return {"seconds": time.perf_counter() - t0, "n_vocab": n}


def child_corpus(job: dict) -> dict:
    """One corpus-encoding peer once: time and a digest of (ids, offsets)."""
    import hashlib

    import numpy as np

    peer, paths, split, k = job["peer"], job["paths"], job["split"], job["threads"]
    if peer == "baseline":
        import fastbpe  # noqa: F401

        return {"seconds": 0.0}
    cpu0 = time.process_time()
    if peer.startswith("fastbpe"):
        import fastbpe

        enc = fastbpe.get_encoding("r50k_base")
        out = job["bin"] if peer.endswith(".bin") else None
        t0 = time.perf_counter()
        ids, offsets = enc.encode_files(paths, out, split_on=split, separator=None, num_threads=k,
                                        show_progress=False)
        seconds = time.perf_counter() - t0
    elif peer == "tokie":
        try:
            import tokie
        except ImportError as e:
            return {"unavailable": f"tokie not installed ({e})"}
        tk = tokie.Tokenizer.from_json(str(c.HF_DIR / "gpt2" / "tokenizer.json"))
        tk.no_truncation()
        t0 = time.perf_counter()
        ids, offsets = tk.encode_files(paths, separator=None if split is None else split.encode())
        seconds = time.perf_counter() - t0
    else:  # tiktoken + numpy: what a prepare.py does
        enc = c.ds.reference_encoding("r50k_base")
        t0 = time.perf_counter()
        docs = []
        for p in paths:
            text = Path(p).read_text(encoding="utf-8", errors="replace")
            docs.extend(d for d in (text.split(split) if split else [text]) if d)
        lists = enc.encode_ordinary_batch(docs, num_threads=k)
        del docs
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        ids = np.concatenate([np.array(x, dtype=np.uint32) for x in lists] or [np.empty(0, np.uint32)])
        del lists
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        seconds = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    h = hashlib.blake2b(digest_size=16)
    if isinstance(ids, str) or (peer.endswith(".bin")):
        n_ids = 0
        with open(job["bin"], "rb") as f:
            while True:
                chunk = np.fromfile(f, dtype=ids.dtype, count=1 << 20)
                if not len(chunk):
                    break
                h.update(chunk.astype("<u4").tobytes())
                n_ids += len(chunk)
        os.unlink(job["bin"])
        for extra in (".offsets", ".manifest.json"):
            if os.path.exists(job["bin"] + extra):
                os.unlink(job["bin"] + extra)
    else:
        n_ids = len(ids)
        for i in range(0, n_ids, 1 << 20):
            h.update(np.asarray(ids[i:i + (1 << 20)]).astype("<u4").tobytes())
    h.update(np.asarray(offsets).astype("<i8").tobytes())
    return {"seconds": seconds, "cpu": cpu, "n_ids": n_ids, "n_docs": int(len(offsets) - 1),
            "digest": h.hexdigest()}


def child_pretokenize(job: dict) -> dict:
    """Splitter(pat).findall (the C scanner where it knows the pattern) vs regex.findall, per
    pattern and corpus: the 4-part protocol, pieces checked equal after timing."""
    import regex

    from fastbpe import patterns
    from fastbpe.pretokenize import Splitter

    seen, out = set(), {}
    for name, pat in patterns.BY_NAME.items():
        if pat in seen:
            continue
        seen.add(pat)
        splitter, rx = Splitter(pat), regex.compile(pat)
        for label, paths in job["parts"].items():
            texts = [read_text(p) for p in paths]
            ours, got = timed_parts(splitter.findall, texts)
            theirs, want = timed_parts(rx.findall, texts)
            out[f"{name}|{label}"] = {"scanner": splitter.kind >= 0, "same": got == want,
                                      "bytes": [len(t.encode()) for t in texts[1:]],
                                      "ours": ours, "regex": theirs}
    return {"rows": out}


def child_encodings(job: dict) -> dict:
    """Full Encodings: encode_batch, then reading ids + attention_mask, then every other field."""
    import hashlib

    lib, k = job["lib"], job["threads"]
    try:
        _, tok = c._guarded(lib, job["vocab"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    if lib == "fastbpe":
        def batch(docs):
            return tok.encode_batch(docs, add_special_tokens=False, num_threads=k)
    else:
        def batch(docs):
            return tok.encode_batch(docs, add_special_tokens=False)
    out = {"rows": {}}
    for label, paths in job["parts"].items():
        batches = [c.documents(read_text(p), job["doc_size"]) for p in paths]
        ids_s, all_s, digests = [], [], []
        for i, docs in enumerate(batches):
            t0 = time.perf_counter()
            encs = batch(docs)
            for e in encs:  # what a model needs
                e.ids, e.attention_mask
            t1 = time.perf_counter()
            for e in encs:  # and every other field
                e.tokens, e.offsets, e.word_ids, e.type_ids, e.special_tokens_mask
            t2 = time.perf_counter()
            if i:
                ids_s.append(t1 - t0)
                all_s.append(t2 - t0)
                h = hashlib.blake2b(digest_size=12)
                for e in encs:
                    h.update(repr((e.ids, e.tokens, e.offsets, e.word_ids)).encode())
                digests.append(h.hexdigest())
        out["rows"][label] = {"bytes": [sum(len(d.encode()) for d in b) for b in batches[1:]],
                              "ids": ids_s, "all": all_s, "digests": digests}
    return out


def child_gguf(job: dict) -> dict:
    try:
        fn, how = gguf_libs.gguf_encoder(job["lib"], job["name"])
    except c.Unavailable as e:
        return {"unavailable": str(e)}
    out = {"how": how, "rows": {}}
    for label, paths in job["parts"].items():
        texts = [read_text(p) for p in paths]
        seconds, results = timed_parts(fn, texts)
        out["rows"][label] = {"seconds": seconds, "bytes": [len(t.encode()) for t in texts[1:]],
                              "digests": [c.digest(r) for r in results]}
    return out


def child_minbpe(job: dict) -> dict:
    """minbpe-compatible training (fastbpe.minbpe) vs the pure-Python minbpe algorithm of the
    project's tests (tests/reference.py), on taylorswift; merges checked equal."""
    import regex

    import reference
    from fastbpe.minbpe import BasicTokenizer, RegexTokenizer
    from fastbpe.patterns import GPT4_PATTERN

    text = c.corpus_bytes("taylorswift", 1 << 30).decode("utf-8")
    vocab, rows = job["vocab"], {}
    for name, cls, chunks in (("RegexTokenizer", RegexTokenizer, [x.encode() for x in regex.findall(GPT4_PATTERN, text)]),
                              ("BasicTokenizer", BasicTokenizer, [text.encode()])):
        t0 = time.perf_counter()
        tok = cls()
        tok.train(text, vocab)
        fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = reference.train_minbpe(chunks, vocab - 256)
        slow = time.perf_counter() - t0
        rows[name] = {"fast": fast, "slow": slow, "same": [tuple(m[:2]) for m in ref] == list(tok.merges)}
    return {"rows": rows}


CHILDREN = {"minbpe": child_minbpe, "gguf": child_gguf, "encodings": child_encodings, "pretokenize": child_pretokenize, "encode": child_encode, "batch": child_batch, "transformers": child_transformers,
            "worst": child_worst, "train": child_train, "corpus": child_corpus, **models_section.CHILDREN}


def child_main(spec: str) -> int:
    job = json.loads(spec)
    sys.path.insert(0, job.get("root") or str(c.ROOT))  # the fastbpe checkout to measure
    result = CHILDREN[job["kind"]](job)
    if "fastbpe" in sys.modules:
        result["fastbpe_file"] = sys.modules["fastbpe"].__file__
    print(json.dumps(result))
    return 0


# ================================================================== parent side


class Run:
    """Inputs written once per run, children started with the right pinning and env."""

    def __init__(self, args):
        self.args = args
        self.dir = c.WORK / f"run-{os.getpid()}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._parts: dict = {}
        self.notes: dict[str, str] = {}
        self.fastbpe_files: set = set()
        self.charts: dict[str, list] = {}  # section -> charts.py rows, set by the section's table

    def parts(self, corpus: str, total_mb: float, tag: str = "p") -> list[str]:
        """File paths of the 4 parts of `total_mb` MB of a corpus (written once)."""
        key = (corpus, total_mb, tag)
        if key not in self._parts:
            texts = c.parts(corpus, total_mb)
            paths = []
            for i, t in enumerate(texts):
                p = self.dir / f"{corpus}-{total_mb:g}-{tag}{i}.txt"
                p.write_text(t, encoding="utf-8", newline="")
                paths.append(str(p))
            self._parts[key] = paths
        return self._parts[key]

    def child(self, job: dict, cores: int = 1, timeout: float = 1800, env: dict | None = None) -> dict:
        job.setdefault("root", str(c.ROOT))
        r = c.run_child([sys.executable, str(HERE / "peers.py"), "--child", json.dumps(job)],
                        env={**c.thread_env(cores), **(env or {})}, cores=cores, timeout=timeout)
        if "fastbpe_file" in r:
            self.fastbpe_files.add(r["fastbpe_file"])
        return r

    def note(self, key: str, text: str) -> None:
        self.notes.setdefault(key, text)


def ratio(best: float | None, ours: float | None) -> str:
    return "–" if not best or not ours else f"{best / ours:.2f}"


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


def summary(r: dict) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    if "unavailable" in r:
        return f"n/a ({r['unavailable'][:70]})"
    bits = [f"{label} {speed(row):.1f} MB/s" for label, row in r.get("rows", {}).items()]
    if "short" in r:
        bits.append(f"short {r['short']['us']:.2f} us")
    return ", ".join(bits)


def reference_lib(vocab: str) -> str:
    return c.REFERENCE[c.VOCABS[vocab][0]]


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
                    r = results.get((lib, vocab, k), {})
                    if "rows" not in r:
                        why = r.get("unavailable") or r.get("error") or "not run"
                        run.note(f"batch:{lib}:{why}", f"{lib} batch n/a on {vocab}: {why}")
                        cells.append("n/a")
                        continue
                    row = r["rows"][label]
                    if ref is not None and row["digests"] != ref["digests"]:
                        cells.append("inexact")
                        continue
                    v = speed(row)
                    text = ("HF " if lib == "HF tokenizers" else "") + fmt_mbs(v)
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
                r = results[mode, k]
                if "rows" not in r:
                    why = r.get("unavailable") or r.get("error")
                    run.note(f"tf:{mode}:{why}", f"transformers, {mode}: n/a: {why}")
                    cells.append("n/a")
                    continue
                row = r["rows"][label]
                if ref is not None and row["digests"] != ref["digests"]:
                    cells.append("differs")
                    continue
                vals[mode] = speed(row)
                cells.append(fmt_mbs(vals[mode]))
            sp = f"{vals['fastbpe'] / vals['stock']:.2f}×" if "fastbpe" in vals and "stock" in vals else "n/a"
            lines.append(f"| {desc} | {k} | " + " | ".join(cells) + f" | {sp} |")
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
                        r = res[lib, vocab, k]
                        if "rows" not in r:
                            why = r.get("unavailable") or r.get("error")
                            run.note(f"encodings:{lib}:{why}", f"{lib}: {why}")
                            cells.append("n/a")
                            continue
                        row = r["rows"][label]
                        if ref is not None and row["digests"] != ref["digests"]:
                            cells.append("differs")
                            continue
                        vals[lib] = sum(row["bytes"]) / sum(row[field]) / 1e6
                        cells.append(fmt_mbs(vals[lib]))
                    rt = (f"{vals['fastbpe'] / vals['HF tokenizers']:.1f}×"
                          if len(vals) == 2 else "–")
                    lines.append(f"| {vocab} | {label} | {k} | {desc} | " + " | ".join(cells) + f" | {rt} |")
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


# ------------------------------------------------------------------ training


def train_rows(run: Run) -> list[str]:
    a = run.args
    lines = ["| text | vocab | trainer | time (s) | peak memory (MB) | vocab out |",
             "|---:|---:|---|---:|---:|---:|"]
    for mb in a.train_mb:
        path = run.dir / f"large_en_{mb:g}MB.txt"
        if not path.exists():
            path.write_bytes(c.corpus_bytes("large_en", int(mb * 1e6)))
        base = run.child({"kind": "train", "trainer": "baseline", "text": str(path), "vocab": 0}, cores=2)
        lines.append(f"| {mb:g} MB | – | baseline (reads the text) | – | {base.get('peak_mb', 0):.0f} | – |")
        for vocab in a.train_vocab:
            for trainer in TRAINERS:
                r = run.child({"kind": "train", "trainer": trainer, "text": str(path), "vocab": vocab},
                              cores=2, timeout=a.timeout)
                if "error" in r:
                    missing = "No module named" in r["error"]
                    lines.append(f"| {mb:g} MB | {vocab} | {trainer} | {'n/a' if missing else 'error'} | | |")
                    run.note(f"train:{trainer}", f"training, {trainer}: {r['error']}")
                else:
                    lines.append(f"| {mb:g} MB | {vocab} | {trainer} | {r['seconds']:.2f} | "
                                 f"{r['peak_mb']:.0f} | {r['n_vocab']} |")
                log(f"train  {lines[-1]}")
    vocab = 300 if a.quick else 512
    r = run.child({"kind": "minbpe", "vocab": vocab}, timeout=a.timeout)
    lines += ["", f"minbpe-compatible training (taylorswift, vocab {vocab}) against the minbpe algorithm in pure "
              "Python (tests/reference.py), same merges checked:", "",
              "| class | fastbpe (s) | minbpe algorithm, pure Python (s) | speed-up | same merges |",
              "|---|---:|---:|---:|---|"]
    if "rows" not in r:
        lines.append(f"| – | error: {r.get('error')} | | | |")
    for name, x in r.get("rows", {}).items():
        lines.append(f"| {name} | {x['fast']:.3f} | {x['slow']:.2f} | {x['slow'] / x['fast']:.0f}× | {x['same']} |")
    log("train  minbpe done")
    return lines


# ------------------------------------------------------------------ corpus encoding


def corpus_files(run: Run, mb: float) -> dict:
    """{shape: paths}: the first `mb` MB of large_en as book files (cut by its manifest) and as
    one file, in bench/.work (made once per size)."""
    import lzma

    src = c.ds.corpus_path("large_en")
    manifest = src.with_name("large_en.manifest.tsv")
    if not src.exists() or not manifest.exists():
        raise c.Unavailable(f"{src} or its manifest not found")
    root = c.WORK / f"corpus-{mb:g}MB"
    books, whole, done = root / "books", root / "large_en.txt", root / "done"
    if not done.exists():
        books.mkdir(parents=True, exist_ok=True)
        sizes = [int(line.split("\t")[2]) for line in manifest.read_text().splitlines()[1:]]
        taken = 0
        with lzma.open(src, "rb") as f, open(whole, "wb") as out:
            for i, size in enumerate(sizes):
                if taken >= mb * 1e6:
                    break
                book = f.read(size)
                f.read(2)  # books are joined by one blank line
                (books / f"{i:04d}.txt").write_bytes(book)
                out.write(book + b"\n\n")
                taken += size + 2
        done.write_text("ok")
    return {"books": sorted(str(p) for p in books.iterdir()), "paragraphs": [str(whole)]}


def corpus_rows(run: Run) -> list[str]:
    a = run.args
    files = corpus_files(run, a.corpus_mb)
    lines = ["| corpus | peer | time (s) | MB/s | vs tokie | CPU (s) | peak memory (MB) | tokens | documents |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for shape, split in (("books", None), ("paragraphs", "\n\n")):
        paths = files[shape]
        nbytes = sum(os.path.getsize(p) for p in paths)
        label = (f"{nbytes / 1e6:.0f} MB, {len(paths)} files" if shape == "books"
                 else f"{nbytes / 1e6:.0f} MB, 1 file split at blank lines")
        res = {}
        for peer in ["baseline", *CORPUS_PEERS]:
            job = {"kind": "corpus", "peer": peer, "paths": paths, "split": split, "threads": 2,
                   "bin": str(run.dir / f"corpus-{peer.replace(' ', '')}.bin")}
            res[peer] = run.child(job, cores=2, timeout=a.timeout)
            log(f"corpus {shape:<10} {peer:<18} " + json.dumps(res[peer])[:150])
        lines.append(f"| {label} | baseline (interpreter + imports) | – | – | – | – | "
                     f"{res['baseline'].get('peak_mb', 0):.0f} | – | – |")
        ref = res["fastbpe -> numpy"].get("digest")
        tokie_s = res["tokie"].get("seconds")
        for peer in CORPUS_PEERS:
            r = res[peer]
            if "seconds" not in r:
                why = r.get("unavailable") or r.get("error")
                run.note(f"corpus:{peer}", f"corpus encoding, {peer}: {why}")
                lines.append(f"| {label} | {peer} | n/a | | | | | | |")
            elif ref is not None and r["digest"] != ref:
                lines.append(f"| {label} | {peer} | inexact | | | | {r['peak_mb']:.0f} | {r['n_ids']:,} | {r['n_docs']:,} |")
            else:
                vs = f"{tokie_s / r['seconds']:.2f}×" if tokie_s else "–"
                lines.append(f"| {label} | {peer} | {r['seconds']:.2f} | {nbytes / 1e6 / r['seconds']:.0f} | "
                             f"{vs} | {r['cpu']:.2f} | {r['peak_mb']:.0f} | {r['n_ids']:,} | {r['n_docs']:,} |")
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


# ------------------------------------------------------------------ the report


def draw_chart(run: Run, name: str, path: Path, started: str) -> None:
    """The section's chart from the rows its table recorded (charts.py), or a log line saying why not."""
    if not charts.available():
        log(f"no {name} chart: matplotlib is not installed (pip install -e '.[bench]')")
        return
    a = run.args
    runs = f"median of {a.runs} runs (bars: min–max), " if name == "encode" and a.runs > 1 else "one run, "
    subtitle = (f"{runs}each library in a fresh process pinned to one core, ids checked; {started}, "
                f"fastbpe {c.git_rev(Path(a.root))}, load {c.loadavg().split(' / ')[0]}; "
                f"python bench/peers.py --sections {name}")
    draw = charts.encode_chart if name == "encode" else charts.models_chart
    log(f"wrote {draw(run.charts[name], path, subtitle)}")


def header(run: Run, title: str, started: str, load_start: str, method: list[str]) -> list[str]:
    a = run.args
    quick = " — **quick smoke run: small inputs, not for comparison**" if a.quick else ""
    return [title, "",
            f"- Machine: {c.machine()}",
            f"- Load average (1 / 5 / 15 min): {load_start} at the start, {c.loadavg()} at the end",
            f"- Versions: {c.versions_line()}",
            f"- Date: {started}",
            f"- Command: `{a.command}` (from the repository root, after "
            f"`python setup.py build_ext --inplace`){quick}",
            *[f"- {m}" for m in method], ""]


def notes_lines(run: Run, prefix: tuple) -> list[str]:
    notes = sorted({v for k, v in run.notes.items() if k.startswith(prefix)})
    return (["", "Notes:", ""] + [f"- {n}" for n in notes]) if notes else []


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
