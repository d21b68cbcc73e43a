"""The top level of a tokenizer.json: its JSON read safely, its version, and the truncation and
padding sections checked as HF's serde reads them (types and ranges; ValueError naming the
JSON path otherwise)."""
from __future__ import annotations

import json

from ._nodes import USIZE_MAX, json_field, json_str, json_uint

# nesting deeper than this is refused as HF's JSON reader (serde_json) refuses it, before
# Python's recursion limit could turn it into a RecursionError
MAX_DEPTH = 128


def parse(json_text: str) -> dict:
    _check_depth(json_text)
    try:
        spec = json.loads(json_text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not a valid tokenizer.json: {e}") from None
    except RecursionError:
        raise ValueError(f"tokenizer.json: nested more than {MAX_DEPTH} levels deep") from None
    return spec


def _check_depth(json_text: str) -> None:
    """Refuse nesting deeper than MAX_DEPTH (brackets outside strings), in one pass."""
    depth, in_string, escaped = 0, False, False
    if json_text.count("[") + json_text.count("{") <= MAX_DEPTH:
        return
    for c in json_text:
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise ValueError(f"tokenizer.json: nested more than {MAX_DEPTH} levels deep")
        elif c in "]}":
            depth -= 1


def check_version(spec: dict) -> None:
    version = spec.get("version")
    if version is not None and version != "1.0":
        raise ValueError(f"tokenizer.json: version must be \"1.0\", got {version!r}")


def _usize(value, path: str) -> int:
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
    return {"max_length": _usize(node["max_length"], "truncation.max_length"),
            "stride": json_field(node, "stride", _usize, "truncation", 0),
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
        length = _usize(strategy["Fixed"], "padding.strategy.Fixed")
    elif strategy == "BatchLongest":
        length = None
    else:
        raise ValueError(f"tokenizer.json: padding.strategy must be \"BatchLongest\" or {{\"Fixed\": n}}, got {strategy!r}")
    return {"direction": _choice(node.get("direction", "Right"), "padding.direction", ("Left", "Right")),
            "pad_id": json_field(node, "pad_id", json_uint, "padding", 0),
            "pad_type_id": json_field(node, "pad_type_id", json_uint, "padding", 0),
            "pad_token": json_field(node, "pad_token", json_str, "padding", "[PAD]"),
            "length": length,
            "pad_to_multiple_of": json_field(node, "pad_to_multiple_of", _usize, "padding")}
