"""Post-processors (HF `processors.*`): TemplateProcessing, ByteLevel, RobertaProcessing,
BertProcessing, Sequence.  `process(encodings, add_special_tokens)` takes one Encoding per input
sequence and returns the merged Encoding; `n_added(is_pair)` says how many ids it adds."""
from __future__ import annotations

from ._nodes import node_type, unsupported
from ..formats.bytelevel import BYTE_TO_CHAR
from .encoding import Encoding
from .normalizers import is_whitespace

_SPACE = BYTE_TO_CHAR[ord(" ")]


def trim_offsets(enc: Encoding, add_prefix_space: bool) -> None:
    """HF's ByteLevel process_offsets: offsets leave out a token's leading/trailing spaces."""
    for i, (token, (start, end)) in enumerate(zip(enc.tokens, enc.offsets)):
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
        enc.offsets[i] = (start, end)


def _merge(encodings: list) -> Encoding:
    out = encodings[0]
    for e in encodings[1:]:
        out.extend(e)
    return out


def _default(encodings: list) -> Encoding:
    """No post-processor: sequence i gets type id i."""
    for k, e in enumerate(encodings):
        e.set_type_id(k, k)
    return _merge(encodings)


class ByteLevel:
    def __init__(self, add_prefix_space: bool, trim: bool):
        self.add_prefix_space, self.trim = add_prefix_space, trim

    def n_added(self, is_pair: bool) -> int:
        return 0

    def process(self, encodings: list, add_special_tokens: bool) -> Encoding:
        if self.trim:
            for e in encodings:
                trim_offsets(e, self.add_prefix_space)
        return _default(encodings)


class Template:
    def __init__(self, single: list, pair: list, special_tokens: dict):
        self.special_tokens = {}
        for name, node in (special_tokens or {}).items():
            ids, tokens = node.get("ids"), node.get("tokens")
            if not isinstance(ids, list) or not isinstance(tokens, list) or len(ids) != len(tokens):
                raise ValueError(f"tokenizer.json: TemplateProcessing special token {name!r} needs ids and tokens")
            self.special_tokens[name] = (ids, tokens)
        self.single = self._parse(single)
        self.pair = self._parse(pair)

    def _parse(self, template: list) -> list:
        pieces = []
        for p in template or []:
            if "SpecialToken" in p:
                name, type_id = p["SpecialToken"]["id"], p["SpecialToken"].get("type_id", 0)
                if name not in self.special_tokens:
                    raise ValueError(f"tokenizer.json: TemplateProcessing uses {name!r}, missing from special_tokens")
                pieces.append(("special", name, type_id))
            elif "Sequence" in p:
                seq = p["Sequence"]["id"]
                if seq not in ("A", "B"):
                    raise ValueError(f"tokenizer.json: TemplateProcessing sequence {seq!r} is not A or B")
                pieces.append(("sequence", 0 if seq == "A" else 1, p["Sequence"].get("type_id", 0)))
            else:
                raise ValueError(f"tokenizer.json: bad TemplateProcessing piece {p!r}")
        return pieces

    def n_added(self, is_pair: bool) -> int:
        return sum(len(self.special_tokens[name][0]) for kind, name, _ in (self.pair if is_pair else self.single)
                   if kind == "special")

    def process(self, encodings: list, add_special_tokens: bool) -> Encoding:
        template = self.pair if len(encodings) == 2 else self.single
        parts = []
        for kind, what, type_id in template:
            if kind == "sequence":
                e = encodings[what]
                e.set_type_id(type_id, what)
                parts.append(e)
            elif add_special_tokens:
                ids, tokens = self.special_tokens[what]
                parts.append(Encoding.specials(ids, tokens, type_id))
        return _merge(parts) if parts else Encoding.empty()


class Roberta:
    """RobertaProcessing / BertProcessing: <cls> A <sep> (<sep> B <sep>)."""

    def __init__(self, sep, cls, trim: bool, add_prefix_space: bool, pair_sep_twice: bool, pair_type_id: int):
        self.sep, self.cls = (sep[0], sep[1]), (cls[0], cls[1])
        self.trim, self.add_prefix_space = trim, add_prefix_space
        self.pair_sep_twice, self.pair_type_id = pair_sep_twice, pair_type_id

    def n_added(self, is_pair: bool) -> int:
        return (4 if self.pair_sep_twice else 3) if is_pair else 2

    def process(self, encodings: list, add_special_tokens: bool) -> Encoding:
        if self.trim:
            for e in encodings:
                trim_offsets(e, self.add_prefix_space)
        if not add_special_tokens:  # the pair keeps its type id (0 for Roberta, 1 for Bert)
            for k, e in enumerate(encodings):
                e.set_type_id(self.pair_type_id if k else 0, k)
            return _merge(encodings)
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
        return _merge(parts)


class Sequence:
    def __init__(self, steps: list):
        self.steps = steps

    def n_added(self, is_pair: bool) -> int:
        return sum(s.n_added(is_pair) for s in self.steps)

    def process(self, encodings: list, add_special_tokens: bool) -> Encoding:
        # HF runs each processor on the list; all but the merging step keep the sequences apart
        for step in self.steps[:-1]:
            if isinstance(step, ByteLevel):
                if step.trim:
                    for e in encodings:
                        trim_offsets(e, step.add_prefix_space)
            else:
                raise unsupported("post-processor", {}, f"Sequence with {type(step).__name__} before its last step")
        return self.steps[-1].process(encodings, add_special_tokens) if self.steps else _default(encodings)


def from_json(node):
    if node is None:
        return None
    kind = node_type("post-processor", node)
    if kind == "ByteLevel":
        return ByteLevel(bool(node.get("add_prefix_space", True)), bool(node.get("trim_offsets", True)))
    if kind == "TemplateProcessing":
        return Template(node.get("single"), node.get("pair"), node.get("special_tokens"))
    if kind == "RobertaProcessing":
        return Roberta(node["sep"], node["cls"], bool(node.get("trim_offsets", True)),
                       bool(node.get("add_prefix_space", True)), True, 0)
    if kind == "BertProcessing":
        return Roberta(node["sep"], node["cls"], False, False, False, 1)
    if kind == "Sequence":
        return Sequence([from_json(n) for n in node.get("processors", [])])
    raise unsupported("post-processor", node)


def default_process(encodings: list, add_special_tokens: bool) -> Encoding:
    return _default(encodings)
