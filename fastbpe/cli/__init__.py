"""Command line: `fastbpe encode|decode|count|show|list|train|encode-files ...` (also `python -m fastbpe`).

One module per group of subcommands (encode.py: encode, decode, count; show.py: list, show;
train.py; encode_files.py), over app.py (registration, parser, errors), tokenizer_args.py
(-e/-m) and text_io.py.  Adding a subcommand is one function plus one registration: decorate
the function that runs it with `@subcommand(name, help, *arguments)`, where each argument is
`arg(...)` with the same parameters as `argparse.ArgumentParser.add_argument` (or a shared
list such as `TOKENIZER_ARGS`).  The function gets the parsed arguments and returns the exit
code.  Import the new module below so that it registers.

Errors: the library's errors are exception classes with fields (e.g.
`special_tokens.DisallowedSpecialTokenError.token`); no message text is parsed.  A user error
(bad input, unknown encoding, missing file, ...) prints one line, `fastbpe: error: ...`, on
stderr and exits 1; a usage error (bad options) exits 2; output
cut short by a closed pipe (`| head`) exits quietly.  No tracebacks for any of these.
"""
from __future__ import annotations

# each command module registers its subcommands when imported
from . import encode, encode_files, show, train  # noqa: F401
from .app import PROG, SUBCOMMANDS, UsageError, arg, build_parser, main, subcommand

__all__ = ["PROG", "SUBCOMMANDS", "UsageError", "arg", "build_parser", "main", "subcommand"]
