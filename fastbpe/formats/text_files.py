"""Reading model files as text or JSON, with errors that name the file and say what is
wrong (never a bare UnicodeDecodeError or RecursionError)."""
from __future__ import annotations

import json
import os


def read_text(path, what: str) -> str:
    """The UTF-8 text of the file at `path`; ValueError naming it (and `what` it should
    have been) when it is not UTF-8 text, e.g. a binary file given by mistake."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not {what}: not UTF-8 text (byte 0x{data[e.start]:02x} at "
                         f"offset {e.start})") from None


def parse_json(text: str, where: str, what: str):
    """`json.loads(text)`; ValueError naming `where` for text that is not JSON or is
    nested too deeply for the parser."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"{where}: not {what}: {e}") from None
    except RecursionError:
        raise ValueError(f"{where}: not {what}: JSON nested too deeply") from None
