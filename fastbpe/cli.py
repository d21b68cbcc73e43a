"""Command line: `python -m fastbpe encode|decode|count|list ...`."""
from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fastbpe", description="Byte-level BPE tokenizer")
    sub = parser.add_subparsers(dest="command", required=True)

    p_enc = sub.add_parser("encode", help="print the token ids of TEXT (or of stdin)")
    p_enc.add_argument("text", nargs="?", help="text to encode; stdin when omitted")
    p_enc.add_argument("-e", "--encoding", default="cl100k_base")
    p_enc.add_argument("--show", action="store_true", help="also print each token's bytes")

    p_dec = sub.add_parser("decode", help="print the text of token ids")
    p_dec.add_argument("ids", nargs="+", type=int)
    p_dec.add_argument("-e", "--encoding", default="cl100k_base")

    p_cnt = sub.add_parser("count", help="count the tokens of files (or stdin)")
    p_cnt.add_argument("files", nargs="*")
    p_cnt.add_argument("-e", "--encoding", default="cl100k_base")

    sub.add_parser("list", help="list the named encodings")

    args = parser.parse_args(argv)
    from . import get_encoding, list_encoding_names

    if args.command == "list":
        print("\n".join(list_encoding_names()))
        return 0
    enc = get_encoding(args.encoding)
    if args.command == "encode":
        text = args.text if args.text is not None else sys.stdin.read()
        ids = enc.encode(text, allowed_special="all")
        print(json.dumps(ids))
        if args.show:
            for token in ids:
                print(f"{token:>8}  {enc.decode_single_token_bytes(token)!r}")
    elif args.command == "decode":
        sys.stdout.write(enc.decode(args.ids) + "\n")
    elif args.command == "count":
        sources = args.files or ["-"]
        for src in sources:
            text = sys.stdin.read() if src == "-" else open(src, encoding="utf-8", errors="replace").read()
            print(f"{len(enc.encode_ordinary(text))}\t{src}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
