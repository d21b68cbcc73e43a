"""SentencePiece-style tokenizer.json files on the compiled char-level model.

Llama-2, Mistral, Phi-3, Gemma and ChatGLM files say: normalize with `Prepend("▁")` and
`Replace(" " → "▁")` (or pre-tokenize with `Metaspace`, which does both and may cut before
each "▁"), then run a char-level BPE model (`byte_fallback`, `unk_token`, `fuse_unk`).  Both
stages lower to one `_char_bpe.CharBPE` call: the normalizer is one character per character
plus one prepended, so the kernel does it while it makes the text's UTF-8, and HF's offsets
are the kernel's (a character of the normalized text is the character before it in the
original, the prepended one is the first).  `lower` says which kind flags a file's stages
are, or why they are not; `CharLevelPath` runs the ids paths and builds Encodings, with
added tokens cut out first as everywhere (`AddedVocabulary.find`).
"""
from __future__ import annotations

from dataclasses import dataclass

from .._char_bpe import PREPEND, PREPEND_UNLESS_META, REPLACE_SPACE, SPLIT
from ..threads import parallel_map
from . import normalizers, pre_tokenizers
from .encoding import Encoding
from .oniguruma import LiteralPattern


@dataclass(frozen=True)
class CharLevelPlan:
    """The kernel form of a file's normalizer and pre-tokenizer for the char-level model:
    `kind` (CharBPE's flags) for a segment at the start of a text, `later_kind` for one after
    an added token (they differ for Metaspace's prepend_scheme "first")."""
    kind: int
    later_kind: int


def lower(normalizer, steps: list, model) -> tuple[CharLevelPlan | None, str | None]:
    """(plan, None) when the file runs on the char-level kernel, else (None, why not)."""
    char = getattr(model, "char_model", None)
    if char is None:
        return None, getattr(model, "char_model_refusal", None) or "the model is not char-level BPE"
    if model.uses_dropout():
        return None, "BPE dropout"
    meta = char.meta_char
    flags = 0
    for step in _normalizer_steps(normalizer):
        if isinstance(step, normalizers.Prepend) and step.prepend == meta and not flags & PREPEND:
            flags |= PREPEND
        elif (isinstance(step, normalizers.Replace) and isinstance(step.pattern, LiteralPattern)
              and step.pattern.pattern == " " and step.content == meta and not flags & REPLACE_SPACE):
            flags |= REPLACE_SPACE
        else:
            return None, f"the normalizer {type(step).__name__} (the char-level kernel runs Prepend and Replace(' ', {meta!r}))"
    if len(steps) > 1 or (steps and not isinstance(steps[0], pre_tokenizers.Metaspace)):
        return None, "the pre-tokenizer (the char-level kernel runs none or Metaspace)"
    if steps:
        ms = steps[0]
        if ms.replacement != meta:
            return None, f"Metaspace's replacement {ms.replacement!r} is not the model's {meta!r}"
        flags |= REPLACE_SPACE | (SPLIT if ms.split else 0)
        later = flags
        if ms.prepend_scheme == "always":
            flags |= PREPEND_UNLESS_META
            later |= PREPEND_UNLESS_META
        elif ms.prepend_scheme == "first":
            flags |= PREPEND_UNLESS_META
    else:
        later = flags
    return CharLevelPlan(flags, later), None


def path_for(normalizer, steps: list, model) -> "CharLevelPath | None":
    """The char-level kernel path of a file, or None when its stages do not lower (`lower`)."""
    plan, _ = lower(normalizer, steps, model)
    return CharLevelPath(plan, model) if plan is not None else None


def _normalizer_steps(normalizer) -> list:
    if normalizer is None:
        return []
    if isinstance(normalizer, normalizers.Sequence):
        return [s for step in normalizer.steps for s in _normalizer_steps(step)]
    return [normalizer]


