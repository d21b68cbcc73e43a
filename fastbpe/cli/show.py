"""`fastbpe list` and `fastbpe show`."""
from __future__ import annotations

import sys

from .app import arg, subcommand
from .text_io import read_text
from .tokenizer_args import TOKENIZER_ARGS, HFTokenizer, open_tokenizer


@subcommand("list", "list the named encodings (built in, then tiktoken_ext plugins)")
def cmd_list(args) -> int:
    from ..registry import list_encoding_names

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
    text = read_text(args)
    ids = enc.encode(text, allowed_special="all", disallowed_special=())
    values = [enc.decode_single_token_bytes(t) for t in ids]
    if args.html is None:
        from ..visualise import ansi_tokens

        sys.stdout.write(ansi_tokens(values) + "\n")
        print(f"{len(ids)} tokens, {len(text)} characters", file=sys.stderr)
        return 0
    from ..formats.atomic import atomic_write_text
    from ..show_html import render_page

    model = getattr(enc, "bpe_model", None)
    if isinstance(enc, HFTokenizer):
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
