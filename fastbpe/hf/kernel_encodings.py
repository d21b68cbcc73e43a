"""Encodings of a plain byte-level BPE file built from the kernel's output.

`Tokenizer.encode` and `encode_batch` on a file that takes the fast path (see tokenizer.py)
come here instead of running HF's pipeline token by token.  For each BPE segment of a text
(the text between added tokens) the GIL-free kernels give two arrays: the token ids and the
end bytes of the pre-tokenizer's pieces.  Everything else follows from them with array
arithmetic:

* a byte-level token holds exactly its own bytes, so a cumulative sum of the tokens' byte
  lengths gives every token's byte span;
* a token never crosses a piece, so the piece its first byte falls in is its word (the
  scanner's piece ends come from the same GIL-free call as the ids);
* a byte span becomes HF's character offsets through the index of the character each byte
  belongs to (a token holding part of a character covers that character, as HF's ByteLevel
  alignments do); ASCII text needs no table.

The fields are then exactly what the pipeline's `_encode_sequence` gives (tests compare the
two and `tokenizers` field by field), and the post-processor, truncation and padding run on
them unchanged.  Batches run the kernels on threads, the GIL released while they scan and
merge.
"""
from __future__ import annotations

from ..threads import parallel_map
from .encoding import Encoding


def _numpy():
    """numpy, imported when the first long segment's fields are read: loading a tokenizer.json,
    the ids-only paths and short Encodings never need it (importing it costs a fresh process
    ~60 ms, as much as loading GPT-2's file)."""
    import numpy
    return numpy


class KernelEncoder:
    """Per-file tables for building Encodings from kernel output."""

    def __init__(self, tokenizer, scanner_kind: int, isolated_pieces, drops: bool = False):
        """`scanner_kind` of the tokenizer's split pattern (-1: `isolated_pieces(text)` cuts);
        `drops`: a level removes pieces (plan.Plan.drops), which the piece ends mark (bit 31)
        and no token covers."""
        self._kind, self._isolated_pieces = scanner_kind, isolated_pieces
        self._drops = drops
        model = tokenizer.model
        self._table = model.table
        self._model = model   # (its tokens_by_id list is made on first use: by _fields, not here)
        self._token_bytes = model.token_bytes
        self._nbytes_array = None   # each token's byte length as a numpy array, made on first use

    def _nbytes(self):
        nbytes = self._nbytes_array
        if nbytes is None:
            np = _numpy()
            nbytes = self._nbytes_array = np.array([len(t) if t is not None else 0 for t in self._token_bytes],
                                                   dtype=np.int64)
        return nbytes

    # -- the kernels (GIL released) -------------------------------------------------------

    def _segment_outputs(self, segments: list) -> list:
        """(list of ids, array of piece end bytes) for each str segment: one GIL-free kernel call for them all
        when the C scanner knows the pattern; else `regex` cuts and the kernel merges."""
        if self._kind >= 0:
            return self._table.encode_texts(segments, self._kind, True)
        out = []
        np = _numpy()
        for seg in segments:
            pieces = self._isolated_pieces(seg)
            ends = np.cumsum([len(p.encode("utf-8")) for p in pieces], dtype=np.int64)
            out.append((self._table.encode_pieces(pieces, False, seg), ends))
        return out

    def outputs(self, segments: list, num_threads: int) -> list:
        """_segment_outputs of many segments, on threads when there are several."""
        return parallel_map(self._segment_outputs, segments, num_threads, keep_threads=True)

    # -- one sequence ---------------------------------------------------------------------

    def sequence(self, text: str, plan: list, outputs, type_id: int, aligns: list | None = None) -> Encoding:
        """The Encoding of one sequence: `plan` is Tokenizer._plan(text)'s cut at added
        tokens, `outputs` yields _segment_outputs for its str segments in order, `aligns`
        the alignments of the segments normalizing changed (Tokenizer._plan_aligned).  Its
        ids are made now; tokens, offsets and word ids when first read (Encoding.pending)."""
        mine = [next(outputs) if type(item) is str else None for _, _, item in plan]
        if len(plan) == 1 and mine[0] is not None:
            ids = mine[0][0][:]   # a copy: _fields reads the kernel's list later
        else:
            ids = []
            for (_, _, item), out in zip(plan, mine):
                if out is None:
                    ids.append(item)
                else:
                    ids += out[0]
        return Encoding.pending(ids, type_id, lambda: self._fields(text, plan, mine, aligns))

    def _fields(self, text: str, plan: list, outputs: list, aligns: list | None = None) -> tuple[list, list, list]:
        """(tokens, offsets, word_ids) of a sequence, from its plan and kernel outputs (and
        the alignments of normalized segments: a token's offsets run from its first
        character's original start to its last one's end, as HF's)."""
        offsets, words, tokens = [], [], []
        word = 0
        id_to_token, token_bytes = self._model.tokens_by_id, self._token_bytes   # (by id: a list)
        for k, ((start, end, item), out) in enumerate(zip(plan, outputs)):
            align = aligns[k] if aligns is not None else None
            if out is None:
                tokens.append(text[start:end] if align is None else align)   # as HF: the matched text
                offsets.append((start, end))
                words.append(word)
                word += 1
                continue
            seg_ids, piece_ends = out
            if len(seg_ids) == 0:
                continue
            if align is None and len(seg_ids) <= 32 and item.isascii() and not self._drops:
                # a short ASCII segment (a chat message, a query): plain loops beat numpy's
                # per-call cost; bytes are characters
                ends = piece_ends.tolist()
                pos, piece = 0, 0
                for i in seg_ids:
                    while ends[piece] <= pos:
                        piece += 1
                    n = len(token_bytes[i] or b"")
                    tokens.append(id_to_token[i])
                    offsets.append((start + pos, start + pos + n))
                    words.append(word + piece)
                    pos += n
                word += len(ends)
                continue
            if len(seg_ids) <= 32 and len(item) <= 4096:
                # any other short segment (normalized, non-ASCII, pieces removed): plain loops
                # too, so a first short Encoding does not import numpy (~220M instructions)
                word = _short_fields(item, seg_ids, piece_ends, start, align, word, token_bytes,
                                     id_to_token, tokens, offsets, words)
                continue
            np = _numpy()
            nbytes = self._nbytes()[np.array(seg_ids, dtype=np.intp)]
            byte_end = np.cumsum(nbytes)
            byte_start = byte_end - nbytes
            if self._drops:
                byte_start, byte_end, piece_ends = _past_removed(np, piece_ends, byte_start, byte_end)
            words += (np.searchsorted(piece_ends, byte_start, side="right") + word).tolist()
            word += len(piece_ends)
            if item.isascii():
                char_start, char_end = byte_start, byte_end
            else:
                data = np.frombuffer(item.encode("utf-8"), dtype=np.uint8)
                char_of = np.cumsum((data & 0xC0) != 0x80) - 1
                char_start, char_end = char_of[byte_start], char_of[byte_end - 1] + 1
            if align is not None:   # normalized characters -> their spans in text
                starts, ends, base = align
                char_start = np.frombuffer(starts, dtype=np.int64)[char_start] + base
                char_end = np.frombuffer(ends, dtype=np.int64)[char_end - 1] + base
            elif start:
                char_start, char_end = char_start + start, char_end + start
            tokens += map(id_to_token.__getitem__, seg_ids)
            offsets += zip(char_start.tolist(), char_end.tolist())
        return tokens, offsets, words


