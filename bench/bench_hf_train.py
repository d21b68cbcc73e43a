"""Training through HF's APIs: HF tokenizers vs fastbpe (issue 30's acceptance rows).

* `hf`: `Tokenizer.train_from_iterator(lines, BpeTrainer(...))`, a ByteLevel BPE (ByteLevel
  pre-tokenizer, its alphabet as initial_alphabet, `<|endoftext|>` special), on the first
  `--mb` MB of large_en (default 100) with `--vocab` tokens (default 32000): HF's own Tokenizer,
  then `fastbpe.Tokenizer` given the same HF trainer.
* `transformers`: `AutoTokenizer.from_pretrained(folder).train_new_from_iterator(batches,
  vocab)` on `--tf-mb` MB (default 20), `--tf-vocab` tokens (default 8000), for the shared
  GPT-2 and Qwen2.5 folders: stock transformers, then after `fastbpe.patch_transformers()`.

Each run is a fresh process fed lines (in batches of 1000) streamed from a plain-text copy of
the corpus in bench/.work/; it reports wall seconds and its peak resident memory, and writes
its tokenizer.json, which must equal the stock one (checked, shown as "same").  Prints a
Markdown table and, unless `--no-write`, replaces the `<!-- hf-train:start -->` section of
bench/RESULTS.md.

    python bench/bench_hf_train.py                       # ~3-4 min on an idle 2-core machine
    python bench/bench_hf_train.py --mb 10 --tf-mb 2 --no-write    # smoke run
"""
from __future__ import annotations

import argparse
import json
import lzma
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
sys.path.insert(0, str(ROOT / "tests"))

import datasources as ds  # noqa: E402

START, END = "<!-- hf-train:start -->", "<!-- hf-train:end -->"
MODELS = {"gpt2": ds.VOCAB_DIR / "hf" / "gpt2", "qwen2.5": ds.VOCAB_DIR / "hf" / "qwen2.5"}

# The child: train, then print {"seconds", "peak_mb"}; the tokenizer.json goes to argv's path.
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, ROOT)
kind, lib, corpus, vocab, out, folder = sys.argv[1:7]
vocab = int(vocab)

def batches():
    with open(corpus, encoding="utf-8", newline="") as f:
        batch = []
        for line in f:
            batch.append(line)
            if len(batch) == 1000:
                yield batch
                batch = []
        if batch:
            yield batch

if kind == "hf":
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    hf = Tokenizer(models.BPE())
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab, special_tokens=["<|endoftext|>"], show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    if lib == "fastbpe":
        import fastbpe
        tok = fastbpe.Tokenizer.from_str(hf.to_str())
    else:
        tok = hf
    start = time.perf_counter()
    tok.train_from_iterator(batches(), trainer)
    seconds = time.perf_counter() - start
    text = tok.to_str()
else:
    from transformers import AutoTokenizer
    if lib == "fastbpe":
        import fastbpe
        fastbpe.patch_transformers()
    tok = AutoTokenizer.from_pretrained(folder)
    start = time.perf_counter()
    new = tok.train_new_from_iterator(batches(), vocab, new_special_tokens=["<|new|>"])
    seconds = time.perf_counter() - start
    text = new.backend_tokenizer.to_str()
    assert type(new.backend_tokenizer).__module__.startswith("fastbpe" if lib == "fastbpe" else "tokenizers")
open(out, "w", encoding="utf-8").write(text)
try:   # this process's own peak: ru_maxrss would keep the parent's from before the exec
    peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) / 1024
