"""llama.cpp's pre-tokenizers for `gpt2` (byte-level BPE) GGUF vocabularies.

A GGUF file names its pre-tokenizer (`tokenizer.ggml.pre`); llama.cpp (src/llama-vocab.cpp) maps
the name to a list of split regexes applied one after the other, and to a few flags.  The facts
below are read from there.  Each regex splits every piece of the previous one into its matches
*and the text between them* (llama.cpp's unicode_regex_split keeps the gaps as pieces).

llama.cpp runs a regex that is not one of its hand-written splitters with std::regex
(ECMAScript) on a "collapsed" text where every non-ASCII character stands for its category.  So
`\\p{Lu}` there means any letter, `\\d` is ASCII only and `$` is the end of the piece; `to_python`
rewrites those so that the `regex` package gives llama.cpp's pieces.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import regex

from .. import patterns
from ..pretokenize import builtin_chain_kind, chain_kind, scanner_kind

try:  # the C scanner; absent only in a partial build (then scanner_kind is -1 everywhere)
    from .. import _pretokenize
except ImportError:  # pragma: no cover
    _pretokenize = None

_CONTRACTIONS = r"(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)"
LLAMA3 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN2 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
QWEN35 = _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
_CJK = "[一-龥ࠀ-一가-퟿]+"
_DEEPSEEK3_MAIN = (r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
                   r"| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
_UPPER = r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"
_LOWER = r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"
_GPT4O_UPPER = r"((?=[\p{L}])([^a-z]))"
_GPT4O_LOWER = r"((?=[\p{L}])([^A-Z]))"
_BLOOM = " ?[^(\\s|.,!?…。，、।۔،)]+"

# pre-tokenizer type -> llama.cpp's regexes, in order
REGEXES: dict[str, list[str]] = {
    "default": [r"[\p{P}\$\+<=>\^~\|]+", GPT2, r"\p{N}+", "[0-9][0-9][0-9]"],
    "llama3": [LLAMA3],
    "jais2": [_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
              r"|\s{512}(?!\S)|\s{256}(?!\S)|\s{128}(?!\S)|\s{64}(?!\S)|\s{32}(?!\S)|\s{16}(?!\S)|\s{8}(?!\S)"
              r"|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}"],
    "deepseek-llm": [
        "[\r\n]",
        "\\s?[A-Za-zµÀ-ÖØ-öø-ƺƼ-ƿǄ-ʓʕ-ʯͰ-ͳͶͷͻ-ͽͿΆΈ-ΊΌΎ-ΡΣ-ϵϷ-ҁҊ-ԯԱ-ՖႠ-ჅᎠ-Ᏽᏸ-ᏽᲐ-ᲺᲽ-Ჿᴀ-ᴫᵫ-ᵷᵹ-ᶚḀ-ἕἘ-Ἕἠ-ὅὈ-Ὅὐ-ὗὙὛὝὟ-\u1f7dᾀ-ᾴᾶ-ᾼ\u1fbeῂ-ῄῆ-ῌῐ-\u1fd3ῖ-\u1fdbῠ-Ῥῲ-ῴῶ-ῼℂℇℊ-ℓℕℙ-ℝℤ\u2126ℨ\u212a-ℭℯ-ℴℹℼ-ℿⅅ-ⅉⅎↃↄⰀ-ⱻⱾ-ⳤⳫ-ⳮⳲⳳꙀ-ꙭꚀ-ꚛꜢ-ꝯꝱ-ꞇꞋ-ꞎꭰ-ꮿﬀ-ﬆﬓ-ﬗＡ-Ｚａ-ｚ𐐀-𐑏𐒰-𐓓𐓘-𐓻𐲀-𐲲𐳀-𐳲𑢠-𑣟𞤀-𞥃]+",  # \u escapes: these letters change under NFC, which editors apply
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        _CJK,
        r"\p{N}+",
    ],
    "deepseek3": [r"\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+", _DEEPSEEK3_MAIN],
    "spark2_5": [r"\p{N}{1,3}", "[一-龥぀-ゟ゠-ヿ]+",
                 r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"
                 r"| ?[\p{P}\p{S}]+|[\r\n]|\s+(?!\S)|\s+", r"\p{N}"],
    "youtu": ["[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+",
              r"[^\r\n\p{L}\p{N}]?" + _UPPER + "*" + _LOWER + "+" + _CONTRACTIONS + r"?|[^\r\n\p{L}\p{N}]?"
              + _UPPER + "+" + _LOWER + "*" + _CONTRACTIONS + r"?|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "deepseek-coder": ["[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", _CJK, r"\p{N}"],
    "falcon": [r"[\p{P}\$\+<=>\^~\|`]+", GPT2, "[0-9][0-9][0-9]"],
    "starcoder": [r"\p{N}", GPT2],
    "gpt2": [GPT2],
    "qwen2": [QWEN2],
    "qwen35": [QWEN35],
    "bloom": [_BLOOM],
    "chatglm4": [LLAMA3],
    "viking": [_BLOOM, r"\p{N}"],
    "tekken": [r"[^\r\n\p{L}\p{N}]?" + _GPT4O_UPPER + "*" + _GPT4O_LOWER + r"+|[^\r\n\p{L}\p{N}]?" + _GPT4O_UPPER
               + "+" + _GPT4O_LOWER + r"*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "chameleon": ["<sentinel:[0-9]+>", "(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z", "([\\t\\n]|    |  )", r"\p{N}",
                  r"[\p{P}!-/:-@\[-`{-~]", GPT2],
    "gpt4o": [r"[^\r\n\p{L}\p{N}]?" + _GPT4O_UPPER + "*" + _GPT4O_LOWER + "+" + _CONTRACTIONS
              + r"?|[^\r\n\p{L}\p{N}]?" + _GPT4O_UPPER + "+" + _GPT4O_LOWER + "*" + _CONTRACTIONS
              + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "granite-emb-multi": [r"[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))*((?=[\p{L}\p{M}])([^A-Z]))+" + _CONTRACTIONS
                          + r"?|[^\r\n\p{L}\p{N}]?((?=[\p{L}\p{M}])([^a-z]))+((?=[\p{L}\p{M}])([^A-Z]))*"
                          + _CONTRACTIONS + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "superbpe": [r"\p{N}+", r"(?=(\d{3})+(?!\d))"],
    "bailingmoe": [r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"],
    "seed-coder": [_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "ufakzeka": [r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "laguna": ["[^\\n]+|[\\n]+", QWEN2],
    "exaone-moe": [_CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}"
                   r"| ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+"],
    # the digits step is llama.cpp's own code (AFMOE_DIGITS below), not a regex
    "afmoe": [r"\p{AFMoE_digits}", "[\u4e00-\u9fff\u3400-\u4dbf\u8c48-\ufaff\u3040-\u309f\u30a0-\u30ff\uff65-\uff9f\u2f00-\u2fdf\u0e40-\u0e7f\u0e80-\u0eff\u1780-\u17ff\u1000-\u109f\uaa60-\uaa7f\ua9e0-\ua9ff\uac00-\ud7af\u1100-\u11ff]+", _DEEPSEEK3_MAIN],
    "tiny_aya": [r"\p{AFMoE_digits}",
                 r"[^\r\n\p{L}\p{N}]?" + _UPPER + "*" + _LOWER + "+" + _CONTRACTIONS + r"?|[^\r\n\p{L}\p{N}]?"
                 + _UPPER + "+" + _LOWER + "*" + _CONTRACTIONS + r"?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
    "minicpm5": [r"\p{N}{1,3}", _CONTRACTIONS + r"|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}+| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"],
}


@dataclass(frozen=True)
class PreTokenizer:
    """What `tokenizer.ggml.pre` means to llama.cpp for a byte-level BPE vocabulary."""
    name: str              # the file's value
    kind: str              # key of REGEXES
    ignore_merges: bool = False   # a piece that is a token is emitted whole
    clean_spaces: bool = True     # detokenize removes " ," " ." " 's" ...
    add_bos: bool = False         # llama.cpp's default when the file does not say
    no_bos_id: bool = False       # llama.cpp drops the BOS id (ChatGLM)


def _table() -> dict[str, PreTokenizer]:
    rows = [
        # (names, kind, ignore_merges, clean_spaces, add_bos, no_bos_id)
        (["default"], "default", False, True, False, False),
        (["minicpm5"], "minicpm5", True, True, False, False),
        (["llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano"],
         "llama3", True, True, True, False),
        (["deepseek-llm"], "deepseek-llm", False, False, False, False),
        (["deepseek-coder"], "deepseek-coder", False, False, False, False),
        (["deepseek-v3"], "deepseek3", False, False, False, False),
        (["spark2_5"], "spark2_5", False, False, False, False),
        (["youtu"], "youtu", True, False, False, False),
        (["falcon"], "falcon", False, True, False, False),
        (["mpt", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
          "modern-bert", "jina-v1-en", "jina-v2-code", "roberta-bpe", "olmo", "exaone4"], "gpt2", False, True, False, False),
        (["jais"], "gpt2", False, True, False, False),
        (["trillion", "granite-docling"], "gpt2", False, False, False, False),
        (["jais-2"], "jais2", False, True, False, False),
        (["starcoder", "refact", "codeshell", "exaone", "minerva-7b", "mellum2"], "starcoder", False, True, False, False),
        (["command-r", "smollm"], "starcoder", False, False, False, False),
        (["qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "hunyuan", "solar-open"], "qwen2", False, False, False, False),
        (["stablelm2", "megrez"], "qwen2", False, True, False, False),
        (["qwen35"], "qwen35", False, False, False, False),
        (["dbrx", "smaug-bpe"], "llama3", False, True, False, False),
        (["poro-chat"], "bloom", False, False, False, False),
        (["bloom", "gpt3-finnish"], "bloom", False, True, False, False),
        (["chatglm-bpe"], "chatglm4", False, True, False, True),
        (["glm4", "glm5"], "chatglm4", True, True, False, True),
        (["viking"], "viking", False, False, False, False),
        (["tekken"], "tekken", True, False, True, False),
        (["chameleon"], "chameleon", False, False, True, False),
        (["gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"], "gpt4o", False, False, False, False),
        (["granite-embed-multi-97m"], "granite-emb-multi", True, False, False, False),
        (["superbpe"], "superbpe", False, False, False, False),
        (["bailingmoe", "bailingmoe2", "llada-moe"], "bailingmoe", False, False, False, False),
        (["seed-coder"], "seed-coder", False, False, False, False),
        (["hunyuan-dense", "hy_v4", "joyai-llm"], "deepseek3", False, False, False, False),
        (["ufakzeka"], "ufakzeka", False, False, False, False),
        (["grok-2"], "qwen2", False, False, False, False),
        (["laguna"], "laguna", False, False, False, False),
        (["exaone-moe"], "exaone-moe", False, True, False, False),
        (["afmoe"], "afmoe", False, False, False, False),
        (["tiny_aya", "cohere2moe"], "tiny_aya", False, False, False, False),
    ]
    table = {}
    for names, kind, ignore, clean, bos, no_bos in rows:
        for name in names:
            table[name] = PreTokenizer(name, kind, ignore, clean, bos, no_bos)
    return table


PRE_TOKENIZERS = _table()

# known to llama.cpp, but split by its own code (no regex) or not byte-level: not served here
UNSUPPORTED = {
    "kimi-k2": "split by custom code in llama.cpp (Han runs and K2's pattern)",
    "gemma4": "SentencePiece-style BPE on raw UTF-8", "granite-embed-multi-311m": "SentencePiece-style BPE on raw UTF-8",
    "mmbert": "SentencePiece-style BPE on raw UTF-8", "sarvam-moe": "SentencePiece-style BPE on raw UTF-8",
    "whitespace": "a whitespace word splitter, not byte-level BPE",
}

# llama.cpp's category escapes; in its collapsed text every letter subcategory is just "letter"
_CATEGORY = re.compile(r"\\p\{(?:N|L|P|M|S|Lu|Ll|Lt|Lm|Lo)\}")
_LETTER_SUBCATEGORY = re.compile(r"\\p\{L[ultmo]\}")


def to_python(expr: str) -> str:
    """A `regex` pattern that gives llama.cpp's matches for one of its split regexes."""
    if expr in (GPT2, LLAMA3, QWEN2, QWEN35):
        return expr  # llama.cpp's hand-written splitters follow these exactly
    out = _LETTER_SUBCATEGORY.sub(r"\\p{L}", expr) if _CATEGORY.search(expr) else expr
    # ECMAScript: \d is ASCII, $ is the end of the piece (Python's $ also matches before a final \n)
    return _rewrite_outside_classes(out)


