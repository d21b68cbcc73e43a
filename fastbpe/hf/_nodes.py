"""Reading tokenizer.json nodes: one error type for what the file asks and we cannot do."""
from __future__ import annotations


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
