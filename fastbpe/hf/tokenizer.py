"""`Tokenizer`: a Hugging Face tokenizer.json with the interface of `tokenizers.Tokenizer`.

Three paths give the same ids:

* `encode` / `encode_batch` run HF's pipeline stage by stage (added tokens, normalizer,
  pre-tokenizer, BPE, post-processor, truncation, padding) and keep every token's offsets;
* on a plain byte-level BPE file (GPT-2, Llama-3, Qwen2.5, DeepSeek: no normalizer or NFC, a
  Split with a known pattern + ByteLevel, or ByteLevel with its regex) they build the same
  Encodings from the kernels instead (kernel_encodings.py), on threads for a batch; a batch
  of plain texts without truncation or padding (transformers' `tok(texts)`) gets Encodings
  that hold their ids and make the rest when read (ids_path.py's `_single_encodings`);
* `encode_ids`, `encode_ids_batch` and `encode_to_numpy` on such a file skip Encodings: added
  tokens are cut out in Python, and every other segment is scanned and merged by the GIL-free
  kernel of `fastbpe.Encoding`.  Other files use the pipeline and return its ids.

The class is split by concern: this module builds the pipeline and runs `encode`;
postprocessing.py (truncation, post-processor, padding), ids_path.py (the ids-only,
short-call and batch-of-texts paths), api_extras.py (asyncio, plain text, to_encoding,
training) and spec.py (the tokenizer.json document) hold the rest.
"""
from __future__ import annotations

import os
import weakref

from ..threads import available_cores, batch_threads
from .._short_call import CompiledEncode
from . import _nodes, decoders, lowering, normalizers, post_processors, pre_tokenizers, spec
from ._nodes import UnsupportedError
from .added_tokens import AddedToken, AddedVocabulary
from .api_extras import HFExtras, hf_tokenizer_class
from .ids_path import IdsPath
from .postprocessing import PostProcessing
from .encoding import Encoding, gc_paused, lazy_encoding, without_offsets
from .kernel_encodings import KernelEncoder
from .model import BPE
from .normalized import NormalizedText

_STRATEGIES = {"longest_first": "longest_first", "LongestFirst": "longest_first",
               "only_first": "only_first", "OnlyFirst": "only_first",
               "only_second": "only_second", "OnlySecond": "only_second"}