def _rewrite_outside_classes(expr: str) -> str:
    out, i, depth = [], 0, 0
    while i < len(expr):
        c = expr[i]
        if c == "\\" and i + 1 < len(expr):
            nxt = expr[i + 1]
            out.append("0-9" if (nxt == "d" and depth) else "[0-9]" if nxt == "d" else c + nxt)
            i += 2
            continue
        if c == "[":
            depth += 1
        elif c == "]" and depth:
            depth -= 1
        elif c == "$" and not depth:
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


# llama.cpp regexes whose pieces a C scanner pattern gives exactly (the same matches; where
# llama.cpp's leaves a gap, the scanner pattern's last alternative matches that gap)
_SCANNER_PATTERNS = {GPT2: patterns.HF_GPT2_PATTERN, LLAMA3: patterns.LLAMA3_PATTERN, QWEN2: patterns.QWEN2_PATTERN}
# chains the scanner knows as one kind: the same regexes as a tokenizer.json's Splits spell them
# (DeepSeek-V3's writes \r\n as characters and " unescaped). llama.cpp's "tekken" regex is not
# TEKKEN_PATTERN: its upper/lower classes are "a letter but a-z" / "a letter but A-Z".
_SCANNER_CHAINS = {tuple(REGEXES["deepseek3"]): patterns.DEEPSEEK_V3_SPLITS}


