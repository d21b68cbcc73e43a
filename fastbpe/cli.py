"""Command line: `fastbpe encode|decode|count|show|list|train ...` (also `python -m fastbpe`).

Adding a subcommand is one function plus one registration: decorate the function that runs
it with `@subcommand(name, help, *arguments)`, where each argument is `arg(...)` with the
same parameters as `argparse.ArgumentParser.add_argument` (or a shared list such as
`TOKENIZER_ARGS`).  The function gets the parsed arguments and returns the exit code.

Errors: a user error (bad input, unknown encoding, missing file, ...) prints one line,
`fastbpe: error: ...`, on stderr and exits 1; a usage error (bad options) exits 2; output
cut short by a closed pipe (`| head`) exits quietly.  No tracebacks for any of these.
"""
from __future__ import annotations

import argparse
import json
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


# ----------------------------------------------------------------------------------------
# tokenizers: a named encoding, a trained model file, or an HF tokenizer.json

TOKENIZER_ARGS = [
    arg("-e", "--encoding", default=None,
        help=f"a named encoding (see `{PROG} list`); the default when no -m is given is "
             f"{DEFAULT_ENCODING}"),
    arg("-m", "--model", default=None, metavar="FILE",
        help="a model file instead of a named encoding: one saved by `train` or save_model "
             "(.json, .tiktoken, .model) or a Hugging Face tokenizer.json"),
]


class _HFTokenizer:
    """A Hugging Face tokenizer.json behind the few methods the CLI uses (fastbpe.hf)."""

    def __init__(self, path: str):
        from .hf import Tokenizer  # optional part of fastbpe, imported only for tokenizer.json

        self.name = os.path.basename(path)
        self._tok = Tokenizer.from_file(path)
        # a file's truncation/padding settings (GPT-2's truncates at 50) are for feeding a
        # model: the CLI encodes, counts and shows the whole text
        self._tok.no_truncation()
        self._tok.no_padding()
        # the split pattern of a plain byte-level file, so `count` cuts blocks where its pieces end
        self._pat_str = self._tok._pattern

    def encode(self, text, allowed_special=(), disallowed_special=()):
        return self._tok.encode_ids(text, add_special_tokens=False)

    def encode_ordinary(self, text):
        return self._tok.encode_ids(text, add_special_tokens=False)

    def decode(self, ids):
        return self._tok.decode(ids)

    def merge_tree(self):
        """(merges as (left, right, new id), bytes of each id) of a byte-level file, else
        (None, None): the `show --html` merge tree."""
        model = self._tok.model
        if getattr(model, "token_bytes", None) is None:
            return None, None
        return [tuple(m) for m in model.merge_rows.tolist()], model.token_bytes

    def decode_single_token_bytes(self, token):
        single = getattr(self._tok, "decode_single_token_bytes", None)
        if single is not None:
            return single(token)
        return self._tok.decode([token]).encode("utf-8")


def _is_hf_tokenizer_json(path: str) -> bool:
    if not path.endswith(".json"):
        return False
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    # fastbpe's own files start with {"format": "fastbpe-bpe"; tokenizer.json has a "model"
    return b'"fastbpe-bpe"' not in head and (b'"model"' in head or b'"added_tokens"' in head)


def open_tokenizer(args):
    """The tokenizer the options name: an Encoding (with `bpe_model` for model files) or an
    HF tokenizer."""
    if args.model and args.encoding:
        raise UsageError("give either -e/--encoding or -m/--model, not both")
    if args.model:
        path = args.model
        if not os.path.exists(path):
            raise FileNotFoundError(f"model file not found: {path}")
        if _is_hf_tokenizer_json(path):
            return _HFTokenizer(path)
        if not path.endswith(MODEL_SUFFIXES):
            raise ValueError(f"{path}: unknown model file type; expected one of "
                             f"{', '.join(MODEL_SUFFIXES)} or a tokenizer.json")
        from .trainer import load_model

        return load_model(path).to_encoding(os.path.basename(path))
    from .registry import get_encoding

    return get_encoding(args.encoding or DEFAULT_ENCODING)


# ----------------------------------------------------------------------------------------
# input and output

def _read_text(args) -> str:
    """TEXT, or the file given with -f, or stdin."""
    if getattr(args, "file", None) is not None:
        if args.text is not None:
            raise UsageError("give TEXT or -f FILE, not both")
        return _read_file_text(args.file)
    if args.text is not None:
        return args.text
    return sys.stdin.read()


def _read_file_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    with open(path, "r", encoding="utf-8", errors="replace", newline="") as f:
        return f.read()


