"""Post-processors (HF `processors.*`): TemplateProcessing, ByteLevel, RobertaProcessing,
BertProcessing, Sequence.  `process_all(encodings, add_special_tokens)` takes one Encoding per input
sequence and returns the merged Encoding; `n_added(is_pair)` says how many ids it adds."""
from __future__ import annotations

from ..formats.bytelevel import BYTE_TO_CHAR
from ._nodes import json_bool, json_field, json_list, json_str, json_uint, node_type, unsupported
from .encoding import Encoding
from .normalizers import is_whitespace

_SPACE = BYTE_TO_CHAR[ord(" ")]


def trim_offsets(enc: Encoding, add_prefix_space: bool) -> None:
    """HF's ByteLevel process_offsets: offsets leave out a token's leading/trailing spaces."""
    offsets = enc.offsets   # (a copy: set back below)
    for i, (token, (start, end)) in enumerate(zip(enc.tokens, offsets)):
        lead = 0
        for c in token:
            if c != _SPACE and not is_whitespace(c):
                break
            lead += 1
        trail = 0
        for c in reversed(token):
            if c != _SPACE and not is_whitespace(c):
                break
            trail += 1
        if lead == 0 and trail == 0:
            continue
        if lead > 0:
            if (i == 0 or start == 0) and add_prefix_space and lead == 1:
                lead = 0
            start = min(start + lead, end)
        if trail > 0 and end >= trail:
            end = max(end - trail, start)
        offsets[i] = (start, end)
    enc.put("offsets", offsets)


def _merge(encodings: list) -> Encoding:
    if not encodings:
        return Encoding.empty()
    out = encodings[0]
    for e in encodings[1:]:
        out.extend(e)
    return out


class PostProcessor:
    """As HF: `process_encodings` maps the list of sequences to a list of parts, which
    `process` merges.  `overflows[k]` says that sequence k is an overflow piece of a truncated
    sequence: HF keeps those inside the main Encodings, and some processors leave them as they
    are (their type ids) where they change the main ones."""

    def n_added(self, is_pair: bool) -> int:
        return 0

    def num_special_tokens_to_add(self, is_pair: bool) -> int:
        """HF's name for n_added (transformers 5 asks the post-processor)."""
        return self.n_added(is_pair)

    def process_encodings(self, encodings: list, add_special_tokens: bool, overflows: tuple) -> list:
        raise NotImplementedError

    def process(self, encoding: Encoding, pair: Encoding | None = None, add_special_tokens: bool = True) -> Encoding:
        """HF's PostProcessor.process: a new Encoding of encoding (and pair) with this
        processor's special tokens, type ids and offsets; the arguments are left as they are."""
        for e in (encoding, pair):
            if e is not None and not isinstance(e, Encoding):
                raise TypeError(f"process takes fastbpe.hf Encodings, not {type(e).__name__}")
        encodings = [encoding.copy()] + ([pair.copy()] if pair is not None else [])
        for k, e in enumerate(encodings):    # as HF: part k is sequence k, with type id k
            e.set_type_id(k, k)
        return self.process_all(encodings, add_special_tokens)

    def process_all(self, encodings: list, add_special_tokens: bool, overflows: tuple | None = None) -> Encoding:
        """The merged Encoding of one Encoding per input sequence (changed in place)."""
        if overflows is None:
            overflows = (False,) * len(encodings)
        return _merge(self.process_encodings(encodings, add_special_tokens, overflows))


def default_process(encodings: list, add_special_tokens: bool, overflows: tuple | None = None) -> Encoding:
    """No post-processor: sequence i keeps type id i.  As HF, a single sequence is left as it
    is: no sequence recorded, so every position counts as sequence 0 (token_to_sequence)."""
    if len(encodings) == 1:
        return encodings[0]
    for k, e in enumerate(encodings):
        e.set_type_id(k, k)
    return _merge(encodings)


