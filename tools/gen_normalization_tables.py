#!/usr/bin/env python3
"""Generate ``fastbpe/_normalize_tables.h``: the Unicode data of fastbpe.hf's normalizers.

Usage (from the repository root)::

    python tools/gen_normalization_tables.py            # writes fastbpe/_normalize_tables.h
    python tools/gen_normalization_tables.py --check    # exit 1 if the committed file is stale

HF tokenizers (0.23) takes its normalizers from two places, on two Unicode versions:

* NFC/NFD/NFKC/NFKD come from the `unicode-normalization-alignments` crate 0.1.12, whose
  tables are Unicode **9.0.0** (its `UNICODE_VERSION`): a character assigned later has no
  decomposition, combining class 0 and composes with nothing.  So NFC leaves U+11935 U+11930
  (Unicode 13) as two characters where Python's unicodedata composes them.
* Lowercase is Rust's `char::to_lowercase` from the Rust that built the wheel: Unicode
  **17.0** for tokenizers 0.23.3 (it lowercases Beria Erfe, new in 17.0).

So the tables are taken from those versions, not from the running Python:

* Unicode 9.0 properties (combining classes, decompositions, primary composites) from a
  Python whose `unicodedata` is 9.0.0 (CPython 3.6), run as a subprocess: `--ucd9-python`
  (default: `python3.6`, or pyenv's 3.6).  A primary composite is a
  canonical pair that that Python's NFC composes (exclusions and singletons drop out).
* Lowercase mappings from `tokenizers` itself (its Lowercase on every code point): it is the
  reference fastbpe matches, and no other package here carries Unicode 17 case mappings.
  `--check` compares with the committed file, so a new tokenizers on another Unicode version
  shows up as a stale table.

Layout: two-level tables (`index[cp >> 8]` names a 256-entry block; blocks deduplicated).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "fastbpe" / "_normalize_tables.h"
UCD_VERSION = "9.0.0"
LOWERCASE_VERSION = "17.0.0 (Rust char::to_lowercase in tokenizers 0.23.3)"

# printed as JSON by the Unicode 9.0 Python: per assigned code point with data,
# [ccc, canonical full decomposition, compatibility full decomposition], the composites, and
# the combining marks (General_Category M: StripAccents removes them, the crate's is_combining_mark)
_DUMP = r'''
import json, sys, unicodedata as u
assert u.unidata_version == "9.0.0", u.unidata_version
out, comp = {}, {}
for cp in range(0x110000):
    c = chr(cp)
    if 0xD800 <= cp < 0xE000 or 0xAC00 <= cp < 0xAC00 + 11172:
        continue  # surrogates; Hangul syllables are algorithmic
    ccc = u.combining(c)
    d = u.decomposition(c)
    canon = u.normalize("NFD", c)
    compat = u.normalize("NFKD", c)
    if ccc or d:
        out[cp] = [ccc, [ord(x) for x in canon] if canon != c else None,
                   [ord(x) for x in compat] if compat != canon else None]
    if d and not d.startswith("<"):
        parts = [chr(int(x, 16)) for x in d.split()]
        if len(parts) == 2 and u.normalize("NFC", "".join(parts)) == c:
            comp["%d,%d" % (ord(parts[0]), ord(parts[1]))] = cp
marks = [cp for cp in range(0x110000) if u.category(chr(cp)).startswith("M")]
json.dump({"version": u.unidata_version, "chars": out, "compose": comp, "marks": marks}, sys.stdout)
'''


def _ucd9_command(arg: str | None) -> list:
    if arg:
        return shlex.split(arg)
    probe = "import unicodedata; print(unicodedata.unidata_version)"
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(pyenv.glob("versions/3.6*/bin/python3"))
    for cand in [["python3.6"]] + [[str(path)] for path in found]:
        try:
            run = subprocess.run(cand + ["-c", probe], capture_output=True, text=True)
        except OSError:
            continue
        if run.returncode == 0 and run.stdout.strip() == UCD_VERSION:
            return cand
    return ["python3.6"]


def load_ucd9(command: list) -> dict:
    run = subprocess.run(command + ["-c", _DUMP], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"cannot read Unicode 9.0 data with {' '.join(command)!r} (needs a Python whose "
                 f"unicodedata is 9.0.0, e.g. CPython 3.6; pass --ucd9-python):\n{run.stderr[-2000:]}")
    data = json.loads(run.stdout)
    if data["version"] != UCD_VERSION:
        sys.exit(f"{' '.join(command)} has unicodedata {data['version']}, not {UCD_VERSION}")
    return data


def load_lowercase() -> dict:
    try:
        from tokenizers import normalizers
    except ImportError:
        sys.exit("the lowercase table is read from the tokenizers package: pip install tokenizers==0.23.3")
    lower = normalizers.Lowercase()
    out = {}
    for cp in range(0x110000):
        if 0xD800 <= cp < 0xE000:
            continue
        c = chr(cp)
        low = lower.normalize_str(c)
        if low != c:
            out[cp] = [ord(x) for x in low]
    return out


def _two_level(values: dict, default: int, ctype: str, name: str) -> str:
    """index[cp >> 8] -> block; blocks[block * 256 + (cp & 255)] -> value."""
    blocks, index = [], []
    seen: dict = {}
    for hi in range(0x110000 >> 8):
        block = tuple(values.get((hi << 8) | lo, default) for lo in range(256))
        if block not in seen:
            seen[block] = len(blocks)
            blocks.append(block)
        index.append(seen[block])
    itype = "uint8_t" if len(blocks) <= 256 else "uint16_t"
    lines = [f"static const {itype} {name}_index[{len(index)}] = {{"]
    lines += _rows(index)
    lines.append("};")
    lines.append(f"static const {ctype} {name}_blocks[{len(blocks) * 256}] = {{")
    lines += _rows([v for b in blocks for v in b])
    lines.append("};")
    return "\n".join(lines)


def _rows(values: list, per_line: int = 24) -> list:
    return ["    " + ", ".join(str(v) for v in values[k:k + per_line]) + ","
            for k in range(0, len(values), per_line)] or ["    0,"]


def generate(ucd: dict, lowercase: dict) -> str:
    chars = {int(k): v for k, v in ucd["chars"].items()}
    ccc = {cp: v[0] for cp, v in chars.items() if v[0]}
    # decompositions: entry k (1-based) -> (canonical offset, length, compatibility offset, length)
    pool, entries, entry_of = [], [(0, 0, 0, 0)], {}
    for cp in sorted(chars):
        _, canon, compat = chars[cp]
        if canon is None and compat is None:
            continue
        co, cl = (len(pool), len(canon)) if canon else (0, 0)
        pool += canon or []
        ko, kl = (len(pool), len(compat)) if compat else (0, 0)
        pool += compat or []
        entry_of[cp] = len(entries)
        entries.append((co, cl, ko, kl))
    pairs = sorted(((int(k.split(",")[0]) << 21) | int(k.split(",")[1]), v) for k, v in ucd["compose"].items())
    low_pool, low_entries, low_of = [], [(0, 0)], {}
    for cp in sorted(lowercase):
        low_of[cp] = len(low_entries)
        low_entries.append((len(low_pool), len(lowercase[cp])))
        low_pool += lowercase[cp]
    if len(entries) >= 65536 or len(low_entries) >= 65536:
        raise SystemExit("tables too large for uint16 entry ids")
    parts = [
        "/* Generated by tools/gen_normalization_tables.py: do not edit.",
        f" * NFC/NFD/NFKC/NFKD: Unicode {UCD_VERSION} (HF tokenizers' unicode-normalization-alignments).",
        f" * Lowercase: Unicode {LOWERCASE_VERSION}.",
        f" * Combining marks (StripAccents): Unicode {UCD_VERSION} General_Category M. */",
        "#include <stdint.h>",
        f'#define FB_NORM_UNICODE_VERSION "{UCD_VERSION}"',
        _two_level(ccc, 0, "uint8_t", "fb_ccc"),
        _two_level(entry_of, 0, "uint16_t", "fb_decomp"),
        f"static const uint32_t fb_decomp_entries[{len(entries)}][4] = {{",
        *["    {%d, %d, %d, %d}," % e for e in entries],
        "};",
        f"static const uint32_t fb_decomp_pool[{max(len(pool), 1)}] = {{",
        *_rows(pool),
        "};",
        f"#define FB_N_COMPOSE {len(pairs)}",
        f"static const uint64_t fb_compose_keys[{len(pairs)}] = {{",
        *_rows([f"{k}ULL" for k, _ in pairs], 8),
        "};",
        f"static const uint32_t fb_compose_values[{len(pairs)}] = {{",
        *_rows([v for _, v in pairs]),
        "};",
        _two_level(low_of, 0, "uint16_t", "fb_lower"),
        f"static const uint32_t fb_lower_entries[{len(low_entries)}][2] = {{",
        *["    {%d, %d}," % e for e in low_entries],
        "};",
        f"static const uint32_t fb_lower_pool[{max(len(low_pool), 1)}] = {{",
        *_rows(low_pool),
        "};",
        _two_level({cp: 1 for cp in ucd["marks"]}, 0, "uint8_t", "fb_mark"),
    ]
    return "\n".join(parts) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed header is stale")
    ap.add_argument("--ucd9-python", help="command of a Python whose unicodedata is 9.0.0")
    args = ap.parse_args()
    text = generate(load_ucd9(_ucd9_command(args.ucd9_python)), load_lowercase())
    if args.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT} is stale: run python tools/gen_normalization_tables.py", file=sys.stderr)
            return 1
        return 0
    tmp = OUT.with_suffix(".h.tmp")
    tmp.write_text(text)
    os.replace(tmp, OUT)
    print(f"wrote {OUT} ({len(text)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
