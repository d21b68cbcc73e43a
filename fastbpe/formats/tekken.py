"""Mistral's `tekken.json` (mistral-common's Tekkenizer files) read into plain data.

A tekken file is a tiktoken vocabulary in JSON: `config` (the split pattern, how many of
`vocab`'s tokens are used: `default_vocab_size` minus `default_num_special_tokens`, the
version), `vocab` (token bytes in base64 by rank; the first 256 are the single bytes) and,
from version 7 on, `special_tokens` ({rank, token_str, is_control}; older files use
mistral-common's fixed list, kept here as the data it is).  The ordinary tokens' ids are
their ranks plus the number of special tokens.
"""
from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass

# the special tokens of files without a `special_tokens` list (versions up to v7), by rank
LEGACY_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]",
    "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]")
FILLER = "<SPECIAL_{id}>"   # the text of the special ids a file does not name


@dataclass(frozen=True)
class TekkenFile:
    pattern: str
    token_bytes: tuple          # the ordinary tokens' bytes by rank (default_vocab_size - num_special of them)
    special_tokens: tuple       # (text, is_control) by id, num_special of them (fillers included)
    version: str
    name: str


def _versions_before(version: str, than: int) -> bool:
    return version.startswith("v") and version[1:].isdigit() and int(version[1:]) <= than


def read_tekken(path: str | os.PathLike) -> TekkenFile:
    """The data of a tekken.json file; ValueError naming the file and the problem."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            doc = json.loads(f.read())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a tekken.json file ({e})") from None
    return tekken_from_document(doc, path)


def tekken_from_document(doc, path: str = "tekken.json") -> TekkenFile:
    def bad(what: str) -> ValueError:
        return ValueError(f"{path}: {what}")

    if not isinstance(doc, dict) or not isinstance(doc.get("config"), dict) or not isinstance(doc.get("vocab"), list):
        raise bad("not a tekken.json file (no config and vocab)")
    config, vocab = doc["config"], doc["vocab"]
    pattern, version = config.get("pattern"), config.get("version")
    size, n_special = config.get("default_vocab_size"), config.get("default_num_special_tokens")
    if not isinstance(pattern, str) or not isinstance(version, str):
        raise bad("config.pattern and config.version must be strings")
    if type(size) is not int or type(n_special) is not int or not 0 <= n_special <= size:
        raise bad("config.default_vocab_size and default_num_special_tokens must be integers, specials <= size")
    n_ordinary = size - n_special
    if n_ordinary > len(vocab):
        raise bad(f"default_vocab_size {size} needs {n_ordinary} ordinary tokens, the vocab has {len(vocab)}")
    tokens = []
    for rank, entry in enumerate(vocab[:n_ordinary]):
        if not isinstance(entry, dict) or entry.get("rank") != rank or not isinstance(entry.get("token_bytes"), str):
            raise bad(f"vocab[{rank}] must be {{rank: {rank}, token_bytes: base64}}")
        try:
            b = base64.b64decode(entry["token_bytes"], validate=True)
        except ValueError:
            raise bad(f"vocab[{rank}].token_bytes is not base64") from None
        if rank < 256 and b != bytes([rank]):
            raise bad(f"vocab[{rank}] must be the single byte {rank}")
        tokens.append(b)
    if len(set(tokens)) != len(tokens):
        raise bad("the vocab repeats a token")
    listed = doc.get("special_tokens")
    if listed is None:
        if not _versions_before(version, 7):
            raise bad(f"a version {version} file must list its special_tokens")
        named = [(t, True) for t in LEGACY_SPECIAL_TOKENS]
    else:
        if not isinstance(listed, list):
            raise bad("special_tokens must be a list")
        named = []
        for k, t in enumerate(listed):
            if not isinstance(t, dict) or t.get("rank") != k or not isinstance(t.get("token_str"), str):
                raise bad(f"special_tokens[{k}] must be {{rank: {k}, token_str: ...}}")
            named.append((t["token_str"], bool(t.get("is_control", False))))
    if len(named) > n_special:
        raise bad(f"{len(named)} special tokens for {n_special} special ids")
    specials = named + [(FILLER.format(id=i), True) for i in range(len(named), n_special)]
    if len({t for t, _ in specials}) != len(specials):
        raise bad("special tokens must be unique")
    name = os.path.basename(path)
    return TekkenFile(pattern, tuple(tokens), tuple(specials), version,
                      name[:-5] if name.endswith(".json") else name)
