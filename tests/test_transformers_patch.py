"""fastbpe.patch_transformers(): AutoTokenizer gives what stock transformers gives.

Each model folder is run twice by tests/transformers_outputs.py, once patched and once
stock, each in a fresh process; every output (ids, masks, offsets, overflow, numpy, word
ids, decode, chat template, added tokens, save + reload) must be equal.  The folders: the
shared ones (skipped without ../shared) and one this test builds with HF's trainer, so it
runs on a fresh machine.  Works with transformers 5.x and 4.x (docs/transformers.md says how
4.57 was checked)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from datasources import SHARED

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

REPO = Path(__file__).resolve().parent.parent
RUNNER = Path(__file__).resolve().parent / "transformers_outputs.py"
SHARED_MODELS = ["qwen2.5", "deepseek-r1-distill-llama-8b", "gpt2"]

CHAT_TEMPLATE = ("{% for m in messages %}<|start|>{{ m['role'] }}\n{{ m['content'] }}<|end|>\n{% endfor %}"
                 "{% if add_generation_prompt %}<|start|>assistant\n{% endif %}")
CORPUS = ["The quick brown fox jumps over the lazy dog.", "Hello world! How are you doing today?",
          "Café naïve 日本語のテキスト 🙂 emoji, numbers 1234567", "def f(x): return x**2  # code",
          "What is the capital of France? Paris is the capital and largest city of France."] * 30


def _run(folder: Path, mode: str, save_dir: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, str(RUNNER), str(folder), mode, str(save_dir)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def _compare(folder: Path, tmp_path: Path) -> None:
    stock = _run(folder, "stock", tmp_path / "stock")
    patched = _run(folder, "patched", tmp_path / "patched")
    assert stock["backend"].startswith("tokenizers")
    assert patched["backend"] == patched["reloaded_backend"] == "fastbpe.hf.tokenizer"
    for key in stock:
        if key not in ("backend", "reloaded_backend"):
            assert patched[key] == stock[key], key


def _llama3_like_folder(folder: Path) -> Path:
    """A byte-level BPE with a Llama-3 style split, BOS added by TemplateProcessing, special
    tokens and a chat template: what a model folder holds, trained here."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    split = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
             r"|\s*[\r\n]+|\s+(?!\S)|\s+")
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(tokenizers.Regex(split), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin|>", "<|end|>", "<|start|>", "<|pad|>"]
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(
        vocab_size=600, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.post_processor = processors.TemplateProcessing(
        single="<|begin|> $A", pair="<|begin|> $A <|begin|> $B:1",
        special_tokens=[("<|begin|>", tok.token_to_id("<|begin|>"))])
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "bos_token": "<|begin|>", "eos_token": "<|end|>",
              "pad_token": "<|pad|>", "model_max_length": 128, "chat_template": CHAT_TEMPLATE}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def test_patched_equals_stock_on_a_folder_built_here(tmp_path):
    _compare(_llama3_like_folder(tmp_path / "model"), tmp_path)


@pytest.mark.parametrize("name", SHARED_MODELS)
def test_patched_equals_stock_on_shared_models(name, tmp_path):
    folder = SHARED / "data" / "vocab" / "hf" / name
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"no {folder}/tokenizer.json (the shared model folders are not on this machine)")
    _compare(folder, tmp_path)


def test_unsupported_model_stays_on_hf_and_is_logged_once(tmp_path, caplog):
    from tokenizers import Tokenizer, models, pre_tokenizers

    import fastbpe
    from transformers import AutoTokenizer

    vocab = {"[UNK]": 0, "[PAD]": 1, "hello": 2, "world": 3, "##s": 4}
    hf = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    hf.pre_tokenizer = pre_tokenizers.Whitespace()
    folder = tmp_path / "wordpiece"
    folder.mkdir()
    hf.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]", "pad_token": "[PAD]"}))
    stock = AutoTokenizer.from_pretrained(str(folder))("hello worlds")["input_ids"]
    fastbpe.patch_transformers()
    try:
        with caplog.at_level("WARNING", logger="fastbpe.transformers"):
            first = AutoTokenizer.from_pretrained(str(folder))
            second = AutoTokenizer.from_pretrained(str(folder))
    finally:
        fastbpe.unpatch_transformers()
    assert type(first.backend_tokenizer).__module__.startswith("tokenizers")
    assert first("hello worlds")["input_ids"] == second("hello worlds")["input_ids"] == stock
    assert len([r for r in caplog.records if "stays on HF tokenizers" in r.getMessage()]) <= 1


def test_patch_and_unpatch_in_process(tmp_path):
    import fastbpe
    from transformers import AutoTokenizer

    folder = _llama3_like_folder(tmp_path / "model")
    fastbpe.patch_transformers()
    fastbpe.patch_transformers()  # a second call changes nothing
    try:
        patched = AutoTokenizer.from_pretrained(str(folder))
    finally:
        fastbpe.unpatch_transformers()
    stock = AutoTokenizer.from_pretrained(str(folder))
    assert isinstance(patched.backend_tokenizer, fastbpe.Tokenizer)
    assert not isinstance(stock.backend_tokenizer, fastbpe.Tokenizer)
    text = "Hello world! <|end|> Café 🙂"
    assert patched(text, return_offsets_mapping=True).data == stock(text, return_offsets_mapping=True).data


def _stage_by_stage(hf, text: str) -> list:
    """What transformers 5's `_encode_without_added_tokens` computes with HF's stages."""
    if hf.normalizer is not None:
        text = hf.normalizer.normalize_str(text)
    splits = [s for s, _ in hf.pre_tokenizer.pre_tokenize_str(text)] if hf.pre_tokenizer is not None else [text]
    return [t.id for s in splits for t in hf.model.tokenize(s)]


def test_encode_ids_without_added_tokens_is_hfs_stage_by_stage_encoding():
    """split_special_tokens / sanitize_control_tokens' plain-text encoding: added tokens never
    matched, no post-processor; on the kernel path (NFC or no normalizer) and the pipeline
    (a Lowercase normalizer, ByteLevel with its own regex and a prefix space)."""
    from test_hf_fast_path import ADDED, _ref
    from tokenizers import Tokenizer as HFTokenizer
    from tokenizers import normalizers as N
    from tokenizers import pre_tokenizers as P
    from tokenizers import processors as PP

    import fastbpe

    texts = ["Hi <|eot|> there <tool>x café [B] [L]y", "", "  \n\tnaïve cafe\u0301 😀 <|eom|><|eom|>", "x" * 70]
    refs = [_ref(normalizer, ADDED, PP.TemplateProcessing(single="<|eot|> $A", special_tokens=[("<|eot|>", 0)]))[0]
            for normalizer in (None, N.NFC())]
    other = HFTokenizer.from_str(refs[0].to_str())
    other.normalizer = N.Lowercase()
    other.pre_tokenizer = P.ByteLevel(add_prefix_space=True)
    for ref in refs + [other]:
        ours = fastbpe.Tokenizer.from_str(ref.to_str())
        for text in texts:
            assert ours.encode_ids_without_added_tokens(text) == _stage_by_stage(ref, text), text
    with pytest.raises(TypeError):
        ours.encode_ids_without_added_tokens(b"bytes")
