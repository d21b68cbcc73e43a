"""Atomic file writes: write a temporary file beside the target, then rename it over.

Every file fastbpe writes (models, corpora, CLI output) goes through here.  A crash
mid-write leaves the old file (or none), never a half-written one.  The result is what
`open(path, "w")` would give otherwise: a new file gets 0o666 minus the umask, an existing
one keeps its mode, and a symlink is written through (its target is replaced, the link
stays).  Only a regular file (or nothing) is ever renamed over: a device (/dev/null,
/dev/stdout), a FIFO or a Unix socket is opened and written to, as the shell's `>` does,
since replacing it would destroy it.  Temporary files are named
`.<name>.fastbpe-tmp-<pid>-<random>`; those left by a killed process are removed by the
next write beside them.  `durable=False` skips the fsyncs (~3 ms a file on ext4): for files
checked when read, such as fastbpe's caches, which a crash may only cost a rebuild.
Only cheap modules are imported up front (`socket` where a socket is written, no `re`,
`secrets` or `typing`): loading a tokenizer writes its cache files through here.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
TYPE_CHECKING = False   # (typing itself is not imported at run time)
if TYPE_CHECKING:
    from typing import BinaryIO, Iterator

_TMP_MARK = ".fastbpe-tmp-"


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, durable: bool = True) -> None:
    atomic_write_many({path: data}, durable=durable)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_many(files: dict, *, durable: bool = True) -> None:
    """Write several files as one save: {path: bytes}.  Every file is written and synced
    to a temporary first, then all are renamed into place, so an error while writing any
    of them (disk full, bad directory) changes none.  The renames themselves are not one
    atomic step: a crash between them can leave some files new and some old."""
    plan = []  # (temporary path, final path)
    through = []  # (special file, data): written after every temporary, before the renames
    try:
        for path, data in files.items():
            if is_special_file(path):
                through.append((path, data))
                continue
            target = _resolve(path)
            _remove_stale_temporaries(target)
            plan.append((_write_temporary(target, data, durable), target))
        for path, data in through:
            with _written_through(path) as f:
                f.write(data)
    except BaseException:
        for tmp, _ in plan:
            _unlink_quietly(tmp)
        raise
    _rename_into_place(plan, durable=durable)


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file to stream into; it appears at `path` (mode, symlink and temporary
    handling as above) only when the block ends without an exception (flushed and fsynced
    first), and is removed otherwise.  A device, FIFO or socket is written to directly."""
    if is_special_file(path):
        with _written_through(path) as f:
            yield f
        return
    target = _resolve(path)
    _remove_stale_temporaries(target)
    with _synced_temporary(target) as (tmp, f):
        yield f
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_directory(os.path.dirname(target))


@contextlib.contextmanager
def atomic_file_set(paths) -> Iterator[list]:
    """Several files streamed as one save: a list of binary files, one per path, in order.
    When the block ends without an exception they are all renamed into place (else all
    removed).  The last path is the set's commit mark: an old file there is removed before
    any other file is replaced, and the new one is renamed into place last, so a mark
    exists only beside a complete set (readers check for it and what it records)."""
    plan = []  # (temporary path, final path) of the regular files
    with contextlib.ExitStack() as stack:
        files = []
        for path in paths:
            if is_special_file(path):
                files.append(stack.enter_context(_written_through(path)))
                continue
            target = _resolve(path)
            _remove_stale_temporaries(target)
            tmp, f = stack.enter_context(_synced_temporary(target))
            files.append(f)
            plan.append((tmp, target))
        yield files
    # every temporary is flushed, synced and closed here (an exception removed them)
    _rename_into_place(plan, remove_mark_first=True)


def _rename_into_place(plan, remove_mark_first: bool = False, durable: bool = True) -> None:
    """Rename each (temporary, final path) of plan into place, then sync their folders (if
    durable); on any error remove every temporary.  remove_mark_first: the last final path is a set's
    commit mark, removed before anything is replaced (see atomic_file_set)."""
    try:
        if remove_mark_first and plan:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(plan[-1][1])
        for tmp, target in plan:
            os.replace(tmp, target)
    except BaseException:
        for tmp, _ in plan:
            _unlink_quietly(tmp)
        raise
    if durable:
        for directory in {os.path.dirname(t) for _, t in plan}:
            _fsync_directory(directory)


