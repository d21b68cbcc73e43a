"""Named encodings: `get_encoding`, `list_encoding_names`, with tiktoken's names, patterns,
special tokens and ids.  Each loaded encoding is kept, so a second call is free.

Encodings registered by installed `tiktoken_ext.*` plugins (namespace-package modules with an
`ENCODING_CONSTRUCTORS` dict, as tiktoken defines them) are found too.  The built-in names
come first: a plugin cannot replace them, and tiktoken's own `tiktoken_ext.openai_public`
(the same encodings, downloaded by tiktoken) is not imported.  Plugins are imported only when
a name that is not built in is asked for, or by `list_encoding_names`.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
import threading
from typing import Any, Callable

from . import patterns as P
from .encoding import Encoding
from .formats.tiktoken_bpe import TokensByRank, parse_gpt2_files, parse_tiktoken_tokens
from .vocab_sources import VOCAB_FILES, VocabNotFoundError, read_vocab_file


def _ranks(key: str) -> TokensByRank:
    return parse_tiktoken_tokens(read_vocab_file(key), VOCAB_FILES[key].filename)


def _gpt2() -> dict[str, Any]:
    try:
        encoder = read_vocab_file("gpt2_encoder_json", allow_download=False)
        vocab = read_vocab_file("gpt2_vocab_bpe", allow_download=False)
        ranks = parse_gpt2_files(encoder, vocab, "gpt2")
    except VocabNotFoundError:
        # r50k_base.tiktoken holds the same ranks (its official hash is checked)
        ranks = _ranks("r50k_base")
    return {"name": "gpt2", "explicit_n_vocab": 50257, "pat_str": P.R50K_PATTERN,
            "mergeable_ranks": ranks, "special_tokens": {P.ENDOFTEXT: 50256}}


def _r50k_base() -> dict[str, Any]:
    return {"name": "r50k_base", "explicit_n_vocab": 50257, "pat_str": P.R50K_PATTERN,
            "mergeable_ranks": _ranks("r50k_base"), "special_tokens": {P.ENDOFTEXT: 50256}}


def _p50k_base() -> dict[str, Any]:
    return {"name": "p50k_base", "explicit_n_vocab": 50281, "pat_str": P.R50K_PATTERN,
            "mergeable_ranks": _ranks("p50k_base"), "special_tokens": {P.ENDOFTEXT: 50256}}


def _p50k_edit() -> dict[str, Any]:
    return {"name": "p50k_edit", "pat_str": P.R50K_PATTERN, "mergeable_ranks": _ranks("p50k_base"),
            "special_tokens": {P.ENDOFTEXT: 50256, P.FIM_PREFIX: 50281, P.FIM_MIDDLE: 50282,
                               P.FIM_SUFFIX: 50283}}


def _cl100k_base() -> dict[str, Any]:
    return {"name": "cl100k_base", "pat_str": P.CL100K_PATTERN,
            "mergeable_ranks": _ranks("cl100k_base"),
            "special_tokens": {P.ENDOFTEXT: 100257, P.FIM_PREFIX: 100258, P.FIM_MIDDLE: 100259,
                               P.FIM_SUFFIX: 100260, P.ENDOFPROMPT: 100276}}


def _o200k_base() -> dict[str, Any]:
    return {"name": "o200k_base", "pat_str": P.O200K_PATTERN,
            "mergeable_ranks": _ranks("o200k_base"),
            "special_tokens": {P.ENDOFTEXT: 199999, P.ENDOFPROMPT: 200018}}


def _o200k_harmony() -> dict[str, Any]:
    base = _o200k_base()
    specials = {
        **base["special_tokens"],
        "<|startoftext|>": 199998,
        P.ENDOFTEXT: 199999,
        "<|reserved_200000|>": 200000,
        "<|reserved_200001|>": 200001,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|reserved_200004|>": 200004,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|reserved_200009|>": 200009,
        "<|reserved_200010|>": 200010,
        "<|reserved_200011|>": 200011,
        "<|call|>": 200012,
    }
    # as in tiktoken, id 200018 then has two names: <|endofprompt|> and <|reserved_200018|>
    specials.update({f"<|reserved_{i}|>": i for i in range(200013, 201088)})
    return {"name": "o200k_harmony", "pat_str": base["pat_str"],
            "mergeable_ranks": base["mergeable_ranks"], "special_tokens": specials}


ENCODING_CONSTRUCTORS: dict[str, Callable[[], dict[str, Any]]] = {
    "gpt2": _gpt2,
    "r50k_base": _r50k_base,
    "p50k_base": _p50k_base,
    "p50k_edit": _p50k_edit,
    "cl100k_base": _cl100k_base,
    "o200k_base": _o200k_base,
    "o200k_harmony": _o200k_harmony,
}

ENCODINGS: dict[str, Encoding] = {}
_lock = threading.RLock()

# tiktoken's own plugin: its encodings are the built-in ones above
_SHADOWED_PLUGINS = frozenset({"tiktoken_ext.openai_public"})
_plugin_constructors: dict[str, Callable[[], dict[str, Any]]] | None = None


@functools.lru_cache(maxsize=None)
def _available_plugin_modules() -> tuple[str, ...]:
    """Names of the installed `tiktoken_ext.*` plugin modules (found without importing them)."""
    try:
        import tiktoken_ext
    except ImportError:
        return ()
    found = pkgutil.iter_modules(tiktoken_ext.__path__, tiktoken_ext.__name__ + ".")
    return tuple(name for _, name, _ in found if name not in _SHADOWED_PLUGINS)


def _find_plugin_constructors() -> dict[str, Callable[[], dict[str, Any]]]:
    """{name: constructor} of every plugin encoding that is not built in (imports plugins once)."""
    global _plugin_constructors
    with _lock:
        if _plugin_constructors is not None:
            return _plugin_constructors
        found: dict[str, Callable[[], dict[str, Any]]] = {}
        for mod_name in _available_plugin_modules():
            try:
                mod = importlib.import_module(mod_name)
            except Exception as e:
                raise ValueError(f"tiktoken plugin {mod_name} failed to import: {e}") from e
            constructors = getattr(mod, "ENCODING_CONSTRUCTORS", None)
            if not isinstance(constructors, dict):
                raise ValueError(f"tiktoken plugin {mod_name} does not define ENCODING_CONSTRUCTORS")
            for enc_name, constructor in constructors.items():
                if enc_name in ENCODING_CONSTRUCTORS:
                    continue  # the built-in encoding of that name wins
                if enc_name in found:
                    raise ValueError(f"Duplicate encoding name {enc_name} in tiktoken plugin {mod_name}")
                found[enc_name] = constructor
        _plugin_constructors = found
        return found


def get_encoding(encoding_name: str) -> Encoding:
    """The named encoding (loaded once, then shared)."""
    if not isinstance(encoding_name, str):
        raise ValueError(f"Expected a string in get_encoding, got {type(encoding_name)}")
    enc = ENCODINGS.get(encoding_name)
    if enc is not None:
        return enc
    with _lock:
        if encoding_name in ENCODINGS:
            return ENCODINGS[encoding_name]
        constructor = ENCODING_CONSTRUCTORS.get(encoding_name)
        if constructor is None:
            constructor = _find_plugin_constructors().get(encoding_name)
        if constructor is None:
            plugins = ", ".join(_available_plugin_modules()) or "none"
            raise ValueError(
                f"Unknown encoding {encoding_name}.\nPlugins found: {plugins}\n"
                f"Available encodings: {', '.join(list_encoding_names())}")
        enc = Encoding(**constructor())
        ENCODINGS[encoding_name] = enc
        return enc


def list_encoding_names() -> list[str]:
    """The built-in names, then those of installed `tiktoken_ext` plugins."""
    return list(ENCODING_CONSTRUCTORS) + list(_find_plugin_constructors())
