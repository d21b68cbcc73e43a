"""The tests' one way to run a fresh interpreter: the command line as users run it
(`python -m fastbpe ...`, `run_cli`) and Python code (`run_python`: crashes, fresh imports,
fork and signals show up as a failure instead of killing the suite), always with this
checkout first on the path (not whatever fastbpe is installed)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_env(extra_path=(), env: dict | None = None) -> dict:
    """os.environ (plus env) with this checkout, then extra_path, first on PYTHONPATH."""
    full = dict(os.environ, **(env or {}))
    full["PYTHONPATH"] = os.pathsep.join([str(REPO), *map(str, extra_path), full.get("PYTHONPATH", "")])
    return full


def run_python(code: str, *args, extra_path=(), env: dict | None = None, check: bool = True,
               timeout: float = 300, cwd=None) -> subprocess.CompletedProcess:
    """`python -c code ARGS` (code dedented), text output; check: AssertionError with the
    output unless it exits 0."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                          capture_output=True, text=True, env=child_env(extra_path, env),
                          timeout=timeout, cwd=cwd)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def run_cli(*args, stdin: str | bytes | None = None, cwd=None, timeout: float = 300):
    """(return code, stdout bytes, stderr text) of `python -m fastbpe ARGS`."""
    env = child_env()
    proc = subprocess.run([sys.executable, "-m", "fastbpe", *map(str, args)],
                          input=stdin.encode("utf-8") if isinstance(stdin, str) else stdin,
                          capture_output=True, env=env, timeout=timeout, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def assert_one_line_error(err: str) -> None:
    """One `fastbpe...: error: ...` line on stderr, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and lines[0].startswith("fastbpe"), err
    assert "Traceback" not in err