def _text_blocks(path: str, pattern: str | None = None):
    """A file (or stdin for "-") as str blocks cut where no piece of `pattern` (GPT-4's by
    default, which Llama-3's and Qwen2's split alike) can cross, so counting or training
    block by block equals doing it on the whole text; memory stays bounded."""
    from .patterns import GPT4_PATTERN
    from .trainer import _read_blocks

    if path == "-":
        source = os.dup(sys.stdin.fileno())  # _read_blocks closes what it opens; keep stdin open
    elif os.path.isdir(path):
        raise IsADirectoryError(f"{path} is a directory")
    elif not os.path.exists(path):
        raise FileNotFoundError(f"no such file: {path}")
    else:
        source = path
    for block in _read_blocks(source, pattern or GPT4_PATTERN):
        # blocks end at piece ends, so bytes blocks never cut a UTF-8 character
        yield block.decode("utf-8") if isinstance(block, bytes) else block


def _write_output(path: str | None, data: bytes) -> None:
    """To the file (atomically) or to stdout."""
    if path is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from .formats.atomic import atomic_write_bytes

    atomic_write_bytes(path, data)


def _special_set(values: list[str] | None, default):
    """--allowed-special/--disallowed-special values: "all", "none" or token texts."""
    if not values:
        return default
    if values == ["all"]:
        return "all"
    if values == ["none"]:
        return frozenset()
    if "all" in values or "none" in values:
        raise UsageError('"all" and "none" cannot be mixed with token texts')
    return frozenset(values)


# ----------------------------------------------------------------------------------------
# subcommands

@subcommand(
    "encode", "print the token ids of TEXT (or of -f FILE, or of stdin) as a JSON list",
    arg("text", nargs="?", help="text to encode (default: read stdin)"),
    arg("-f", "--file", default=None, help="encode this file instead (- for stdin)"),
    TOKENIZER_ARGS,
    arg("--allowed-special", action="append", metavar="TOKEN",
        help='special token text to encode as its special token (repeatable), or "all" '
             "(default: none)"),
    arg("--disallowed-special", action="append", metavar="TOKEN",
        help='special token text that is an error in the input (repeatable), "all" (every '
             'token not allowed; the default) or "none" (encode such text as ordinary text)'),
    arg("--numpy", action="store_true",
        help="write the ids as a .npy array of uint32 (needs -o) instead of JSON"),
    arg("-o", "--output", default=None, metavar="FILE",
        help="write the ids to FILE (atomically) instead of stdout"),
    arg("--show", action="store_true", help="also print each token's id and bytes"),
)
def cmd_encode(args) -> int:
    if args.numpy and args.output is None:
        raise UsageError("--numpy writes a binary .npy file: give it a name with -o FILE")
    enc = open_tokenizer(args)
    text = _read_text(args)
    allowed = _special_set(args.allowed_special, frozenset())
    disallowed = _special_set(args.disallowed_special, "all")
    try:
        ids = enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    except ValueError as e:
        if "disallowed special token" not in str(e):
            raise
        token = str(e).split("token ", 1)[1].split(".\n", 1)[0]
        raise ValueError(f"the input contains the special token {token}: pass "
                         f"--allowed-special {token} (or all) to encode it as that token, or "
                         "--disallowed-special none to encode it as text") from None
    if args.numpy:
        import io

        import numpy as np

        buf = io.BytesIO()
        np.save(buf, np.asarray(ids, dtype=np.uint32))
        _write_output(args.output, buf.getvalue())
    else:
        lines = [json.dumps(list(ids))]
        if args.show:
            lines += [f"{token:>8}  {enc.decode_single_token_bytes(token)!r}" for token in ids]
        _write_output(args.output, ("\n".join(lines) + "\n").encode("utf-8"))
    return 0


def _parse_ids(values: list[str]) -> list[int]:
    ids = []
    for value in values:
        for part in value.replace(",", " ").replace("[", " ").replace("]", " ").split():
            try:
                token = int(part)
            except ValueError:
                raise ValueError(f"not a token id: {part!r}") from None
            if token < 0:
                raise ValueError(f"not a token id: {token} is negative")
            ids.append(token)
    return ids


def _decodes(enc, token: int) -> bool:
    try:
        enc.decode_single_token_bytes(token)
        return True
    except (KeyError, OverflowError, ValueError):
        return False


@subcommand(
    "decode", "print the text of token ids (arguments, or a JSON list / whitespace-separated "
              "ids on stdin)",
    arg("ids", nargs="*", help="token ids (default: read them from stdin)"),
    TOKENIZER_ARGS,
)
def cmd_decode(args) -> int:
    enc = open_tokenizer(args)
    ids = _parse_ids(args.ids if args.ids else [sys.stdin.read()])
    try:
        text = enc.decode(ids)
    except (KeyError, OverflowError):
        unknown = [t for t in ids if not _decodes(enc, t)]
        raise ValueError(f"token id {unknown[0] if unknown else '?'} is not in the "
                         "vocabulary") from None
    sys.stdout.write(text + "\n")
    return 0


