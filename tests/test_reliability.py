"""Regression tests for issue 7 (reliability): each test failed on the code before its fix."""
from __future__ import annotations

import random
import textwrap

import pytest

from cli_run import run_python
from helpers import toy_encoding

import fastbpe
from fastbpe import counting, trainer


# --- item 7: memory does not grow with the largest special id -----------------------------------

def test_huge_special_id_costs_no_memory():
    # under a 1.5 GB address-space limit: the dense tables for id 2**30 would need >12 GB
    code = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (1536 << 20, 1536 << 20))
        from fastbpe import Encoding
        ranks = {bytes([i]): i for i in range(256)}
        enc = Encoding("x", pat_str=r"\\w+|\\s+", mergeable_ranks=ranks,
                       special_tokens={"<|big|>": 2**30, "<|small|>": 256})
        ids = enc.encode("a<|big|> <|small|>", allowed_special="all")
        assert ids == [97, 2**30, 32, 256], ids
        assert enc.decode(ids) == "a<|big|> <|small|>"
        assert enc.decode_single_token_bytes(2**30) == b"<|big|>"
        assert enc.decode_tokens_bytes([2**30, 97]) == [b"<|big|>", b"a"]
        assert enc.n_vocab == 2**30 + 1
        try:
            enc.decode([2**30 - 1])
        except KeyError:
            pass
        else:
            raise AssertionError("unused id decoded")
        print("ok")
    """)
    out = run_python(code, timeout=120)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


# --- item 14: special-token splitting stays linear ----------------------------------------------

def test_special_token_lookalikes_stay_linear():
    from fastbpe.special_tokens import special_token_regex

    specials = {f"<|reserved_{i}|>": 1000 + i for i in range(1000)}
    specials["<|endoftext|>"] = 999
    enc = toy_encoding(special_tokens=specials)
    text = "<|reserved_1x <|reserved_12 <|endoftex <|" * 4000
    ids = enc.encode(text, allowed_special="all")
    assert ids == list(text.encode()) and enc.decode(ids) == text
    assert enc.encode("a<|reserved_12|><|endoftext|>", allowed_special="all") == [97, 1012, 999]
    # a trie shares the common prefixes, so at each place the regex follows one branch per
    # character; a flat alternation (as before) repeats "<\\|reserved_" for every token
    pattern = special_token_regex(frozenset(specials)).pattern
    assert pattern.count("reserved") == 1


def test_longest_special_token_wins():
    enc = toy_encoding(special_tokens={"<|a|>": 300, "<|a|>x": 301, "<|a": 302})
    assert enc.encode("<|a|>x<|a|><|ab", allowed_special="all") == [301, 300, 302, 98]


# --- item 1: a PieceCounter shared by threads --------------------------------------------------

def test_piece_counter_shared_by_threads():
    # in a child process: before the lock this crashed (double free, rc 139)
    code = textwrap.dedent("""
        import random, threading
        from fastbpe._count import PieceCounter
        from fastbpe.trainer import count_pieces
        rng = random.Random(1)
        words = ["".join(rng.choice("abcdefghijklmnop") for _ in range(rng.randint(1, 9)))
                 for _ in range(60000)]
        texts = [" ".join(rng.sample(words, 30000)) for _ in range(4)]
        shared = PieceCounter()
        def work(i):
            count_pieces([texts[i]], counter=shared, num_threads=1)
            shared.add_pieces(texts[i].split(" ")[:1000])
            shared.update(PieceCounter())
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads: t.start()
        for t in threads: t.join()
        want = count_pieces(texts, num_threads=1)
        for i in range(4):
            want.add_pieces(texts[i].split(" ")[:1000])
        assert shared.to_dict() == want.to_dict()
        print("ok")
    """)
    out = run_python(code)
    assert out.stdout.strip() == "ok", out.stderr[-2000:]


# --- items 5 and 6: file blocks count like the whole text --------------------------------------

ADVERSARIAL_TEXTS = {
    "o200k newline then slash": "x;\n// y\n/* z */\n;\n/\n" * 7,
    "no newline at all": "word " * 300 + "tail",
    "lines all start with whitespace": "".join(f"  line {i}\n\t tab {i}\n \n" for i in range(60)),
    "blank line runs": "a\n\n\nb\n \n\nc\r\n\r\n\r\nd" * 20,
    "one long piece": "x" * 5000 + " y",
    "contractions at edges": "we'll they've I'm it's 'LL 'S\n" * 40,
    "unicode and digits": "h\u00e9llo 12345678 \u4f60\u597d\u4e16\u754c \U0001f600\U0001f600 \u0928\u092e\n" * 30,
    "whitespace runs": "a" + " " * 3000 + "b\n" + "\t \n" * 500 + "c",
    "random mix": "".join(random.Random(5).choice(
        ["\n", " ", "  ", "\t", "\r\n", "'s", "'LL", "x", "Ab", "\u00e9", "7", "123", ";", "/",
         "//", "\u3000", "\u00a0", "\U0001f600", "\u0301", "?\n/"]) for _ in range(3000)),
}


@pytest.mark.parametrize("block_chars", [7, 100, 1000])
@pytest.mark.parametrize("text_name", list(ADVERSARIAL_TEXTS))
def test_file_counts_equal_whole_text_counts(tmp_path, monkeypatch, text_name, block_chars):
    from fastbpe.patterns import BY_NAME

    text = ADVERSARIAL_TEXTS[text_name]
    path = tmp_path / "f.txt"
    path.write_text(text, encoding="utf-8", newline="")
    monkeypatch.setattr(counting, "_FILE_BLOCK_CHARS", block_chars)
    monkeypatch.setattr(counting, "_REGEX_MARGIN", 64)  # small blocks need a small margin
    custom = r"(?i:'s|'t)|\s*[\r\n]|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,2}|\s+(?!\S)|\s+|."
    for name, pattern in [*BY_NAME.items(), ("custom", custom)]:
        want = trainer.count_pieces([text], pattern, num_threads=1).to_dict()
        got = trainer.count_files([path], pattern, num_threads=1).to_dict()
        assert got == want, name


def test_file_reader_is_linear_on_one_huge_piece(tmp_path, monkeypatch):
    # one piece of 2**20 characters read 64 at a time: before, every read rescanned the
    # whole carry (quadratic); now the buffer is scanned again only when it has doubled
    path = tmp_path / "f.txt"
    path.write_text("x" * (1 << 20) + " tail", encoding="utf-8")
    calls = []
    real = counting._count.last_piece_end
    monkeypatch.setattr(counting._count, "last_piece_end",
                        lambda sc, buf, limit: calls.append(len(buf)) or real(sc, buf, limit))
    blocks = list(counting.read_blocks(path, fastbpe.patterns.GPT4_PATTERN, 64))
    assert b"".join(blocks) == path.read_bytes()
    assert sum(calls) < 4 * path.stat().st_size


# --- item 13: packaging: tests/test_packaging.py ---------------------------------------------
