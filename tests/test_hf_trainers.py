"""Training through HF's API on fastbpe's kernels (fastbpe/trainers.py, hf/api_extras.py): the
tokenizer.json that `fastbpe.Tokenizer.train_from_iterator` / `train` produce equals the one HF
tokenizers' own BpeTrainer produces (vocabulary and ids, merges in order, added tokens), on a
grid of settings and pipelines; text generated here and Python's own library sources (a fresh
machine has both), and the shared corpora when ../shared exists."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import fastbpe
from fastbpe import trainers
from datasources import CORPUS_DIR, VOCAB_DIR, load_corpus

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, Tokenizer as HFTokenizer, models, normalizers, pre_tokenizers, trainers as hf_trainers  # noqa: E402

LLAMA3_SPLIT = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
REPO = Path(__file__).resolve().parent.parent


def generated_lines(n: int = 3000, seed: int = 0) -> list[str]:
    """Sentences of made-up words over Latin, accented, Cyrillic, CJK, Arabic and emoji
    syllables, numbers and punctuation, with varied white space (a Zipf-like word list, so
    counts are skewed as in real text)."""
    rng = random.Random(seed)
    syllables = ["ka", "to", "ri", "me", "an", "the", "ing", "qu", "sch", "ün", "é", "ñ", "ção", "st",
                 "дом", "ми", "ра", "日本", "語", "の", "中文", "🙂", "لم", "ا", "ß", "ø", "e\u0301"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(800)]
    weights = [1 / (k + 1) for k in range(len(words))]
    lines = []
    for _ in range(n):
        parts = rng.choices(words, weights, k=rng.randint(3, 14))
        if rng.random() < 0.3:
            parts.insert(rng.randrange(len(parts)), str(rng.randint(0, 99999)))
        line = " ".join(parts)
        line = line[0].upper() + line[1:] + rng.choice([".", "!", "?", ",", "...", " :)", "'s", ""])
        lines.append(line + rng.choice(["\n", "\n", "\r\n", "  \n", "\n\n", "\t\n"]))
    return lines


def library_lines(limit: int = 250_000) -> list[str]:
    """Python's own library sources (code, comments, docstrings): text every machine has."""
    root = Path(os.__file__).parent
    out, size = [], 0
    for name in ("argparse.py", "typing.py", "inspect.py", "email/message.py", "difflib.py"):
        path = root / name
        if path.is_file():
            for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
                out.append(line)
                size += len(line)
                if size >= limit:
                    return out
    return out


TEXT = generated_lines() + library_lines()


def hf_tokenizer(pre=None, norm=None, added=(), model=None):
    tok = HFTokenizer(model if model is not None else models.BPE())
    tok.pre_tokenizer = pre if pre is not None else pre_tokenizers.ByteLevel(add_prefix_space=False)
    if norm is not None:
        tok.normalizer = norm
    if added:
        tok.add_special_tokens(list(added))
    return tok


def both_trained(kw: dict, lines=TEXT, pre=None, norm=None, added=(), model=None, ours: bool = False):
    """(HF's tokenizer.json, fastbpe's) trained on lines with the same pipeline and settings;
    `ours`: fastbpe gets fastbpe.trainers.BpeTrainer(**kw) instead of HF's trainer."""
    hf = hf_tokenizer(pre, norm, added, model)
    fast = fastbpe.Tokenizer.from_str(hf.to_str())
    hf.train_from_iterator(lines, hf_trainers.BpeTrainer(show_progress=False, **kw))
    trainer = (trainers.BpeTrainer(show_progress=False, **kw) if ours
               else hf_trainers.BpeTrainer(show_progress=False, **kw))
    fast.train_from_iterator(iter(lines), trainer)
    return hf, fast


def assert_same(hf, fast, sample=TEXT[:200]):
    want, got = json.loads(hf.to_str()), json.loads(fast.to_str())
    assert got["model"]["vocab"] == want["model"]["vocab"]
    assert got["model"]["merges"] == want["model"]["merges"]
    assert got == want
    text = "".join(sample)
    assert fast.encode(text).ids == hf.encode(text).ids


BYTE_ALPHABET = pre_tokenizers.ByteLevel.alphabet()
SPLIT_BYTELEVEL = dict(pre=pre_tokenizers.Sequence([
    pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]))

