"""Atomic file writes: a temporary file in the target's directory, then ``os.replace``.

A reader never sees a half-written file, and a failed write leaves the old file alone.
"""
from __future__ import annotations

import os
import tempfile


def atomic_write(path, data, *, encoding: str = "utf-8") -> None:
    """Write ``data`` (str or bytes) to ``path`` atomically.  Raises OSError when the
    directory is missing or not writable."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    if isinstance(data, str):
        data = data.encode(encoding)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600 files; give the result the usual permissions
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
