"""SentencePiece-style vocabularies side by side: fastbpe vs HF tokenizers vs fastokens on a
Llama-2-style tokenizer.json (Phi-3's, from the shared data), one core, 2 kB documents each
seen the first time by each library (its own str copies), ids checked equal to HF's after
timing.  Rows: `encode_batch` reading ids (Encodings) and `encode_ids_batch` (fastbpe;
`encode_batch` for the peers, which have no ids-only batch).

    taskset -c 1 python bench/spm_files.py [--mb 2] [--corpora large_en,multilingual,code] [--tekken | --sentencepiece] [--cpu]

With --sentencepiece: the SentencePiece .model files of the mistral-common wheel,
fastbpe.sentencepiece.SentencePieceProcessor vs the sentencepiece package, `encode(doc)` per document.
With --tekken: Mistral's tekken files (from the mistral-common wheel), fastbpe.mistral.Tekkenizer
vs mistral-common's Tekkenizer, `encode(doc, bos=False, eos=False)` per document.

The machine is shared: quote the ratios of one run, not MB/s alone.

With --profile FILE (a .model or tekken .json of the mistral-common wheel, by name): fastbpe alone, one
part as warm-up then one first-seen part per corpus; with --callgrind only that part is instrumented:
    valgrind --tool=callgrind --instr-atstart=no python bench/spm_files.py --profile tokenizer.model.v1 \
        --corpora multilingual --callgrind
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import common as c

PHI3 = c.HF_DIR / "phi3" / "tokenizer.json"


def file_rows(corpora: list, mb: float, which: str, cpu: bool = False) -> None:
    """Per-document encode of first-seen documents, fastbpe vs the reference, each file of the
    mistral-common wheel of one kind ("tekken" or "sentencepiece").  Wall time, the mean of the
    timed parts; with cpu, the process's CPU time, the best part (a loaded machine)."""
    clock = time.process_time if cpu else time.perf_counter
    from pathlib import Path

    import mistral_common

    data = Path(mistral_common.__file__).parent / "data"
    if which == "tekken":
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer as Reference

        from fastbpe.mistral import Tekkenizer
        files, other = sorted(data.glob("tekken*.json")), "mistral-common"

        def load(path):
            ours, ref = Tekkenizer.from_file(path), Reference.from_file(path)
            return (lambda d: ours.encode(d, False, False)), (lambda d: ref.encode(d, False, False))
    else:
        import sentencepiece

        from fastbpe.sentencepiece import SentencePieceProcessor
        files, other = sorted(data.glob("*.model*")), "sentencepiece"

        def load(path):
            return SentencePieceProcessor(path).encode, sentencepiece.SentencePieceProcessor(model_file=str(path)).encode
    for path in files:
        ours, ref = load(path)
        what = "CPU time, best part" if cpu else "wall time"
        print(f"\n{path.name}: one core, 2 kB first-seen documents, encode per document, {what}; load {c.loadavg()}")
        print(f"| corpus | fastbpe | {other} | ratio |\n|---|---:|---:|---:|")
        for corpus in corpora:
            parts = [c.documents(p, 2000) for p in c.parts(corpus, mb)]
            sums = {"fastbpe": 0.0, other: 0.0}
            for i, docs in enumerate(parts):
                nbytes = sum(len(d.encode()) for d in docs)
                got = {}
                for name, encode in (("fastbpe", ours), (other, ref)):
                    ds = c.fresh_strs(docs)
                    t0 = clock()
                    got[name] = [encode(d) for d in ds]
                    if i:
                        mbs = nbytes / max(clock() - t0, 1e-9) / 1e6
                        sums[name] = max(sums[name], mbs) if cpu else sums[name] + mbs / (len(parts) - 1)
                if got["fastbpe"] != got[other]:
                    print(f"ids differ on {corpus} part {i}", file=sys.stderr)
            a, b = sums["fastbpe"], sums[other]
            print(f"| {corpus} | {a:.1f} | {b:.1f} | {a / b:.1f}x |")


def profile(name: str, corpora: list, callgrind: bool) -> None:
    """fastbpe's per-document encode of one first-seen part after a warm-up part (the table's
    parts), timed; with callgrind, instrumented alone."""
    from pathlib import Path

    import mistral_common

    path = Path(mistral_common.__file__).parent / "data" / name
    if name.startswith("tekken"):
        from fastbpe.mistral import Tekkenizer
        tok = Tekkenizer.from_file(path)

        def encode(d):
            return tok.encode(d, False, False)
    else:
        from fastbpe.sentencepiece import SentencePieceProcessor
        encode = SentencePieceProcessor(path).encode
    for corpus in corpora:
        warm, timed = (c.documents(p, 2000) for p in c.parts(corpus, 2.0)[:2])
        for d in warm:
            encode(d)
        if callgrind:
            subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True)
        t0 = time.perf_counter()
        for d in timed:
            encode(d)
        seconds = time.perf_counter() - t0
        if callgrind:
            subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True)
        size = sum(len(d.encode()) for d in timed)
        print(f"{name} {corpus:<13} {size / seconds / 1e6:7.2f} MB/s ({size / 1e6:.3f} MB); load {c.loadavg()}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=float, default=2.0, help="MB of each corpus (4 parts; the first warms up)")
    ap.add_argument("--corpora", default="large_en,multilingual,code")
    ap.add_argument("--tekken", action="store_true", help="Mistral's tekken files instead")
    ap.add_argument("--sentencepiece", action="store_true", help="SentencePiece .model files instead")
    ap.add_argument("--cpu", action="store_true", help="with --tekken / --sentencepiece: CPU time, best part")
    ap.add_argument("--profile", metavar="FILE", help="one wheel file, fastbpe only (see the docstring)")
    ap.add_argument("--callgrind", action="store_true", help="with --profile: instrument the timed part only")
    args = ap.parse_args(argv)
    if args.profile:
        profile(args.profile, args.corpora.split(","), args.callgrind)
        return 0
    if args.tekken or args.sentencepiece:
        file_rows(args.corpora.split(","), args.mb, "tekken" if args.tekken else "sentencepiece", args.cpu)
        return 0
    if not PHI3.exists():
        print(f"{PHI3} not found (shared data absent)")
        return 0
    libs = c.tokenizer_json_libraries(str(PHI3))
    print(f"Phi-3 tokenizer.json, one core, 2 kB first-seen documents; load {c.loadavg()}")
    print("| corpus | " + " | ".join(libs) + " |")
    print("|---|" + "---:|" * len(libs))
    for corpus in args.corpora.split(","):
        parts = [c.documents(p, 2000) for p in c.parts(corpus, args.mb)]
        speeds = {name: [] for name in libs}
        for i, docs in enumerate(parts):
            nbytes = sum(len(d.encode()) for d in docs)
            want = None
            for name, fn in libs.items():   # interleaved: each part through every library in turn
                ds = c.fresh_strs(docs)
                t0 = time.perf_counter()
                out = fn(ds)
                dt = time.perf_counter() - t0
                if want is None:
                    want = libs["HF tokenizers encode_batch"](c.fresh_strs(docs))
                if out != want:
                    print(f"{name}: ids differ from HF's on {corpus} part {i}", file=sys.stderr)
                if i:   # part 0 warms each library up (first calls, thread pools)
                    speeds[name].append(nbytes / dt / 1e6)
        hf = sum(speeds["HF tokenizers encode_batch"]) / len(speeds["HF tokenizers encode_batch"])
        cells = []
        for name, v in speeds.items():
            mbs = sum(v) / len(v)
            cells.append(f"{mbs:.1f} ({mbs / hf:.1f}x HF)")
        print(f"| {corpus} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