class ByteLevel(PostProcessor):
    def __init__(self, add_prefix_space: bool, trim: bool):
        self.add_prefix_space, self.trim = add_prefix_space, trim

    def process_encodings(self, encodings: list, add_special_tokens: bool, overflows: tuple) -> list:
        if self.trim:
            for e in encodings:
                trim_offsets(e, self.add_prefix_space)
        for k, e in enumerate(encodings):  # HF's set_sequence_id: part k is sequence k
            e.set_sequence_id(k)
        return encodings


class Template(PostProcessor):
    def __init__(self, single: list, pair: list, special_tokens: dict, path: str):
        self.special_tokens = {}
        if not isinstance(special_tokens or {}, dict):
            raise ValueError(f"tokenizer.json: {path}.special_tokens must be an object, got {special_tokens!r}")
        for name, node in (special_tokens or {}).items():
            where = f"{path}.special_tokens[{name!r}]"
            if not isinstance(node, dict):
                raise ValueError(f"tokenizer.json: {where} must be an object, got {node!r}")
            ids = json_list(node.get("ids"), f"{where}.ids")
            tokens = json_list(node.get("tokens"), f"{where}.tokens")
            if len(ids) != len(tokens):
                raise ValueError(f"tokenizer.json: {where} needs as many ids as tokens")
            self.special_tokens[name] = ([json_uint(i, f"{where}.ids[{k}]") for k, i in enumerate(ids)],
                                         [json_str(t, f"{where}.tokens[{k}]") for k, t in enumerate(tokens)])
        self.single = self._parse(single, f"{path}.single")
        self.pair = self._parse(pair, f"{path}.pair")

    def _parse(self, template, path: str) -> list:
        pieces = []
        for k, p in enumerate(json_list(template, path) if template is not None else []):
            where = f"{path}[{k}]"
            if isinstance(p, dict) and isinstance(p.get("SpecialToken"), dict):
                name = p["SpecialToken"].get("id")
                type_id = json_uint(p["SpecialToken"].get("type_id", 0), f"{where}.SpecialToken.type_id")
                if name not in self.special_tokens:
                    raise ValueError(f"tokenizer.json: {where} uses {name!r}, missing from special_tokens")
                pieces.append(("special", name, type_id))
            elif isinstance(p, dict) and isinstance(p.get("Sequence"), dict):
                seq = p["Sequence"].get("id")
                if seq not in ("A", "B"):
                    raise ValueError(f"tokenizer.json: {where} sequence {seq!r} is not A or B")
                type_id = json_uint(p["Sequence"].get("type_id", 0), f"{where}.Sequence.type_id")
                pieces.append(("sequence", 0 if seq == "A" else 1, type_id))
            else:
                raise ValueError(f"tokenizer.json: {where} is not a SpecialToken or Sequence piece: {p!r}")
        return pieces

    def n_added(self, is_pair: bool) -> int:
        return sum(len(self.special_tokens[name][0]) for kind, name, _ in (self.pair if is_pair else self.single)
                   if kind == "special")

    def process_encodings(self, encodings: list, add_special_tokens: bool, overflows: tuple) -> list:
        template = self.pair if len(encodings) == 2 else self.single
        parts = []
        for kind, what, type_id in template:
            if kind == "sequence":
                if what >= len(encodings):
                    raise ValueError("TemplateProcessing: the template names sequence B of a single input")
                e = encodings[what]
                e.set_type_id(type_id, what)
                parts.append(e)
            elif add_special_tokens:
                ids, tokens = self.special_tokens[what]
                parts.append(Encoding.specials(ids, tokens, type_id))
        return parts


