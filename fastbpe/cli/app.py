"""The command-line frame: registering subcommands, building the parser, turning errors
into one line on stderr and an exit code (see the package docstring)."""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Callable

PROG = "fastbpe"
DEFAULT_ENCODING = "cl100k_base"
MODEL_SUFFIXES = (".json", ".tiktoken", ".model")


class UsageError(Exception):
    """Options that do not fit together (exit code 2, like argparse's own errors)."""


@dataclass(frozen=True)
class arg:  # noqa: N801 - reads like argparse's add_argument
    """One `add_argument` call, kept for when the parser is built."""
    args: tuple
    kwargs: dict

    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "kwargs", kwargs)


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    arguments: tuple
    run: Callable[[argparse.Namespace], int]
    description: str


SUBCOMMANDS: dict[str, Subcommand] = {}


def subcommand(name: str, help: str, *arguments, description: str | None = None):
    """Register the decorated function as `fastbpe NAME`; arguments are `arg(...)` or lists
    of them; `description` is the longer --help text (default: `help`)."""
    flat = []
    for a in arguments:
        flat.extend(a if isinstance(a, (list, tuple)) else [a])

    def register(run):
        SUBCOMMANDS[name] = Subcommand(name, help, tuple(flat), run, description or help)
        return run

    return register


class _HelpFormatter(argparse.HelpFormatter):
    """Adds "(default: X)" to an option's help when it has a meaningful default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" not in text and action.default not in (None, False, [], argparse.SUPPRESS) \
                and action.option_strings:
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog=PROG, description="Byte-level BPE tokenizer: "
                                     "encode, decode, count, show and train.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in SUBCOMMANDS.values():
        p = sub.add_parser(command.name, help=command.help, description=command.description,
                           formatter_class=_HelpFormatter)
        for a in command.arguments:
            p.add_argument(*a.args, **a.kwargs)
    return parser


def _error(message: str, code: int) -> int:
    """Print the message on one line: its lines joined, or when that is too long, its first
    and last lines (for our messages: what went wrong, and how to fix it)."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()] or ["failed"]
    text = " ".join(lines)
    if len(text) > 400:
        text = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
    print(f"{PROG}: error: {text}", file=sys.stderr)
    return code


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version (0) and usage errors (2)
        return e.code if isinstance(e.code, int) else 2
    if sys.stdout is None:  # started with stdout closed (`>&-`)
        return _error("standard output is closed", 1)
    try:
        return SUBCOMMANDS[args.command].run(args)
    except UsageError as e:
        return _error(f"{e} (see: {PROG} {args.command} --help)", 2)
    except BrokenPipeError:
        # the reader went away (`| head`): stop quietly; keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    except OSError as e:
        if e.filename is not None and e.strerror:
            return _error(f"{e.filename}: {e.strerror}", 1)
        return _error(str(e), 1)
    except (ValueError, TypeError, OverflowError) as e:
        return _error(str(e), 1)
    except KeyError as e:
        return _error(f"not found: {e.args[0] if e.args else e}", 1)
    except ImportError as e:
        return _error(f"{e} (an optional part of fastbpe is not installed)", 1)
    except RecursionError:  # the library refuses deep nesting itself; this is the backstop
        return _error("the input is nested too deeply to read", 1)
    except MemoryError:
        return _error("out of memory (is the input or an option far larger than intended?)", 1)
