"""The tokenizer.json document behind a `Tokenizer`: what it is built from and written back to.

A `Tokenizer` keeps the JSON node of each pipeline stage it was built from, so `to_str` /
`save` write the file back, and a stage can be replaced by a node (a dict), by another
fastbpe stage object, or by a `tokenizers` object (normalizers.NFC(), models.BPE(...)),
which all serialize to the same JSON."""
from __future__ import annotations

import json
import os

from ._nodes import LazyMerges

STAGES = ("normalizer", "pre_tokenizer", "post_processor", "decoder")

# the key fastbpe stage objects carry their source node under (see remember_node)
_NODE_ATTR = "_hf_node"


def remember_node(obj, node):
    """Tag a stage object built from node, so it can be given to another Tokenizer."""
    if obj is not None:
        try:
            setattr(obj, _NODE_ATTR, node)
        except AttributeError:  # a class with __slots__: such an object is only used here
            pass
    return obj


def node_of(value, what: str):
    """The JSON node of a stage or model value: None, a dict, a fastbpe stage object built
    from a node, or a `tokenizers` object (its pickled state is its JSON)."""
    if value is None or isinstance(value, dict):
        return value
    node = getattr(value, _NODE_ATTR, None)
    if node is not None:
        return node
    if type(value).__module__.split(".")[0] == "tokenizers" and hasattr(value, "__getstate__"):
        state = value.__getstate__()
        if isinstance(state, (bytes, str)):
            return json.loads(state)
    raise TypeError(f"{what} must be None, a tokenizer.json node (dict), a fastbpe {what} or a "
                    f"tokenizers {what}, not {type(value).__name__}")


def spec_of_model(model) -> dict:
    """A whole tokenizer.json for `Tokenizer(model)`: the model and nothing else, as HF."""
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
            "model": node_of(model, "model")}


def truncation_node(t: dict | None):
    if not t:
        return None
    strategy = {"longest_first": "LongestFirst", "only_first": "OnlyFirst", "only_second": "OnlySecond"}
    return {"direction": t["direction"].capitalize(), "max_length": t["max_length"],
            "strategy": strategy[t["strategy"]], "stride": t["stride"]}


def padding_node(p: dict | None):
    if not p:
        return None
    strategy = {"Fixed": p["length"]} if p["length"] is not None else "BatchLongest"
    return {"strategy": strategy, "direction": p["direction"].capitalize(),
            "pad_to_multiple_of": p["pad_to_multiple_of"], "pad_id": p["pad_id"],
            "pad_type_id": p["pad_type_id"], "pad_token": p["pad_token"]}


def model_node(node: dict, vocab: dict) -> dict:
    """The model node written back: the source node with the vocabulary (by id, as HF)."""
    out = {}
    for key, value in node.items():
        if isinstance(value, LazyMerges):
            value = value.source()
        out[key] = dict(sorted(vocab.items(), key=lambda kv: kv[1])) if key == "vocab" else value
    if "vocab" not in out:
        out["vocab"] = dict(sorted(vocab.items(), key=lambda kv: kv[1]))
    return out


def dumps(spec: dict, pretty: bool) -> str:
    if pretty:
        return json.dumps(spec, ensure_ascii=False, indent=2)
    return json.dumps(spec, ensure_ascii=False, separators=(",", ":"))


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """The file is the whole new text or the old one, never half written."""
    from ..formats.atomic import atomic_write_text
    atomic_write_text(path, text)


def resolve_pretrained(identifier: str, revision: str = "main", token: str | None = None) -> str:
    """The tokenizer.json of a local folder or file, else of a Hub repository (downloaded
    by huggingface_hub, which must then be installed)."""
    path = os.fspath(identifier)
    if os.path.isdir(path):
        candidate = os.path.join(path, "tokenizer.json")
        if not os.path.isfile(candidate):
            raise OSError(f"{path}: folder has no tokenizer.json")
        return candidate
    if os.path.isfile(path):
        return path
    if os.path.isabs(path) or path.startswith(".") or path.count("/") > 1 or os.sep != "/" and os.sep in path:
        raise OSError(f"{path}: no such tokenizer folder or file")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise OSError(f"{identifier!r} is not a local folder or file, and huggingface_hub (needed to "
                      "download it from the Hub) is not installed") from None
    return hf_hub_download(identifier, "tokenizer.json", revision=revision, token=token)
