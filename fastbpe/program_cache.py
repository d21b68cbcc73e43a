"""Compiled scanner programs kept on disk, so a file's second load does not compile its splits.

Compiling one split regex (`pattern_program.compile_pattern`, its automaton by `pattern_dfa`)
costs ~10-40 ms and imports numpy and `regex` (~280M instructions together): more than HF
tokenizers' whole load of Falcon's or CLIP's tokenizer.json.  `compiled(key, build)` returns
what `build()` returned, kept per key under $FASTBPE_CACHE_DIR (empty: no cache; unset:
$XDG_CACHE_HOME/fastbpe or ~/.cache/fastbpe) as a `CachedProgram`: the arrays
`_scan_program.register` reads and the few facts front ends ask (`total`, `run`, `tables`,
`features`), read back with `array` and `json`, no numpy.  `build()` returning None (no program
for this key) is kept too.

The file name hashes the key with `code_version()`: this package's compiler sources, the
`regex` and Oniguruma builds whose character classes a program holds, the byte order; any
change makes a new folder; a write removes the folders of other versions (`programs-*`,
`kept-*`, `oniguruma-*`) that nothing has written to for `STALE_DAYS` (see `store`).  A file
that does not read back whole is ignored and compiled again."""
from __future__ import annotations

import json
import os
import sys
import time
import zlib
from array import array

FORMAT = 2   # 2: the crc32 covers the whole file (1 checked the arrays only: a flipped header bit ran)
# the sources whose change can change a compiled program (relative to the package)
_SOURCES = ("pattern_program.py", "program_items.py", "pattern_dfa.py", "pretokenize.py", "plan.py", "_class_bits.pxd",
            "hf/pre_tokenizers.py", "hf/punctuation_ranges.py", "hf/oniguruma.py")
_NONE = b"none\n"   # build() gave None


def cache_root() -> str | None:
    """The cache folder: $FASTBPE_CACHE_DIR (empty: None), else $XDG_CACHE_HOME/fastbpe or
    ~/.cache/fastbpe."""
    root = os.environ.get("FASTBPE_CACHE_DIR")
    if root is None:
        root = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                            "fastbpe")
    return root or None


_VERSION: list = []


def code_version() -> str:
    """A digest of everything a compiled program depends on besides its key."""
    if not _VERSION:
        h = _Digest(f"{FORMAT} {sys.byteorder} {sys.version_info[:2]}".encode())
        here = os.path.dirname(os.path.abspath(__file__))
        for name in _SOURCES:
            try:
                with open(os.path.join(here, name), "rb") as f:
                    h.update(f.read())
            except OSError:
                h.update(b"missing " + name.encode())
        # the matcher that reads the arrays (its sources, or the built module alone when installed)
        for entry in sorted(os.scandir(here), key=lambda e: e.name):
            if entry.name.startswith(("_scan_", "_class_bits")) and entry.is_file():
                st = entry.stat()
                h.update(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}".encode())
        h.update(_package_stamp("regex").encode())
        # Oniguruma's build: its module and C extension (one file each beside every other
        # package: stamped alone, and not imported, which a load from the cache never needs)
        h.update(_module_stamp("onigurumacffi").encode() + _module_stamp("_onigurumacffi").encode())
        _VERSION.append(h.hexdigest())
    return _VERSION[0]


class _Digest:
    """crc32 and adler32 of the bytes fed, 64 bits: names cache files (not a security boundary:
    each file holds its whole key, checked when read, and only this user writes the folder)."""

    def __init__(self, data: bytes = b""):
        self.crc, self.adler, self.n = 0, 1, 0
        self.update(data)

    def update(self, data: bytes) -> None:
        self.crc, self.adler = zlib.crc32(data, self.crc), zlib.adler32(data, self.adler)
        self.n += len(data)

    def hexdigest(self) -> str:
        return f"{self.crc:08x}{self.adler:08x}{self.n & 0xFFFF:04x}"


def _package_stamp(name: str) -> str:
    """Which build of an installed package (its files' names, sizes and times), without importing it."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return f"{name}: absent"
    folder = os.path.dirname(spec.origin)
    out = []
    try:
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            if entry.is_file():
                st = entry.stat()
                out.append(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return f"{name}: {spec.origin}"
    return f"{name}: " + " ".join(out)


def _module_stamp(name: str) -> str:
    """Which build of one installed module file (its name, size and time), without importing it."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
        st = os.stat(spec.origin)
    except (ImportError, ValueError, AttributeError, TypeError, OSError):
        return f"{name}: absent"
    return f"{name}: {os.path.basename(spec.origin)}:{st.st_size}:{st.st_mtime_ns}"


