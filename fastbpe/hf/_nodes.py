"""Reading tokenizer.json nodes: one error type for what the file asks and we cannot do."""
from __future__ import annotations

import regex


class UnsupportedError(ValueError):
    """The tokenizer.json uses a component (or option) that fastbpe does not implement."""


def unsupported(stage: str, node: dict, what: str | None = None) -> UnsupportedError:
    name = what or node.get("type", "?")
    return UnsupportedError(f"tokenizer.json: {stage} {name!r} is not supported by fastbpe")


def node_type(stage: str, node) -> str:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise ValueError(f"tokenizer.json: a {stage} must be an object with a 'type', got {node!r}")
    return node["type"]


def compile_pattern(stage: str, pattern) -> "regex.Pattern[str]":
    """A Split/Replace pattern node: {"String": s} (literal) or {"Regex": r}."""
    if isinstance(pattern, dict) and isinstance(pattern.get("String"), str):
        return regex.compile(regex.escape(pattern["String"]))
    if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        try:
            return regex.compile(pattern["Regex"])
        except regex.error as e:
            raise ValueError(f"tokenizer.json: {stage} has an invalid regex {pattern['Regex']!r}: {e}") from None
    if isinstance(pattern, str):
        return regex.compile(regex.escape(pattern))
    raise ValueError(f"tokenizer.json: {stage} has a bad pattern {pattern!r}")
