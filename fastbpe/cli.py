"""Command line: `python -m fastbpe encode|decode|count|list|train|encode-files ...`."""
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

    p_tr = sub.add_parser("train", help="train a byte-level BPE on UTF-8 text files")
    p_tr.add_argument("files", nargs="+")
    p_tr.add_argument("-v", "--vocab-size", type=int, required=True)
    p_tr.add_argument("-o", "--output", required=True,
                      help="model file: *.json (native), *.tiktoken or *.model (minbpe)")
    p_tr.add_argument("--pattern", default="gpt4",
                      help="split pattern: gpt4 (default), cl100k, o200k, r50k, gpt2, llama3, or a regex")
    p_tr.add_argument("--special", action="append", default=[], help="a special token (repeatable)")
    p_tr.add_argument("--min-frequency", type=int, default=0)
    p_tr.add_argument("--max-token-length", type=int, default=None)

    from . import corpus_cli

    corpus_cli.add_parser(sub)

    args = parser.parse_args(argv)
    if hasattr(args, "run"):
        return args.run(args)
    from . import get_encoding, list_encoding_names

    if args.command == "train":
        return _train(args)
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


def _train(args) -> int:
    from . import patterns, save_model, train_files

    enc = train_files(args.files, args.vocab_size, pattern=patterns.BY_NAME.get(args.pattern, args.pattern),
                      special_tokens=args.special or None, min_frequency=args.min_frequency,
                      max_token_length=args.max_token_length)
    save_model(enc, args.output)
    print(f"trained {enc.n_vocab} tokens -> {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
