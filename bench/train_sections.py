"""bench/peers.py's training sections: train (wall time and peak memory of every trainer, and
minbpe-compatible training against the pure-Python algorithm) and corpus (`encode_files` on
large_en, the way training data is prepared, against tokie and tiktoken + numpy).
"""
from __future__ import annotations

import json
import os

import common as c
from common import log
from peer_run import Run

TRAINERS = ["fastbpe", "fastbpe, streamed 5×", "rustbpe", "bpeasy", "HF tokenizers", "gigatok"]
CORPUS_PEERS = ["fastbpe -> numpy", "fastbpe -> .bin", "tokie", "tiktoken + numpy"]


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
