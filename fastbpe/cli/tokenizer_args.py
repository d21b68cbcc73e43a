"""The tokenizer a command runs: a named encoding, a trained model file, or an HF
tokenizer.json (options -e/--encoding and -m/--model)."""
from __future__ import annotations

import os

from ..formats.sentencepiece_model import looks_like_sentencepiece_model
from .app import DEFAULT_ENCODING, MODEL_SUFFIXES, PROG, UsageError, arg


TOKENIZER_ARGS = [
    arg("-e", "--encoding", default=None,
        help=f"a named encoding (see `{PROG} list`); the default when no -m is given is "
             f"{DEFAULT_ENCODING}"),
    arg("-m", "--model", default=None, metavar="FILE",
        help="a model file instead of a named encoding: one saved by `train` or save_model "
             "(.json, .tiktoken, .model), a Hugging Face tokenizer.json, a llama.cpp .gguf, "
             "a SentencePiece .model or a Mistral tekken.json"),
]


class HFTokenizer:
    """A Hugging Face tokenizer.json behind the few methods the CLI uses (fastbpe.hf)."""

    def __init__(self, path: str):
        from ..hf import Tokenizer  # optional part of fastbpe, imported only for tokenizer.json

        self.name = os.path.basename(path)
        self._tok = Tokenizer.from_file(path)
        # a file's truncation/padding settings (GPT-2's truncates at 50) are for feeding a
        # model: the CLI encodes, counts and shows the whole text
        self._tok.no_truncation()
        self._tok.no_padding()
        # the split pattern of a plain byte-level file, so `count` cuts blocks where its pieces end
        self.pattern = self._tok.byte_level_pattern

    def encode(self, text, allowed_special=(), disallowed_special=()):
        return self._tok.encode_ids(text, add_special_tokens=False)

    def encode_ordinary(self, text):
        return self._tok.encode_ids(text, add_special_tokens=False)

    def decode(self, ids):
        return self._tok.decode(ids)

    def merge_tree(self):
        """(merges as (left, right, new id), bytes of each id) of a byte-level file, else
        (None, None): the `show --html` merge tree."""
        model = self._tok.model
        if getattr(model, "token_bytes", None) is None:
            return None, None
        rows = model.merge_rows   # an array.array('q'): left, right, new id, row after row
        return [tuple(rows[i:i + 3]) for i in range(0, len(rows), 3)], model.token_bytes

    def decode_single_token_bytes(self, token):
        single = getattr(self._tok, "decode_single_token_bytes", None)
        if single is not None:
            return single(token)
        return self._tok.decode([token]).encode("utf-8")


class GGUFFile(HFTokenizer):
    """A llama.cpp GGUF file (fastbpe.gguf) behind the same methods: llama.cpp's ids without
    BOS/EOS, special-token text as plain text."""

    def __init__(self, path: str):
        from ..gguf import GGUFTokenizer

        self.name = os.path.basename(path)
        self._tok = GGUFTokenizer.from_file(path)
        # `count` reads blocks cut between pieces of this pattern.  Only a one-regex split the
        # C scanner knows, with no user-defined token text to cut out, may be cut; anything
        # else (SentencePiece files, regex chains, special tokens) is counted as one block.
        splitter = self._tok.splitter
        user_defined = self._tok.vocab.user_defined_ids if splitter else True
        pattern = splitter.scanner_pattern if splitter else None
        self.pattern = pattern if pattern and not user_defined else r"[\s\S]+"

    def decode_single_token_bytes(self, token):
        return self._tok.token_to_piece(token)


class SentencePieceFile(HFTokenizer):
    """A SentencePiece BPE .model file (fastbpe.sentencepiece) behind the same methods: the
    sentencepiece package's ids without BOS/EOS."""

    def __init__(self, path: str):
        from ..sentencepiece import SentencePieceProcessor

        self.name = os.path.basename(path)
        self._tok = SentencePieceProcessor(path)
        self.pattern = r"[\s\S]+"   # no pre-tokenizer: `count` reads the text as one block

    def encode(self, text, allowed_special=(), disallowed_special=()):
        return self._tok.encode(text)

    encode_ordinary = encode

    def merge_tree(self):
        return None, None

    def decode_single_token_bytes(self, token):
        return self._tok.id_to_bytes(token)


class TekkenFile(SentencePieceFile):
    """Mistral's tekken.json (fastbpe.mistral) behind the same methods: mistral-common's ids
    without BOS/EOS (special-token text is ordinary text)."""

    def __init__(self, path: str):
        from ..mistral import Tekkenizer

        self.name = os.path.basename(path)
        self._tok = Tekkenizer.from_file(path)
        self.pattern = r"[\s\S]+"

    def encode(self, text, allowed_special=(), disallowed_special=()):
        return self._tok.encode(text, False, False)

    encode_ordinary = encode

    def decode_single_token_bytes(self, token):
        return self._tok.id_to_byte_piece(token, "keep")


def is_tekken_json(path: str) -> bool:
    if not path.endswith(".json"):
        return False
    with open(path, "rb") as f:
        head = f.read(1 << 12)
    return b'"default_num_special_tokens"' in head


def is_hf_tokenizer_json(path: str) -> bool:
    if not path.endswith(".json"):
        return False
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    # fastbpe's own files start with {"format": "fastbpe-bpe"; tokenizer.json has a "model"
    return b'"fastbpe-bpe"' not in head and (b'"model"' in head or b'"added_tokens"' in head)


def open_tokenizer(args):
    """The tokenizer the options name: an Encoding (with `bpe_model` for model files) or an
    HF tokenizer."""
    if args.model and args.encoding:
        raise UsageError("give either -e/--encoding or -m/--model, not both")
    if args.model:
        path = args.model
        if not os.path.exists(path):
            raise FileNotFoundError(f"model file not found: {path}")
        if is_hf_tokenizer_json(path):
            return HFTokenizer(path)
        if is_tekken_json(path):
            return TekkenFile(path)
        with open(path, "rb") as f:
            head = f.read(4)
        if head == b"GGUF":
            return GGUFFile(path)
        if looks_like_sentencepiece_model(head):
            return SentencePieceFile(path)
        if not path.endswith(MODEL_SUFFIXES):
            raise ValueError(f"{path}: unknown model file type; expected one of "
                             f"{', '.join(MODEL_SUFFIXES)} or a tokenizer.json")
        from ..trainer import load_model

        return load_model(path).to_encoding(os.path.basename(path))
    from ..registry import get_encoding

    return get_encoding(args.encoding or DEFAULT_ENCODING)
