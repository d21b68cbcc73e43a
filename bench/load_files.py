"""Loading every shared tokenizer.json in a fresh process: fastbpe vs HF tokenizers vs fastokens.

    python bench/load_files.py                     # every file, 5 runs each, cold and warm
    python bench/load_files.py --files gpt2,qwen2.5 --runs 3 --no-write
    python bench/load_files.py --modes warm --libs fastbpe,"HF tokenizers"
    python bench/load_files.py --model-dir bench/.work/families --no-write   # the families' files

Each run is a new interpreter pinned to one core (RAYON_NUM_THREADS=1) that times, inside
itself (interpreter start-up excluded), three steps apart: `import` of the library,
`Tokenizer.from_file(path)`, and the first `encode("hello world")` (work a library defers to
its first call is counted there, not hidden).  "load" = import + from_file + first encode, the
number issue 28 compares ("loading takes no longer than HF tokenizers"); the import alone is
reported beside it (`import fastbpe` loads nothing until a name is used, so fastbpe's from_file
pays for the modules a tokenizer.json needs: only the sum compares fairly).

Modes:
  cold  before each run the file's pages and every file of the library's package are dropped
        from the page cache (posix_fadvise DONTNEED: only those files, nothing else on the
        machine), and fastbpe gets an empty FASTBPE_CACHE_DIR: a fresh machine's first load,
        which asks Oniguruma for the character classes of scanner programs.
  warm  one untimed run first (pages resident, fastbpe's class cache filled), then the timed
        runs with the same cache directory.
The checkout's modules are byte-compiled first (`compileall`, as `pip install` does): with
PYTHONDONTWRITEBYTECODE set and no __pycache__, every fresh process would compile fastbpe's
Python source again (~0.1 s) while the peers' installed packages read their bytecode.
Medians of --runs runs.  Writes the `load-files` section of bench/RESULTS.md (--no-write:
print only).  The machine is shared: the load average is printed; quote ratios of one run.

    python bench/load_files.py --callgrind --modes warm --libs fastbpe,"HF tokenizers"

counts instructions instead (valgrind's callgrind, one run a cell: the count hardly moves run to
run, whatever else the machine does): the whole fresh process, interpreter start-up and exit
included (the bare interpreter's count is printed), printed only.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import common as c

LIBS = {  # library -> (import statement, from_file expression on `path`)
    "fastbpe": ("import fastbpe", "fastbpe.Tokenizer.from_file(path)"),
    "HF tokenizers": ("import tokenizers", "tokenizers.Tokenizer.from_file(path)"),
    "fastokens": ("import fastokens", "fastokens.Tokenizer.from_file(path)"),
}
PACKAGES = {"fastbpe": "fastbpe", "HF tokenizers": "tokenizers", "fastokens": "fastokens"}

CHILD = """\
import json, sys, time
path = {path!r}
t0 = time.perf_counter()
{imp}
t1 = time.perf_counter()
try:
    tok = {load}
except Exception as e:
    print(json.dumps({{"error": type(e).__name__ + ": " + str(e)[:150]}}))
    raise SystemExit(0)
