"""One library's short call in a loop (the short section's call and strings), for instruction counts.

    python bench/short_profile.py fastbpe "Qwen2.5 tokenizer.json"      # µs a call (wall)
    valgrind --tool=callgrind --instr-atstart=no python bench/short_profile.py fastbpe cl100k_base --callgrind
    python bench/short_profile.py none cl100k_base --callgrind ...    # the loop alone (a lambda that returns None)

The call is `common.short_encoder`'s (the short section's: fastbpe's tokenizer.json path is
`encode(s, add_special_tokens=False).ids`, tiktoken-style `encode_ordinary`), on `--n` distinct
100-character strings after 1,000 warm-up calls; every result is kept, as the short section
keeps them (so the cycle collector's passes over the kept lists count, for every library),
after one gc.collect() as there.
`--warm` first encodes the encode section's English parts, as the short section's process has.
The thread's CPU time is printed beside the wall time: on a loaded machine it leaves out the time
other processes ran (their cache traffic stays in), so libraries compare better by it there.
With `--callgrind` the timed loop alone is instrumented (callgrind_control switches it on and
off), so two builds or two libraries compare by instructions a call on a loaded machine:
divide the count by --n.  Run valgrind on the real interpreter (`python -c "import sys;
print(sys.executable)"`), not a shell shim.  Not a test: timings belong here, never in tests/.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]   # common.py, and fastbpe built in place
import common as c  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lib", help="a library of the short section (fastbpe, fastokens, gigatok, ...) or none")
    ap.add_argument("vocab", help="a vocabulary of the short section (cl100k_base, \"Qwen2.5 tokenizer.json\"), "
                                  "or with lib fastbpe a tokenizer.json path (bench/families.py --build-only's files)")
    ap.add_argument("--n", type=int, default=5000, help="timed calls (default 5000)")
    ap.add_argument("--callgrind", action="store_true", help="instrument the timed loop only")
    ap.add_argument("--warm", action="store_true",
                    help="first encode the English parts (2 MB in 4) with the library's encoder, as "
                         "bench/peers.py's child does before its short strings (piece caches warm)")
    a = ap.parse_args(argv)
    path = a.vocab not in c.VOCABS and a.vocab.endswith(".json")   # a file, not the section's vocabulary
    if a.warm and path:
        ap.error("--warm takes a vocabulary of the short section, not a tokenizer.json path")
    strings = c.short_strings(a.n + 1000)
    rows_fn = None   # kept alive to the end, as the child keeps its encode rows' encoder
    if a.warm and a.lib != "none":
        rows_fn = c.encoder(a.lib, a.vocab)
        c.timed_parts(rows_fn, c.parts(c.CORPORA["English"], 2.0))
    if a.lib == "none":
        fn = lambda s: None  # noqa: E731
    elif a.lib == "fastbpe" and path:   # any file, the short section's call on it
        import fastbpe

        tok = fastbpe.Tokenizer.from_file(a.vocab)
        fn = lambda s: tok.encode(s, add_special_tokens=False).ids  # noqa: E731
    else:
        fn = c.short_encoder(a.lib, a.vocab)
    warm, timed = strings[:1000], strings[1000:]
    for s in warm:
        fn(s)
    results = [None] * len(timed)
    # as the short section's child: the collector's generations empty when the timed calls start
    # (without it a middle-generation pass over the load's and warm-up's leftovers lands inside
    # the window: ~750 of a Qwen2.5 call's ~9,500 instructions that the section does not pay)
    gc.collect()
    if a.callgrind:
        c.callgrind_instrument(True)
    t0, c0 = time.perf_counter(), time.thread_time()
    for i, s in enumerate(timed):
        results[i] = fn(s)
    seconds, cpu = time.perf_counter() - t0, time.thread_time() - c0
    if a.callgrind:
        c.callgrind_instrument(False)
    del rows_fn
    load = os.getloadavg()[0]
    print(f"{a.lib} {a.vocab}: {seconds / len(timed) * 1e6:.2f} us a call, {cpu / len(timed) * 1e6:.2f} us of this "
          f"thread's CPU ({len(timed)} calls, load {load:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
