"""SentencePiece-style tokenizer.json files on the compiled char-level model.

Llama-2, Mistral, Phi-3, Gemma and ChatGLM files say: normalize with `Prepend("▁")` and
`Replace(" " → "▁")` (or pre-tokenize with `Metaspace`, which does both and may cut before
each "▁"), then run a char-level BPE model (`byte_fallback`, `unk_token`, `fuse_unk`).  Both
stages lower to one `_char_bpe.CharBPE` call: the normalizer is one character per character
plus one prepended, so the kernel does it while it makes the text's UTF-8, and HF's offsets
are the kernel's (a character of the normalized text is the character before it in the
original, the prepended one is the first).  `text_form` is the kernel form of the lowered
stages (hf/lowering.py puts it in the file's `plan.Plan`, or the refusal); `CharLevelPath`
runs a plan's ids paths and builds Encodings, with added tokens cut out first as everywhere
(`AddedVocabulary.find`).
"""
from __future__ import annotations

from .._char_bpe import PREPEND, REPLACE_SPACE
from ..plan import NotLowered, Plan
from ..threads import parallel_map
from . import normalizers
from .encoding import Encoding


def text_form(ops: tuple, steps: list, meta: str) -> tuple[int, int, tuple]:
    """CharBPE's kind flags (at a text's start, after an added token) of a file's lowered
    normalizer (its program's ops) and pre-tokenizer steps before a char-level model whose
    meta character is meta, and the ops before Prepend(meta) / Replace(" " -> meta), which
    run first as a normalizer program (NFKC, Strip, transformers' Replace(" {2,}" -> meta));
    NotLowered names the op or step the kernel does not run."""
    from .. import normalize as program_ops
    flags, before = 0, []
    for op in ops:
        if op == program_ops.Prepend(meta) and not flags & PREPEND:
            flags |= PREPEND
        elif op == program_ops.ReplaceLiteral(" ", meta) and not flags & REPLACE_SPACE:
            flags |= REPLACE_SPACE
        elif flags:
            raise NotLowered(f"the normalizer op {op} after Prepend({meta!r}) / Replace(' ', {meta!r}) "
                             "(the char-level kernel runs those last)")
        else:
            before.append(op)
    if flags & REPLACE_SPACE and meta != " ":
        steps = [step for step in steps if not _finds_no_space(step)]
    if not steps:
        return flags, flags, _spaces_for_meta(before, flags, meta)
    lower = getattr(steps[0], "lower_char_level", None)
    if len(steps) > 1 or lower is None:
        names = ", ".join(type(step).__name__ for step in steps)
        raise NotLowered(f"the pre-tokenizer {names} (the char-level kernel runs none or one Metaspace)")
    first, later = lower(meta)
    dropping = [op for op in before if _may_drop_first(op)]
    if first != later and dropping:
        # HF's Metaspace prepends under "first" only to a piece that starts at the original
        # text's offset 0, which a text whose first characters were removed no longer does
        raise NotLowered(f"Metaspace prepend_scheme 'first' after the normalizer op {dropping[0]}, which may remove "
                         "a text's first characters (HF then prepends nothing)")
    return flags | first, flags | later, _spaces_for_meta(before, flags | (first & later), meta)


def _may_drop_first(op) -> bool:
    """Whether a normalizer op may remove a text's first character (its first output
    character then comes from a later one): Strip left, StripAccents, an empty replacement."""
    from .. import normalize as program_ops
    return ((type(op) is program_ops.Strip and op.left) or type(op) is program_ops.StripAccents
            or getattr(op, "content", None) == "")


def _spaces_for_meta(before: list, flags: int, meta: str) -> tuple:
    """The ops before the text form, the last one's runs put as " " instead of meta when the
    kernel then puts meta for every space (transformers' Replace(" {2,}" -> "▁") before
    Metaspace): the same text reaches the model, and an ASCII text stays an ASCII str
    (no copy without a run; the kernel's in-place word probes)."""
    from ..normalize import ReplaceRun
    last = before[-1] if before else None
    if type(last) is ReplaceRun and last.content == meta and flags & REPLACE_SPACE and meta != " ":
        before = before[:-1] + [ReplaceRun(last.pattern, last.table, last.run_max, " ", last.run_min)]
    return tuple(before)


def _finds_no_space(step) -> bool:
    """Whether step is a Split on a literal holding a space that leaves every piece as it is
    once Replace(" " -> meta) has run: no match, so each piece stays whole (Gemma's
    Split(" ", MergedWithPrevious), sarvam's Regex " "); not with Removed + invert, which would drop the piece."""
    from .pre_tokenizers import Split, literal_of
    return (type(step) is Split and " " in (literal_of(step.pattern_node) or "")
            and not (step.behavior == "Removed" and step.invert))