t2 = time.perf_counter()
tok.encode("hello world")
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "from_file": t2 - t1, "first_encode": t3 - t2}}))
"""


def package_dir(lib: str, root: str) -> Path | None:
    """The folder of lib's package that the child imports (fastbpe: the checkout's)."""
    if lib == "fastbpe":
        return Path(root) / "fastbpe"
    import importlib.util

    spec = importlib.util.find_spec(PACKAGES[lib])
    return Path(spec.origin).parent if spec and spec.origin else None


def evict(paths: list) -> None:
    """Drop these files' pages from the page cache (only theirs)."""
    for p in paths:
        try:
            fd = os.open(p, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def one_run(lib: str, path: str, root: str, cache_dir: str) -> dict:
    imp, load = LIBS[lib]
    code = CHILD.format(path=path, imp=imp, load=load)
    env = {**c.thread_env(1), "PYTHONPATH": root, "FASTBPE_CACHE_DIR": cache_dir}
    # cwd = the checkout: `python -c` puts the working directory first on sys.path
    return c.run_child([sys.executable, "-c", code], env=env, cores=1, timeout=300, cwd=Path(root))


def measure(lib: str, path: str, mode: str, runs: int, root: str, scratch: Path) -> dict:
    """Medians over runs of import / from_file / first_encode seconds, or {"error": why}."""
    pkg = package_dir(lib, root)
    pkg_files = [str(f) for f in pkg.rglob("*") if f.is_file()] if pkg else []
    warm_cache = tempfile.mkdtemp(prefix="warm-", dir=scratch)
    if mode == "warm":
        one_run(lib, path, root, warm_cache)
    results = []
    for _ in range(runs):
        if mode == "cold":
            evict([path, *pkg_files])
            cache = tempfile.mkdtemp(prefix="cold-", dir=scratch)
        else:
            cache = warm_cache
        r = one_run(lib, path, root, cache)
        if "error" in r:
            return r
        results.append(r)
    out = {k: statistics.median(r[k] for r in results) for k in ("import", "from_file", "first_encode")}
    out["load"] = statistics.median(r["import"] + r["from_file"] + r["first_encode"] for r in results)
    out["peak_mb"] = statistics.median(r["peak_mb"] for r in results)
    return out


def instructions(lib: str | None, path: str, root: str, cache_dir: str) -> int | str:
    """Instructions callgrind counts in a fresh process that imports lib, loads path and encodes
    "hello world" (lib None: the bare interpreter), or why not."""
    code = "pass" if lib is None else CHILD.format(path=path, imp=LIBS[lib][0], load=LIBS[lib][1])
    env = {**os.environ, **c.thread_env(1), "PYTHONPATH": root, "FASTBPE_CACHE_DIR": cache_dir}
    proc = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable,
                           "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=1800)
    found = re.search(r"Collected : (\d+)", proc.stderr)
    if proc.returncode != 0 or not found or '"error"' in proc.stdout:
        return (proc.stdout.strip() or proc.stderr.strip()).splitlines()[-1][:150]
    return int(found.group(1))


def callgrind_table(files: dict, libs: list, modes: list, root: str) -> list[str]:
    scratch = Path(tempfile.mkdtemp(prefix="load-callgrind-", dir=c.WORK if c.WORK.is_dir() else None))
    others = [lib for lib in libs if lib != "fastbpe"]
    bare = instructions(None, "", root, "")
    print(f"bare interpreter: {bare / 1e6:.1f}M instructions", flush=True)
    lines = ["| file | mode | " + " | ".join(f"{lib} (M instructions)" for lib in libs)
             + "".join(f" | fastbpe / {o}" for o in others) + " |",
             "|---|---|" + "---:|" * (len(libs) + len(others))]
    print("\n".join(lines), flush=True)
    for name, path in files.items():
        for mode in modes:
            counts = {}
            for lib in libs:
                cache = tempfile.mkdtemp(prefix=f"{mode}-", dir=scratch)
                if mode == "warm":
                    instructions(lib, path, root, cache)
                got = instructions(lib, path, root, cache)
                if isinstance(got, str):
                    c.log(f"{name} {mode} {lib}: {got}")
                else:
                    counts[lib] = got
            cells = [f"{counts[lib] / 1e6:.1f}" if lib in counts else "n/a" for lib in libs]
            ratios = [f"{counts['fastbpe'] / counts[o]:.2f}×" if "fastbpe" in counts and o in counts else "–"
                      for o in others]
            lines.append(f"| {name} | {mode} | " + " | ".join(cells + ratios) + " |")
            print(lines[-1], flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return lines


def table(files: dict, libs: list, modes: list, runs: int, root: str) -> list[str]:
    scratch = Path(tempfile.mkdtemp(prefix="load-files-", dir=c.WORK if c.WORK.is_dir() else None))
    others = [lib for lib in libs if lib != "fastbpe"]
    head = ["| file | mode | " + " | ".join(f"{lib} load (import)" for lib in libs)
            + "".join(f" | fastbpe / {o}" for o in others) + " |",
            "|---|---|" + "---:|" * (len(libs) + len(others))]
    lines = list(head)
    for name, path in files.items():
        for mode in modes:
            cells, loads = [], {}
            for lib in libs:
                r = measure(lib, path, mode, runs, root, scratch)
                if "error" in r:
                    cells.append("n/a")
                    c.log(f"{name} {mode} {lib}: {r['error']}")
                    continue
                loads[lib] = r["load"]
                cells.append(f"{r['load']:.3f} ({r['import']:.3f})")
                c.log(f"{name:<30} {mode} {lib:<14} import {r['import']:.3f} from_file {r['from_file']:.3f} "
                      f"first encode {r['first_encode']:.3f} peak {r['peak_mb']:.0f} MB")
            ratios = [f"{loads['fastbpe'] / loads[o]:.2f}×" if "fastbpe" in loads and o in loads else "–"
                      for o in others]
            lines.append(f"| {name} | {mode} | " + " | ".join(cells + ratios) + " |")
            print(lines[-1], flush=True)
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--files", default="", help="comma-separated family names (default: every shared file)")
    p.add_argument("--model-dir", default=None,
                   help="a folder of <family>/tokenizer.json (bench/families.py --build-only writes one; "
                        "default: the shared data's vocab/hf/)")
    p.add_argument("--libs", default=",".join(LIBS), help=f"comma-separated: {','.join(LIBS)}")
    p.add_argument("--modes", default="cold,warm", help="cold,warm")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--root", default=str(c.ROOT), help="the fastbpe checkout to measure")
    p.add_argument("--no-write", action="store_true")
    p.add_argument("--callgrind", action="store_true", help="count instructions (valgrind) instead; prints only")
    a = p.parse_args(argv)
    files = c.model_files(a.model_dir)
    if not files:
        print("no shared tokenizer.json files (../shared/data/vocab/hf/*/)", file=sys.stderr)
        return 1
    if a.files:
        files = {k: v for k, v in files.items() if k in a.files.split(",")}
    libs = [lib for lib in a.libs.split(",") if lib]
    modes = [m for m in a.modes.split(",") if m]
    c.byte_compile(a.root)
    if a.callgrind:
        callgrind_table(files, libs, modes, a.root)
        return 0
    start_load = c.loadavg()
    print(f"load average {start_load}; {c.versions_line(libs)}", flush=True)
    lines = table(files, libs, modes, a.runs, a.root)
    end_load = c.loadavg()
    print(f"load average at the end {end_load}")
    if not a.no_write:
        text = "\n".join([
            "<!-- load-files:start -->",
            "## Loading every shared tokenizer.json (fresh process, seconds; lower is better)",
            "",
            f"`python bench/load_files.py --runs {a.runs}` ({c.machine()}; {c.versions_line(libs)}; "
            f"load average {start_load} at the start, {end_load} at the end). Per cell: median seconds of "
            "`import` + `from_file` + the first `encode(\"hello world\")` in a fresh process pinned to one "
            "core, and in brackets the `import` alone. cold: the file's and the library's pages dropped from "
            "the page cache and an empty FASTBPE_CACHE_DIR before each run; warm: after one untimed run.",
            "",
            *lines,
            "<!-- load-files:end -->",
        ])
        c.write_section(c.HERE / "RESULTS.md", "load-files", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
