"""Run the command line as users do: `python -m fastbpe ...` in a subprocess, with this
checkout first on the path (not whatever fastbpe is installed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_cli(*args, stdin: str | bytes | None = None, cwd=None, timeout: float = 300):
    """(return code, stdout bytes, stderr text) of `python -m fastbpe ARGS`."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "fastbpe", *map(str, args)],
                          input=stdin.encode("utf-8") if isinstance(stdin, str) else stdin,
                          capture_output=True, env=env, timeout=timeout, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace")


def assert_one_line_error(err: str) -> None:
    """One `fastbpe...: error: ...` line on stderr, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and ": error: " in lines[0] and lines[0].startswith("fastbpe"), err
    assert "Traceback" not in err
