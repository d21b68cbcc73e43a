"""Run ONE trainer on one text slice and print a JSON line with the wall time.

Used by ``bench/train_table.py``, which starts this script once per (trainer, size,
vocab) in its own process and reads the peak memory (ru_maxrss) of that process.

    python bench/bench_train.py --trainer fastbpe --text bench/.work/large_en_10MB.txt --vocab 32000

Every trainer gets the same documents: the text cut into ~64 kB blocks just after a
newline followed by a non-space character (a piece boundary for the GPT-4 pattern, so
the blocks split into the same pieces as the whole text) and the same split pattern
(the GPT-4 pattern, minbpe's spelling).  The time covers training only (the text is
already in memory); it includes building each library's tokenizer object.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fastbpe.patterns import GPT4_PATTERN  # noqa: E402

BLOCK = 1 << 16


def documents(path: str) -> list:
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        text = f.read()
    docs, start = [], 0
    while start < len(text):
        end = min(len(text), start + BLOCK)
        if end < len(text):
            # cut after a newline followed by a non-space char
            j = end
            while j < len(text) and not (text[j - 1] in "\r\n" and not text[j].isspace()):
                j += 1
            end = j
        docs.append(text[start:end])
        start = end
    return docs


def run_fastbpe(docs, vocab):
    import fastbpe

    enc = fastbpe.train(docs, vocab, pattern=GPT4_PATTERN, show_progress=False)
    return enc.n_vocab


def run_fastbpe_regex(docs, vocab):
    # the same, with the C pre-tokenizer ruled out (the regex package splits)
    os.environ["FASTBPE_FORCE_REGEX"] = "1"
    return run_fastbpe(docs, vocab)


def run_rustbpe(docs, vocab):
    import rustbpe

    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter(docs), vocab, pattern=GPT4_PATTERN)
    return tok.vocab_size


def run_bpeasy(docs, vocab):
    import bpeasy

    ranks = bpeasy.train_bpe(iter(docs), GPT4_PATTERN, 128, vocab)
    return len(ranks)


def run_hf(docs, vocab):
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(GPT4_PATTERN), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=0, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(docs, trainer=trainer)
    return tok.get_vocab_size()


TRAINERS = {"fastbpe": run_fastbpe, "fastbpe-regex": run_fastbpe_regex, "rustbpe": run_rustbpe, "bpeasy": run_bpeasy,
            "hf": run_hf}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainer", choices=sorted(TRAINERS), required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--vocab", type=int, required=True)
    args = ap.parse_args(argv)
    docs = documents(args.text)
    t0 = time.perf_counter()
    n_vocab = TRAINERS[args.trainer](docs, args.vocab)
    wall = time.perf_counter() - t0
    scanner = None
    if args.trainer.startswith("fastbpe"):
        from fastbpe.trainer import _scanner

        scanner = _scanner(GPT4_PATTERN) is not None
    print(json.dumps({"trainer": args.trainer, "vocab": args.vocab, "n_vocab": n_vocab,
                      "seconds": wall, "c_scanner": scanner}))


if __name__ == "__main__":
    main()