GRID = [
    ("bytelevel", dict(vocab_size=700), {}),
    ("bytelevel-alphabet-specials", dict(vocab_size=1500, initial_alphabet=BYTE_ALPHABET,
                                         special_tokens=["<|endoftext|>", "<pad>", "<pad>"]), {}),
    ("min-frequency", dict(vocab_size=3000, min_frequency=40), {}),
    ("max-length-1", dict(vocab_size=900, max_token_length=1), {}),
    ("max-length-3", dict(vocab_size=900, max_token_length=3), {}),
    ("max-length-6", dict(vocab_size=1200, max_token_length=6), {}),
    ("vocab-below-alphabet", dict(vocab_size=40, special_tokens=["<s>"]), {}),
    ("prefix-space", dict(vocab_size=800), dict(pre=pre_tokenizers.ByteLevel(add_prefix_space=True))),
    ("nfc-split-bytelevel", dict(vocab_size=1500, initial_alphabet=BYTE_ALPHABET, special_tokens=["<|bos|>"]),
     dict(norm=normalizers.NFC(), **SPLIT_BYTELEVEL)),
    ("nfc-bytelevel", dict(vocab_size=1000), dict(norm=normalizers.Sequence([normalizers.NFC()]))),
    ("added-token-in-text", dict(vocab_size=800), dict(added=["the"])),
    ("whitespace-chars", dict(vocab_size=900, special_tokens=["[UNK]"]), dict(pre=pre_tokenizers.Whitespace())),
    ("quicktour-unk", dict(vocab_size=700, special_tokens=["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]),
     dict(pre=pre_tokenizers.Whitespace(), model=models.BPE(unk_token="[UNK]"))),
    ("nfkc-lowercase-bytelevel", dict(vocab_size=900, initial_alphabet=BYTE_ALPHABET),
     dict(norm=normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]))),
    ("clip-like", dict(vocab_size=900, special_tokens=["<|startoftext|>", "<|endoftext|>"]),
     dict(norm=normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "),
                                     normalizers.Lowercase()]),
          pre=pre_tokenizers.Sequence([
              pre_tokenizers.Split(Regex(r"'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"),
                                   behavior="removed", invert=True),
              pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]))),
    ("digits-bytelevel-prefix", dict(vocab_size=800, max_token_length=5),
     dict(pre=pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                       pre_tokenizers.ByteLevel(add_prefix_space=True)]))),
    ("whitespacesplit-nfc", dict(vocab_size=800, min_frequency=2),
     dict(pre=pre_tokenizers.WhitespaceSplit(), norm=normalizers.NFC())),
    ("metaspace-nfkc-lower", dict(vocab_size=900, min_frequency=2),
     dict(pre=pre_tokenizers.Metaspace(), norm=normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()]))),
]


@pytest.mark.parametrize("name,kw,pipeline", GRID, ids=[g[0] for g in GRID])
def test_same_as_hf_trainer(name, kw, pipeline):
    hf, fast = both_trained(kw, **pipeline)
    if pipeline.get("added"):
        # HF keeps an added token's id from before training (0 here, now also a character's
        # id in the new model) until the file is read back; fastbpe gives the read-back ids
        assert json.loads(hf.to_str())["added_tokens"][0]["id"] == 0
        hf = HFTokenizer.from_str(hf.to_str())
    assert_same(hf, fast)


def test_limit_alphabet_same_as_hf():
    """limit_alphabet keeps the most frequent characters; HF's choice among equal counts is
    arbitrary, so the limit is put where the counts at the cut differ."""
    counts: dict = {}
    for line in TEXT:
        for b in line.encode("utf-8"):    # the byte-level alphabet: one character per byte
            counts[b] = counts.get(b, 0) + 1
    ranked = sorted(counts.values(), reverse=True)
    limit = next(k for k in range(60, len(ranked)) if ranked[k - 1] != ranked[k])
    hf, fast = both_trained(dict(vocab_size=900, limit_alphabet=limit))
    assert_same(hf, fast)
    assert len([t for t in json.loads(fast.to_str())["model"]["vocab"] if len(t) == 1]) == limit