class Tokenizer(IdsPath, PostProcessing, HFExtras, CompiledEncode):
    """A tokenizer.json model with `tokenizers.Tokenizer`'s interface.  `Tokenizer(spec)`
    takes the parsed file (a dict) or, as HF's `Tokenizer(model)`, a model: a `tokenizers`
    model object or a model node."""

    def __init__(self, model):
        if isinstance(model, dict) and "model" not in model and "type" in model:
            model = spec.spec_of_model(model)           # a bare model node
        elif not isinstance(model, dict):
            if type(model).__module__.split(".")[0] != "tokenizers":
                raise ValueError("tokenizer.json must hold a JSON object")
            model = spec.spec_of_model(model)
        self._encode_special_tokens = False
        self._lazy_batches = weakref.WeakSet()   # ids-only Encodings' batches (ids_path._LazyBatch)
        self._load(model)

    def _load(self, doc: dict, model: "BPE | None" = None) -> None:
        """Build every stage from a tokenizer.json document (model: a BPE already built from
        the same model node, kept when its byte-level reading does not change)."""
        if not isinstance(doc, dict):
            raise ValueError("tokenizer.json must hold a JSON object")
        self._make_lazy_encodings()
        self._short = None  # the short-call plan of encode (see _short_plan), made on first use
        _nodes.check_version(doc)
        _nodes.nesting_checked(doc) or _nodes.check_nesting(doc)   # (read_document / parse checked theirs)
        model_json = doc.get("model")
        if not isinstance(model_json, dict):
            raise ValueError("tokenizer.json has no model object")
        kind = model_json.get("type", "BPE" if "merges" in model_json else None)  # old files omit the type
        if kind != "BPE":
            raise UnsupportedError(f"tokenizer.json: model {kind!r} is not supported by fastbpe (only BPE)")
        self._normalizer = _stage("normalizer", normalizers.from_json, doc)
        # the normalizer as a C program (None: none), or why it has none (then no fast path)
        self._normalize_program, self._normalizer_not_lowered = normalizers.kernel_program(self._normalizer)
        self._pre_tokenizer = _stage("pre_tokenizer", pre_tokenizers.from_json, doc)
        self._post_processor = _stage("post_processor", post_processors.from_json, doc)
        self._decoder = _stage("decoder", decoders.from_json, doc)
        if model is None:  # the vocabulary is written back from model.vocab, in its place
            self._model_json = {k: (None if k == "vocab" else v) for k, v in model_json.items()}
        self._version = doc.get("version", "1.0")
        steps = pre_tokenizers.steps_of(self._pre_tokenizer)
        byte_level_input = pre_tokenizers.ends_in_bytes(steps)
        if model is None or model.byte_level_input != byte_level_input:
            model_node = model_json if model is None else spec.model_node(self._model_json, model.vocab)
            model = BPE(model_node, byte_level_input)
        if self._model_json.get("merges") is not None:
            # the model's tuple in place of the file's list: the same merges written back, and
            # one the garbage collector stops tracking (see BPE.merges_source)
            self._model_json["merges"] = model.merges_kept
        self._model = model
        # ByteLevel last with a byte-level model: pieces stay in original characters and the
        # model reads their UTF-8 (the same ids and spans as mapping every byte to a character)
        if steps and isinstance(steps[-1], pre_tokenizers.ByteLevel) and self.model.byte_level:
            self._byte_split, self._steps_before = steps[-1], pre_tokenizers.Sequence(steps[:-1])
        else:
            self._byte_split, self._steps_before = None, None
        self.added = AddedVocabulary()
        if self._normalizer is not None:   # (its C program when it has one: no Oniguruma for CLIP's tokens)
            self.added.set_normalizer(normalizers.token_normalizer(self._normalizer, self._normalize_program))
        # as HF: the file's ids are not read back; each token gets the id HF assigns
        self.added.add_tokens(_added_tokens_of(doc), self.model.lookup)
        self._apply_special_token_encoding()
        self._truncation = None
        self._padding = None
        truncation, padding = _nodes.truncation_args(doc), _nodes.padding_args(doc)
        if truncation is not None:
            self.enable_truncation(**truncation)
        if padding is not None:
            self.enable_padding(**padding)
        plan, self._normalize_program, self._prefix_in_program = lowering.lower_with_prefix_space(
            self.model, self._normalize_program, self._normalizer_not_lowered, steps, self.added)
        self._kernel_plan = plan
        # SentencePiece-style files: the char-level kernel's runner
        self._char_path = lowering.char_level_path(plan, self.model)
        self._pattern, self._kind, self._pattern_regex = plan.pattern, plan.kind, plan.matcher
        self._fast_wraps = None
        self._kernel = None   # KernelEncoder, made on first use

    # -- the pipeline's stages, replaceable as HF's ---------------------------------------

    def _document(self, with_model: bool = True) -> dict:
        """This tokenizer as a tokenizer.json document (what `to_str` writes)."""
        return {
            "version": self._version,
            "truncation": spec.truncation_node(self._truncation),
            "padding": spec.padding_node(self._padding),
            "added_tokens": [t.to_json(i) for i, t in sorted(self.added.by_id.items())],
            "normalizer": spec.node_of(self._normalizer, "normalizer"),
            "pre_tokenizer": spec.node_of(self._pre_tokenizer, "pre_tokenizer"),
            "post_processor": spec.node_of(self._post_processor, "post_processor"),
            "decoder": spec.node_of(self._decoder, "decoder"),
            "model": spec.model_node(self._model_json, self.model.vocab) if with_model else self._model_json,
        }

    def _replace(self, key: str, value) -> None:
        """Rebuild with one stage (or the model) replaced; added tokens and options stay."""
        doc = self._document(with_model=False)
        doc[key] = spec.node_of(value, key)
        if key == "model":
            self._load(doc)
        else:
            self._load(doc, model=self.model)

    @property
    def model(self) -> BPE:
        """The BPE model (settable, as HF: a tokenizers model object or a model node)."""
        return self._model

    @model.setter
    def model(self, value) -> None:
        self._replace("model", value)

    normalizer = property(lambda self: self._normalizer, lambda self, v: self._replace("normalizer", v),
                          doc="The normalizer (settable: None, a node, a fastbpe or tokenizers normalizer).")
    pre_tokenizer = property(lambda self: self._pre_tokenizer, lambda self, v: self._replace("pre_tokenizer", v),
                             doc="The pre-tokenizer (settable as `normalizer`).")
    post_processor = property(lambda self: self._post_processor,
                              lambda self, v: self._replace("post_processor", v),
                              doc="The post-processor (settable as `normalizer`).")
    decoder = property(lambda self: self._decoder, lambda self, v: self._replace("decoder", v),
                       doc="The decoder (settable as `normalizer`).")

    @property
    def encode_special_tokens(self) -> bool:
        """When True, special added tokens in the text are tokenized as ordinary text (HF's flag)."""
        return self._encode_special_tokens

    @encode_special_tokens.setter
    def encode_special_tokens(self, value: bool) -> None:
        if bool(value) != self._encode_special_tokens:
            self._make_lazy_encodings()
        self._encode_special_tokens = bool(value)
        self._apply_special_token_encoding()

    def _apply_special_token_encoding(self) -> None:
        self.added.set_encode_special_tokens(self._encode_special_tokens)
        self._short = None

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_str(cls, json_text: str) -> "Tokenizer":
        doc = None
        if type(json_text) is str:   # the model's arrays read from the UTF-8 (None: json.loads reads it all)
            try:
                doc = _nodes.read_document(json_text.encode("utf-8"))
            except UnicodeEncodeError:   # a lone surrogate, which json.loads keeps
                pass
        return cls(doc if doc is not None else _nodes.parse(json_text))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> "Tokenizer":
        """A tokenizer.json; a llama.cpp .gguf file (told by its magic bytes) goes to `from_gguf`,
        a SentencePiece .model file (a protobuf) to `from_sentencepiece`."""
        with open(path, "rb") as f:
            data = f.read(4)
            if data == b"GGUF":
                return cls.from_gguf(path)
            if _nodes.looks_like_sentencepiece(data):
                return cls.from_sentencepiece(path)
            data += f.read()
        doc = _nodes.read_document(data)   # the model's arrays read from the bytes; None: json.loads
        if doc is not None:
            try:
                return cls(doc)
            except ValueError as e:
                raise type(e)(f"{os.fspath(path)}: {e}") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ValueError(f"{os.fspath(path)}: not a tokenizer.json (not UTF-8: {e.reason} at byte {e.start})") from None
        try:
            return cls(_nodes.parse(text))
        except ValueError as e:  # the same error type (UnsupportedError stays one), naming the file
            raise type(e)(f"{os.fspath(path)}: {e}") from None

    @classmethod
    def from_gguf(cls, path: str | os.PathLike):
        """llama.cpp's tokenizer of a GGUF file (metadata only, memory-mapped): a
        `fastbpe.gguf.GGUFTokenizer`, whose encode/decode give llama.cpp's ids and text."""
        from ..gguf import GGUFTokenizer  # the one place hf/ reaches the gguf front end (lazily)

        return GGUFTokenizer.from_file(path)

    @classmethod
    def from_sentencepiece(cls, path: str | os.PathLike):
        """A SentencePiece BPE .model file: a `fastbpe.sentencepiece.SentencePieceProcessor`,
        whose encode/decode give the sentencepiece package's ids and text."""
        from ..sentencepiece import SentencePieceProcessor  # hf/ reaches that front end here only (lazily)

        return SentencePieceProcessor(path)

    @classmethod
    def from_buffer(cls, data: bytes) -> "Tokenizer":
        return cls.from_str(bytes(data).decode("utf-8"))

    @classmethod
    def from_pretrained(cls, identifier: str, revision: str = "main", token: str | None = None) -> "Tokenizer":
        """From a local model folder (its tokenizer.json), a tokenizer.json path, or a Hub
        repository id (downloaded with huggingface_hub when that is installed)."""
        return cls.from_file(spec.resolve_pretrained(identifier, revision, token))

    def to_str(self, pretty: bool = False) -> str:
        """This tokenizer as tokenizer.json text (added tokens, truncation and padding as now)."""
        return spec.dumps(self._document(), pretty)

    def save(self, path: str | os.PathLike, pretty: bool = True) -> None:
        """Write `to_str(pretty)` to path (atomically: the old file or the new one, whole;
        a device or FIFO is written to, as every fastbpe output)."""
        spec.write_atomically(path, self.to_str(pretty))

    def __reduce__(self):
        # pickles and deep-copies by value, compactly: its tokenizer.json, as HF's does
        return (Tokenizer.from_str, (self.to_str(),))

    def __repr__(self) -> str:
        """HF's repr when `tokenizers` is installed (the same text), else a short one."""
        twin = hf_tokenizer_class()
        if twin is None:
            return (f"Tokenizer(model=BPE(vocab_size={len(self.model.lookup)}), "
                    f"added_tokens={len(self.added.by_id)})")
        return repr(twin.from_str(self.to_str()))

    def __str__(self) -> str:
        twin = hf_tokenizer_class()
        return repr(self) if twin is None else str(twin.from_str(self.to_str()))

    @property
    def engine(self) -> str:
        """Which path encodes this file: "kernel" (normalizer, pre-tokenizer and model in one
        compiled call), "kernel+matcher" (its split regex matched in Python), or "pipeline
        (why)" (HF's stages one by one in Python; the reason names the stage)."""
        return (self._kernel_plan.describe() if self._char_path is None or self._char_kernel()
                else "pipeline (an added token matched in normalized text, on a char-level model)")

    # -- vocabulary -----------------------------------------------------------------------

    def token_to_id(self, token: str) -> int | None:
        i = self.added.by_content.get(token)
        return i if i is not None else self.model.lookup.get(token)

    def id_to_token(self, token_id: int) -> str | None:
        t = self.added.token_text(token_id)
        return t if t is not None else self.model.id_to_token.get(token_id)

    def get_vocab(self, with_added_tokens: bool = True) -> dict[str, int]:
        vocab = dict(self.model.vocab)
        if with_added_tokens:
            for i, t in self.added.by_id.items():
                vocab[t.content] = i
        return vocab

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self.get_vocab(with_added_tokens)) if with_added_tokens else len(self.model.lookup)

    def get_added_tokens_decoder(self) -> dict[int, AddedToken]:
        return dict(sorted(self.added.by_id.items()))

    def add_tokens(self, tokens) -> int:
        return self._add(tokens, special=False)

    def add_special_tokens(self, tokens) -> int:
        return self._add(tokens, special=True)

    def _add(self, tokens, special: bool) -> int:
        """HF's AddedVocabulary::add_tokens: a token identical to one already added is
        ignored; one with known content keeps its id and takes the new flags; the count is
        of the tokens not ignored."""
        if isinstance(tokens, (str, AddedToken)):
            raise TypeError("expected a list of tokens")
        self._make_lazy_encodings()
        counted = self.added.add_tokens([AddedToken.coerce(t, special) for t in tokens], self.model.lookup)
        self._fast_wraps = self._short = None
        if self._prefix_in_program and any(t.normalized for t in self.added.by_id.values()):
            self._load(self._document(with_model=False), model=self.model)   # lowering.prefix_space no longer holds
        return counted

    def set_dropout_seed(self, seed: int | None) -> None:
        """Make BPE-dropout (a file with model.dropout > 0) reproducible: after the same seed,
        the same calls give the same ids.  HF has no seed; its results differ from ours."""
        self.model.seed_dropout(seed)

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        return self.post_processor.n_added(is_pair) if self.post_processor is not None else 0

    # -- truncation and padding -----------------------------------------------------------

    def enable_truncation(self, max_length: int, stride: int = 0, strategy: str = "longest_first",
                          direction: str = "right") -> None:
        if type(max_length) is not int or max_length < 0:
            raise ValueError(f"max_length must be a non-negative int, got {max_length!r}")
        if strategy not in _STRATEGIES:
            raise ValueError(f"unknown truncation strategy {strategy!r}")
        direction = str(direction).lower()
        if direction not in ("right", "left"):
            raise ValueError(f"truncation direction must be 'right' or 'left', got {direction!r}")
        if stride >= max_length and max_length > 0:
            raise ValueError(f"stride ({stride}) must be smaller than max_length ({max_length})")
        self._short = None
        self._truncation = {"max_length": max_length, "stride": stride,
                            "strategy": _STRATEGIES[strategy], "direction": direction}

    def no_truncation(self) -> None:
        self._short = None
        self._truncation = None

    @property
    def truncation(self) -> dict | None:
        return dict(self._truncation) if self._truncation else None

    def enable_padding(self, direction: str = "right", pad_id: int = 0, pad_type_id: int = 0,
                       pad_token: str = "[PAD]", length: int | None = None,
                       pad_to_multiple_of: int | None = None) -> None:
        direction = str(direction).lower()
        if direction not in ("right", "left"):
            raise ValueError(f"padding direction must be 'right' or 'left', got {direction!r}")
        self._short = None
        self._padding = {"length": length, "pad_to_multiple_of": pad_to_multiple_of, "pad_id": pad_id,
                         "pad_token": pad_token, "pad_type_id": pad_type_id, "direction": direction}

    def no_padding(self) -> None:
        self._short = None
        self._padding = None

    @property
    def padding(self) -> dict | None:
        return dict(self._padding) if self._padding else None

    # -- the full pipeline ----------------------------------------------------------------

    def _split_added(self, text: str) -> list[tuple[NormalizedText, int | None]]:
        """Added tokens cut out (raw ones in the text, normalized ones after normalizing)."""
        out = []
        for s, e, aid in self.added.find(text, normalized=False):
            seg = NormalizedText.from_original(text[s:e], s)
            if aid is not None:
                out.append((seg, aid))
                continue
            if self.normalizer is not None:
                seg = self.normalizer.normalize(seg)
            for s2, e2, aid2 in self.added.find(seg.text, normalized=True):
                if e2 > s2:
                    out.append((seg.slice(s2, e2), aid2))
        return out

    def _pieces_and_model(self, seg: NormalizedText) -> tuple:
        """A normalized segment's pre-tokenized pieces, and the model call that tokenizes one."""
        if self._byte_split is not None:
            return self._byte_split.split(self._steps_before.pre_tokenize([seg])), self.model.tokenize_utf8
        pieces = self.pre_tokenizer.pre_tokenize([seg]) if self.pre_tokenizer is not None else [seg]
        return pieces, self.model.tokenize_piece

    def _encode_sequence(self, text: str, type_id: int) -> Encoding:
        if not isinstance(text, str):
            raise TypeError(f"expected str, not {type(text).__name__}")
        if not text.isascii():
            text.encode("utf-8")  # UnicodeEncodeError for lone surrogates, as the fast path
        ids, tokens, offsets, words = [], [], [], []
        word = 0
        for seg, aid in self._split_added(text):
            if aid is not None:
                ids.append(aid)
                tokens.append(seg.text)  # as HF: the matched text (with stripped spaces, normalized)
                offsets.append(seg.offsets(0, len(seg.text)))
                words.append(word)
                word += 1
                continue
            pieces, tokenize = self._pieces_and_model(seg)
            for piece in pieces:
                if not piece.text:
                    continue
                for token_id, cs, ce in tokenize(piece.text):
                    ids.append(token_id)
                    tokens.append(self.model.id_to_token[token_id])
                    offsets.append(piece.offsets(cs, ce))
                    words.append(word)
                word += 1
        n = len(ids)
        return Encoding(ids, [type_id] * n, tokens, offsets, [1] * n, [0] * n, words, [0] * n)

    def _encode(self, sequence, pair, is_pretokenized: bool, add_special_tokens: bool) -> Encoding:
        """`encode` (_short_call.CompiledEncode's C method) for what its compiled call does not take."""
        short = self._short
        if short is None:
            short = self._short = self._short_plan()
        if short and pair is None and not is_pretokenized:
            enc = short[7](sequence, add_special_tokens)   # ShortCall: an ASCII text, one compiled call
            if enc is not None:
                return enc
            if type(sequence) is str:
                ids = self._short_ids(short, sequence, add_special_tokens)
                if ids is not None:
                    shape, sequences = short[6][True if add_special_tokens else False]
                    source = (short[7].owner, sequence, add_special_tokens, shape, len(ids), len(ids), None)
                    return lazy_encoding(ids, source, sequences)
        sequences = [sequence] if pair is None else [sequence, pair]
        if is_pretokenized:
            return self._post_process([self._encode_words(_words(s), k) for k, s in enumerate(sequences)],
                                      add_special_tokens)
        for s in sequences:
            _text(s)
        return self._post_process(self._sequences(sequences, [0, 1], 1), add_special_tokens)

    def encoding_of(self, sequence: str, add_special_tokens: bool, options: tuple | None = None) -> Encoding:
        """encode(sequence), every field made: a lazy Encoding's fields.  options: the
        (truncation, padding, batch length) of the call that made it (None: neither), not
        the tokenizer's now (transformers changes them from call to call)."""
        truncation, padding, longest = options if options is not None else (None, None, None)
        out = self._post_process(self._sequences([sequence], [0], 1), add_special_tokens, (truncation, padding))
        if longest is not None:
            self._pad(out, longest, padding)
        return out

    def _encode_words(self, words: list, type_id: int) -> Encoding:
        """One pre-tokenized sequence: each word encoded alone, word ids = word indexes."""
        out = Encoding.empty()
        for index, enc in enumerate(self._sequences(words, [type_id] * len(words), 1)):
            enc.put("word_ids", [index] * len(enc))
            out.extend(enc)
        return out

    def encode_batch(self, inputs, is_pretokenized: bool = False, add_special_tokens: bool = True,
                     *, num_threads: int | None = None) -> list[Encoding]:
        """`encode` for many inputs (str or (sequence, pair)); with padding, to the longest.
        A plain byte-level file runs the kernels for the whole batch on `num_threads`
        threads (default: one per core) with the GIL released."""
        return self._encode_batch(inputs, is_pretokenized, add_special_tokens, num_threads, True)

    def _encode_batch(self, inputs, is_pretokenized: bool, add_special_tokens: bool, num_threads, with_offsets: bool):
        if isinstance(inputs, str) or not hasattr(inputs, "__iter__"):
            raise TypeError(f"encode_batch expects a list of inputs, not {type(inputs).__name__}")
        if is_pretokenized:
            out = []
            for item in inputs:
                if _is_words(item):
                    seqs = [_words(item)]
                elif isinstance(item, (list, tuple)) or type(item).__name__ == "ndarray":
                    if len(item) != 2:
                        raise TypeError("encode_batch: a pre-tokenized pair input must hold two word lists")
                    seqs = [_words(item[0]), _words(item[1])]
                else:
                    raise TypeError("PreTokenizedInputSequence must be Union[List[str], Tuple[str]]")
                encodings = [self._encode_words(w, k) for k, w in enumerate(seqs)]
                if not with_offsets:
                    encodings = list(map(without_offsets, encodings))
                out.append(self._post_process(encodings, add_special_tokens))
            return self._pad_encodings(out)
        if type(inputs) is not list:
            inputs = list(inputs)
        if num_threads is None:
            num_threads = available_cores()  # the cores this process may use (taskset), not the machine's
        if ((self._kind >= 0 and self._uses_fast_path() or self._char_kernel())
                and set(map(type, inputs)) <= {str}):   # all str (map: no Python step a text)
            with gc_paused():
                return self._single_encodings(inputs, add_special_tokens, batch_threads(inputs, num_threads),
                                              with_offsets)
        flat, type_ids, shapes = [], [], []
        for item in inputs:
            if isinstance(item, str):
                flat.append(item)
                type_ids.append(0)
                shapes.append(1)
            elif isinstance(item, (tuple, list)) or type(item).__name__ == "ndarray":
                if len(item) != 2:
                    raise ValueError("encode_batch: a pair input must hold two sequences")
                flat.extend((_text(item[0]), _text(item[1])))
                type_ids.extend((0, 1))
                shapes.append(2)
            else:
                flat.append(_text(item))
                type_ids.append(0)
                shapes.append(1)
        with gc_paused():
            encodings = self._sequences(flat, type_ids, num_threads)
            if not with_offsets:
                encodings = map(without_offsets, encodings)
            encodings = iter(encodings)
            out = [self._post_process([next(encodings) for _ in range(k)], add_special_tokens) for k in shapes]
        return self._pad_encodings(out)

    def _pad_encodings(self, out: list) -> list:
        """encode_batch's padding to the longest Encoding, when no length is fixed."""
        if self._padding and self._padding["length"] is None and out:
            longest = max(len(e) for e in out)
            for e in out:
                self._pad(e, longest)
        return out

    def encode_batch_fast(self, inputs, is_pretokenized: bool = False, add_special_tokens: bool = True,
                          *, num_threads: int | None = None) -> list[Encoding]:
        """HF's encode_batch_fast: encode_batch without alignments.  As HF, the input's tokens
        then have offsets (0, 0), no word id and an empty token string (HF reads a token's
        text through its offsets); the post-processor's special tokens and padding keep theirs."""
        return self._encode_batch(inputs, is_pretokenized, add_special_tokens, num_threads, False)

    def post_process(self, encoding: Encoding, pair: Encoding | None = None,
                     add_special_tokens: bool = True) -> Encoding:
        """HF's post_process: truncation, the post-processor and padding, applied to
        Encodings made with them off or already applied (the inputs are not changed)."""
        encodings = [encoding.copy()] if pair is None else [encoding.copy(), pair.copy()]
        return self._post_process(encodings, add_special_tokens)

    def _sequences(self, texts: list, type_ids: list, num_threads: int) -> list[Encoding]:
        """The Encoding of each text (with its type id) before post-processing: from the
        kernels when the file takes the fast path (offsets through the normalizer program's
        alignment where it changed the text), else from the pipeline."""
        if self._char_kernel():
            return self._char_path.sequences(self, texts, type_ids, num_threads)
        if not self._uses_fast_path():
            return [self._encode_sequence(t, k) for t, k in zip(texts, type_ids)]
        plans = []
        for t in texts:
            plan = self._plan_aligned(t)      # TypeError for a non-str
            if not t.isascii():
                t.encode("utf-8")  # UnicodeEncodeError for lone surrogates, placed in t as the pipeline does
            # a byte the model skips (no token) shifts HF's spans: the pipeline makes them
            plans.append(None if self.model.skips_bytes_of(t) else plan)
        kernel = self._kernel_encoder()
        segments = [item for plan in plans if plan is not None for _, _, item in plan[0] if type(item) is str]
        outputs = iter(kernel.outputs(segments, num_threads))
        return [kernel.sequence(str.__str__(t), plan[0], outputs, k, plan[1]) if plan is not None else self._encode_sequence(t, k)
                for t, plan, k in zip(texts, plans, type_ids)]

    def _kernel_encoder(self):
        kernel = self._kernel
        if kernel is None:
            kernel = self._kernel = KernelEncoder(self, self._kind, self._isolated_pieces, self._kernel_plan.drops)
        return kernel

    # -- decoding -------------------------------------------------------------------------

    def decode(self, ids, skip_special_tokens: bool = True) -> str:
        """The text of ids, through the file's decoder (tokens joined by spaces without one)."""
        special = self.added.special_contents() if skip_special_tokens else ()
        tokens = []
        for i in ids:
            if isinstance(i, bool) or not isinstance(i, int):
                try:
                    i = int(i.__index__())
                except AttributeError:
                    raise TypeError(f"token ids must be int, not {type(i).__name__}") from None
            t = self.id_to_token(i)
            if t is None:
                raise ValueError(f"token id {i} is not in the vocabulary")
            if t not in special:
                tokens.append(t)
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)

    def decode_batch(self, sequences, skip_special_tokens: bool = True) -> list[str]:
        return [self.decode(ids, skip_special_tokens) for ids in sequences]

    # -- tiktoken-style view --------------------------------------------------------------

    @property
    def byte_level_pattern(self) -> str | None:
        """The split pattern of a plain byte-level file (ByteLevel pre-tokenizer, optionally
        after one regex Split; no normalizer but NFC; no subword prefix/suffix: a tiktoken-style
        Encoding has none), else None: the `pattern` of `to_encoding()`."""
        if self.model.prefix or self.model.suffix:
            return None
        return self._pattern if normalizers.is_nfc_or_none(self.normalizer) else None


def _text(value) -> str:
    """A text input, as HF checks it."""
    if not isinstance(value, str):
        raise TypeError(f"TextInputSequence must be str, not {type(value).__name__}")
    return value


def _is_words(value) -> bool:
    return (isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray") and \
        all(isinstance(w, str) for w in value)


def _words(value) -> list:
    """A pre-tokenized input: a list, tuple or numpy array of str."""
    if isinstance(value, str) or not _is_words(value):
        raise TypeError("PreTokenizedInputSequence must be Union[List[str], Tuple[str]]")
    return [str(w) for w in value]


def _added_tokens_of(doc: dict) -> list:
    nodes = doc.get("added_tokens")
    if nodes is None:
        return []
    if not isinstance(nodes, list):
        raise ValueError(f"tokenizer.json: added_tokens must be a list, got {type(nodes).__name__}")
    return [AddedToken.from_json(node, lambda k=k: f"added_tokens[{k}]") for k, node in enumerate(nodes)]


def _stage(key: str, build, doc: dict):
    """One pipeline stage from its node; a malformed node is a ValueError naming the stage."""
    try:
        return spec.remember_node(build(doc.get(key)), doc.get(key))
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        raise ValueError(f"tokenizer.json: malformed {key} ({e!r})") from None