# llama.cpp spells Llama-3's and Qwen2's contractions '[sS]..., its llama3 splitter lowercases with
# unicode_tolower (U+017F stays U+017F); the scanner kinds read HF's (?i:'s|...), where U+017F (long s)
# folds to s. It is the one code point that (?i) folds onto s t m d r e v l (every code point
# tried with `regex`), so a text holding "'\u017f" takes the regex steps: the same pieces as llama.cpp
FOLD_TRAP = "'\u017f"
_CI_KINDS = (LLAMA3, QWEN2)

_NUMBERS = regex.compile(r"\p{N}+")
_MARK = regex.compile(r"\p{M}")


def has_marks(text: str) -> bool:
    """Whether text has a combining mark (never in ASCII)."""
    return not text.isascii() and _MARK.search(text) is not None


def afmoe_digits(piece: str) -> list[str]:
    """llama.cpp's unicode_regex_split_custom_afmoe (also run for tiny_aya's digit regex): a run
    of numbers is cut into groups of three from the right, and the text before a run stays
    glued to the run's first group, as llama.cpp's code does."""
    out, prev = [], 0
    for m in _NUMBERS.finditer(piece):
        start, end = m.span()
        cut = start + (end - start) % 3
        if cut == start:
            cut += 3
        while True:
            out.append(piece[prev:cut])
            prev = cut
            if cut >= end:
                break
            cut += 3
    if prev < len(piece):
        out.append(piece[prev:])
    return out


