"""Reading tokenizer.json: one error type for what the file asks and we cannot do; the JSON read
safely (nesting bounded as HF's reader bounds it) and its values read with the types and ranges
HF's serde accepts, so that a malformed value is a ValueError naming its JSON path."""
from __future__ import annotations

import json

from .._formats import frozen_merges
from .._tokenizer_json import model_spans, nesting_depth, vocab_and_merge_rows


class UnsupportedError(ValueError):
    """The tokenizer.json uses a component (or option) that fastbpe does not implement."""


def unsupported(stage: str, node: dict, what: str | None = None) -> UnsupportedError:
    name = what or node.get("type", "?")
    return UnsupportedError(f"tokenizer.json: {stage} {name!r} is not supported by fastbpe")


def node_type(stage: str, node) -> str:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise ValueError(f"tokenizer.json: a {stage} must be an object with a 'type', got {node!r}")
    return node["type"]


# Typed reads of tokenizer.json values.  HF (serde) refuses a value of the wrong type or out of
# range; reading them loosely ("false" as true, -1 or 2**40 as an id) gives silently wrong ids.
# `path` names the value in the file (e.g. "added_tokens[3].lstrip") for the error.

U32_MAX = 2**32 - 1
USIZE_MAX = 2**64 - 1


def json_bool(value, path: str) -> bool:
    if type(value) is not bool:
        raise ValueError(f"tokenizer.json: {path} must be true or false, got {value!r}")
    return value


def json_uint(value, path: str, limit: int = U32_MAX) -> int:
    """An unsigned integer up to limit (u32 for ids and type ids, usize for lengths)."""
    if type(value) is not int or not 0 <= value <= limit:
        kind = "an id (an integer from 0 to 2**32-1)" if limit == U32_MAX else "a non-negative integer"
        raise ValueError(f"tokenizer.json: {path} must be {kind}, got {value!r}")
    return value


def json_str(value, path: str) -> str:
    if type(value) is not str:
        raise ValueError(f"tokenizer.json: {path} must be a string, got {value!r}")
    return value


def json_list(value, path: str) -> list:
    if type(value) is not list:
        raise ValueError(f"tokenizer.json: {path} must be a list, got {value!r}")
    return value


def json_field(node: dict, key: str, read, path: str, default=None):
    """node[key] read with read(value, path) (a missing key or null gives default)."""
    value = node.get(key)
    if value is None:
        return default
    return read(value, f"{path}.{key}")


# nesting deeper than this is refused, as HF's JSON reader (serde_json) refuses it; the stages
# are built recursively, so deeper nesting could otherwise end in a RecursionError
MAX_DEPTH = 128
# the model's vocabulary and merges are read flat (a nested value in them is a type error), and
# are the big part of the file: the nesting check does not walk them
_FLAT_MODEL_KEYS = ("vocab", "merges")


class CheckedDocument(dict):
    """A document fresh from `parse` / `read_document`, its nesting checked there: the
    Tokenizer built from it does not walk it again (Whisper's 1,609 added tokens: ~15k values,
    ~9M instructions a walk)."""

    __slots__ = ()


def nesting_checked(doc) -> bool:
    return type(doc) is CheckedDocument


