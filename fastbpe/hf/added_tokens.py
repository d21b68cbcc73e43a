"""Added tokens (HF `AddedToken` / `AddedVocabulary`): found in the text before the model runs,
with HF's flags: `single_word`, `lstrip`, `rstrip`, `normalized`, `special`.

Tokens with normalized=False are matched in the original text, the others in the normalized
text of what is left, each set leftmost-longest like HF's Aho-Corasick matcher."""
from __future__ import annotations

from ..special_tokens import special_token_regex
from .normalizers import is_whitespace


class AddedToken:
    """An added token, as `tokenizers.AddedToken`: the same fields, defaults, str(), repr(),
    equality and hash.  `normalized` left unset follows `special` (a special token is matched
    in the raw text), so `add_special_tokens` turning a token special also turns it raw."""

    def __init__(self, content: str = "", single_word: bool = False, lstrip: bool = False, rstrip: bool = False,
                 normalized: bool | None = None, special: bool = False):
        if not isinstance(content, str):
            raise TypeError(f"added token content must be str, not {type(content).__name__}")
        self.content = content
        self.single_word, self.lstrip, self.rstrip = bool(single_word), bool(lstrip), bool(rstrip)
        self.special = bool(special)
        self._normalized = None if normalized is None else bool(normalized)

    @property
    def normalized(self) -> bool:
        return (not self.special) if self._normalized is None else self._normalized

    @normalized.setter
    def normalized(self, value: bool) -> None:
        self._normalized = bool(value)

    @classmethod
    def coerce(cls, token, special: bool) -> "AddedToken":
        """From a str, our AddedToken or a `tokenizers.AddedToken`.  As HF, add_special_tokens
        marks the caller's token object special (its unset `normalized` follows)."""
        if isinstance(token, str):
            return cls(token, special=special)
        if isinstance(token, AddedToken):
            if special:
                token.special = True
            return cls(token.content, token.single_word, token.lstrip, token.rstrip, token._normalized,
                       token.special)
        if hasattr(token, "content"):
            if special:
                token.special = True
            return cls(token.content, token.single_word, token.lstrip, token.rstrip,
                       getattr(token, "normalized", None), bool(getattr(token, "special", False)))
        raise TypeError(f"Input must be a List[Union[str, AddedToken]], got {type(token).__name__}")

    @classmethod
    def from_json(cls, node: dict) -> tuple[int, "AddedToken"]:
        if not isinstance(node, dict) or not isinstance(node.get("content"), str) or type(node.get("id")) is not int:
            raise ValueError(f"tokenizer.json: bad added token {node!r}")
        return node["id"], cls(node["content"], node.get("single_word", False), node.get("lstrip", False),
                               node.get("rstrip", False), node.get("normalized", True), node.get("special", False))

    def to_json(self, token_id: int) -> dict:
        return {"id": token_id, "content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    def _fields(self) -> tuple:
        return (self.content, self.single_word, self.lstrip, self.rstrip, self.normalized, self.special)

    def __getstate__(self) -> dict:
        return {"content": self.content, "single_word": self.single_word, "lstrip": self.lstrip,
                "rstrip": self.rstrip, "normalized": self.normalized, "special": self.special}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)

    def __eq__(self, other) -> bool:
        return isinstance(other, AddedToken) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return (f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
                f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})")


# up to this many distinct first characters, occurs_in looks for them before the regex
_MAX_FIRSTS = 4


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


class AddedVocabulary:
    def __init__(self):
        self.by_id: dict[int, AddedToken] = {}
        self.by_content: dict[str, int] = {}
        self._matchers = None
        self._normalize = None  # str -> str: the tokenizer's normalizer (normalized tokens match its output)
        self._skip_special = False  # HF's encode_special_tokens: special tokens are not cut out

    def set_encode_special_tokens(self, value: bool) -> None:
        self._skip_special = bool(value)
        self._matchers = None

    def set_normalizer(self, normalize) -> None:
        self._normalize = normalize
        self._matchers = None

    def add(self, token_id: int, token: AddedToken) -> None:
        self.by_id[token_id] = token
        self.by_content[token.content] = token_id
        self._matchers = None

    def special_contents(self) -> set[str]:
        return {t.content for t in self.by_id.values() if t.special}

    def token_text(self, token_id: int) -> str | None:
        """The token string HF gives for an added token id: its content, normalized when the
        token is (and HF then only recognises it as special by the original content)."""
        t = self.by_id.get(token_id)
        if t is None:
            return None
        if t.normalized and self._normalize is not None:
            return self._normalize(t.content)
        return t.content

    def matcher(self, normalized: bool):
        """(compiled pattern or None, {matched text: id}) for one of the two token sets."""
        return self._matcher_entry(normalized)[:2]

    def _matcher_entry(self, normalized: bool):
        """(pattern, {matched text: id}, the tokens' first characters or None when many)."""
        matchers = self._matchers
        if matchers is None:  # built whole, then published: threads may call this at once
            matchers = {}
            for flag in (False, True):
                by_text = {}
                for i, t in sorted(self.by_id.items()):
                    if t.normalized == flag and t.content and not (self._skip_special and t.special):
                        text = self._normalize(t.content) if flag and self._normalize else t.content
                        if text:
                            by_text.setdefault(text, i)
                # a trie, not a flat alternation: linear in text full of "<|" (see encoding.py)
                pattern = special_token_regex(frozenset(by_text)) if by_text else None
                firsts = tuple(sorted({c[0] for c in by_text}))
                matchers[flag] = (pattern, by_text, firsts if len(firsts) <= _MAX_FIRSTS else None)
            self._matchers = matchers
        return matchers[normalized]

    def occurs_in(self, text: str, normalized: bool) -> bool:
        """Whether any token of the set occurs in text.  Usually every token starts with one
        of a few characters ("<"): looking for those (memchr) is ~30x faster than the regex
        on text that has none of them."""
        pattern, _, firsts = self._matcher_entry(normalized)
        if pattern is None or (firsts is not None and not any(c in text for c in firsts)):
            return False
        return pattern.search(text) is not None

    def find(self, text: str, normalized: bool) -> list[tuple[int, int, int | None]]:
        """HF's AddedVocabulary::find_matches: text tiled as (start, end, added id or None)."""
        matcher, by_text = self.matcher(normalized)
        if not text or not self.occurs_in(text, normalized):
            return [(0, len(text), None)]
        out, done = [], 0
        for m in matcher.finditer(text):
            start, stop = m.span()
            token_id = by_text[m.group()]
            token = self.by_id[token_id]
            if token.single_word:
                if (start > 0 and _is_word_char(text[start - 1])) or (stop < len(text) and _is_word_char(text[stop])):
                    continue
            if token.lstrip:
                s = start
                while s > 0 and is_whitespace(text[s - 1]):
                    s -= 1
                start = max(s, done)
            if token.rstrip:
                while stop < len(text) and is_whitespace(text[stop]):
                    stop += 1
            if start < done:  # a previous rstrip took these characters
                start = done
            if done < start:
                out.append((done, start, None))
            out.append((start, stop, token_id))
            done = stop
        if done != len(text):
            out.append((done, len(text), None))
        return out
