"""The test environment: the oracles' versions are the [test] extra's pins.  Several tests
compare with a reference library (tiktoken, regex, tokenizers, ubpe-native); a newer one may
differ for its own reasons (a newer Unicode version, a changed behaviour), and a failure there
would read as fastbpe's.  This test says so plainly instead."""
from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def _extra_pins():
    """The [test] extra's exact pins (name==version whose environment marker holds here)."""
    text = PYPROJECT.read_text(encoding="utf-8")
    block = re.search(r"^test = \[(.*?)^\]", text, re.S | re.M)
    assert block, "pyproject.toml has no [project.optional-dependencies] test = [...]"
    pins = {}
    for spec in re.findall(r'^\s*"([^"]+)"', block.group(1), re.M):
        req = Requirement(spec)
        exact = [s.version for s in req.specifier if s.operator == "=="]
        if exact and (req.marker is None or req.marker.evaluate()):
            pins[req.name] = exact[0]
    return pins


def test_installed_oracles_are_the_test_pins():
    differ = []
    for name, pinned in sorted(_extra_pins().items()):
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed = "not installed"
        if installed != pinned:
            differ.append(f"{name}: installed {installed}, [test] pins {pinned}")
    assert not differ, ("the reference libraries the tests compare with are not the pinned ones, so "
                        "comparisons may fail (or be skipped) for their reasons, not fastbpe's: "
                        + "; ".join(differ) + ". Install the pins: pip install -e '.[test]'")


def test_regex_pin_is_the_tables_source():
    """The scanner's Unicode tables were generated from the pinned regex (tools/gen_unicode_tables.py)."""
    from fastbpe import _pretokenize

    pins = _extra_pins()
    if "regex" not in pins:
        pytest.skip("no regex pin for this Python (pyproject's environment marker)")
    assert pins["regex"] == _pretokenize.REGEX_VERSION, (
        f"pyproject pins regex {pins['regex']} but the tables come from regex {_pretokenize.REGEX_VERSION}: "
        "regenerate them (docs/pretokenize.md) or move the pin back")
