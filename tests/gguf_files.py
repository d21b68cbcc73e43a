"""Small GGUF files for the tests, written here (a GGUF writer is ~40 lines), and test vocabularies
trained with HF `tokenizers` so nothing has to be downloaded."""
from __future__ import annotations

import json
import struct

# GGUF value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
_CODES = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i", FLOAT32: "f", BOOL: "?",
          UINT64: "Q", INT64: "q", FLOAT64: "d"}


def _string(s: str, order: str = "<") -> bytes:
    b = s.encode("utf-8", "surrogateescape")
    return struct.pack(order + "Q", len(b)) + b


def _value(vtype: int, value, etype: int | None = None, order: str = "<") -> bytes:
    if vtype == STRING:
        return _string(value, order)
    if vtype == ARRAY:
        out = struct.pack(order + "IQ", etype, len(value))
        if etype == STRING:
            return out + b"".join(_string(v, order) for v in value)
        return out + struct.pack(order + _CODES[etype] * len(value), *value)
    return struct.pack(order + _CODES[vtype], value)


def gguf_bytes(kv: list[tuple], n_tensors: int = 0, tensor_data: int = 0, order: str = "<") -> bytes:
    """A GGUF v3 file: kv is [(key, type, value)] or [(key, ARRAY, values, element type)]; with
    n_tensors, that many tensor infos of `tensor_data` bytes each follow (the data itself is left
    to the caller, e.g. a sparse truncate).  order ">" writes a big-endian file."""
    out = [b"GGUF", struct.pack(order + "IQQ", 3, n_tensors, len(kv))]
    for key, vtype, value, *etype in kv:
        out.append(_string(key, order) + struct.pack(order + "I", vtype)
                   + _value(vtype, value, *(etype or [None]), order=order))
    for t in range(n_tensors):
        # name, n_dims, dims, ggml type (0 = f32), offset
        out.append(_string(f"blk.{t}.weight") + struct.pack("<I", 1) + struct.pack("<Q", tensor_data // 4)
                   + struct.pack("<I", 0) + struct.pack("<Q", t * tensor_data))
    data = b"".join(out)
    return data + b"\0" * (-len(data) % 32)  # tensor data starts aligned


def gpt2_kv(tokens: list[str], merges: list[str], pre: str, types: list[int] | None = None, **extra) -> list:
    kv = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "gpt2"),
          ("tokenizer.ggml.pre", STRING, pre), ("tokenizer.ggml.tokens", ARRAY, tokens, STRING),
          ("tokenizer.ggml.merges", ARRAY, merges, STRING)]
    if types is not None:
        kv.append(("tokenizer.ggml.token_type", ARRAY, types, INT32))
    for key, (vtype, value) in extra.items():
        kv.append((f"tokenizer.ggml.{key}", vtype, value))
    return kv


def spm_kv(tokens: list[str], scores: list[float], types: list[int], **extra) -> list:
    kv = [("general.architecture", STRING, "llama"), ("tokenizer.ggml.model", STRING, "llama"),
          ("tokenizer.ggml.tokens", ARRAY, tokens, STRING), ("tokenizer.ggml.scores", ARRAY, scores, FLOAT32),
          ("tokenizer.ggml.token_type", ARRAY, types, INT32)]
    for key, (vtype, value) in extra.items():
        kv.append((f"tokenizer.ggml.{key}", vtype, value))
    return kv


CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 2024 and we've got 1234567 reasons!",
    "Hello world\n\n  indented code:\n\tdef f(x):\n\t\treturn x ** 2  # square\n",
    "Ünïcödé façade — naïve café; Grüße aus Köln. ¿Qué tal? Ça va très bien.",
    "日本語のテキストと中文文本，还有한국어 문장도 있습니다。",
    "Привет, как дела? Всё хорошо. Ελληνικά γράμματα και αριθμοί 3.14159.",
    "emoji 🦙🦙 and symbols <|x|> [tag] {brace} $100 + 50% = ~ ^ | ` @home #hash",
    "I'm, you're, they'll, she'd, it's, we've, I'M, YOU'RE, DON'T — 'quoted' \"double\"",
    "   leading spaces and trailing   \n\r\n windows lines\r\nand   tabs\t\tend",
] * 20

TEXTS = [
    "", " ", "  ", "   ", "\t", "\n", "\n\n", "\n\n\n", "\t\n", "Hello world", " Hello world", "Hello World",
    " Hello World", " Hello World!", "Hello, world!", " Hello, world!", " this is 🦙.cpp", "w048 7tuijk dsdfhu",
    "нещо на Български", "កាន់តែពិសេសអាចខលចេញ", "🚀 (normal) 😶‍🌫️ (multiple emojis concatenated) ✅ (only emoji that has its own token)",
    "Hello", " Hello", "  Hello", "   Hello", "    Hello", "    Hello\n    Hello", " (", "\n =", "' era",
    "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～", "!!!!!!", "3", "33", "333", "3333", "33333",
    "333333", "3333333", "33333333", "333333333", "Cửa Việt", " discards", "I'M HERE, you're there. It'S",
    "\n \n\n \n\n\n \t \t\t \t\n  \n   \n    \n     \n", "a\u3000b\u00a0c\u2009d", "x\x1cy\x1fz\x85w",
    "Ⅻ ① ٣ ½ ²", "ℌ𝔢𝔩𝔩𝔬 𝓦𝓸𝓻𝓵𝓭", "e\u0301 n\u0303",
] + CORPUS[:8]


def train_bytelevel(vocab_size: int = 1500):
    """A byte-level BPE trained by HF tokenizers: (tokenizer.json dict, tokens by id, merges as 'a b')."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    spec = json.loads(tok.to_str())
    vocab = spec["model"]["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]
    return spec, tokens, merges


def train_metaspace(vocab_size: int = 600):
    """A SentencePiece-style vocabulary (▁ for spaces) from HF tokenizers' BPE trainer:
    tokens by id with <unk>, <s>, </s> and the 256 <0xNN> byte tokens first, like Llama's."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False)
    tok.train_from_iterator(CORPUS, trainer)
    learned = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    scores = [0.0] * len(tokens)
    seen = set(tokens)
    for k, (t, _) in enumerate(learned):
        if t in seen:
            continue
        seen.add(t)
        tokens.append(t)
        types.append(1)
        scores.append(-float(k))
    return tokens, scores, types