def _path(key) -> str | None:
    root = cache_root()
    if root is None:
        return None
    digest = _Digest(repr(key).encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(root, f"programs-{code_version()}", f"{digest}.prog")


_MISSING = object()


def compiled(key, build):
    """`build()` (a compiled program, or None), from the disk cache when an earlier process
    built it under the same `key` (a tuple of str/int/bool/None: what the program depends
    on besides the code) and the same `code_version()`."""
    path = _path(key)
    if path is not None:
        got = _read(path, key)
        if got is not _MISSING:
            return got
    prog = build()
    if path is not None:
        try:
            data = _NONE if prog is None else _dump(key, prog)
        except (TypeError, ValueError, AttributeError):
            return prog      # a program this format cannot hold: compiled each time
        store(path, data)    # (a read-only or full cache: compiled again next time)
    return prog


# A Split/Replace regex HF compiles at load (an invalid one fails there) is compiled at load by
# Oniguruma too (hf/oniguruma.py): ~5M instructions with cffi's import, for a check whose answer
# depends only on the pattern and the Oniguruma build.  Once it compiled, a file in the
# programs folder (whose version stamps that build) says so, and later loads skip it.
_ONIG_MAGIC = b"FBONIG1\n"


def _regex_path(pattern: str) -> tuple[str | None, bytes]:
    text = pattern.encode("utf-8", "surrogatepass")
    root = cache_root()
    if root is None:
        return None, text
    name = _Digest(b"oniguruma compiles " + text).hexdigest()
    return os.path.join(root, f"programs-{code_version()}", f"{name}.onig"), text


def regex_compiled_before(pattern: str) -> bool:
    """Whether this Oniguruma build compiled `pattern` in an earlier process (note_regex_compiled)."""
    path, text = _regex_path(pattern)
    if path is None:
        return False
    try:
        with open(path, "rb") as f:
            return f.read() == _ONIG_MAGIC + text
    except OSError:
        return False


def note_regex_compiled(pattern: str) -> None:
    """Keep that Oniguruma compiled `pattern` (a read-only or full cache: compiled again next time)."""
    path, text = _regex_path(pattern)
    if path is not None:
        store(path, _ONIG_MAGIC + text)


STALE_DAYS = 7   # another version's folder unwritten this long is removed by the next write
# written into every version folder fastbpe makes: only a folder holding it is ever removed (the
# cache root may be a folder shared with other programs, whose `programs-2024/` is not ours)
MARKER = ".fastbpe-cache"


def store(path: str, data: bytes) -> bool:
    """Write a cache file whole (a temporary renamed over `path`: a reader sees the old file,
    the new one or none), creating its folder; False when the cache cannot be written.
    No fsync: every cache file is checked when read, so a crash costs a rebuild only.
    Then the other versions' folders beside this one are removed if stale (`_remove_stale`)."""
    from .formats.atomic import atomic_write_bytes
    folder = os.path.dirname(path)
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder, exist_ok=True)
            open(os.path.join(folder, MARKER), "ab").close()
        atomic_write_bytes(path, data, durable=False)   # (also removes a killed writer's temporaries)
    except OSError:
        return False
    _remove_stale(os.path.dirname(folder), os.path.basename(folder))
    return True


