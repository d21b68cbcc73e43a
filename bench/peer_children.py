"""The child side of bench/peers.py: what runs inside each fresh, pinned process.

    python bench/peer_children.py '{"kind": "encode", "lib": "fastbpe", ...}'

`Run.child` (bench/peer_run.py) starts this file with one job as JSON; `CHILDREN[job["kind"]]`
loads one library on one input set (the adapters are in bench/common.py and bench/gguf_libs.py),
times it the way the section's protocol says and prints one JSON result line: seconds, bytes and
digests of the ids (checked against the reference by the parent, after timing), or
{"unavailable": why} / {"error": why}.  The models section's children are in models_section.py.
"""
from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path

import common as c
from common import WORST_CASES, read_text, timed_parts
import gguf_libs
import models_section

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


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1]))
