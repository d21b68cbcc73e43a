"""Counting pieces (fastbpe/counting.py): a PieceCounter shared by threads, and files read in
blocks count as the whole text does (adversarial texts, any block size, one huge piece)."""
from __future__ import annotations

import random
import textwrap

import pytest

from cli_run import run_python

import fastbpe
from fastbpe import counting, trainer


# -- a PieceCounter shared by threads -----------------------------------------------------------------

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


# -- file blocks count like the whole text ------------------------------------------------------------

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