def test_fastbpe_trainer_equals_hf_trainer():
    kw = dict(vocab_size=1200, min_frequency=2, special_tokens=["<s>", "</s>"], initial_alphabet=BYTE_ALPHABET,
              max_token_length=8)
    hf, fast = both_trained(kw, ours=True)
    assert_same(hf, fast)


def test_batches_and_train_files(tmp_path):
    """train_from_iterator takes batches (lists) of texts; train(files) reads lines as HF does
    (each line with its ending; "\\r\\n" and a last line without one)."""
    kw = dict(vocab_size=800, special_tokens=["<eos>"])
    hf = hf_tokenizer()
    fast = fastbpe.Tokenizer.from_str(hf.to_str())
    hf.train_from_iterator(TEXT, hf_trainers.BpeTrainer(show_progress=False, **kw))
    fast.train_from_iterator([TEXT[i:i + 100] for i in range(0, len(TEXT), 100)],
                             trainers.BpeTrainer(show_progress=False, **kw), length=len(TEXT))
    assert_same(hf, fast)
    paths = [tmp_path / "a.txt", tmp_path / "b.txt"]
    paths[0].write_bytes("".join(TEXT[:2000]).encode())
    paths[1].write_bytes(("".join(TEXT[2000:]) + "last line  ").encode())
    hf, fast = hf_tokenizer(), fastbpe.Tokenizer.from_str(hf_tokenizer().to_str())
    hf.train([str(p) for p in paths], hf_trainers.BpeTrainer(show_progress=False, **kw))
    fast.train(paths, hf_trainers.BpeTrainer(show_progress=False, **kw))
    assert_same(hf, fast)


def test_default_trainer_and_progress(capsys):
    """No trainer: HF's defaults (30000 tokens, as many merges as the text allows)."""
    lines = TEXT[:300]
    hf = hf_tokenizer()
    fast = fastbpe.Tokenizer.from_str(hf.to_str())
    hf.train_from_iterator(lines)
    fast.train_from_iterator(lines)
    assert_same(hf, fast)
    fast = fastbpe.Tokenizer.from_str(hf_tokenizer().to_str())
    fast.train_from_iterator(lines, trainers.BpeTrainer(vocab_size=400, show_progress=False))
    assert capsys.readouterr().err == ""


@pytest.mark.skipif(not CORPUS_DIR.is_dir(), reason="shared corpora absent (../shared/data/corpus)")
@pytest.mark.parametrize("corpus,kw,pipeline", [
    ("tinyshakespeare.txt.xz", dict(vocab_size=3000, special_tokens=["<|endoftext|>"],
                                    initial_alphabet=BYTE_ALPHABET), {}),
    ("multilingual.txt.xz", dict(vocab_size=4000, min_frequency=3), dict(norm=normalizers.NFC(), **SPLIT_BYTELEVEL)),
    ("code.txt.xz", dict(vocab_size=2500, max_token_length=12), {}),
])
def test_same_as_hf_on_shared_corpora(corpus, kw, pipeline):
    lines = load_corpus(corpus.split(".")[0], 1_000_000).splitlines(keepends=True)
    hf, fast = both_trained(kw, lines, **pipeline)
    assert_same(hf, fast, lines[:300])


def reference_train(words: dict, vocab_size: int, specials=(), prefix=None, suffix=None, min_frequency=0):
    """HF's BpeTrainer written to be read (trainer.rs, without its heap): {word: count} in the
    order HF's hash map would walk it -> (vocab, merges).  Pair counts are recounted each merge."""
    vocab = {}
    for t in specials:
        vocab.setdefault(t, len(vocab))
    for c in sorted({c for w in words for c in w}):
        vocab.setdefault(c, len(vocab))
    seqs = []
    for w in words:
        seq = []
        for k, c in enumerate(w):
            s = (prefix if prefix and k > 0 else "") + c + (suffix if suffix and k == len(w) - 1 else "")
            seq.append(vocab.setdefault(s, len(vocab)))
        seqs.append(seq)
    id_to = {i: t for t, i in vocab.items()}
    merges = []
    first_tie = None   # the first merge chosen among equal counts
    while len(vocab) < vocab_size:
        pairs: dict = {}
        for seq, count in zip(seqs, words.values()):
            for pair in zip(seq, seq[1:]):
                pairs[pair] = pairs.get(pair, 0) + count
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        if pairs[best] < max(min_frequency, 1):
            break
        if first_tie is None and sum(1 for c in pairs.values() if c == pairs[best]) > 1:
            first_tie = len(merges)
        right = id_to[best[1]]
        token = id_to[best[0]] + (right[len(prefix):] if prefix and right.startswith(prefix) else right)
        new = vocab.setdefault(token, len(vocab))
        id_to[new] = token
        merges.append([id_to[best[0]], id_to[best[1]]])
        for seq in seqs:
            i = 0
            while i < len(seq) - 1:
                if (seq[i], seq[i + 1]) == best:
                    seq[i:i + 2] = [new]
                i += 1
    return vocab, merges, first_tie


