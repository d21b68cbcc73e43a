"""Finding special tokens in text: one trie-shaped regex per set of tokens, and tiktoken's
error for a special token that is not allowed."""
from __future__ import annotations

import functools

import regex


@functools.lru_cache(maxsize=128)
def special_token_regex(tokens: frozenset[str]) -> "regex.Pattern[str]":
    """One regex matching any of the tokens, the longest where several start at one place.
    It is a trie, not a flat alternation: a flat one tries every token at each place where
    one could start (o200k_harmony's ~1000 `<|...|>` tokens made text full of `<|` take
    seconds), the trie follows one branch per character, so matching stays linear."""
    return regex.compile(trie_pattern(sorted(tokens)))


def trie_pattern(tokens: list[str]) -> str:
    trie: dict = {}
    for token in tokens:
        node = trie
        for ch in token:
            node = node.setdefault(ch, {})
        node[""] = {}  # a token ends here

    def pattern(node: dict) -> str:
        chain = ""  # a run of single-child nodes becomes one literal (and one recursion)
        while len(node) == 1 and "" not in node:
            (ch, node), = node.items()
            chain += regex.escape(ch)
        if not node:
            return chain
        branches = [regex.escape(ch) + pattern(child) for ch, child in sorted(node.items()) if ch]
        if "" in node:
            branches.append("")  # stopping here comes last, so longer tokens win
        if len(branches) == 1:
            return chain + branches[0]
        return chain + "(?:" + "|".join(branches) + ")"

    return pattern(trie)


class DisallowedSpecialTokenError(ValueError):
    """The text holds a special token that the call does not allow (tiktoken's ValueError,
    with the token as a field so callers need not read the message)."""

    def __init__(self, token: str):
        self.token = token
        super().__init__(
            f"Encountered text corresponding to disallowed special token {token!r}.\n"
            "If you want this text to be encoded as a special token, "
            f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
            "If you want this text to be encoded as normal text, disable the check for this token "
            f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
            "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
        )


def raise_disallowed_special_token(token: str):
    raise DisallowedSpecialTokenError(token)