def parse(json_text: str) -> dict:
    """The document of a tokenizer.json text (ValueError for what is not one)."""
    try:
        doc = json.loads(json_text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a valid tokenizer.json: {e}") from None
    except RecursionError:
        raise ValueError(f"tokenizer.json: nested more than {MAX_DEPTH} levels deep") from None
    check_nesting(doc)
    return CheckedDocument(doc) if isinstance(doc, dict) else doc


def looks_like_sentencepiece(head: bytes) -> bool:
    """Whether a file's first bytes are a SentencePiece .model's (the reader is imported only
    for a file that starts as a protobuf does: a tokenizer.json never needs it)."""
    if head[:1] != b"\n":
        return False
    from ..formats.sentencepiece_model import looks_like_sentencepiece_model
    return looks_like_sentencepiece_model(head)


def read_document(data: bytes) -> dict | None:
    """The document of a tokenizer.json file's bytes with its model's vocab and merges read
    by `_tokenizer_json` straight from the bytes (merges as `LazyMerges`), or None when the
    file is not of the plain shape that reads (then `parse` reads it all, errors included)."""
    spans = model_spans(data)
    if spans is None:
        return None
    vs, ve, ms, me = spans
    (s1, e1, f1), (s2, e2, f2) = sorted([(vs, ve, b"{}"), (ms, me, b"[]")])   # in file order
    rest = data[:s1] + f1 + data[e1:s2] + f2 + data[e2:]
    try:
        doc = json.loads(rest.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
        return None
    if nesting_depth(rest) > MAX_DEPTH:   # check_nesting's bound (Whisper's walk: ~9M instructions)
        return None   # (parse says so)
    model = doc.get("model") if isinstance(doc, dict) else None
    if not isinstance(model, dict):
        return None
    prefix = model.get("continuing_subword_prefix")
    n_prefix = len(prefix) if type(prefix) is str else 0
    read = vocab_and_merge_rows(data, spans, n_prefix)
    if read is None:
        return None
    model["vocab"] = read[0]
    model["merges"] = LazyMerges(read[1], n_prefix, data[ms:me])
    return CheckedDocument(doc)


class LazyMerges:
    """A tokenizer.json's merges as `read_document` read them: `rows`, the (left, right,
    merged) ids of each merge in file order for `n_prefix` prefix characters (what
    `_formats.kept_merge_rows` takes), and the merges themselves (`source()`, frozen_merges'
    tuple), parsed from the file's text only when something asks (writing the file back)."""

    __slots__ = ("rows", "n_prefix", "_text", "_source")

    def __init__(self, rows, n_prefix: int, text: bytes):
        self.rows, self.n_prefix, self._text, self._source = rows, n_prefix, text, None

    def source(self) -> tuple:
        if self._source is None:
            self._source = frozen_merges(json.loads(self._text))
            self._text = None
        return self._source


def check_nesting(doc) -> None:
    """Refuse nodes nested more than MAX_DEPTH deep (an explicit stack, not recursion)."""
    if not isinstance(doc, dict):
        return
    stack = []
    for key, value in doc.items():
        if key == "model" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in _FLAT_MODEL_KEYS}
        if isinstance(value, (dict, list)):
            stack.append((value, 2))
    push = stack.append
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"tokenizer.json: nested more than {MAX_DEPTH} levels deep")
        depth += 1
        for c in (node.values() if isinstance(node, dict) else node):   # (a loop: a generator a node
            if isinstance(c, (dict, list)):                               # cost Whisper's load 3M)
                push((c, depth))


def check_version(spec: dict) -> None:
    version = spec.get("version")
    if version is not None and version != "1.0":
        raise ValueError(f"tokenizer.json: version must be \"1.0\", got {version!r}")


def json_usize(value, path: str) -> int:
    return json_uint(value, path, USIZE_MAX)


def _choice(value, path: str, names: tuple) -> str:
    if value not in names:
        raise ValueError(f"tokenizer.json: {path} must be one of {', '.join(names)}, got {value!r}")
    return value


def truncation_args(spec: dict) -> dict | None:
    """Tokenizer.enable_truncation's arguments from the file (None: no truncation)."""
    node = spec.get("truncation")
    if node is None:
        return None
    if not isinstance(node, dict):
        raise ValueError(f"tokenizer.json: truncation must be an object or null, got {node!r}")
    if "max_length" not in node:
        raise ValueError("tokenizer.json: truncation.max_length is missing")
    return {"max_length": json_usize(node["max_length"], "truncation.max_length"),
            "stride": json_field(node, "stride", json_usize, "truncation", 0),
            "strategy": _choice(node.get("strategy", "LongestFirst"), "truncation.strategy",
                                ("LongestFirst", "OnlyFirst", "OnlySecond")),
            "direction": _choice(node.get("direction", "Right"), "truncation.direction", ("Left", "Right"))}


def padding_args(spec: dict) -> dict | None:
    """Tokenizer.enable_padding's arguments from the file (None: no padding)."""
    node = spec.get("padding")
    if node is None:
        return None
    if not isinstance(node, dict):
        raise ValueError(f"tokenizer.json: padding must be an object or null, got {node!r}")
    strategy = node.get("strategy", "BatchLongest")
    if isinstance(strategy, dict) and list(strategy) == ["Fixed"]:
        length = json_usize(strategy["Fixed"], "padding.strategy.Fixed")
    elif strategy == "BatchLongest":
        length = None
    else:
        raise ValueError(f"tokenizer.json: padding.strategy must be \"BatchLongest\" or {{\"Fixed\": n}}, got {strategy!r}")
    return {"direction": _choice(node.get("direction", "Right"), "padding.direction", ("Left", "Right")),
            "pad_id": json_field(node, "pad_id", json_uint, "padding", 0),
            "pad_type_id": json_field(node, "pad_type_id", json_uint, "padding", 0),
            "pad_token": json_field(node, "pad_token", json_str, "padding", "[PAD]"),
            "length": length,
            "pad_to_multiple_of": json_field(node, "pad_to_multiple_of", json_usize, "padding")}
