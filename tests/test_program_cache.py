"""Compiled scanner programs kept on disk (fastbpe/program_cache.py): a program read back cuts
exactly as the one compiled, a broken or foreign file is compiled again, no cache folder means
no files, and a second process loading a file whose split compiles to a program imports
neither numpy nor `regex`."""
from __future__ import annotations

import json
import os
from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_run import run_python
from hf_reference import build, tokenizers
from tokenizers import pre_tokenizers as hp  # noqa: E402

from fastbpe import _pretokenize, pattern_program, pretokenize, program_cache
from fastbpe.hf import pre_tokenizers
from fastbpe.plan import Level

# DeepSeek-V3's three Split regexes, CLIP's, and a pattern that needs backtracking (no automaton)
PATTERNS = [
    r"\p{N}{1,3}",
    r"[一-龥\u3040-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    r"<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+",
    r"\s+(?!\S)|\s+|\w+",
]
TEXTS = ["Hello, world! 12345 東京タワー\n\n  x", "it's    fine\r\n\t- ok?? 3.14159", "", "ÀÉ ŝ ǅ 😀😀 ١٢٣٤"]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("FASTBPE_CACHE_DIR", str(tmp_path))
    return tmp_path


def _register(key, prog) -> int:
    kind, why = pretokenize._register(key, [prog])
    assert kind >= 0, why
    return kind


@pytest.mark.parametrize("dialect", ["regex", "oniguruma"])
@pytest.mark.parametrize("pattern", PATTERNS)
def test_a_program_read_back_cuts_as_the_compiled_one(cache_dir, pattern, dialect):
    members = pre_tokenizers._oniguruma_members if dialect == "oniguruma" else None
    level = Level(pattern, dialect, members=members)
    key = ("test-level", dialect, pattern)
    built = program_cache.compiled(key, lambda: pretokenize._with_automaton(pretokenize._compile_level(level)))
    assert isinstance(built, pattern_program.Program)
    assert list((cache_dir).glob("programs-*/*.prog"))
    read = program_cache.compiled(key, lambda: pytest.fail("compiled again"))
    assert isinstance(read, program_cache.CachedProgram)
    assert (read.total, read.run, read.features) == (built.total, built.run, built.features)
    assert (read.dfa is None) == (getattr(built, "dfa", None) is None)
    if read.dfa is not None:
        assert bytes(read.dfa.byte_table()) == bytes(built.dfa.byte_table())
        read.dfa._by_byte = None        # the table made again from the transitions, without numpy
        assert bytes(read.dfa.byte_table()) == bytes(built.dfa.byte_table())
    for (lo, hi, index, blocks), (lo2, hi2, index2, blocks2) in zip(built.tables, read.tables):
        assert (lo, hi, bytes(index), bytes(blocks)) == (lo2, hi2, bytes(index2), bytes(blocks2))
    a, b = _register(("built",) + key, built), _register(("read",) + key, read)
    for text in TEXTS:
        assert _pretokenize.split(text, a) == _pretokenize.split(text, b), text


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab1 \n\t,.'東ÀΣ😀-")), max_size=40))
def test_a_read_back_program_cuts_any_text_as_compiled(text):
    kinds = _KINDS or _make_kinds()
    for a, b in kinds:
        assert _pretokenize.split(text, a) == _pretokenize.split(text, b)


_KINDS: list = []


def _make_kinds():
    for i, pattern in enumerate(PATTERNS):
        prog = pretokenize._with_automaton(pretokenize._compile_level(Level(pattern)))
        read = program_cache._load(("k", i), program_cache._dump(("k", i), prog))
        _KINDS.append((_register(("hyp-built", i), prog), _register(("hyp-read", i), read)))
    return _KINDS


