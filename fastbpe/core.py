"""tiktoken's `tiktoken.core` module: `Encoding` (the class lives in `fastbpe.encoding`)."""
from .encoding import Encoding
from .special_tokens import raise_disallowed_special_token

__all__ = ["Encoding", "raise_disallowed_special_token"]