@pytest.mark.parametrize("prefix,suffix", [("##", None), (None, "</w>"), ("##", "</w>")])
def test_prefix_and_suffix_as_reference(prefix, suffix):
    """continuing_subword_prefix / end_of_word_suffix: HF numbers the decorated characters in
    its hash map's order (it changes from run to run), so the check is against HF's rules
    written out (reference_train) with the words in fastbpe's order, and HF's own result must
    have the same tokens and merges up to the first tie."""
    import regex

    from fastbpe._count import PieceCounter

    words: dict = {}
    for line in TEXT[:700]:
        for w in regex.findall(r"\w+|[^\w\s]+", line):
            words[w] = words.get(w, 0) + 1
    counter = PieceCounter()
    for w, c in words.items():
        counter.add_bytes(w.encode(), c)
    kw = dict(vocab_size=500, special_tokens=["[UNK]"], min_frequency=2,
              **{k: v for k, v in (("continuing_subword_prefix", prefix), ("end_of_word_suffix", suffix)) if v})
    got = trainers.train_words(counter, trainers.BpeTrainer(show_progress=False, **kw), chars_of_bytes=False)
    vocab, merges, first_tie = reference_train(words, 500, ["[UNK]"], prefix, suffix, min_frequency=2)
    assert got.vocab == vocab
    assert [list(m) for m in got.merges] == merges
    # through the Tokenizer API, and HF's own (hash-ordered) run: the same tokens
    hf = hf_tokenizer(pre_tokenizers.Whitespace())
    fast = fastbpe.Tokenizer.from_str(hf.to_str())
    fast.train_from_iterator(TEXT[:700], trainers.BpeTrainer(show_progress=False, **kw))
    hf.train_from_iterator(TEXT[:700], hf_trainers.BpeTrainer(show_progress=False, **kw))
    want, ours = json.loads(hf.to_str())["model"], json.loads(fast.to_str())["model"]
    assert ours["continuing_subword_prefix"] == want["continuing_subword_prefix"]
    assert ours["end_of_word_suffix"] == want["end_of_word_suffix"]
    assert len(ours["vocab"]) == len(want["vocab"])
    assert ours["merges"][:first_tie] == want["merges"][:first_tie]


def test_trains_without_hf_installed(tmp_path):
    """fastbpe's trainer needs no `tokenizers`: a subprocess where importing it fails trains
    the same tokenizer.json as HF."""
    hf = hf_tokenizer(norm=normalizers.NFC(), **SPLIT_BYTELEVEL)
    (tmp_path / "untrained.json").write_text(hf.to_str())
    hf.train_from_iterator(TEXT, hf_trainers.BpeTrainer(vocab_size=900, show_progress=False,
                                                         special_tokens=["<s>"], initial_alphabet=BYTE_ALPHABET))
    (tmp_path / "want.json").write_text(hf.to_str())
    (tmp_path / "text.json").write_text(json.dumps(TEXT))
    code = """
import json, sys
sys.modules["tokenizers"] = None          # import tokenizers raises ImportError
import fastbpe
from fastbpe.trainers import BpeTrainer, bytelevel_alphabet
tok = fastbpe.Tokenizer.from_file("untrained.json")
tok.train_from_iterator(json.load(open("text.json")), BpeTrainer(
    vocab_size=900, show_progress=False, special_tokens=["<s>"], initial_alphabet=bytelevel_alphabet()))
print(json.loads(tok.to_str()) == json.load(open("want.json")))
"""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "True"


def test_bytelevel_alphabet_is_hf():
    assert sorted(trainers.bytelevel_alphabet()) == sorted(BYTE_ALPHABET)
    assert len(set(trainers.bytelevel_alphabet())) == 256


