"""A tokenizer.json with many added tokens: load time and first encode (which builds the
added-token automaton), fastbpe.hf vs HF tokenizers; ids compared.  The file is a small
byte-level BPE written here with N added tokens `<tok…_k>` (no shared data needed).

    python bench/bench_added_tokens.py [--n 100000 300000]

With `--file`, a real file's added tokens that strip (lstrip / rstrip: RoBERTa's "<mask>"), or
every added token when none strips, put between the words of the models section's English part
(one every `--every` words, after a space) instead: encode_ids_batch of the part (`--call ids`)
or encode_ids of each of its first 2,000 documents' first 100 characters (`--call short`), one
thread; ids compared with HF's.  `--callgrind` instruments the measured call only:

    python bench/families.py --families roberta --build-only --dir D
    valgrind --tool=callgrind --instr-atstart=no python bench/bench_added_tokens.py \
        --file D/roberta/tokenizer.json --callgrind
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO)]   # common.py, and fastbpe built in place

from fastbpe.formats.bytelevel import BYTE_TO_CHAR  # noqa: E402
from fastbpe.hf import Tokenizer  # noqa: E402


def spec(n: int) -> str:
    vocab = {BYTE_TO_CHAR[b]: b for b in range(256)}
    rng = random.Random(0)
    added = [{"id": 256 + k, "content": f"<tok{rng.randrange(10**9)}_{k}>", "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for k in range(n)]
    return json.dumps({"version": "1.0", "added_tokens": added, "normalizer": None,
                       "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                                         "use_regex": True},
                       "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": False,
                                                           "trim_offsets": True, "use_regex": True},
                       "model": {"type": "BPE", "vocab": vocab, "merges": []}})


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def with_tokens(text: str, tokens: list[str], every: int) -> str:
    """text with one of tokens (in turn) after every `every`-th word."""
    words, out = text.split(" "), []
    for k, w in enumerate(words):
        out.append(w)
        if k % every == every - 1:
            out.append(tokens[(k // every) % len(tokens)])
    return " ".join(out)


def file_texts(path: str, every: int, call: str) -> tuple:
    import common as c

    doc = json.loads(Path(path).read_text(encoding="utf-8"))
    added = doc.get("added_tokens") or []
    tokens = [t["content"] for t in added if t.get("lstrip") or t.get("rstrip")] or [t["content"] for t in added]
    part = c.parts(c.CORPORA["English"], 2.0)[1]
    docs = [with_tokens(d, tokens, every) for d in c.documents(part, 2000)]
    tok = Tokenizer.from_file(path)
    if call == "short":
        docs = [d[:100] for d in docs[:2000]]
        tok.encode_ids(docs[0])
        run = lambda: [tok.encode_ids(d, add_special_tokens=False) for d in docs]  # noqa: E731
    else:
        tok.encode_ids_batch(docs[:50], num_threads=1)
        run = lambda: tok.encode_ids_batch(docs, add_special_tokens=False, num_threads=1)  # noqa: E731
    return tok, docs, run, tokens


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[100_000])
    ap.add_argument("--file", help="a tokenizer.json: its (stripping) added tokens in English text")
    ap.add_argument("--every", type=int, default=30, help="words between two tokens (--file)")
    ap.add_argument("--call", choices=["ids", "short"], default="ids", help="--file: encode_ids_batch or encode_ids")
    ap.add_argument("--callgrind", action="store_true", help="--file: instrument the measured call only")
    args = ap.parse_args()
    if args.file:
        import common as c

        tok, docs, run, tokens = file_texts(args.file, args.every, args.call)
        if args.callgrind:
            c.callgrind_instrument(True)
        got, seconds = timed(run)
        if args.callgrind:
            c.callgrind_instrument(False)
        size = sum(len(d.encode()) for d in docs)
        print(f"{args.file}: {len(tokens)} tokens, {args.call}: {size / seconds / 1e6:.2f} MB/s "
              f"({size / 1e6:.2f} MB in {seconds * 1e3:.1f} ms)")
        from tokenizers import Tokenizer as HFTokenizer
        ref = HFTokenizer.from_file(args.file)
        print("ids equal to HF's:", got == [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)])
        return
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        HFTokenizer = None
    for n in args.n:
        text = spec(n)
        probe = "hello " + json.loads(text)["added_tokens"][n // 2]["content"] + " world"
        ours, load = timed(lambda: Tokenizer.from_str(text))
        enc, first = timed(lambda: ours.encode(probe))
        print(f"n={n}: fastbpe load {load:.2f} s, first encode {first:.2f} s, "
              f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
        if HFTokenizer is not None:
            ref, load = timed(lambda: HFTokenizer.from_str(text))
            want, first = timed(lambda: ref.encode(probe))
            print(f"n={n}: HF      load {load:.2f} s, first encode {first:.2f} s; ids equal: {want.ids == enc.ids}")


if __name__ == "__main__":
    main()
