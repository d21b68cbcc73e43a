"""`fastbpe encode`, `decode` and `count`."""
from __future__ import annotations

import json
import sys

from ..special_tokens import DisallowedSpecialTokenError
from .app import UsageError, arg, subcommand
from .text_io import read_text, text_blocks, write_output
from .tokenizer_args import TOKENIZER_ARGS, open_tokenizer


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
    description="Print the token ids of TEXT (or of -f FILE, or of stdin) as a JSON list.  "
                "Wherever the text comes from, invalid UTF-8 is read the same way: each bad "
                "sequence becomes U+FFFD (as `count`, `train` and `encode-files` read files).",
)
def cmd_encode(args) -> int:
    if args.numpy and args.output is None:
        raise UsageError("--numpy writes a binary .npy file: give it a name with -o FILE")
    enc = open_tokenizer(args)
    text = read_text(args)
    allowed = _special_set(args.allowed_special, frozenset())
    disallowed = _special_set(args.disallowed_special, "all")
    try:
        ids = enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
    except DisallowedSpecialTokenError as e:
        token = repr(e.token)
        raise ValueError(f"the input contains the special token {token}: pass "
                         f"--allowed-special {token} (or all) to encode it as that token, or "
                         "--disallowed-special none to encode it as text") from None
    if args.numpy:
        import io

        import numpy as np

        buf = io.BytesIO()
        np.save(buf, np.asarray(ids, dtype=np.uint32))
        write_output(args.output, buf.getvalue())
    else:
        lines = [json.dumps(list(ids))]
        if args.show:
            lines += [f"{token:>8}  {enc.decode_single_token_bytes(token)!r}" for token in ids]
        write_output(args.output, ("\n".join(lines) + "\n").encode("utf-8"))
    return 0


def _parse_ids(text: str) -> list[int]:
    """Token ids: a JSON list of non-negative ints, or ints separated by whitespace or
    commas.  Anything else (a cut-off list, text, floats, booleans, nesting) is refused:
    decoding part of what was meant would print wrong text and succeed."""
    text = text.strip()
    if text.startswith("["):
        try:
            ids = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as e:
            raise ValueError(f"token ids: not a JSON list ({e})") from None
        if not isinstance(ids, list):
            raise ValueError("token ids: expected one JSON list of ints")
        for part in ids:
            if type(part) is not int or part < 0:
                raise ValueError(f"not a token id: {json.dumps(part)} (ids are non-negative "
                                 "integers)")
        return ids
    out = []
    for part in text.replace(",", " ").split():
        if not part.isdigit() or not part.isascii():
            raise ValueError(f"not a token id: {part!r} (ids are non-negative integers)")
        out.append(int(part))
    return out


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
    ids = _parse_ids(" ".join(args.ids) if args.ids else sys.stdin.read())
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
    # blocks are cut with Python's regex: an Encoding's pattern in that dialect is its splitter's
    pattern = enc.splitter.pat_str if hasattr(enc, "splitter") else enc.pattern
    for src in sources:
        n = sum(len(enc.encode_ordinary(block))
                for block in text_blocks(src, pattern))
        total += n
        print(f"{n}\t{src}")
    if len(sources) > 1:
        print(f"{total}\ttotal")
    return 0