def test_bad_input():
    fast = fastbpe.Tokenizer.from_str(hf_tokenizer().to_str())
    with pytest.raises(TypeError):
        fast.train_from_iterator(TEXT[:10], hf_trainers.WordPieceTrainer())
    with pytest.raises(TypeError):
        fast.train_from_iterator("one text")
    with pytest.raises(TypeError):
        fast.train_from_iterator([["ok", 3]])
    with pytest.raises(ValueError):
        trainers.BpeTrainer(vocab_size=-1)
    with pytest.raises(ValueError):
        fast.train_from_iterator(TEXT[:10], length=-2)
    with pytest.raises(FileNotFoundError, match="nope.txt"):
        fast.train(["nope.txt"])


def test_file_not_utf8_names_it(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\nnot \xff utf-8\n")
    fast = fastbpe.Tokenizer.from_str(hf_tokenizer().to_str())
    with pytest.raises(ValueError, match="bad.txt: line 2"):
        fast.train([bad])


# ---------------------------------------------------------------------------------------
# transformers' train_new_from_iterator, stock and after fastbpe.patch_transformers()
# ---------------------------------------------------------------------------------------

def llama3_like_folder(folder: Path) -> Path:
    """A model folder made here: NFC, Llama-3 split + ByteLevel, BOS added by the
    post-processor, special tokens (what a fresh machine can have)."""
    transformers = pytest.importorskip("transformers")
    from tokenizers import decoders, processors

    tok = hf_tokenizer(norm=normalizers.NFC(), **SPLIT_BYTELEVEL)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TEXT, hf_trainers.BpeTrainer(vocab_size=1200, show_progress=False,
                                                         special_tokens=["<|bos|>", "<|eos|>", "<|pad|>"]))
    tok.post_processor = processors.TemplateProcessing(single="<|bos|> $A", pair="<|bos|> $A <|bos|> $B",
                                                       special_tokens=[("<|bos|>", tok.token_to_id("<|bos|>"))])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|bos|>", eos_token="<|eos|>",
                                                pad_token="<|pad|>")
    fast.save_pretrained(folder)
    return folder


def _train_new(folder, patched: bool, **kw):
    from transformers import AutoTokenizer

    if patched:
        fastbpe.patch_transformers()
    try:
        tok = AutoTokenizer.from_pretrained(folder)
        batches = [TEXT[i:i + 500] for i in range(0, len(TEXT), 500)]
        return tok.train_new_from_iterator(iter(batches), 900, **kw)
    finally:
        fastbpe.unpatch_transformers()


def _same_transformers_result(stock, patched):
    assert type(patched) is type(stock)
    assert type(stock.backend_tokenizer).__module__.startswith("tokenizers")
    assert type(patched.backend_tokenizer).__module__ == "fastbpe.hf.tokenizer"
    assert json.loads(patched.backend_tokenizer.to_str()) == json.loads(stock.backend_tokenizer.to_str())
    assert patched.special_tokens_map == stock.special_tokens_map
    assert patched.all_special_tokens == stock.all_special_tokens
    texts = ["".join(TEXT[:40]), "Hello <|new|> world", "Café 日本語 🙂"]
    assert patched(texts)["input_ids"] == stock(texts)["input_ids"]


SHARED_MODELS = ["gpt2", "qwen2.5"]


@pytest.mark.parametrize("name", ["made-here"] + SHARED_MODELS)
def test_transformers_train_new_from_iterator(name, tmp_path):
    pytest.importorskip("transformers")
    if name == "made-here":
        folder = llama3_like_folder(tmp_path / "model")
        kw = dict(new_special_tokens=["<|new|>"], special_tokens_map={"<|bos|>": "<s>"})
    else:
        folder = VOCAB_DIR / "hf" / name
        if not (folder / "tokenizer.json").is_file():
            pytest.skip(f"{folder} absent (shared data)")
        kw = dict(new_special_tokens=["<|new|>"])
    stock = _train_new(folder, patched=False, **kw)
    patched = _train_new(folder, patched=True, **kw)
    _same_transformers_result(stock, patched)
    if name == "made-here":
        assert "<s>" in patched.all_special_tokens and patched.bos_token == "<s>"