class CharLevelPath:
    """encode / encode_batch / encode_ids of one tokenizer on the char-level kernel.  A text
    is cut at its added tokens into [(start, end, added id or None, kind)]."""

    def __init__(self, plan: CharLevelPlan, model):
        self.plan, self.char = plan, model.char_model
        self.id_to_token = model.id_to_token

    @staticmethod
    def usable(tokenizer) -> bool:
        """False while an added token is matched in normalized text (the pipeline does that)."""
        return tokenizer.added.matcher(normalized=True)[0] is None

    def _segments(self, tokenizer, text: str) -> list:
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"expected str, not {type(text).__name__}")
            text = str(text)
        plan = self.plan
        if not tokenizer.added.occurs_in(text, normalized=False):
            return [(0, len(text), None, plan.kind)]
        return [(s, e, aid, plan.kind if s == 0 else plan.later_kind)
                for s, e, aid in tokenizer.added.find(text, normalized=False) if e > s or aid is not None]

    # -- ids --------------------------------------------------------------------------------

    def body_ids(self, tokenizer, text: str) -> list[int]:
        """The model's ids of text with its added tokens (no post-processor)."""
        segments = self._segments(tokenizer, text)
        encode = self.char.encode_text
        if len(segments) == 1 and segments[0][2] is None:
            return encode(str(text), segments[0][3])
        ids = []
        for s, e, aid, kind in segments:
            if aid is None:
                ids += encode(text[s:e], kind)
            else:
                ids.append(aid)
        return ids

    def bodies(self, tokenizer, texts: list, num_threads: int) -> list[list[int]]:
        """body_ids of many texts, each thread's share of them one kernel call."""
        return parallel_map(lambda share: self._share_bodies(tokenizer, share), texts, num_threads,
                            keep_threads=True)

    def _share_bodies(self, tokenizer, texts: list) -> list[list[int]]:
        added = tokenizer.added
        plain = [type(t) is str and not added.occurs_in(t, normalized=False) for t in texts]
        encoded = iter(self.char.encode_texts([t for t, ok in zip(texts, plain) if ok], self.plan.kind))
        return [next(encoded) if ok else self.body_ids(tokenizer, t) for t, ok in zip(texts, plain)]

    # -- Encodings --------------------------------------------------------------------------

    def sequences(self, tokenizer, texts: list, type_ids: list, num_threads: int) -> list[Encoding]:
        """The Encoding of each text before post-processing: its ids now (one kernel call a
        thread's share); tokens, offsets and word ids when first read, from a second call
        that gives the offsets too (its pieces are in the thread's cache by then)."""
        plans = [self._segments(tokenizer, t) for t in texts]
        jobs = [(t[s:e] if (s, e) != (0, len(t)) else str(t), kind)
                for t, plan in zip(texts, plans) for s, e, aid, kind in plan if aid is None]
        outputs = iter(parallel_map(lambda share: self._outputs(share, False), jobs, num_threads, keep_threads=True))
        return [self._sequence(t, plan, outputs, k) for t, plan, k in zip(texts, plans, type_ids)]

    def _outputs(self, jobs: list, with_offsets: bool) -> list:
        """The ids (with_offsets: (ids, offsets)) of each (segment, kind): a kernel call a kind."""
        if len({k for _, k in jobs}) <= 1:
            return self.char.encode_texts([seg for seg, _ in jobs], jobs[0][1], with_offsets) if jobs else []
        out = [None] * len(jobs)
        for kind in {k for _, k in jobs}:
            where = [i for i, (_, k) in enumerate(jobs) if k == kind]
            for i, r in zip(where, self.char.encode_texts([jobs[i][0] for i in where], kind, with_offsets)):
                out[i] = r
        return out

    def _sequence(self, text: str, plan: list, outputs, type_id: int) -> Encoding:
        mine = [next(outputs) if aid is None else None for _, _, aid, _ in plan]
        if len(plan) == 1 and mine[0] is not None:
            ids = mine[0]
        else:
            ids = []
            for (_, _, aid, _), out in zip(plan, mine):
                if out is None:
                    ids.append(aid)
                else:
                    ids += out
        return Encoding.pending(ids, type_id, lambda: self._fields(text, plan))

    def _fields(self, text: str, plan: list) -> tuple[list, list, list]:
        """(tokens, offsets, word_ids): an added token is its matched text and a word of its
        own, as HF; the kernel gives each segment's (start, end, word) per token, then its
        number of words."""
        outputs = iter(self._outputs([(text[s:e], kind) for s, e, aid, kind in plan if aid is None], True))
        tokens, offsets, words = [], [], []
        word = 0
        id_to_token = self.id_to_token
        for start, end, aid, _ in plan:
            if aid is not None:
                tokens.append(text[start:end])
                offsets.append((start, end))
                words.append(word)
                word += 1
                continue
            seg_ids, spans = next(outputs)
            n = len(seg_ids)
            flat = spans.tolist()
            tokens += map(id_to_token.__getitem__, seg_ids)
            starts, ends = flat[0:3 * n:3], flat[1:3 * n:3]
            if start:
                starts, ends = [x + start for x in starts], [x + start for x in ends]
            offsets += zip(starts, ends)
            words += [w + word for w in flat[2:3 * n:3]] if word else flat[2:3 * n:3]
            word += flat[3 * n]
        return tokens, offsets, words