class CharLevelPath:
    """encode / encode_batch / encode_ids of one tokenizer on the char-level kernel.  A text
    is cut at its added tokens into [(start, end, added id or None, kind)]."""

    def __init__(self, plan: Plan, model):
        self.kind, self.later_kind = plan.char_kinds
        self.program = plan.char_program   # ops run before the kernel's text form, or None
        self.char = model.char_model
        self._model = model   # (its tokens_by_id list is made on first use, not at load)

    def usable(self, tokenizer) -> bool:
        """False while an added token is matched in text a normalizer changed in a way this
        path does not follow (the pipeline does that).  Followed: no normalizer (the normalized
        text is the text: ChatGLM3's Metaspace files, a token added with `add_tokens`); Gemma's
        lone Replace(" " -> "▁") with tokens holding neither character (they match where their
        text is); Llama-2/Mistral's Prepend("▁") + Replace(" " -> "▁") (`_legacy`)."""
        added = tokenizer.added
        if added.matcher(normalized=True)[0] is None or tokenizer.normalizer is None:
            return True
        if self.program is not None:
            return False
        if self._legacy():
            return True
        norm, meta = tokenizer.normalizer, tokenizer.model.char_model.meta_char
        return (type(norm) is normalizers.Replace and norm.pattern_node == {"String": " "}
                and norm.content == meta and meta != " "
                and not any(" " in t.content or meta in t.content for t in added.by_id.values() if t.normalized))

    def _legacy(self) -> bool:
        """The file's normalizer is Prepend(meta) + Replace(" " -> meta) and nothing else cuts
        (Llama-2 / Mistral legacy files): a stretch between raw tokens normalizes to meta + the
        stretch with its spaces as meta, where `_normalized_cuts` finds the normalized tokens."""
        return (self.kind == self.later_kind == PREPEND | REPLACE_SPACE and self.char.meta_char != " "
                and self.program is None)

    def _has_added(self, added, text: str) -> bool:
        if added.occurs_in(text, normalized=False):
            return True
        if self._legacy() and added.matcher(normalized=True)[0] is not None:
            meta = self.char.meta_char
            return added.occurs_in(meta + text.replace(" ", meta), normalized=True)
        return added.occurs_in(text, normalized=True)

    def _segments(self, tokenizer, text: str) -> list:
        """[(start, end, added id or None, kind, piece)]: piece is what the kernel encodes with
        kind (text[start:end] but for a lone prepended meta), or an added token's text (HF's)."""
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError(f"expected str, not {type(text).__name__}")
            text = str.__str__(text)
        added = tokenizer.added
        if not self._has_added(added, text):
            return [(0, len(text), None, self.kind, text)]
        cuts = []
        for s, e, aid in added.find(text, normalized=False):
            if aid is None and e > s and self._legacy():
                cuts += self._normalized_cuts(added, text, s, e)
            elif aid is None and e > s and added.occurs_in(text[s:e], normalized=True):
                # HF's second pass: tokens matched in the normalized text of each stretch
                # between raw tokens (no normalizer here, or one these tokens see through)
                cuts += [(s + s2, s + e2, aid2, self.kind if s + s2 == 0 else self.later_kind, text[s + s2:s + e2])
                         for s2, e2, aid2 in added.find(text[s:e], normalized=True) if e2 > s2 or aid2 is not None]
            elif e > s or aid is not None:
                cuts.append((s, e, aid, self.kind if s == 0 else self.later_kind, text[s:e]))
        return cuts

    def _normalized_cuts(self, added, text: str, s: int, e: int) -> list:
        """A stretch's cuts under Prepend(meta) + Replace(" " -> meta), as HF makes them: the
        normalized stretch N = meta + stretch (spaces as meta) is searched for the normalized
        tokens; N's position q > 0 is the stretch's q - 1 and the prepended meta (q = 0) takes
        the first character's span.  A piece of N after a token is not prepended again; a piece
        that is only the prepended meta is that one character, encoded as it stands."""
        meta, stretch = self.char.meta_char, text[s:e]
        norm = meta + stretch.replace(" ", meta)
        kind = self.kind if s == 0 else self.later_kind
        if not added.occurs_in(norm, normalized=True):
            return [(s, e, None, kind, stretch)]
        out = []
        for a, b, aid in added.find(norm, normalized=True):
            start, end = s + max(a - 1, 0), s + b - 1
            if aid is not None:
                out.append((start, max(end, start), aid, kind, norm[a:b]))
            elif a == 0 and b == 1:
                out.append((s, s + 1, None, 0, meta))
            elif a == 0:
                out.append((start, end, None, kind, text[start:end]))
            elif b > a:
                out.append((start, end, None, kind & ~PREPEND, text[start:end]))
        return out

    def _normal(self, piece: str) -> str:
        """What the kernel encodes of a segment: piece through the ops before the text form."""
        return piece if self.program is None else self.program.normalize(piece)

    # -- ids --------------------------------------------------------------------------------

    def plain_ids(self, text: str) -> list[int]:
        """The model's ids of text with no added token matched (`encode_ids_without_added_tokens`):
        the whole text one segment at its start, one kernel call."""
        return self.char.encode_text(self._normal(text), self.kind)

    def body_ids(self, tokenizer, text: str) -> list[int]:
        """The model's ids of text with its added tokens (no post-processor)."""
        segments = self._segments(tokenizer, text)
        encode = self.char.encode_text
        if len(segments) == 1 and segments[0][2] is None:
            piece = segments[0][4]
            return encode(self._normal(piece if type(piece) is str else str.__str__(piece)), segments[0][3])
        ids = []
        for _, _, aid, kind, piece in segments:
            if aid is None:
                ids += encode(self._normal(piece), kind)
            else:
                ids.append(aid)
        return ids

    def bodies(self, tokenizer, texts: list, num_threads: int) -> list[list[int]]:
        """body_ids of many texts, each thread's share of them one kernel call."""
        return parallel_map(lambda share: self.share_bodies(tokenizer, share), texts, num_threads,
                            keep_threads=True)

    def share_bodies(self, tokenizer, texts: list, as_bytes: bool = False) -> list:
        """body_ids of one thread's share of texts: those without an added token in one kernel
        call (what encode_ids_batch and encode_batch's ids come from; with `as_bytes` those
        are bytes of uint32s, what an Encoding holds: _encoding_base.EncodingIds)."""
        added = tokenizer.added
        plain = [type(t) is str and not self._has_added(added, t) for t in texts]
        kept = [t for t, ok in zip(texts, plain) if ok]
        if self.program is not None:
            kept = self.program.normalize_batch(kept)
        encoded = iter(self.char.encode_texts(kept, self.kind, False, as_bytes))
        return [next(encoded) if ok else self.body_ids(tokenizer, t) for t, ok in zip(texts, plain)]

    # -- Encodings --------------------------------------------------------------------------

    def sequences(self, tokenizer, texts: list, type_ids: list, num_threads: int) -> list[Encoding]:
        """The Encoding of each text before post-processing: its ids now (one kernel call a
        thread's share); tokens, offsets and word ids when first read, from a second call
        that gives the offsets too (its pieces are in the thread's cache by then)."""
        plans = [self._segments(tokenizer, t) for t in texts]
        jobs = [(piece if type(piece) is str else str.__str__(piece), kind)
                for plan in plans for _, _, aid, kind, piece in plan if aid is None]
        if self.program is not None:   # (one GIL-free call for the batch)
            jobs = list(zip(self.program.normalize_batch([piece for piece, _ in jobs]), [kind for _, kind in jobs]))
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
        mine = [next(outputs) if aid is None else None for _, _, aid, _, _ in plan]
        if len(plan) == 1 and mine[0] is not None:
            ids = mine[0]
        else:
            ids = []
            for (_, _, aid, _, _), out in zip(plan, mine):
                if out is None:
                    ids.append(aid)
                else:
                    ids += out
        return Encoding.pending(ids, type_id, lambda: self._fields(text, plan))

    def _fields(self, text: str, plan: list) -> tuple[list, list, list]:
        """(tokens, offsets, word_ids): an added token is its matched text and a word of its
        own, as HF; the kernel gives each segment's (start, end, word) per token, then its
        number of words."""
        program, segments = self.program, [(piece, kind) for _, _, aid, kind, piece in plan if aid is None]
        # (normalized, starts, ends) of each segment: starts None where the ops change nothing
        aligned = [program.normalize_aligned_bytes(piece) if program is not None else (piece, None, None)
                   for piece, _ in segments]
        outputs = iter(self._outputs([(seg, kind) for (seg, _, _), (_, kind) in zip(aligned, segments)], True))
        aligns = iter(aligned)
        tokens, offsets, words = [], [], []
        word = 0
        id_to_token = self._model.tokens_by_id   # (by id: a list)
        for start, end, aid, _, piece in plan:
            if aid is not None:
                tokens.append(piece)
                offsets.append((start, end))
                words.append(word)
                word += 1
                continue
            seg_ids, spans = next(outputs)
            _, at, to = next(aligns)
            n = len(seg_ids)
            flat = spans.tolist()
            tokens += map(id_to_token.__getitem__, seg_ids)
            starts, ends = flat[0:3 * n:3], flat[1:3 * n:3]
            if at is not None:   # normalized characters -> their spans in the segment
                starts, ends = _through(starts, ends, memoryview(at).cast("q"), memoryview(to).cast("q"))
            if start:
                starts, ends = [x + start for x in starts], [x + start for x in ends]
            offsets += zip(starts, ends)
            words += [w + word for w in flat[2:3 * n:3]] if word else flat[2:3 * n:3]
            word += flat[3 * n]
        return tokens, offsets, words


def _through(starts: list, ends: list, at, to) -> tuple[list, list]:
    """Token spans in a normalized segment -> spans in the segment: from the first character's
    start to the last one's end, as HF aligns them (at / to: each normalized character's
    span); an empty span stays at its character's start."""
    return ([at[a] if a < len(at) else (to[-1] if len(to) else 0) for a in starts],
            [to[b - 1] if b > a else (at[a] if a < len(at) else (to[-1] if len(to) else 0))
             for a, b in zip(starts, ends)])
