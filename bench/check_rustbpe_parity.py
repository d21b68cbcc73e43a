"""Check that fastbpe's default trainer gives exactly rustbpe's vocabulary on a benchmark slice.

    python bench/check_rustbpe_parity.py --mb 10 --vocab 32000
"""
from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

import bench_train  # noqa: E402
import train_table  # noqa: E402
from fastbpe.patterns import GPT4_PATTERN  # noqa: E402

from fastbpe import trainer as T


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=10)
    ap.add_argument("--vocab", type=int, default=32000)
    args = ap.parse_args(argv)
    import rustbpe

    docs = bench_train.documents(train_table.text_slice(args.mb))
    mine = T.train_model(T.count_pieces(docs), args.vocab).mergeable_ranks()
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), args.vocab, pattern=GPT4_PATTERN)
    theirs = {bytes(k): v for k, v in dict(tok.get_mergeable_ranks()).items()}
    same = mine == theirs
    print(f"{args.mb} MB, vocab {args.vocab}, C scanner: {T._scanner(GPT4_PATTERN) is not None}: "
          f"{'identical' if same else 'DIFFERENT'} ({len(mine)} vs {len(theirs)} tokens)")
    if not same:
        bad = sorted(v for k, v in mine.items() if theirs.get(k) != v)
        print("first differing ids:", bad[:10])
        sys.exit(1)


if __name__ == "__main__":
    main()
