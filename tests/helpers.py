"""Assertions that explain a parity failure (where the ids diverge, a short reproducer), and
the small byte-level encoding many tests build (`toy_encoding`), and word documents (`make_docs`)."""
from __future__ import annotations

import random


def _char_offset(tt, ids_prefix) -> int:
    return len(tt.decode_bytes(ids_prefix).decode("utf-8", errors="ignore"))


def shrink_reproducer(encode_fb, encode_tt, text: str, around: int, max_len: int = 200) -> str | None:
    """A short slice of `text` near char `around` on which the two encoders still disagree."""
    for width in (8, 16, 32, 64, 128, max_len):
        lo = max(0, around - width)
        hi = min(len(text), around + width)
        window = text[lo:hi]
        try:
            if encode_fb(window) != encode_tt(window):
                break
        except Exception:  # a crash on the window is a reproducer too
            break
    else:
        return None
    # trim from both ends while the disagreement persists
    changed = True
    while changed and len(window) > 1:
        changed = False
        for cand in (window[1:], window[:-1]):
            try:
                differs = encode_fb(cand) != encode_tt(cand)
            except Exception:
                differs = True
            if differs:
                window, changed = cand, True
                break
    return window


def assert_same_ids(got, want, *, tt=None, text=None, encode_fb=None, encode_tt=None, label=""):
    """Assert id lists are equal; on failure report the first divergence and a reproducer."""
    got = list(got)
    want = list(want)
    if got == want:
        return
    i = next((k for k, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    msg = [f"{label}: ids differ at token {i} (fastbpe {len(got)} tokens, tiktoken {len(want)})"]
    msg.append(f"  fastbpe : {got[max(0, i - 3): i + 5]}")
    msg.append(f"  tiktoken: {want[max(0, i - 3): i + 5]}")
    if tt is not None and text is not None:
        at = _char_offset(tt, want[:i])
        msg.append(f"  text near char {at}: {text[max(0, at - 30): at + 30]!r}")
        if encode_fb is not None and encode_tt is not None:
            repro = shrink_reproducer(encode_fb, encode_tt, text, at)
            if repro is not None:
                msg.append(f"  minimal reproducer: {repro!r}")
                try:
                    msg.append(f"    fastbpe : {encode_fb(repro)}")
                except Exception as e:  # pragma: no cover - diagnostic only
                    msg.append(f"    fastbpe raised {e!r}")
                msg.append(f"    tiktoken: {encode_tt(repro)}")
    raise AssertionError("\n".join(msg))


BYTE_RANKS = {bytes([i]): i for i in range(256)}


def toy_encoding(pat_str=r"\w+|\s+|[^\w\s]+", special_tokens=None):
    """A fastbpe.Encoding of the 256 single bytes (ids = byte values) and <|endoftext|> = 256."""
    from fastbpe.encoding import Encoding

    return Encoding("toy", pat_str=pat_str, mergeable_ranks=BYTE_RANKS,
                    special_tokens={"<|endoftext|>": 256} if special_tokens is None else special_tokens)


WORDS = ("the of and to in a is that for it with as was on be by this are from at or have an "
         "but not they which one you had their all were when we there can been has more if "
         "will would who so no out up into them some could time these two may then do first "
         "any my now such like our over man me even most made after also did many before must "
         "through back years where much your way well down should because each just those").split()


def make_docs(seed: int, n_docs: int, words_per_doc: int = 30) -> list:
    rng = random.Random(seed)
    docs = []
    for _ in range(n_docs):
        words = [rng.choice(WORDS[: rng.randint(8, len(WORDS))]) for _ in range(rng.randint(1, words_per_doc))]
        docs.append(" ".join(words) + rng.choice([".", "!", "?", ",", ""]))
    return docs