except OSError:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak}))
"""


def plain_corpus(mb: float) -> Path:
    """The first `mb` MB of large_en, cut at a line end, as a text file (made once)."""
    WORK.mkdir(exist_ok=True)
    path = WORK / f"large_en_{mb:g}MB.txt"
    if not path.is_file():
        src = ds.corpus_path("large_en")
        if not src.is_file():
            sys.exit(f"missing {src} (set FASTBPE_SHARED)")
        with lzma.open(src) as f:
            data = f.read(int(mb * 1e6))
        data = data[: data.rfind(b"\n") + 1]
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return path


def run(kind: str, lib: str, corpus: Path, vocab: int, folder: str = "") -> dict:
    out = WORK / f"{kind}-{lib}-{Path(folder).name or 'bytelevel'}.json"
    env = dict(os.environ, TOKENIZERS_PARALLELISM="true")
    proc = subprocess.run([sys.executable, "-c", f"ROOT = {str(ROOT)!r}\n" + CHILD, kind, lib, str(corpus),
                           str(vocab), str(out), folder], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{kind} {lib} failed:\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["json"] = json.loads(out.read_text(encoding="utf-8"))
    print(f"  {kind} {lib} {Path(folder).name}: {result['seconds']:.2f} s, {result['peak_mb']:.0f} MB",
          file=sys.stderr)
    return result


def load_average() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mb", type=float, default=100)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--tf-mb", type=float, default=20)
    ap.add_argument("--tf-vocab", type=int, default=8000)
    ap.add_argument("--sections", default="hf,transformers")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sections = args.sections.split(",")
    load_start = load_average()
    started = time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())
    rows = []
    if "hf" in sections:
        corpus = plain_corpus(args.mb)
        hf = run("hf", "hf", corpus, args.vocab)
        fast = run("hf", "fastbpe", corpus, args.vocab)
        rows.append((f"`Tokenizer.train_from_iterator`, ByteLevel, {args.mb:g} MB large_en, vocab {args.vocab}",
                     hf, fast))
    if "transformers" in sections:
        corpus = plain_corpus(args.tf_mb)
        for name, folder in MODELS.items():
            if not (folder / "tokenizer.json").is_file():
                print(f"  skipped {name}: {folder} absent", file=sys.stderr)
                continue
            stock = run("transformers", "stock", corpus, args.tf_vocab, str(folder))
            patched = run("transformers", "fastbpe", corpus, args.tf_vocab, str(folder))
            rows.append((f"transformers `train_new_from_iterator`, {name}, {args.tf_mb:g} MB, vocab {args.tf_vocab}",
                         stock, patched))
    import tokenizers
    versions = f"tokenizers {tokenizers.__version__}"
    try:
        import transformers
        versions += f", transformers {transformers.__version__}"
    except ImportError:
        pass
    lines = [
        f"Run {started} on {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load_start} at start, {load_average()} at end; {versions}; "
        f"`python bench/bench_hf_train.py {' '.join(sys.argv[1:])}`.",
        "",
        "| what | HF / stock s | fastbpe s | speed-up | HF peak MB | fastbpe peak MB | same tokenizer.json |",
        "|---|---|---|---|---|---|---|",
    ]
    for what, ref, ours in rows:
        lines.append(f"| {what} | {ref['seconds']:.2f} | {ours['seconds']:.2f} | "
                     f"{ref['seconds'] / ours['seconds']:.1f}x | {ref['peak_mb']:.0f} | {ours['peak_mb']:.0f} | "
                     f"{'same' if ref['json'] == ours['json'] else 'DIFFERENT'} |")
    if os.getloadavg()[0] > (os.cpu_count() or 1):
        lines += ["", "The machine was shared while this ran (load average above its core count): every "
                  "process got a fraction of a core, so the seconds are long; read the ratios."]
    table = "\n".join(lines)
    print(table)
    if not args.no_write:
        results = HERE / "RESULTS.md"
        text = results.read_text(encoding="utf-8") if results.is_file() else ""
        section = f"{START}\n## Training through HF's APIs (bench/bench_hf_train.py)\n\n{table}\n{END}"
        if START in text and END in text:
            text = text[: text.index(START)] + section + text[text.index(END) + len(END):]
        else:
            text = text.rstrip("\n") + "\n\n" + section + "\n"
        tmp = results.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, results)


if __name__ == "__main__":
    main()