def _remove_stale(root: str, current: str) -> None:
    """Remove the folders `<prefix>-*` beside `current` (`<prefix>-<version>`) that no process
    has written to for STALE_DAYS: a rebuild or upgrade of fastbpe, `regex` or Oniguruma
    starts a new folder and nothing reads the old one again, unless another install of
    another version shares this cache.  That install loses nothing but time: a folder is
    first renamed away whole (a process that has a file open still reads it; one that opens a
    file after gets "no such file", and any process writing into it gets an OSError, both of
    which mean "build again" to every reader and writer here), and then deleted; a folder it
    still writes to stays, since its writes renew the folder's mtime.  Only folders holding
    MARKER (made by `store`) are touched: a same-named folder of another program is not ours."""
    from .formats.atomic import process_alive
    prefix = current.split("-", 1)[0] + "-"
    limit = time.time() - STALE_DAYS * 86400
    try:
        entries = list(os.scandir(root))
    except OSError:
        return
    for entry in entries:
        name = entry.name
        try:
            if name.startswith(prefix) and name != current and entry.is_dir(follow_symlinks=False):
                if (entry.stat(follow_symlinks=False).st_mtime >= limit
                        or not os.path.isfile(os.path.join(entry.path, MARKER))):
                    continue
                doomed = os.path.join(root, f".{name}.removing-{os.getpid()}")
                os.rename(entry.path, doomed)   # fails if another process took it first
            elif name.startswith(f".{prefix}") and ".removing-" in name:
                pid = name.rsplit("-", 1)[1]    # a remover killed between rename and delete
                if (not pid.isdigit() or process_alive(int(pid))
                        or not os.path.isfile(os.path.join(entry.path, MARKER))):
                    continue
                doomed = entry.path
            else:
                continue
        except OSError:
            continue
        import shutil
        shutil.rmtree(doomed, ignore_errors=True)


def _read(path: str, key):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return _MISSING
    if data == _NONE:
        return None
    try:
        return _load(key, data)
    except (ValueError, KeyError, TypeError, IndexError, EOFError):
        return _MISSING      # a broken or foreign file: compile again (and overwrite it)


# ------------------------------------------------------------------ the file format
# b"FBPROG2\n", an 8-byte header length, a JSON header (the scalars and each array's typecode
# and length), the arrays' bytes one after another, then the crc32 of everything before it.

_MAGIC = b"FBPROG%d\n" % FORMAT


class _Arrays:
    def __init__(self):
        self.specs, self.chunks = [], []

    def add(self, arr, code: str) -> int:
        data = memoryview(arr).cast("B").tobytes() if not isinstance(arr, bytes) else arr
        if len(data) % array(code).itemsize:
            raise ValueError("array size")
        self.specs.append((code, len(data)))
        self.chunks.append(data)
        return len(self.specs) - 1


def _dump(key, prog) -> bytes:
    arrays = _Arrays()
    tables = [(int(lo), int(hi), arrays.add(index, "H"), arrays.add(blocks, "B"))
              for lo, hi, index, blocks in prog.tables]
    dfa = getattr(prog, "dfa", None)
    head = {
        "key": repr(key), "pattern": prog.pattern, "features": sorted(prog.features), "total": bool(prog.total),
        "run": list(prog.run) if prog.run is not None else None, "root": int(prog.root),
        "root_first": int(prog.root_first), "n_items": len(prog.items),
        "byte_level": bool(getattr(prog, "byte_level", False)), "drop": getattr(prog, "drop", None),
        "items": arrays.add(prog.item_array, "i"),
        "seq": [arrays.add(a, "i") for a in prog.seq_arrays],
        "alt": [arrays.add(a, "i") for a in prog.alt_arrays],
        "tables": tables,
        "dfa": None if dfa is None else {
            "trans": arrays.add(dfa.trans, "i"), "low": arrays.add(dfa.low, "B"),
            "index": arrays.add(dfa.index, "H"), "rows": arrays.add(dfa.rows, "B"),
            "invalid": int(dfa.invalid), "eot": int(dfa.eot),
            "bytes": arrays.add(dfa.byte_table(), "h") if hasattr(dfa, "byte_table") else None},
        "arrays": arrays.specs,
    }
    text = json.dumps(head).encode("utf-8", "surrogatepass")
    data = b"".join([_MAGIC, len(text).to_bytes(8, "little"), text, *arrays.chunks])
    return data + zlib.crc32(data).to_bytes(4, "little")   # a flipped bit anywhere: compiled again, never run


def _load(key, data: bytes) -> "CachedProgram":
    if not data.startswith(_MAGIC):
        raise ValueError("not a program file")
    end = len(data) - 4
    if end < 0 or zlib.crc32(memoryview(data)[:end]).to_bytes(4, "little") != data[end:]:
        raise ValueError("checksum")
    at = len(_MAGIC)
    n = int.from_bytes(data[at:at + 8], "little")
    head = json.loads(data[at + 8:at + 8 + n].decode("utf-8", "surrogatepass"))
    if head["key"] != repr(key):
        raise ValueError("another key")
    at += 8 + n
    arrays = []
    for code, size in head["arrays"]:
        if at + size > end:
            raise EOFError
        a = array(code)     # (an array, not bytes, for "B" too: numpy reads it as numbers)
        a.frombytes(data[at:at + size])
        arrays.append(a)
        at += size
    if at != end:
        raise ValueError("trailing bytes")
    return CachedProgram(head, arrays)