def is_special_file(path) -> bool:
    """Does `path` (through symlinks) name something that exists and is not a regular
    file: a device, FIFO or socket, written to in place?  A directory is refused here."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder, not a file", os.fspath(path))
    return not stat.S_ISREG(mode)


@contextlib.contextmanager
def _written_through(path):
    """A binary file that writes straight into the device, FIFO or socket at `path`
    (opened through the original name: /dev/stdout's link only resolves when opened)."""
    if stat.S_ISSOCK(os.stat(path).st_mode):
        import socket
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(os.fspath(path))
            with sock.makefile("wb") as f:
                yield f
            sock.shutdown(socket.SHUT_WR)
        return
    # no O_CREAT, no O_TRUNC: it exists, and truncating means nothing to a device or FIFO
    with os.fdopen(os.open(path, os.O_WRONLY | _O_BINARY), "wb") as f:
        yield f


def _resolve(path) -> str:
    """The file to replace: a symlink's final target (so the link survives), as an
    absolute path.  A missing folder is an error that names the folder (not the
    temporary file that could not be made in it)."""
    path = os.path.abspath(os.fspath(path))
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        problem = "is not a folder" if os.path.exists(directory) else "no such folder"
        raise FileNotFoundError(errno.ENOENT, f"cannot write here: {problem}: {directory}",
                                os.fspath(path))
    return target


@contextlib.contextmanager
def _synced_temporary(target: str, durable: bool = True):
    """(path, binary file) of a new temporary beside `target` with the mode the target
    will have; flushed (and fsynced if durable) when the block ends, removed if it raises."""
    directory, name = os.path.split(target)
    tmp = os.path.join(directory, f".{name}{_TMP_MARK}{os.getpid()}-{os.urandom(4).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            if hasattr(os, "fchmod"):
                os.fchmod(f.fileno(), _mode_for(target))
            else:  # Windows (before Python 3.13): only the read-only bit, by name
                os.chmod(tmp, _mode_for(target))
            yield tmp, f
            f.flush()
            if durable:
                os.fsync(f.fileno())
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _write_temporary(target: str, data: bytes, durable: bool = True) -> str:
    with _synced_temporary(target, durable) as (tmp, f):
        f.write(data)
    return tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


# Windows opens a descriptor in text mode unless told otherwise (a newline would become CRLF)
_O_BINARY = getattr(os, "O_BINARY", 0)


def _mode_for(target: str) -> int:
    try:
        return stat.S_IMODE(os.stat(target).st_mode)  # as open("w") on an existing file
    except FileNotFoundError:
        return 0o666 & ~_umask()


def _umask() -> int:
    # /proc tells it without changing it; os.umask() can only read it by setting it, which
    # would race with other threads creating files
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove_stale_temporaries(target: str) -> None:
    """Delete temporaries for `target` whose writing process is gone (killed mid-save)."""
    directory, name = os.path.split(target)
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    prefix = f".{name}{_TMP_MARK}"
    for entry in entries:
        pid, dash, suffix = entry[len(prefix):].partition("-")
        if (not entry.startswith(prefix) or not dash or not pid.isdigit() or not pid.isascii()
                or not _is_hex(suffix) or process_alive(int(pid))):
            continue
        try:
            os.unlink(os.path.join(directory, entry))
        except OSError:
            pass


def _is_hex(text: str) -> bool:
    return bool(text) and text.isascii() and all(c in "0123456789abcdef" for c in text)


def process_alive(pid: int) -> bool:
    """Whether process `pid` runs (True when that cannot be told: Windows, or ours)."""
    if pid == os.getpid() or os.name == "nt":
        # Windows has no probe: os.kill(pid, 0) sends CTRL_C_EVENT (0) to a process group,
        # or terminates the process; another's temporaries are kept there
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def _fsync_directory(directory: str) -> None:
    # makes the renames durable; not possible on every platform or file system
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