_CUSTOM = -2
_CUSTOM_STEPS = {r"\p{AFMoE_digits}": afmoe_digits}


class Splitter:
    """Cuts text into llama.cpp's pieces for one pre-tokenizer.  A one-regex pre-tokenizer the C
    scanner knows (GPT-2, Llama-3, Qwen2) is scanned inside the encode kernel (`scanner_kind`);
    so is any other whose regexes compile to a scanner program (pretokenize.chain_kind: the
    whole chain is one program; `engine` says which).  Otherwise, in a chain, the steps the
    scanner knows run on it and the others on `regex`."""

    def __init__(self, pre: PreTokenizer, force_regex: bool | None = None, join: bool = True):
        self.pre = pre
        self.exprs = REGEXES[pre.kind]
        self.steps = []
        for e in self.exprs:
            if e in _CUSTOM_STEPS:
                self.steps.append((_CUSTOM_STEPS[e], _CUSTOM, False, False))
                continue
            fast = _SCANNER_PATTERNS.get(e)
            kind = scanner_kind(fast, force_regex) if fast else -1
            rx = regex.compile(to_python(e))
            captured = kind < 0 and rx.groups == 0
            if captured:
                # split() with the whole regex captured gives gaps and matches in order, in C
                rx = regex.compile(f"({to_python(e)})")
            self.steps.append((rx, kind, captured, join and captured and _separator_safe(to_python(e))))
        self.scanner_kind = self.steps[0][1] if len(self.steps) == 1 else -1
        # Qwen3.5's regex is Qwen2's with combining marks (\p{M}) read as letters: on a text
        # without marks both give the same pieces, so such texts take Qwen2's scanner
        self.markless_kind = -1
        if self.exprs == [QWEN35]:
            self.markless_kind = scanner_kind(patterns.QWEN2_PATTERN, force_regex)
        # the scanner's pattern for a one-regex pre-tokenizer it knows (same pieces), else None
        self.scanner_pattern = _SCANNER_PATTERNS[self.exprs[0]] if self.scanner_kind >= 0 else None
        self.chain = tuple(self.exprs) in _SCANNER_CHAINS     # the whole chain is one built-in kind
        if self.chain:
            self.scanner_kind = builtin_chain_kind(_SCANNER_CHAINS[tuple(self.exprs)], force_regex)
            self.chain = self.scanner_kind >= 0
        # a chain whose last step the scanner knows (starcoder, command-r, refact, chameleon):
        # the earlier steps' pieces go to the encode kernel, which scans and merges them
        last = self.steps[-1][1]
        self.tail_kind = last if len(self.steps) > 1 and last >= 0 else -1
        self.engine, self.refusal = ("scanner", None) if self.scanner_kind >= 0 else self._as_program(force_regex)
        # a kind with (?i) contractions runs somewhere (directly, in a program's level, or for
        # Qwen3.5's markless texts): texts with FOLD_TRAP take _exact_steps (regex there)
        self.fold_guard = self.markless_kind >= 0 or any(
            e in _CI_KINDS and s[1] >= 0 for e, s in zip(self.exprs, self.steps))
        self._exact = None     # exact_steps, compiled at the first such text

    def _as_program(self, force_regex) -> tuple:
        """Make the whole chain one scanner program if every regex compiles: then the encode
        kernel cuts and merges in one call (scanner_kind), as for the built-in patterns."""
        if any(e in _CUSTOM_STEPS for e in self.exprs):
            return "regex", "a step is llama.cpp code, not a regex"
        levels = []
        for e, (_, kind, _, _) in zip(self.exprs, self.steps):
            levels.append(kind if kind >= 0 else to_python(e))
        kind, why = chain_kind(levels, force_regex)
        if kind < 0:
            return "regex", why
        self.scanner_kind, self.markless_kind, self.tail_kind = kind, -1, -1
        return "program", None

    def _exact_steps(self) -> list:
        """The steps with each (?i)-contraction kind replaced by `regex` on llama.cpp's text."""
        self._exact = [(regex.compile(f"({to_python(e)})"), -1, True, False) if e in _CI_KINDS and s[1] >= 0 else s
                       for e, s in zip(self.exprs, self.steps)]
        return self._exact

    def split_head(self, text: str) -> list[str]:
        """The pieces before the last step (for a chain with `tail_kind`)."""
        return self._run(text, self.steps[:-1])

    def split(self, text: str) -> list[str]:
        if self.fold_guard and FOLD_TRAP in text:
            return self._run(text, self._exact or self._exact_steps())
        if self.engine == "program" or self.chain:
            return _pretokenize.split(text, self.scanner_kind)
        if self.markless_kind >= 0 and not has_marks(text):
            return _pretokenize.split(text, self.markless_kind)
        return self._run(text, self.steps)

    @staticmethod
    def _run(text: str, steps: list) -> list[str]:
        pieces = [text]
        can_join = _SEP not in text
        for rx, kind, captured, joinable in steps:
            out = []
            if kind == _CUSTOM:
                for piece in pieces:
                    out.extend(rx(piece))
                pieces = out
                continue
            if kind >= 0:
                for piece in pieces:
                    out.extend(_pretokenize.split(piece, kind))
                pieces = out
                continue
            if joinable and can_join and len(pieces) > 1:
                # one split over all pieces joined by a character no match can hold (see
                # _separator_safe): the same matches as piece by piece, in one C call
                for p in rx.split(_SEP.join(pieces)):
                    if _SEP in p:
                        out.extend(q for q in p.split(_SEP) if q)
                    elif p:
                        out.append(p)
                pieces = out
                continue
            if captured:
                for piece in pieces:
                    out.extend(p for p in rx.split(piece) if p)
                pieces = out
                continue
            for piece in pieces:
                pos = 0
                for m in rx.finditer(piece):
                    s, e = m.span()
                    if s > pos:
                        out.append(piece[pos:s])
                    if e > s:
                        out.append(piece[s:e])
                    pos = e
                if pos < len(piece):
                    out.append(piece[pos:])
            pieces = out
        return pieces

    def __repr__(self) -> str:
        if self.engine == "program":
            how = "scanner program"
        elif self.scanner_kind >= 0:
            how = "C scanner" + (" (the chain as one kind)" if self.chain else "")
        elif self.markless_kind >= 0:
            how = "C scanner (Qwen2's) for texts without combining marks, else regex"
        else:
            n_fast = sum(k >= 0 for _, k, _, _ in self.steps)
            how = f"regex fallback ({n_fast} of {len(self.steps)} steps on the C scanner" + (
                ", the last one inside the encode kernel)" if self.tail_kind >= 0 else ")") + f": {self.refusal}"
        return f"<gguf Splitter {self.pre.name!r} ({self.pre.kind}, {len(self.exprs)} regexes, {how})>"


_SEP = "\x00"
# what could let a match hold or look past the separator: lookaround, anchors, any-char, negated
# classes and escapes, the C category, a literal NUL
_UNSAFE = re.compile(r"\(\?[=!<]|[$^.]|\\[ZzAbBSDWPdwx0]|\[\^|\\p\{C|\x00")


def _separator_safe(expr: str) -> bool:
    """True when no match of expr can contain or look across a NUL: then splitting pieces
    joined by NULs gives each piece's own matches (NULs end up only in the gaps)."""
    return _UNSAFE.search(expr) is None


def pre_tokenizer(name: str | None, path: str) -> PreTokenizer:
    """The PreTokenizer for a file's `tokenizer.ggml.pre` (missing: llama.cpp's "default")."""
    if name is None or name == "":
        name = "default"
    if name in PRE_TOKENIZERS:
        return PRE_TOKENIZERS[name]
    if name in UNSUPPORTED:
        raise ValueError(f"{path}: pre-tokenizer {name!r} is not supported by fastbpe ({UNSUPPORTED[name]})")
    raise ValueError(f"{path}: unknown pre-tokenizer {name!r} (tokenizer.ggml.pre); llama.cpp does not know it either")