class _Dfa:
    """A cached automaton: the fields `_scan_program` reads (see `pattern_dfa.Dfa`)."""

    def __init__(self, trans, low, index, rows, invalid: int, eot: int, by_byte=None):
        self.trans, self.low, self.index, self.rows = trans, low, index, rows
        self.invalid, self.eot = invalid, eot
        self.width = eot + 1
        self.n_states = len(trans) // self.width
        self._by_byte = by_byte

    def byte_table(self):
        """The transition of each state on each byte (`pattern_dfa.Dfa.byte_table`)."""
        if self._by_byte is None:
            w, trans = self.width, self.trans
            self._by_byte = array("h", [trans[s * w + c] for s in range(self.n_states) for c in self.low])
        return self._by_byte


class CachedProgram:
    """A compiled program read back from the cache: what `_scan_program.register` takes and
    front ends read of a `pattern_program.Program` (not its parse tree: its automaton, or
    None when it needs backtracking, is already in `dfa`)."""

    def __init__(self, head: dict, arrays: list):
        self.pattern = head["pattern"]
        self.features = frozenset(head["features"])
        self.total = head["total"]
        self.run = tuple(head["run"]) if head["run"] is not None else None
        self.root, self.root_first = head["root"], head["root_first"]
        self.items = range(head["n_items"])      # register reads its length
        self.byte_level, self.drop = head["byte_level"], head["drop"]
        self.item_array = arrays[head["items"]]
        self.seq_arrays = tuple(arrays[i] for i in head["seq"])
        self.alt_arrays = tuple(arrays[i] for i in head["alt"])
        self.tables = [(lo, hi, arrays[i], arrays[b]) for lo, hi, i, b in head["tables"]]
        d = head["dfa"]
        self.dfa = None if d is None else _Dfa(arrays[d["trans"]], arrays[d["low"]], arrays[d["index"]],
                                               arrays[d["rows"]], d["invalid"], d["eot"],
                                               None if d.get("bytes") is None else arrays[d["bytes"]])

    def __repr__(self) -> str:
        return f"<CachedProgram {self.pattern[:40]!r}>"


# ------------------------------------------------------------------ other derived bytes
# A model's table learns at load which tokens merge back into themselves (~1,000 instructions
# a token: 50M for GPT-2's 50k, about a tenth of HF tokenizers' whole load).  The answers are
# bytes that depend on the tokens and merges (the key) and on the merge kernel (its built
# modules, `_kernel_version`): kept like the programs, in a folder of their own.

_KEPT_MAGIC = b"FBKEPT1\n"
_KERNEL_MODULES = ("_core", "_merge", "_vocab", "_tokenizer_json")


def _kernel_version() -> str:
    """A digest of the built merge kernel (the modules' names, sizes and times)."""
    h = _Digest(f"{FORMAT} {sys.byteorder} {sys.version_info[:2]}".encode())
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sorted(os.scandir(here), key=lambda e: e.name):
        if entry.name.split(".", 1)[0] in _KERNEL_MODULES and entry.name.endswith((".so", ".pyd")):
            st = entry.stat()
            h.update(f"{entry.name}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()


def kept(key: tuple, build, fits=None) -> bytes:
    """`build()` (bytes), read back from the disk cache when an earlier process built it
    under the same `key` (a tuple of str/int/bool/None) with the same merge kernel; a file
    that does not read back whole (another key, a flipped bit) or whose body `fits(body)`
    refuses (a length only a foreign writer could give) is built and written again."""
    root = cache_root()
    if root is None:
        return build()
    text = repr(key).encode("utf-8", "surrogatepass")
    path = os.path.join(root, f"kept-{_kernel_version()}", f"{_Digest(text).hexdigest()}.bin")
    head = _KEPT_MAGIC + len(text).to_bytes(8, "little") + text
    try:
        with open(path, "rb") as f:
            data = f.read()
        body = data[len(head):len(data) - 4]
        if (data.startswith(head) and zlib.crc32(body).to_bytes(4, "little") == data[len(data) - 4:]
                and (fits is None or fits(body))):
            return body
    except OSError:
        pass
    body = build()
    store(path, head + body + zlib.crc32(body).to_bytes(4, "little"))   # (read-only or full: built again)
    return body
