"""The command line under hostile or careless input, run as `python -m fastbpe`: one rule
for invalid UTF-8 wherever the text comes from, malformed ids refused, control characters
never reach the terminal raw, and every error is one line that says what the user did
wrong (no traceback, no internals)."""
from __future__ import annotations

import json
import re

import pytest

import fastbpe
from cli_run import assert_one_line_error, run_cli

CORPUS = "the cat sat on the mat. the dog sat on the log.\nlogs and mats and cats.\n" * 50
# invalid UTF-8 of several kinds: a lone continuation byte, a cut 3-byte sequence, an
# encoded surrogate, an overlong form, 0xff
BAD_UTF8 = b"ab\x80cd \xe2\x82 ef\xed\xa0\x80gh \xc0\xaf ij\xff\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli-hostile") / "m.json"
    fastbpe.save_model(fastbpe.train([CORPUS], 280, special_tokens=["<|endoftext|>"]), path)
    return path


@pytest.fixture(scope="module")
def enc(model):
    return fastbpe.load_model(model).to_encoding()


# --- item 12: one rule for invalid UTF-8 ------------------------------------------------------

def test_invalid_utf8_is_read_alike_from_stdin_and_files(model, enc, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(BAD_UTF8)
    want = enc.encode(BAD_UTF8.decode("utf-8", "replace"))
    outputs = set()
    for args, stdin in [(["encode"], BAD_UTF8), (["encode", "-f", path], None),
                        (["encode", "-f", "-"], BAD_UTF8)]:
        code, out, err = run_cli(*args, "-m", model, stdin=stdin)
        assert code == 0, err
        outputs.add(out)
    assert len(outputs) == 1 and json.loads(outputs.pop()) == want
    counts = set()
    for args, stdin in [(["count"], BAD_UTF8), (["count", path], None), (["count", "-"], BAD_UTF8)]:
        code, out, err = run_cli(*args, "-m", model, stdin=stdin)
        assert code == 0, err
        counts.add(int(out.split()[0]))
    assert counts == {len(want)}


def test_invalid_utf8_in_an_argument_follows_the_same_rule(model, enc):
    import os

    if os.name != "posix":
        pytest.skip("argv bytes are only arbitrary on POSIX")
    arg = os.fsdecode(BAD_UTF8.strip())  # what Python makes of these argv bytes
    code, out, err = run_cli("encode", arg, "-m", model)
    assert code == 0, err
    assert json.loads(out) == enc.encode(BAD_UTF8.strip().decode("utf-8", "replace"))


# --- item 23: malformed ids -----------------------------------------------------------------

@pytest.mark.parametrize("stdin", ["[1, 2", "[1, 2]]", '["a"]', "[1.5]", "[true]", "[[1]]",
                                   "{1: 2}", "1 2 x", "[-1]", "1 -2"])
def test_malformed_ids_fail_clearly(model, stdin):
    code, out, err = run_cli("decode", "-m", model, stdin=stdin)
    assert code == 1 and out == b"", (code, out, err)
    assert_one_line_error(err)


@pytest.mark.parametrize("stdin", ["[104, 101]", "104 101", "104, 101", " [104,101]\n", "104\n101\n"])
def test_well_formed_ids_decode(model, enc, stdin):
    code, out, err = run_cli("decode", "-m", model, stdin=stdin)
    assert code == 0, err
    assert out.decode() == enc.decode([104, 101]) + "\n"


def test_malformed_ids_as_arguments_fail_clearly(model):
    code, _, err = run_cli("decode", "-m", model, "[1,", "2")
    assert code == 1
    assert_one_line_error(err)


# --- item 25: control characters in `show` ----------------------------------------------------

def test_show_escapes_control_characters(model):
    hostile = "title\x1b]0;pwned\x07 red\x1b[31m bell\x07 back\x08 cr\r csi\u009b2J del\x7f end\n"
    for args, stdin in [(["show", hostile], None), (["show"], hostile)]:
        code, out, err = run_cli(*args, "-m", model, stdin=stdin)
        assert code == 0, err
        text = out.decode("utf-8")
        # only our own colour codes may remain: background colours and the reset
        bare = re.sub(r"\x1b\[(?:48;5;\d+|0)m", "", text)
        assert not [c for c in bare if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) < 0xa0], bare
        for visible in ("pwned", "red", "bell", "end"):
            assert visible in bare


# --- item 16 (CLI) and item 21: one-line errors that say what the user did wrong ---------------

def test_deeply_nested_model_files_are_one_line_errors(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    hf_deep = tmp_path / "tokenizer.json"
    hf_deep.write_text('{"model": ' + "[" * 200_000 + "]" * 200_000 + "}")
    for path in (deep, hf_deep):
        code, _, err = run_cli("encode", "hi", "-m", path)
        assert code == 1, err
        assert_one_line_error(err)
        assert "RecursionError" not in err


def test_huge_numbers_say_which_option(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS)
    huge = "99999999999999999999"
    for extra, named in [(["-v", huge], "vocab"), (["-v", "300", "--min-frequency", huge], "min")]:
        code, _, err = run_cli("train", corpus, "-o", tmp_path / "m.json", *extra)
        assert code in (1, 2), err
        assert_one_line_error(err)
        assert "ssize_t" not in err and "C long" not in err and named in err.lower()


def test_a_mistyped_pattern_name_is_named(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS)
    code, _, err = run_cli("train", corpus, "-v", "300", "-o", tmp_path / "m.json", "--pattern", "gpt5")
    assert code in (1, 2)
    assert_one_line_error(err)
    assert "gpt5" in err and "corpus is empty" not in err


def test_too_many_threads_is_not_a_crash(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text(CORPUS)
    code, _, err = run_cli("train", corpus, "-v", "280", "-o", tmp_path / "m.json",
                           "--threads", "99999999999999999999", timeout=120)
    assert code in (0, 1, 2), err
    if code:
        assert_one_line_error(err)


# --- new user: the API and the CLI warn alike ---------------------------------------------------

def test_train_files_warns_when_the_corpus_runs_out_of_pairs(tmp_path):
    corpus = tmp_path / "c.txt"
    corpus.write_text("tiny corpus")
    with pytest.warns(UserWarning, match="only .* tokens of the 32000") as caught:
        enc = fastbpe.train_files([corpus], 32000)
    assert enc.n_vocab < 32000
    with pytest.warns(UserWarning, match="only"):
        fastbpe.train(["tiny corpus"], 32000)
    code, _, err = run_cli("train", corpus, "-v", "32000", "-o", tmp_path / "m.json")
    assert code == 0
    assert str(caught[0].message) in err and err.count("warning") == 1


def test_progress_of_text_counts_characters_not_megabytes(capsys):
    fastbpe.train(["héllo wörld " * 1000], 260, show_progress=True)
    counting = [line for line in capsys.readouterr().err.replace("\r", "\n").splitlines()
                if line.startswith("counting")]
    assert counting and all("MB" not in line and "chars" in line for line in counting)
