"""Every ```python and ```bash block of README.md and docs/*.md runs, as written.

A block that cannot run here says so on a line of its own inside the block:
`# doc-test: skip: <reason>` (e.g. it needs ../shared data, a network, a cluster).  Shell
blocks that install packages or run the whole suite are not run (they are the README's own
install and test commands, which CI runs as `.ci/run`).  Blocks run in a fresh temporary
folder with this checkout first on the import path; `fastbpe` in a shell block is
`python -m fastbpe`."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(python|bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
SKIP = re.compile(r"^\s*# doc-test: skip: (.+)$", re.M)
NOT_RUN = (re.compile(r"\bpip install\b|\bpytest\b"),
           "installs packages or runs the whole test suite: the README's install and test "
           "commands, run by .ci/run")


def blocks():
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield pytest.param(m.group(1), m.group(2), id=f"{page.relative_to(ROOT)}:{line}")


@pytest.mark.parametrize("language,code", list(blocks()))
def test_doc_block_runs(language, code, tmp_path):
    skip = SKIP.search(code)
    if skip:
        pytest.skip(skip.group(1))
    if language != "python" and NOT_RUN[0].search(code):
        pytest.skip(NOT_RUN[1])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    if language == "python":
        command = [sys.executable, "-c", code]
    else:
        prelude = f'fastbpe() {{ "{sys.executable}" -m fastbpe "$@"; }}\nset -euo pipefail\n'
        command = ["bash", "-c", prelude + code]
    out = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, f"exit {out.returncode}\n--- stdout\n{out.stdout[-2000:]}\n--- stderr\n{out.stderr[-3000:]}"


def test_pages_have_blocks():
    # the pattern finds the blocks (a page format change must not silently run nothing)
    assert len(list(blocks())) >= 10


def test_relative_links_exist():
    missing = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not (page.parent / target).exists():
                missing.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not missing, missing


def test_architecture_names_every_package_file():
    """docs/architecture.md says what each file of the package is for (the brief: a line there
    for every new file): every tracked .py/.pyx/.pxd/.pxi/.h under fastbpe/ is named in it, in
    backticks, by its name or stem (`_pretokenize.pyx` / `.pxd` names both)."""
    try:
        out = subprocess.run(["git", "ls-files", "fastbpe"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    except OSError:
        out = None
    if out is None or out.returncode != 0 or not out.stdout.strip():
        pytest.skip("not a git checkout: the package's tracked files are unknown")
    spans = " ".join(re.findall(r"`([^`]+)`", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")))
    missing = []
    for name in out.stdout.split():
        path = pathlib.PurePosixPath(name)
        if path.suffix not in (".py", ".pyx", ".pxd", ".pxi", ".h"):
            continue
        stem = path.name.split(".")[0]
        if not re.search(r"(?<![\w.])" + re.escape(stem) + r"(?!\w)", spans):
            missing.append(name)
    assert not missing, f"add a line for each to docs/architecture.md's 'The files': {missing}"