class Roberta(PostProcessor):
    """RobertaProcessing / BertProcessing: <cls> A <sep> (<sep> B <sep>)."""

    def __init__(self, sep, cls, trim: bool, add_prefix_space: bool, pair_sep_twice: bool, pair_type_id: int):
        self.sep, self.cls = sep, cls
        self.trim, self.add_prefix_space = trim, add_prefix_space
        self.pair_sep_twice, self.pair_type_id = pair_sep_twice, pair_type_id

    def n_added(self, is_pair: bool) -> int:
        return (4 if self.pair_sep_twice else 3) if is_pair else 2

    def process_encodings(self, encodings: list, add_special_tokens: bool, overflows: tuple) -> list:
        if self.trim:
            for e in encodings:
                trim_offsets(e, self.add_prefix_space)
        if not add_special_tokens:
            # Roberta sets type id 0 on the sequences but not on their overflow pieces, which
            # keep the type id they were encoded with; Bert leaves all as they are
            # (HF's process sets sequence k on every part first, overflow pieces too: their
            # pads are outside the range)
            for k, e in enumerate(encodings):
                e.set_sequence_id(k)
                if self.pair_type_id == 0 and not overflows[k]:
                    e.set_type_id(0, k)
            return encodings
        (sep_tok, sep_id), (cls_tok, cls_id) = self.sep, self.cls
        first = encodings[0]
        first.set_type_id(0, 0)
        parts = [Encoding.specials([cls_id], [cls_tok], 0), first, Encoding.specials([sep_id], [sep_tok], 0)]
        if len(encodings) == 2:
            second = encodings[1]
            t = self.pair_type_id
            second.set_type_id(t, 1)
            if self.pair_sep_twice:
                parts.append(Encoding.specials([sep_id], [sep_tok], t))
            parts += [second, Encoding.specials([sep_id], [sep_tok], t)]
        return parts


class Sequence(PostProcessor):
    def __init__(self, steps: list):
        self.steps = steps

    def n_added(self, is_pair: bool) -> int:
        return sum(s.n_added(is_pair) for s in self.steps)

    def process_encodings(self, encodings: list, add_special_tokens: bool, overflows: tuple) -> list:
        # as HF: each processor maps the list of parts; later ones see the earlier ones' parts
        # (an overflow piece stays one only while the parts are still the sequences)
        for step in self.steps:
            flags = overflows if len(overflows) == len(encodings) else (False,) * len(encodings)
            encodings = step.process_encodings(encodings, add_special_tokens, flags)
        if not self.steps:
            for k, e in enumerate(encodings):
                e.set_type_id(k, k)
        return encodings


def _special(node, path: str) -> tuple:
    """A [token, id] pair of RobertaProcessing / BertProcessing."""
    if type(node) is not list or len(node) != 2:
        raise ValueError(f"tokenizer.json: {path} must be [token, id], got {node!r}")
    return json_str(node[0], f"{path}[0]"), json_uint(node[1], f"{path}[1]")


def from_json(node, path: str = "post_processor"):
    if node is None:
        return None
    kind = node_type("post-processor", node)
    if kind == "ByteLevel":
        return ByteLevel(json_field(node, "add_prefix_space", json_bool, path, True),
                         json_field(node, "trim_offsets", json_bool, path, True))
    if kind == "TemplateProcessing":
        return Template(node.get("single"), node.get("pair"), node.get("special_tokens"), path)
    if kind == "RobertaProcessing":
        return Roberta(_special(node.get("sep"), f"{path}.sep"), _special(node.get("cls"), f"{path}.cls"),
                       json_field(node, "trim_offsets", json_bool, path, True),
                       json_field(node, "add_prefix_space", json_bool, path, True), True, 0)
    if kind == "BertProcessing":
        return Roberta(_special(node.get("sep"), f"{path}.sep"), _special(node.get("cls"), f"{path}.cls"),
                       False, False, False, 1)
    if kind == "Sequence":
        steps = json_list(node.get("processors", []), f"{path}.processors")
        return Sequence([from_json(n, f"{path}.processors[{k}]") for k, n in enumerate(steps)])
    raise unsupported("post-processor", node)