def _short_fields(item: str, seg_ids, piece_ends, start: int, align, word: int, token_bytes, id_to_token,
                  tokens: list, offsets: list, words: list) -> int:
    """_fields' numpy steps in plain loops, for a short segment: appends its tokens, offsets
    and word ids, returns the next word id.  Pieces flagged removed (bit 31 of a piece end)
    hold no token: a token's bytes, counted over the kept pieces, shift to the text's."""
    shifts, kept = [], 0   # per kept piece: text byte start - counted byte start
    prev = counted = 0
    for e in piece_ends.tolist():
        end = e & 0x7FFFFFFF
        if not e >> 31:
            shifts.append(prev - counted)
            counted += end - prev
            kept += 1
            shifts.append(counted)   # (its counted end)
        prev = end
    char_of = None
    if not item.isascii():   # the character each UTF-8 byte belongs to
        char_of = []
        for k, ch in enumerate(item):
            c = ord(ch)
            char_of += [k] * (1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4)
    if align is not None:
        starts, ends, base = align
        starts, ends = _int64s(starts), _int64s(ends)
    pos = piece = 0
    for i in seg_ids:
        n = len(token_bytes[i] or b"")
        while piece < kept - 1 and shifts[2 * piece + 1] <= pos:
            piece += 1
        b0 = pos + shifts[2 * piece]
        c0, c1 = (b0, b0 + n) if char_of is None else (char_of[b0], char_of[b0 + n - 1] + 1)
        if align is not None:
            c0, c1 = starts[c0] + base, ends[c1 - 1] + base
        else:
            c0, c1 = c0 + start, c1 + start
        tokens.append(id_to_token[i])
        offsets.append((c0, c1))
        words.append(word + piece)
        pos += n
    return word + kept


def _int64s(buf) -> memoryview:
    """An int64 buffer (array('q'), or its bytes) read as int64s."""
    view = memoryview(buf)
    return view if view.format == "q" else view.cast("B").cast("q")


def _past_removed(np, piece_ends, byte_start, byte_end) -> tuple:
    """Tokens' byte spans counted over the kept pieces only, taken to the text's bytes, and the
    kept pieces' ends: the piece ends of a chain with a Removed level flag removed pieces
    (bit 31), which no token covers."""
    raw = np.asarray(piece_ends).astype(np.int64)
    removed = (raw >> 31).astype(bool)
    ends = raw & 0x7FFFFFFF
    starts = np.concatenate(([0], ends[:-1]))
    kept_start, kept_end = starts[~removed], ends[~removed]
    counted_end = np.cumsum(kept_end - kept_start)          # where each kept piece ends, counted
    piece = np.searchsorted(counted_end, byte_start, side="right")
    shift = (kept_start - (counted_end - (kept_end - kept_start)))[piece]
    return byte_start + shift, byte_end + shift, kept_end