def test_a_broken_or_foreign_file_is_compiled_again(cache_dir):
    key = ("test-broken", PATTERNS[0])
    calls = []

    def compile_it():
        calls.append(1)
        return pretokenize._with_automaton(pattern_program.compile_pattern(PATTERNS[0]))

    program_cache.compiled(key, compile_it)
    [path] = cache_dir.glob("programs-*/*.prog")
    good = path.read_bytes()
    flipped = bytearray(good)
    flipped[-100] ^= 4                       # one bit of the arrays (the checksum catches it)
    for bad in (good[:len(good) // 2], b"garbage", good[:-1] + b"\x00" * 2, good.replace(b"test-broken", b"test-brokeN"),
                bytes(flipped)):
        path.write_bytes(bad)
        got = program_cache.compiled(key, compile_it)
        assert isinstance(got, pattern_program.Program)
        assert path.read_bytes() == good        # rewritten whole
    assert len(calls) == 6


def test_a_flipped_bit_anywhere_in_the_file_is_compiled_again(cache_dir):
    """The checksum covers the magic, the JSON header and the arrays: a header bit that still
    parses ("root": 4 -> 5) once made a program that cut a whole text as one piece."""
    key = ("test-anywhere", PATTERNS[4])
    calls = []

    def compile_it():
        calls.append(1)
        return pretokenize._with_automaton(pattern_program.compile_pattern(PATTERNS[4]))

    want = program_cache.compiled(key, compile_it)
    [path] = cache_dir.glob("programs-*/*.prog")
    good = path.read_bytes()
    root = good.index(b'"root": ') + len(b'"root": ')
    spots = sorted({root, *range(0, len(good), max(1, len(good) // 41)), len(good) - 1})
    for at in spots:
        bad = bytearray(good)
        bad[at] ^= 1
        path.write_bytes(bytes(bad))
        n = len(calls)
        got = program_cache.compiled(key, compile_it)
        assert len(calls) == n + 1, at          # never read back: compiled again
        assert path.read_bytes() == good, at    # and rewritten whole
    text = "Hello, world!  it's 12 ok\n\n x"
    assert (_pretokenize.split(text, _register(("anywhere-read",) + key, got))
            == _pretokenize.split(text, _register(("anywhere-built",) + key, want)))


def test_none_is_kept_and_no_folder_means_no_cache(cache_dir, monkeypatch):
    assert program_cache.compiled(("test-none",), lambda: None) is None
    assert program_cache.compiled(("test-none",), lambda: pytest.fail("built again")) is None
    monkeypatch.setenv("FASTBPE_CACHE_DIR", "")
    assert program_cache.cache_root() is None
    calls = []
    program_cache.compiled(("test-off",), lambda: calls.append(1))
    program_cache.compiled(("test-off",), lambda: calls.append(1))
    assert len(calls) == 2


def test_a_second_process_loads_a_program_file_without_numpy_or_regex(tmp_path):
    """A Split regex outside the built-in scanner compiles to a program in the first process;
    the next process reads it from the cache: the same ids, and neither numpy nor regex (nor
    the compiler, which imports regex: CLIP's Replace(\\s+) run read from the cached program
    imported it, ~95M instructions of its load)."""
    ref = build(normalizer=tokenizers.normalizers.Replace(tokenizers.Regex(r"\s+"), " "), pre_tokenizer=hp.Sequence([
        hp.Split(tokenizers.Regex(PATTERNS[2]), "isolated"), hp.Split(tokenizers.Regex(PATTERNS[0]), "isolated"),
        hp.ByteLevel(add_prefix_space=False, use_regex=False)]),
        decoder=tokenizers.decoders.ByteLevel(), byte_level_alphabet=True)
    path = tmp_path / "tokenizer.json"
    path.write_text(ref.to_str(), encoding="utf-8")
    code = """
        import json, sys, fastbpe
        tok = fastbpe.Tokenizer.from_file(sys.argv[1])
        ids = tok.encode_ids(sys.argv[2]); tok.encode("hello world")
        print(json.dumps([tok.engine, ids, sorted(m for m in ("numpy", "regex", "onigurumacffi", "fastbpe.pattern_program")
                                              if m in sys.modules)]))
    """
    text = "Hello, world! 12345 東京 it's\n\n  x"
    env = {"FASTBPE_CACHE_DIR": str(tmp_path / "cache")}
    first = json.loads(run_python(code, path, text, env=env).stdout)
    second = json.loads(run_python(code, path, text, env=env).stdout)
    want = ref.encode(text, add_special_tokens=False).ids
    assert first[:2] == second[:2] == ["kernel", want]
    assert "numpy" in first[2] or "regex" in first[2]      # it compiled
    assert "onigurumacffi" in first[2]                      # and Oniguruma checked the regexes, as HF at load
    assert second[2] == []                                  # the cache knows both compile
    assert os.listdir(tmp_path / "cache")


def test_a_regex_oniguruma_compiled_before_is_not_compiled_at_load(cache_dir, monkeypatch):
    """A Split / Replace regex is compiled by Oniguruma at load (an invalid one is a ValueError
    there, as HF's); once it compiled, the cache says so and a later load compiles it at its
    first match; an invalid regex is never noted, and a note for another pattern is not trusted."""
    pytest.importorskip("onigurumacffi")
    from fastbpe.hf import oniguruma
    pattern = r"\s+(?=x)"
    assert not program_cache.regex_compiled_before(pattern)
    first = oniguruma.compile_split_pattern("pre-tokenizer Split", {"Regex": pattern})
    assert first._pattern is not None and program_cache.regex_compiled_before(pattern)
    compiles = []
    monkeypatch.setattr(oniguruma.OnigPattern, "_compile",
                        lambda self, real=oniguruma.OnigPattern._compile: compiles.append(self.pattern) or real(self))
    later = oniguruma.compile_split_pattern("pre-tokenizer Split", {"Regex": pattern})
    assert later._pattern is None and compiles == []
    text = "a  x b \t\nx  c"
    assert later.spans(text) == first.spans(text) == [(1, 3), (6, 9)] and compiles == [pattern]
    for bad in ("(", "[a-"):
        for _ in range(2):
            with pytest.raises(ValueError, match="tokenizer.json: pre-tokenizer Split has an invalid regex"):
                oniguruma.compile_split_pattern("pre-tokenizer Split", {"Regex": bad})
        assert not program_cache.regex_compiled_before(bad)
    [note] = cache_dir.glob("programs-*/*.onig")
    note.write_bytes(note.read_bytes() + b"(")            # a note whose pattern is another one
    assert not program_cache.regex_compiled_before(pattern)


def _lead_bytes_numpy(table):
    """The lead-byte set of a class table, written with numpy (the reference)."""
    import numpy as np
    _lo, _hi, index, blocks = table
    rows = np.asarray(blocks, dtype=np.uint8).reshape(-1, 32)[np.asarray(index)]
    block_any = rows.any(axis=1)
    bits = 0
    for b in range(0xC2, 0xE0):
        cp = (b & 0x1F) << 6
        bits |= int(rows[cp >> 8, (cp & 255) >> 3:((cp & 255) >> 3) + 8].any()) << b
    for b in range(0xE0, 0xF0):
        bits |= int(block_any[(b & 0x0F) << 4:((b & 0x0F) + 1) << 4].any()) << b
    for b in range(0xF0, 0xF5):
        bits |= int(block_any[(b & 0x07) << 10:((b & 0x07) + 1) << 10].any()) << b
    return bits


@pytest.mark.parametrize("pattern", PATTERNS + [r"[\u00e9]+", r"[\U0001F600-\U0001F64F]+", r"[\u07ff\u0800]+"])
def test_registering_needs_no_numpy_and_finds_the_same_lead_bytes(pattern):
    """A run class's lead bytes (registering a program) come from typed loops over the class
    table, as numpy computed them, for numpy and array tables alike."""
    from fastbpe import _scan_program
    prog = pattern_program.compile_pattern(pattern)
    for table in prog.tables:
        lo, hi, index, blocks = table
        want = _lead_bytes_numpy(table)
        assert _scan_program._lead_bytes(table) == want
        read = (lo, hi, array("H", bytes(index)), array("B", bytes(blocks)))
        assert _scan_program._lead_bytes(read) == want


# -- a model table's whole-token answers (hf/model.py _learn_whole_tokens, program_cache.kept)

def _byte_level_json() -> str:
    ref = build(pre_tokenizer=hp.ByteLevel(add_prefix_space=False, use_regex=True),
                decoder=tokenizers.decoders.ByteLevel(), byte_level_alphabet=True)
    return ref.to_str()


def _states(tok) -> bytes:
    from fastbpe._tokenizer_json import whole_token_states
    return whole_token_states(tok.model.table)


def test_whole_token_states_read_back_equal_the_learned_ones(cache_dir):
    """A second load reads the answers learn_whole_tokens gave the first (one file); a file
    with a flipped bit, or none, is learned again; FASTBPE_CACHE_DIR='' writes nothing."""
    from fastbpe.hf import Tokenizer
    text = _byte_level_json()
    first = Tokenizer.from_str(text)
    files = [p for p in cache_dir.rglob("*.bin")]
    assert len(files) == 1 and 1 in _states(first)   # learned: some tokens merge back into themselves
    again = Tokenizer.from_str(text)
    assert _states(again) == _states(first)
    data = bytearray(files[0].read_bytes())
    data[-10] ^= 1   # a flipped state: the checksum refuses it, learned again and rewritten
    files[0].write_bytes(bytes(data))
    assert _states(Tokenizer.from_str(text)) == _states(first)
    assert files[0].read_bytes() != bytes(data)
    files[0].write_bytes(b"FBKEPT1\n")   # cut short
    assert _states(Tokenizer.from_str(text)) == _states(first)
    for s in TEXTS:
        assert again.encode(s).ids == first.encode(s).ids


def test_whole_token_states_take_only_a_tables_own_shape(cache_dir, monkeypatch):
    """Another table's answers (another length) or a value that is no state raise, and no
    cache folder means no files."""
    from fastbpe._tokenizer_json import whole_token_states
    from fastbpe.hf import Tokenizer
    monkeypatch.setenv("FASTBPE_CACHE_DIR", "")
    tok = Tokenizer.from_str(_byte_level_json())
    assert list(cache_dir.iterdir()) == []
    states = _states(tok)
    with pytest.raises(ValueError):
        whole_token_states(tok.model.table, states + b"\0")
    with pytest.raises(ValueError):
        whole_token_states(tok.model.table, b"\3" + states[1:])
    assert whole_token_states(tok.model.table, states) == states


def test_oniguruma_class_answers_are_read_back_and_a_flipped_bit_is_asked_again(cache_dir, monkeypatch):
    """HF's character classes are asked of Oniguruma once a machine (~0.2 s a class) and kept
    with a crc32: a whole file is read back without asking, a flipped bit ("!" no longer
    punctuation) is asked again, never compiled into a program."""
    pytest.importorskip("onigurumacffi")
    pre_tokenizers._oniguruma_members.cache_clear()
    want = bytes(pre_tokenizers._oniguruma_members(r"\p{P}"))
    [path] = cache_dir.glob("oniguruma-*/*.bits")
    good = path.read_bytes()
    asked = []
    real = pre_tokenizers._ask_oniguruma
    monkeypatch.setattr(pre_tokenizers, "_ask_oniguruma", lambda atom: asked.append(atom) or real(atom))
    pre_tokenizers._oniguruma_members.cache_clear()
    assert bytes(pre_tokenizers._oniguruma_members(r"\p{P}")) == want and asked == []
    bad = bytearray(good)
    bad[ord("!") // 8] ^= 1 << (ord("!") % 8)
    path.write_bytes(bytes(bad))
    pre_tokenizers._oniguruma_members.cache_clear()
    assert bytes(pre_tokenizers._oniguruma_members(r"\p{P}")) == want and asked == [r"\p{P}"]
    assert path.read_bytes() == good
    pre_tokenizers._oniguruma_members.cache_clear()


def test_a_body_of_the_right_crc_but_another_length_is_learned_again(cache_dir):
    """A kept file whose checksum holds but whose body is not one state a token (only a
    foreign writer could make one) is learned again and rewritten, never a ValueError."""
    import zlib
    from fastbpe.hf import Tokenizer
    text = _byte_level_json()
    want = _states(Tokenizer.from_str(text))
    [path] = cache_dir.rglob("*.bin")
    good = path.read_bytes()
    head = good[:len(good) - 4 - len(want)]
    for body in (want[:-1], want + b"\0", b"\3" + want[1:]):
        path.write_bytes(head + body + zlib.crc32(body).to_bytes(4, "little"))
        assert _states(Tokenizer.from_str(text)) == want
        assert path.read_bytes() == good


def test_the_whole_token_key_covers_every_table_option(cache_dir, monkeypatch):
    """Tables built with other from_merges options never share kept answers: the key holds
    every option the table was built with."""
    from fastbpe.hf import Tokenizer, model
    tok = Tokenizer.from_str(_byte_level_json())
    merges, tokens = tok.model.merge_rows, tok.model.token_bytes
    keys = []
    real = program_cache.kept
    monkeypatch.setattr(model, "kept", lambda key, build, fits=None: keys.append(key) or real(key, build, fits))
    options = [{"skip_missing_bytes": True}, {"skip_missing_bytes": False}, {"require_all_bytes": False},
               {"whole_piece": False, "skip_missing_bytes": True}]
    for opts in options:
        table = model._table_with_whole_tokens(merges, tokens, **opts)
        assert list(table.encode_pieces(["hello", " world"])) == tok.encode_ids("hello world")
    assert len(set(keys)) == len(options)
    for key, opts in zip(keys, options):
        assert all(repr(item) in repr(key) for item in opts.items())


def _dead_pid() -> int:
    import subprocess
    import sys
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)


def test_one_writer_keeps_programs_and_answers_and_removes_a_killed_writers_temporary(cache_dir):
    """kept() and compiled() write through formats/atomic (one writer): a temporary left by a
    killed writer of the same file is removed by the next write, and no temporary stays."""
    key = ("test-kept-temporary",)
    program_cache.kept(key, lambda: b"first")
    [path] = cache_dir.glob("kept-*/*.bin")
    path.unlink()
    stale = path.parent / f".{path.name}.fastbpe-tmp-{_dead_pid()}-abcd1234"
    stale.write_bytes(b"half a fi")
    assert program_cache.kept(key, lambda: b"again") == b"again"
    assert not stale.exists()
    assert program_cache.kept(key, lambda: pytest.fail("built again")) == b"again"
    program_cache.compiled(("test-compiled-temporary",), lambda: None)
    assert len(list(cache_dir.rglob("*.prog"))) == 1
    assert [p for p in cache_dir.rglob("*") if "tmp" in p.name] == []


def test_a_write_removes_other_versions_folders_unwritten_for_a_week(cache_dir):
    """Each build of fastbpe (regex, Oniguruma) keeps its files in a folder of its own; a write
    removes the other versions' folders of the same kind that nothing wrote to for STALE_DAYS,
    keeps recent ones (another install may be using them) and everything else in the cache;
    a process that had a file of a removed folder open still reads it whole."""
    import time
    old = time.time() - (program_cache.STALE_DAYS + 1) * 86400
    folders = {}
    for name in ("programs-0000old", "programs-0000new", "kept-0000old", "kept-0000new", "oniguruma-0.0",
                 "elsewhere-0000old"):
        folder = cache_dir / name
        folder.mkdir()
        (folder / "x.bin").write_bytes(b"kept bytes")
        (folder / program_cache.MARKER).write_bytes(b"")   # made by fastbpe's store
        folders[name] = folder
    for name in ("programs-0000old", "kept-0000old", "oniguruma-0.0", "elsewhere-0000old"):
        os.utime(folders[name], (old, old))
    reader = open(folders["programs-0000old"] / "x.bin", "rb")
    leftover = cache_dir / f".programs-0000gone.removing-{_dead_pid()}"   # a remover killed mid-way
    leftover.mkdir()
    (leftover / program_cache.MARKER).write_bytes(b"")
    program_cache.compiled(("test-stale",), lambda: None)
    assert reader.read() == b"kept bytes"
    reader.close()
    left = sorted(p.name for p in cache_dir.iterdir())
    assert "programs-0000old" not in left and leftover.name not in left
    assert {"programs-0000new", "kept-0000old", "kept-0000new", "oniguruma-0.0", "elsewhere-0000old"} <= set(left)
    assert [p for p in left if p.startswith(".")] == []
    program_cache.kept(("test-stale",), lambda: b"x")
    left = sorted(p.name for p in cache_dir.iterdir())
    assert "kept-0000old" not in left and {"kept-0000new", "oniguruma-0.0", "elsewhere-0000old"} <= set(left)
    assert len([p for p in left if p.startswith("programs-")]) == 2
    assert len([p for p in left if p.startswith("kept-")]) == 2


def test_a_write_leaves_folders_fastbpe_did_not_make(cache_dir):
    """The cache root may be a folder shared with other programs ($FASTBPE_CACHE_DIR=~/.cache):
    a same-named stale folder without fastbpe's marker (another program's `programs-2024/`) and
    a `.removing-` folder without it are never removed (review's finding: they were)."""
    import time
    old = time.time() - (program_cache.STALE_DAYS + 30) * 86400
    theirs = []
    for name, file in (("programs-2024", "budget.xlsx"), ("kept-notes", "thesis.tex"),
                       ("oniguruma-src", "README"), (f".kept-x.removing-{_dead_pid()}", "draft")):
        folder = cache_dir / name
        folder.mkdir()
        (folder / file).write_bytes(b"someone else's work")
        os.utime(folder, (old, old))
        theirs.append(folder / file)
    program_cache.compiled(("test-foreign",), lambda: None)
    program_cache.kept(("test-foreign",), lambda: b"x")
    assert [str(p.relative_to(cache_dir)) for p in theirs if not p.exists()] == []
    made = [p for p in cache_dir.iterdir()
            if p.name.startswith(("programs-", "kept-")) and p not in [t.parent for t in theirs]]
    assert len(made) == 2 and all((p / program_cache.MARKER).is_file() for p in made)


def test_lead_bytes_of_random_tables_as_numpy_finds_them():
    """_lead_bytes counts empty blocks over the index (list.count): random class tables with
    one, several or no empty blocks, members anywhere, give numpy's answer."""
    import random

    from fastbpe import _scan_program
    rng = random.Random(28)
    for _ in range(60):
        n_blocks = rng.randint(1, 12)
        blocks = bytearray(32 * n_blocks)
        for k in range(n_blocks):
            if rng.random() < 0.6:
                for _ in range(rng.randint(1, 4)):
                    blocks[32 * k + rng.randrange(32)] |= 1 << rng.randrange(8)
        index = [rng.randrange(n_blocks) if rng.random() < 0.2 else 0 for _ in range(0x1100)]
        table = (0, 0, array("H", index), array("B", bytes(blocks)))
        assert _scan_program._lead_bytes(table) == _lead_bytes_numpy(table)
