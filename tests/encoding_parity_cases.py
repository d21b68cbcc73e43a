"""What the tiktoken parity tests share (test_encoding_parity.py, test_encoding_parity_api.py):
hypothesis settings, text strategies, written samples and the ids check."""
from __future__ import annotations

import string

from hypothesis import HealthCheck
from hypothesis import strategies as st

from helpers import assert_same_ids

# Hypothesis + a parametrized (immutable) encoding fixture is fine; silence the health check.
HYPO = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

# The text strategies only use code points that Python's `unicodedata` knows as assigned
# (category != "Cn") and that are not surrogates (Cs).  tiktoken's Rust regex, the `regex`
# package and a generated C scanner may each be on a different Unicode version; a code point
# assigned after Python's version can legitimately be \p{L} for one and unassigned for another.
# fastbpe's default path (the C scanner) follows tiktoken's Unicode version, and
# test_unicode_version_differences_follow_tiktoken checks every newer code point; the regex
# fallback (FASTBPE_FORCE_REGEX=1) follows the regex package's, and so differs from tiktoken
# on the newer code points (and on U+0295, Ll in Unicode 16.0 but Lo in 17.0, in o200k's
# case-class contexts: rare enough for the fuzzing).
ASSIGNED_CHARS = st.characters(exclude_categories=("Cs", "Cn"))

# Fragments aimed at every branch of the split patterns: contractions in both cases, the
# o200k upper/lower/title/modifier/mark classes, digit runs, all kinds of whitespace and line
# breaks, punctuation runs followed by newlines or '/', CJK, emoji sequences, special-token-like
# text (never allowed as specials here).
FRAGMENTS = [
    "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re", "’s", "'x",
    "Hello", "hello", "HELLO", "HeLLo", "McDonald", "iPhone", "ǅemal", "ǈ", "ʰ", "ˢᵗ",
    "e\u0301", "\u0301", "a\u0308\u0301", "क्षि", "ไทย", "한국어", "日本語", "中文", "العربية",
    "Ωμέγα", "ПРИВЕТ", "привет", "İ", "ß", "ﬁ",
    "0", "7", "12", "123", "1234", "12345678", "٣٤٥", "½", "²", "Ⅻ",
    " ", "  ", "   ", "\t", "\n", "\r", "\r\n", "\n\n", " \n", "\n ", "\x0b", "\x0c",
    "\x85", "\xa0", "\u2028", "\u2029", "\u3000", "\u200b",
    ".", "...", "!?", "//", "/", "->", "=>", "#", "@", "$", "(", ")", "{", "}", "\"", "'",
    "-", "_", "__init__", "::", "<", ">", "|", "<|", "|>", "<|endoftext|>", "<|fim_prefix|>",
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "1️⃣", "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
]
TRICKY_TEXT = st.lists(st.sampled_from(FRAGMENTS) | ASSIGNED_CHARS, max_size=80).map("".join)
UNICODE_TEXT = st.text(ASSIGNED_CHARS, max_size=300)
ASCII_TEXT = st.text(st.sampled_from(string.printable), max_size=300)

# Texts written for this suite, so parity is checked even on machines without the corpora.
SAMPLES = [
    "",
    "hello world",
    "Hello, World! It's 2024-05-13 and I'm fine; they'll say we've done it.",
    "def f(x):\n    return x ** 2  # square\n\n\nclass A:\n\tpass\r\n",
    "  leading and trailing spaces   ",
    "tabs\tand\nnewlines\n\n\n  \n\t\n",
    "numbers 1 12 123 1234 12345 3.14159 1,000,000 0x1F",
    "Ünïcödé façade naïve coöperate — “quotes” ‘single’ «guillemets»",
    "Привет, мир! Это тест. ПРОПИСНЫЕ буквы.",
    "日本語のテキストと中文文本，还有한국어 텍스트。",
    "नमस्ते दुनिया, ภาษาไทย, עברית, العربية, فارسی",
    "emoji 😀👍🏽👨‍👩‍👧🇫🇷 and symbols ∑∫√∞ ≠ ≤ ≥",
    "URL https://example.com/a/b?c=d&e=f#frag and path /usr/local/bin//x",
    "CamelCaseWord snake_case_word SCREAMING_CASE kebab-case-word",
    "don't DON'T Don'T you'LL we'Ve they'RE I'M he'D",
    "   \n   \n\n   x",
    "a" * 1000,
    "ab" * 500 + "c",
    " " * 77 + "x",
]


def _check_text(fb, tt, text, label):
    assert_same_ids(
        fb.encode_ordinary(text), tt.encode_ordinary(text), tt=tt, text=text,
        encode_fb=fb.encode_ordinary, encode_tt=tt.encode_ordinary, label=label,
    )
