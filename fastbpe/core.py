"""tiktoken's `tiktoken.core` module: `Encoding` (the class lives in `fastbpe.encoding`)."""
from .encoding import Encoding, raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]
