"""`fastbpe train`."""
from __future__ import annotations

import argparse
import os
import re
import sys
import warnings

from .app import MODEL_SUFFIXES, PROG, UsageError, arg, subcommand
from .text_io import text_blocks


@subcommand(
    "train", "train a byte-level BPE on UTF-8 text files (- or /dev/stdin: standard input)",
    arg("files", nargs="+", help="training text files"),
    arg("-v", "--vocab-size", type=int, required=True,
        help="tokens in the vocabulary: 256 bytes + merges + special tokens"),
    arg("-o", "--output", required=True,
        help="model file: *.json (fastbpe's format: keeps everything), *.model (minbpe; "
             "writes a .vocab beside it) or *.tiktoken (the ranks, plus FILE.meta.json with "
             "the pattern and special tokens, which ranks cannot hold)"),
    arg("--pattern", default="gpt4",
        help="split pattern: gpt4, cl100k, o200k, r50k, gpt2, llama3, or a regex"),
    arg("--special", action="append", default=[], metavar="TOKEN",
        help="a special token, added after the merges (repeatable)"),
    arg("--min-frequency", type=int, default=0,
        help="stop when the most frequent pair occurs fewer times than this"),
    arg("--max-token-length", type=int, default=None, help="longest merged token, in bytes"),
    arg("--threads", type=int, default=None,
        help="threads for counting (default: all cores)"),
    arg("--progress", action=argparse.BooleanOptionalAction, default=None,
        help="draw progress bars on stderr (default: only when stderr is a terminal)"),
)
def cmd_train(args) -> int:
    from .. import patterns

    out = args.output
    if not out.endswith(MODEL_SUFFIXES):
        raise UsageError(f"unknown output type {out!r}: use a name ending in "
                         f"{', '.join(MODEL_SUFFIXES)}")
    pattern = patterns.BY_NAME.get(args.pattern, args.pattern)
    if pattern == args.pattern and re.fullmatch(r"\w+", pattern):
        # a bare word is a mistyped name, not a split pattern (it would match only itself)
        raise UsageError(f"unknown pattern name {args.pattern!r}: use one of "
                         f"{', '.join(patterns.BY_NAME)}, or a regex")
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads must be at least 1")
    from ..trainer import save_model, train, train_files

    options = dict(pattern=pattern, special_tokens=args.special or None,
                   min_frequency=args.min_frequency, max_token_length=args.max_token_length,
                   show_progress=args.progress, num_threads=args.threads)
    # the library's warnings (e.g. a corpus too small for the vocabulary) in the CLI's words
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if all(os.path.isfile(p) for p in args.files):
            enc = train_files(args.files, args.vocab_size, **options)
        else:  # stdin, pipes, /dev/stdin: streamed in blocks
            enc = train((block for p in args.files for block in text_blocks(p, pattern)),
                        args.vocab_size, **options)
    save_model(enc, out)
    for w in caught:
        print(f"{PROG}: warning: {w.message}", file=sys.stderr)
    print(f"trained {enc.n_vocab} tokens -> {out}", file=sys.stderr)
    return 0
