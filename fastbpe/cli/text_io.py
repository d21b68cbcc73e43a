"""Reading the text a command works on and writing its output."""
from __future__ import annotations

import os
import sys

from .app import UsageError


def read_text(args) -> str:
    """TEXT, or the file given with -f, or stdin.  One rule wherever the text comes from:
    its bytes decoded as UTF-8 with each invalid sequence replaced by U+FFFD, as the
    library reads files (`count`, `train`, `encode-files` do the same)."""
    if getattr(args, "file", None) is not None:
        if args.text is not None:
            raise UsageError("give TEXT or -f FILE, not both")
        return read_file_text(args.file)
    if args.text is not None:
        # argv holds bytes; Python decoded them with surrogateescape: back to those bytes
        try:
            return decode_input(os.fsencode(args.text))
        except UnicodeEncodeError:  # a str that never was bytes (main() called from Python)
            return args.text
    return read_stdin_text()


def read_file_text(path: str) -> str:
    if path == "-":
        return read_stdin_text()
    with open(path, "rb") as f:
        return decode_input(f.read())


def read_stdin_text() -> str:
    """All of stdin, as bytes (not through the text layer, whose error handling depends on
    the locale), decoded by the rule above."""
    return decode_input(sys.stdin.buffer.read())


def decode_input(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def text_blocks(path: str, pattern: str | None = None):
    """A file (or stdin for "-") as str blocks cut where no piece of `pattern` (GPT-4's by
    default, which Llama-3's and Qwen2's split alike) can cross, so counting or training
    block by block equals doing it on the whole text; memory stays bounded."""
    from ..patterns import GPT4_PATTERN
    from ..trainer import read_blocks

    if path == "-":
        source = os.dup(sys.stdin.fileno())  # read_blocks closes what it opens; keep stdin open
    elif os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory")
    elif not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    else:
        source = path
    for block in read_blocks(source, pattern or GPT4_PATTERN):
        # blocks end at piece ends, so bytes blocks never cut a UTF-8 character
        yield block.decode("utf-8") if isinstance(block, bytes) else block


def write_output(path: str | None, data: bytes) -> None:
    """To the file (atomically) or to stdout."""
    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from ..formats.atomic import atomic_write_bytes

    atomic_write_bytes(path, data)
