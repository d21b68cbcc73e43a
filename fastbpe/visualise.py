"""Tokens shown in a terminal: each token's text on its own background colour.

The colour cycles with the running character count, so two neighbouring tokens never share a
colour (the same picture as tiktoken's `visualise_tokens`).  A token that ends inside a UTF-8
character shows the replacement character for its part of it.  Control characters in the
text are shown, not sent: raw, ESC or BEL from the input would recolour, retitle or ring the
user's terminal, so each becomes its visible picture (ESC as ␛, BEL as ␇) or, for the C1
controls, a \x9b-style escape; newlines and tabs stay as they are.
"""
from __future__ import annotations

import sys

# xterm-256 background colours: pale enough that black and white text both stay readable
BACKGROUNDS = (167, 179, 185, 77, 80, 68, 134)
RESET = "\x1b[0m"
# C0 controls and DEL -> the Unicode control pictures (U+2400..U+241F, U+2421); C1 -> \xNN
_VISIBLE = {c: chr(0x2400 + c) for c in range(32) if chr(c) not in "\n\t"}
_VISIBLE[0x7F] = "\u2421"
_VISIBLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def visible(text: str) -> str:
    """`text` with its control characters shown as pictures instead of sent raw."""
    return text.translate(_VISIBLE)


def ansi_tokens(token_values: list[bytes]) -> str:
    """The tokens' text, each on its own background colour, ending with a colour reset."""
    out = []
    running = 0
    last = None
    for token in token_values:
        text = visible(token.decode("utf-8", errors="replace"))
        colour = BACKGROUNDS[running % len(BACKGROUNDS)]
        if colour == last:
            colour = BACKGROUNDS[(running + 1) % len(BACKGROUNDS)]
        last = colour
        running += len(text)
        out.append(f"\x1b[48;5;{colour}m{text}")
    out.append(RESET)
    return "".join(out)


def visualise_tokens(token_values: list[bytes], file=None) -> None:
    """Print the tokens in colour (tiktoken's `_educational.visualise_tokens`)."""
    print(ansi_tokens(token_values), file=file if file is not None else sys.stdout)
