"""The pre-tokenizer's Unicode tables against `regex` (plus the override list of code points
where they follow tiktoken's Unicode version) and against tiktoken's own classes; the generator
that writes them (tools/gen_unicode_tables.py)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import regex

from fastbpe import _pretokenize as pt
from fastbpe import _testing as testing

from pretokenize_cases import GEN, OVERRIDE_META, OVERRIDE_RANGES, REGEX_DIFFERS, ROOT, assert_same


# ---------------------------------------------------------------------------------------
# Unicode tables
# ---------------------------------------------------------------------------------------


def _regex_mask(cls: str) -> np.ndarray:
    text = "".join(map(chr, range(0x110000)))
    mask = np.zeros(0x110000, dtype=bool)
    for m in regex.finditer("(?:%s)+" % cls, text):
        mask[m.start() : m.end()] = True
    return mask


FLAG_CLASSES = [
    ("L", r"\p{L}"),
    ("N", r"\p{N}"),
    ("S", r"\s"),
    ("U", r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]"),
    ("W", r"[\p{Ll}\p{Lm}\p{Lo}\p{M}]"),
    ("M", r"\p{M}"),
    ("LT", r"\p{Lt}"),
    ("LM", r"\p{Lm}"),
]


@pytest.mark.regex_oracle
@pytest.mark.parametrize("flag,cls", FLAG_CLASSES)
def test_tables_equal_regex_except_overrides(flag, cls):
    """The tables are regex's classes, except on the override list, which gives both
    regex's flags (checked here) and tiktoken's (what the tables must hold)."""
    bit = pt.FLAG_BITS[flag]
    have = (testing.code_point_flags() & bit) > 0
    want = _regex_mask(cls)
    for first, last, regex_flags, tiktoken_flags in OVERRIDE_RANGES:
        assert (want[first : last + 1] == bool(regex_flags & bit)).all(), "stale override U+%04X" % first
        want[first : last + 1] = bool(tiktoken_flags & bit)
    bad = np.nonzero(have != want)[0]
    assert len(bad) == 0, "%s differs at %s" % (flag, [hex(c) for c in bad[:20]])


def test_tables_unicode_version():
    assert pt.UNICODE_SOURCE == "tiktoken", "the committed tables follow tiktoken (gen_unicode_tables.py)"
    assert pt.UNICODE_VERSION == OVERRIDE_META["tiktoken-unicode"] == "16.0"
    assert pt.REGEX_UNICODE_VERSION == OVERRIDE_META["regex-unicode"]
    assert len(REGEX_DIFFERS) == int(OVERRIDE_META["code-points"])
    if pt.REGEX_UNICODE_VERSION == "17.0":
        assert {0x088F, 0x0295, 0x323B0, 0x33479, 0x16FF4, 0x1E6F5} <= set(REGEX_DIFFERS)


def test_tables_equal_tiktoken_classes():
    """Every flag of every code point (surrogates aside) equals what tiktoken's own regex
    engine says, asked directly (tools/compare_tiktoken_unicode.py)."""
    tiktoken = pytest.importorskip("tiktoken")
    import compare_tiktoken_unicode as C

    have = testing.code_point_flags()
    want = C.tiktoken_flags()
    want[0xD800:0xE000] = 0  # Cs; a Rust string cannot hold them
    bad = np.nonzero(have != want)[0]
    assert len(bad) == 0, (
        "tables (made for tiktoken %s, Unicode %s) differ from the installed tiktoken %s at %s; "
        "refresh: python tools/compare_tiktoken_unicode.py --emit-ranges && python tools/gen_unicode_tables.py"
        % (OVERRIDE_META.get("tiktoken-version"), pt.UNICODE_VERSION, tiktoken.__version__, ["U+%04X" % c for c in bad[:20]]))
    assert pt.UNICODE_VERSION == C.tiktoken_unicode_version()
    assert GEN.parse_folds(OVERRIDE_META["contraction-folds"]) == C.tiktoken_contraction_folds()


@pytest.mark.regex_oracle
def test_tables_header_is_up_to_date():
    header = ROOT / "fastbpe" / "_unicode_tables.h"
    if not header.exists():
        pytest.skip("not running from a source tree")
    r = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), "--check"], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.regex_oracle
def test_generator_regex_mode_equals_regex(tmp_path):
    """--unicode regex gives regex's tables: the flag arrays differ from the committed
    ones exactly on the override list."""
    text = GEN.all_code_points()
    flags = GEN.compute_flags(text)
    applied, meta, n = GEN.apply_overrides(flags)
    assert n == len(REGEX_DIFFERS)
    assert (applied == testing.code_point_flags()).all()
    assert sorted(np.nonzero(applied != flags)[0].tolist()) == REGEX_DIFFERS
    out = tmp_path / "t.h"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_unicode_tables.py"), "--unicode", "regex", "-o", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    h = out.read_text()
    assert '#define FB_UNICODE_SOURCE "regex"' in h and '#define FB_UNICODE_VERSION "%s"' % GEN.unicode_version() in h


def test_generator_refuses_stale_overrides(tmp_path):
    lines = (ROOT / "tools" / "tiktoken_unicode_overrides.txt").read_text().splitlines()
    bad = tmp_path / "o.txt"
    bad.write_text("\n".join(lines) + "\n0041..0041  19 00\n")  # regex gives 'A' 09 (Lu)
    with pytest.raises(GEN.StaleOverrides, match="U\\+0041"):
        GEN.render("tiktoken", str(bad))
    bad.write_text("\n".join(l.replace("regex-unicode: ", "regex-unicode: 1") for l in lines) + "\n")
    with pytest.raises(GEN.StaleOverrides, match="Unicode"):
        GEN.render("tiktoken", str(bad))


def test_contraction_case_folding_follows_regex():
    # Every code point regex matches case-insensitively with a contraction letter.
    text = "".join(map(chr, range(0x110000)))
    folds = {}
    for letter in "sdmtlvre":
        folds[letter] = [m.group() for m in regex.finditer("(?i:%s)" % letter, text)]
    assert "\u017f" in folds["s"]
    cases = []
    for letter, chars in folds.items():
        for c in chars:
            cases += ["'" + c, "x'" + c + "x", "'" + c + "e", "'" + c + "l", "'" + c + "E", "'" + c + "\u017f"]
    cases += ["'" + a + b for a in "lLrRvV" for b in "lLeE\u017fKk\u212a"]
    assert_same("|".join(cases))
    for c in cases:
        assert_same(c)