@subcommand(
    "count", "count the tokens of files (or stdin), reading each in blocks: any size, "
             "bounded memory",
    arg("files", nargs="*", help="files to count (default: stdin; - also means stdin)"),
    TOKENIZER_ARGS,
)
def cmd_count(args) -> int:
    enc = open_tokenizer(args)
    sources = args.files or ["-"]
    total = 0
    for src in sources:
        n = sum(len(enc.encode_ordinary(block))
                for block in _text_blocks(src, getattr(enc, "_pat_str", None)))
        total += n
        print(f"{n}\t{src}")
    if len(sources) > 1:
        print(f"{total}\ttotal")
    return 0


@subcommand("list", "list the named encodings (built in, then tiktoken_ext plugins)")
def cmd_list(args) -> int:
    from .registry import list_encoding_names

    print("\n".join(list_encoding_names()))
    return 0


@subcommand(
    "show", "show TEXT (or -f FILE) split into tokens: coloured in the terminal, or as a "
            "web page with --html",
    arg("text", nargs="?", help="text to show (default: read stdin)"),
    arg("-f", "--file", default=None, help="show this file instead (- for stdin)"),
    TOKENIZER_ARGS,
    arg("--html", default=None, metavar="OUT.html",
        help="write a self-contained page instead: tokens coloured with ids and bytes on "
             "hover, counts, and for a model file (-m) the merge tree of its vocabulary"),
)
def cmd_show(args) -> int:
    enc = open_tokenizer(args)
    text = _read_text(args)
    ids = enc.encode(text, allowed_special="all", disallowed_special=())
    values = [enc.decode_single_token_bytes(t) for t in ids]
    if args.html is None:
        from .visualise import ansi_tokens

        sys.stdout.write(ansi_tokens(values) + "\n")
        print(f"{len(ids)} tokens, {len(text)} characters", file=sys.stderr)
        return 0
    from .formats.atomic import atomic_write_text
    from .show_html import render_page

    model = getattr(enc, "bpe_model", None)
    if isinstance(enc, _HFTokenizer):
        merges, vocab = enc.merge_tree()
    elif model is not None:
        merges, vocab = [tuple(m) for m in model.merges.tolist()], model.token_bytes()
    else:
        merges = vocab = None
    page = render_page(text, ids, values, name=getattr(enc, "name", "tokens"),
                       merges=merges, vocab=vocab)
    atomic_write_text(args.html, page)
    print(f"{len(ids)} tokens -> {args.html}", file=sys.stderr)
    return 0


@subcommand(
    "train", "train a byte-level BPE on UTF-8 text files (- or /dev/stdin: standard input)",
    arg("files", nargs="+", help="training text files"),
    arg("-v", "--vocab-size", type=int, required=True,
        help="tokens in the vocabulary: 256 bytes + merges + special tokens"),
    arg("-o", "--output", required=True,
        help="model file: *.json (fastbpe's format: keeps everything), *.model (minbpe; "
             "writes a .vocab beside it) or *.tiktoken (ranks only: refused when the pattern "
             "is not the default or there are special tokens, which it cannot keep)"),
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
    from . import patterns

    out = args.output
    if not out.endswith(MODEL_SUFFIXES):
        raise UsageError(f"unknown output type {out!r}: use a name ending in "
                         f"{', '.join(MODEL_SUFFIXES)}")
    pattern = patterns.BY_NAME.get(args.pattern, args.pattern)
    if out.endswith(".tiktoken") and (pattern != patterns.GPT4_PATTERN or args.special):
        raise UsageError(".tiktoken files keep only the tokens, not the split pattern or "
                         "special tokens: save to a .json (or .model) file to keep them")
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads must be at least 1")
    from .trainer import save_model, train, train_files

    options = dict(pattern=pattern, special_tokens=args.special or None,
                   min_frequency=args.min_frequency, max_token_length=args.max_token_length,
                   show_progress=args.progress, num_threads=args.threads)
    if all(os.path.isfile(p) for p in args.files):
        enc = train_files(args.files, args.vocab_size, **options)
    else:  # stdin, pipes, /dev/stdin: streamed in blocks
        enc = train((block for p in args.files for block in _text_blocks(p, pattern)),
                    args.vocab_size, **options)
    save_model(enc, out)
    if enc.n_vocab < args.vocab_size:
        print(f"{PROG}: warning: the corpus yields only {enc.n_vocab} tokens of the "
              f"{args.vocab_size} asked for (no pair left to merge)", file=sys.stderr)
    print(f"trained {enc.n_vocab} tokens -> {out}", file=sys.stderr)
    return 0


# ----------------------------------------------------------------------------------------

class _HelpFormatter(argparse.HelpFormatter):
    """Adds "(default: X)" to an option's help when it has a meaningful default."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "%(default)" not in text and action.default not in (None, False, [], argparse.SUPPRESS) \
                and action.option_strings:
            text += " (default: %(default)s)"
        return text


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

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


from . import corpus_cli  # noqa: E402,F401 - registers `encode-files`


if __name__ == "__main__":
    sys.exit(main())
