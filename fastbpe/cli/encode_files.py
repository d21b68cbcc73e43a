"""`fastbpe encode-files`: the command line of `fastbpe.corpus`."""
from __future__ import annotations

import argparse
import sys

from .app import UsageError, arg, subcommand

DESCRIPTION = """\
Encode text files for training into OUT (raw little-endian token ids), OUT.offsets
(int64 document boundaries) and OUT.manifest.json (what makes the two one unit; see
`fastbpe.corpus`), on every core, in bounded memory.  OUT may be a device or FIFO
(/dev/null, a pipe): the ids are streamed into it and nothing is written beside it.
Each file is one document, or --split-on cuts files into documents; the separator token
follows every document.  Bad UTF-8 is replaced by U+FFFD.  Exit status: 0 done, 1 an
error in the input or output (a message on stderr), 2 bad arguments."""


@subcommand(
    "encode-files", "encode files into a .bin of ids + offsets (training data)",
    arg("files", nargs="+", help="UTF-8 text files"),
    arg("-o", "--output", required=True, help="the ids file to write (e.g. train.bin)"),
    arg("-e", "--encoding", default="cl100k_base", help="a named encoding"),
    arg("--split-on", default=None,
        help='text that separates documents inside a file, with Python escapes ("\\n\\n"); '
             "default: each file is one document"),
    arg("--separator", default="<|endoftext|>",
        help='token after each document: its text, its id, or "none"'),
    arg("--keep-empty", action="store_true", help="keep empty documents (as a lone separator)"),
    arg("--dtype", choices=["auto", "uint16", "uint32"], default="auto",
        help="id width; auto: uint16 when the vocabulary fits"),
    arg("--threads", type=int, default=None, help="encoding threads (default: every core)"),
    arg("--buffer-mb", type=float, default=64, help="text held in memory at once, MB"),
    arg("--progress", action=argparse.BooleanOptionalAction, default=None,
        help="progress bar on stderr (default: when stderr is a terminal)"),
    description=DESCRIPTION,
)
def run(args) -> int:
    from .. import get_encoding

    split_on = None if args.split_on is None else _unescape(args.split_on)
    separator = args.separator
    if separator.lower() == "none":
        separator = None
    elif separator.isdigit():
        separator = int(separator)
    if not 0 < args.buffer_mb < float("inf"):
        raise UsageError(f"--buffer-mb must be a positive number of MB, not {args.buffer_mb}")
    enc = get_encoding(args.encoding)
    ids, offsets = enc.encode_files(
        args.files, args.output, separator=separator, split_on=split_on,
        keep_empty=args.keep_empty, dtype=None if args.dtype == "auto" else args.dtype,
        num_threads=args.threads, buffer_bytes=max(1, int(args.buffer_mb * 1e6)),
        show_progress=args.progress)
    if ids is None:  # a device or FIFO: the ids were streamed into it, nothing beside it
        print(f"{len(offsets) - 1:,} documents, {int(offsets[-1]):,} tokens -> {args.output}",
              file=sys.stderr)
    else:
        print(f"{len(offsets) - 1:,} documents, {len(ids):,} tokens ({ids.dtype}) -> "
              f"{args.output} + .offsets + .manifest.json", file=sys.stderr)
    return 0


def _unescape(text: str) -> str:
    """Python escapes (\\n, \\t, \\u2029) in a command-line argument; other text unchanged."""
    try:
        return text.encode("latin-1", "backslashreplace").decode("unicode_escape")
    except UnicodeDecodeError as e:
        raise UsageError(f"bad escape in --split-on: {e}") from None
