"""Added tokens (HF `AddedToken` / `AddedVocabulary`): found in the text before the model runs,
with HF's flags: `single_word`, `lstrip`, `rstrip`, `normalized`, `special`.

Tokens with normalized=False are matched in the original text, the others in the normalized
text of what is left, each set leftmost-longest by an Aho-Corasick automaton, as HF."""
from __future__ import annotations

import functools

from .._added_split import AS_TEXT, STRIP_LEFT, STRIP_RIGHT, WHITE_SPACE
from .._token_trie import TokenTrie
from ._nodes import U32_MAX, json_bool, json_uint
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
    def from_json(cls, node, path="added token") -> "AddedToken":
        """An entry of tokenizer.json's added_tokens.  Its "id" must be a valid id (HF
        refuses others) but, as in HF, the id the token gets is assigned when it is added.
        `path` names the entry in errors (or a function giving that name)."""
        if type(node) is dict:   # the usual entry, checked in one expression (Whisper has 1,609)
            get = node.get
            content, single_word, lstrip, rstrip, normalized, special, token_id = (
                get("content"), get("single_word", False), get("lstrip", False), get("rstrip", False),
                get("normalized", True), get("special", False), get("id", 0))
            if (type(content) is str and type(single_word) is bool and type(lstrip) is bool
                    and type(rstrip) is bool and type(normalized) is bool and type(special) is bool
                    and type(token_id) is int and 0 <= token_id <= U32_MAX):
                return cls(content, single_word, lstrip, rstrip, normalized, special)
        if callable(path):
            path = path()
        if not isinstance(node, dict):
            raise ValueError(f"tokenizer.json: {path} must be an object, got {node!r}")
        content = node.get("content")
        if not isinstance(content, str):
            raise ValueError(f"tokenizer.json: {path}.content must be a string, got {content!r}")
        if "id" in node:
            json_uint(node["id"], f"{path}.id")
        flags = {key: json_bool(node.get(key, default), f"{path}.{key}")
                 for key, default in (("single_word", False), ("lstrip", False), ("rstrip", False),
                                      ("normalized", True), ("special", False))}
        return cls(content, **flags)

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


# up to this many distinct first characters are kept (the plain tests of hf/ids_path.py and
# _short_call take 16); occurs_in looks for up to 4 of them before the automaton
MAX_FIRSTS = 16

# Rust regex's Unicode `\w`, which HF's single_word check uses (marks, ZWJ and VS16 are word
# characters; `½` and `²` are not: they are No, not Nd); compiled on first use (importing regex
# is ~60M instructions, and most loads never ask)
@functools.lru_cache(maxsize=None)
def _word_char_match():
    import regex

    return regex.compile(r"[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}]").match


def _is_word_char(c: str) -> bool:
    return _word_char_match()(c) is not None


