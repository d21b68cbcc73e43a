"""minbpe-compatible tokenizers, with minbpe's package layout: ``base`` (``Tokenizer``,
``get_stats``, ``merge``, ``render_token``, ``replace_control_characters``), ``basic``
(``BasicTokenizer``), ``regex`` (``RegexTokenizer``) and ``gpt4`` (``GPT4Tokenizer``).

Same methods, attributes (``merges``, ``vocab``, ``pattern``, ``special_tokens``) and files
as Karpathy's minbpe, and the same merges from ``train`` -- including minbpe's tie rule:
among pairs with equal counts, the one whose first occurrence comes first.  Training and
encoding run in the Cython kernels.  Code written for minbpe runs unchanged after
``sys.modules["minbpe"] = fastbpe.minbpe`` (and the same for its four submodules).

Differences on purpose: a failed check raises ``ValueError`` instead of ``AssertionError``
(``SpecialTokenError`` is both, so old ``except AssertionError`` code still works); training
stops early, instead of crashing, when nothing is left to merge; files are written
atomically; a malformed or truncated ``.model`` file raises ``ValueError``.
"""
from .base import SpecialTokenError, Tokenizer
from .basic import BasicTokenizer
from .gpt4 import GPT4_SPECIAL_TOKENS, GPT4Tokenizer
from .regex import GPT2_SPLIT_PATTERN, GPT4_SPLIT_PATTERN, RegexTokenizer

__all__ = ["Tokenizer", "BasicTokenizer", "RegexTokenizer", "GPT4Tokenizer",
           "GPT2_SPLIT_PATTERN", "GPT4_SPLIT_PATTERN", "GPT4_SPECIAL_TOKENS",
           "SpecialTokenError"]
