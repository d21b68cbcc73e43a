"""tokenizer.json files with normalizers, side by side: fastbpe vs HF tokenizers vs fastokens on
Qwen2.5's file (shared data) with its normalizer node swapped: Lowercase, NFKC, NFC+Lowercase+
Replace, and NFC as it is on text NFC changes (the corpus decomposed to NFD first, so every
accented letter recomposes).  One core, 2 kB documents each seen the first time by each library
(its own str copies), ids checked equal to HF's after timing.  Columns: `encode_batch` reading
ids (Encodings), `encode_ids_batch` (fastbpe; the peers have no ids-only batch).

    taskset -c 1 python bench/normalizer_files.py [--mb 1] [--corpora large_en,multilingual]

The machine is shared: quote the ratios of one run, not MB/s alone.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import unicodedata

import common as c

QWEN = c.HF_DIR / "qwen2.5" / "tokenizer.json"

FILES = {   # name -> (normalizer node, how the corpus text is prepared)
    "Lowercase": ({"type": "Lowercase"}, None),
    "NFKC": ({"type": "NFKC"}, None),
    "NFC+Lowercase+Replace": ({"type": "Sequence", "normalizers": [
        {"type": "NFC"}, {"type": "Lowercase"}, {"type": "Replace", "pattern": {"String": "  "}, "content": " "}]},
        None),
    "NFC on NFD text": ({"type": "NFC"}, "NFD"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=1.0, help="MB of each corpus (4 parts; the first warms up)")
    ap.add_argument("--corpora", default="large_en,multilingual")
    ap.add_argument("--files", default=",".join(FILES), help="which normalizers (comma-separated names)")
    args = ap.parse_args(argv)
    if not QWEN.exists():
        print(f"{QWEN} not found (shared data absent)")
        return 0
    base = json.loads(QWEN.read_text(encoding="utf-8"))
    corpora = {corpus: [c.documents(p, 2000) for p in c.parts(corpus, args.mb)] for corpus in args.corpora.split(",")}
    print(f"Qwen2.5 tokenizer.json, normalizer swapped; one core, 2 kB first-seen documents; load {c.loadavg()}")
    header = None
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.files.split(","):
            node, prepare = FILES[name]
            doc = dict(base, normalizer=node)
            path = os.path.join(tmp, "tokenizer.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            libs = c.tokenizer_json_libraries(path)
            if header is None:
                header = list(libs)
                print("| normalizer | corpus | " + " | ".join(header) + " |")
                print("|---|---|" + "---:|" * len(header))
            for corpus, parts in corpora.items():
                speeds = {lib: [] for lib in libs}
                for i, docs in enumerate(parts):
                    if prepare is not None:
                        docs = [unicodedata.normalize(prepare, d) for d in docs]
                    nbytes = sum(len(d.encode()) for d in docs)
                    want = libs["HF tokenizers encode_batch"](c.fresh_strs(docs)) if i == 0 else None
                    outs = {}
                    for lib, fn in libs.items():   # interleaved: each part through every library in turn
                        ds = c.fresh_strs(docs)
                        t0 = time.perf_counter()
                        outs[lib] = fn(ds)
                        dt = time.perf_counter() - t0
                        if i:   # part 0 warms each library up (first calls, thread pools, tables)
                            speeds[lib].append(nbytes / dt / 1e6)
                    want = outs["HF tokenizers encode_batch"]
                    for lib, out in outs.items():
                        if out != want:
                            print(f"{lib}: ids differ from HF's ({name}, {corpus} part {i})", file=sys.stderr)
                hf = sum(speeds["HF tokenizers encode_batch"]) / len(speeds["HF tokenizers encode_batch"])
                cells = []
                for lib in header:
                    v = speeds.get(lib)
                    if not v:
                        cells.append("n/a")
                        continue
                    mbs = sum(v) / len(v)
                    cells.append(f"{mbs:.1f} ({mbs / hf:.1f}x HF)")
                print(f"| {name} | {corpus} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