class AddedVocabulary:
    def __init__(self):
        self.by_id: dict[int, AddedToken] = {}
        self.by_content: dict[str, int] = {}
        self._special: set[str] = set()   # as HF's special_tokens_set: contents only ever added
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
        if token.special:
            self._special.add(token.content)
        self._matchers = None

    def add_tokens(self, tokens, model_vocab: dict) -> int:
        """HF's AddedVocabulary::add_tokens: an empty token, or one identical to the token
        already added with its content, is ignored; content already added or in the model's
        vocabulary keeps that id (and takes the new flags); other tokens get the next ids
        after the model's vocabulary size (or after the largest added id beyond it).
        Returns the number of tokens not ignored."""
        size = len(model_vocab)
        top = max(self.by_id, default=None)
        next_id = size if top is None or (top < size and size > 0) else top + 1
        counted = 0
        for token in tokens:
            if not token.content:
                continue
            token_id = self.by_content.get(token.content)
            if token_id is not None and self.by_id.get(token_id) == token:
                continue
            if token_id is None:
                token_id = model_vocab.get(token.content)
            if token_id is None:
                token_id, next_id = next_id, next_id + 1
            self.add(token_id, token)
            counted += 1
        return counted

    def special_contents(self) -> set[str]:
        return set(self._special)

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
        """(TokenTrie or None, {matched text: id}) for one of the two token sets."""
        return self.matcher_and_first_chars(normalized)[:2]

    def matcher_and_first_chars(self, normalized: bool):
        """(automaton, {matched text: id}, the tokens' first characters or None when many)."""
        matchers = self._matchers
        if matchers is None:  # built whole, then published: threads may call this at once
            matchers = {}
            for flag in (False, True):
                by_text = {}
                # HF's automaton keeps the first of two tokens with the same text, in its
                # map's order; ours takes the lower id
                for i in sorted(self.by_id):
                    t = self.by_id[i]
                    if t.normalized == flag and t.content:
                        text = self._normalize(t.content) if flag and self._normalize else t.content
                        if text:
                            by_text.setdefault(text, i)
                trie = TokenTrie(by_text, by_text.values()) if by_text else None
                firsts = tuple(sorted({c[0] for c in by_text}))
                matchers[flag] = (trie, by_text, firsts if len(firsts) <= MAX_FIRSTS else None)
            self._matchers = matchers
        return matchers[normalized]

    def cut_matchers(self):
        """(raw automaton or None, normalized automaton or None) for `_added_split.encode_cut_texts`,
        which then cuts as `find` does: each token's value its id with what HF does around it
        (lstrip, rstrip, a special token left as text); None when a token matches single words
        only (`find` cuts those)."""
        self.matcher_and_first_chars(False)
        matchers = self._matchers   # the answer kept beside the automata (a short call asks: GPT-NeoX's 180
        if "cut" not in matchers:     # tokens looked over were ~20,000 instructions a call)
            matchers["cut"] = self._cut_matchers(matchers)
        return matchers["cut"]

    def _cut_matchers(self, matchers: dict):
        if any(t.single_word for t in self.by_id.values()):
            return None
        cut = []
        for flag in (False, True):
            trie, by_text, _ = matchers[flag]
            values = [i | self._cut_flags(self.by_id[i]) for i in by_text.values()]
            if any(v >> 32 for v in values):   # the automaton again, with the flags in its values
                trie = TokenTrie(by_text, values)
            cut.append(trie)
        return tuple(cut)

    def _cut_flags(self, token: AddedToken) -> int:
        if self._skip_special and token.content in self._special:
            return AS_TEXT
        return ((STRIP_LEFT | WHITE_SPACE) if token.lstrip else 0) | ((STRIP_RIGHT | WHITE_SPACE) if token.rstrip else 0)

    def occurs_in(self, text: str, normalized: bool) -> bool:
        """Whether any token of the set occurs in text.  Usually every token starts with one
        of a few characters ("<"): looking for those (memchr) first is faster still."""
        trie, _, firsts = self.matcher_and_first_chars(normalized)
        if trie is None or (firsts is not None and len(firsts) <= 4 and not any(c in text for c in firsts)):
            return False
        return trie.contains_any(text)

    def find(self, text: str, normalized: bool) -> list[tuple[int, int, int | None]]:
        """HF's AddedVocabulary::find_matches: (start, end, added id or None) pieces of text.

        As in HF, a token's lstrip/rstrip spans are not cut back where they reach into the
        previous or next piece: pieces may overlap (both then hold the same characters); a token
        left with no text of its own is dropped."""
        if not text or not self.occurs_in(text, normalized):
            return [(0, len(text), None)]
        trie = self.matcher_and_first_chars(normalized)[0]
        out, done = [], 0
        for start, stop, token_id in trie.find(text):
            token = self.by_id[token_id]
            if self._skip_special and token.content in self._special:
                continue  # as HF: the match is found, then left as text
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
            if start >= stop:
                # lstrip moved the start to the end of the previous token's rstrip, which had
                # taken this whole token: HF drops the empty split (start > stop: HF panics)
                continue
            if done < start:
                out.append((done, start, None))
            out.append((start, stop, token_id))
            done = stop
        if done != len(text):
            out.append((done, len(text), None))
        return out
