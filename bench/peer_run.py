"""The parent side's run of bench/peers.py: the inputs written once, the children started pinned,
the notes gathered, and what every section's report shares (header, notes, charts).

A section module (encode_sections, front_end_sections, train_sections, models_section) gets a
`Run`, asks `run.parts(...)` for its input files and `run.child(job, cores=k)` for each
measurement (bench/peer_children.py runs it), and returns markdown rows; peers.py's `main`
writes them under `header(...)` with `notes_lines(...)`.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import charts
import common as c
from common import fmt_mbs, log, speed

HERE = Path(__file__).resolve().parent


class Run:
    """Inputs written once per run, children started with the right pinning and env."""

    def __init__(self, args):
        self.args = args
        self.dir = c.WORK / f"run-{os.getpid()}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self._parts: dict = {}
        self.notes: dict[str, str] = {}
        self.fastbpe_files: set = set()
        self.charts: dict[str, list] = {}  # section -> charts.py rows, set by the section's table

    def parts(self, corpus: str, total_mb: float, tag: str = "p") -> list[str]:
        """File paths of the 4 parts of `total_mb` MB of a corpus (written once)."""
        key = (corpus, total_mb, tag)
        if key not in self._parts:
            texts = c.parts(corpus, total_mb)
            paths = []
            for i, t in enumerate(texts):
                p = self.dir / f"{corpus}-{total_mb:g}-{tag}{i}.txt"
                p.write_text(t, encoding="utf-8", newline="")
                paths.append(str(p))
            self._parts[key] = paths
        return self._parts[key]

    def child(self, job: dict, cores: int = 1, timeout: float = 1800, env: dict | None = None) -> dict:
        job.setdefault("root", str(c.ROOT))
        r = c.run_child([sys.executable, str(HERE / "peer_children.py"), json.dumps(job)],
                        env={**c.thread_env(cores), **(env or {})}, cores=cores, timeout=timeout)
        if "fastbpe_file" in r:
            self.fastbpe_files.add(r["fastbpe_file"])
        return r

    def note(self, key: str, text: str) -> None:
        self.notes.setdefault(key, text)


def ratio(best: float | None, ours: float | None) -> str:
    return "–" if not best or not ours else f"{best / ours:.2f}"


def rate_cell(run: Run, r: dict, label: str, ref: dict | None, note: tuple, mismatch: str = "differs",
              value=speed) -> tuple[str, float | None]:
    """(text, MB/s or None) of one library's cell in a table of rates (batch, encodings,
    transformers): "n/a" when its child gave no rows (noted: note = (key, text) prefixes of
    the reason), `mismatch` when its ids differ from the reference row ref, else value(row)."""
    if "rows" not in r:
        why = r.get("unavailable") or r.get("error") or "not run"
        run.note(f"{note[0]}:{why}", f"{note[1]}{why}")
        return "n/a", None
    row = r["rows"][label]
    if ref is not None and row["digests"] != ref["digests"]:
        return mismatch, None
    v = value(row)
    return fmt_mbs(v), v


def summary(r: dict) -> str:
    if "error" in r:
        return f"error: {r['error']}"
    if "unavailable" in r:
        return f"n/a ({r['unavailable'][:70]})"
    bits = [f"{label} {speed(row):.1f} MB/s" for label, row in r.get("rows", {}).items()]
    if "short" in r:
        bits.append(f"short {r['short']['us']:.2f} us")
    return ", ".join(bits)


def reference_lib(vocab: str) -> str:
    return c.REFERENCE[c.VOCABS[vocab][0]]


def draw_chart(run: Run, name: str, path: Path, started: str) -> None:
    """The section's chart from the rows its table recorded (charts.py), or a log line saying why not."""
    if not charts.available():
        log(f"no {name} chart: matplotlib is not installed (pip install -e '.[bench]')")
        return
    a = run.args
    runs = f"median of {a.runs} runs (bars: min–max), " if name == "encode" and a.runs > 1 else "one run, "
    subtitle = (f"{runs}each library in a fresh process pinned to one core, ids checked; {started}, "
                f"fastbpe {c.git_rev(Path(a.root))}, load {c.loadavg().split(' / ')[0]}; "
                f"python bench/peers.py --sections {name}")
    draw = charts.encode_chart if name == "encode" else charts.models_chart
    log(f"wrote {draw(run.charts[name], path, subtitle)}")


def header(run: Run, title: str, started: str, load_start: str, method: list[str]) -> list[str]:
    a = run.args
    quick = " — **quick smoke run: small inputs, not for comparison**" if a.quick else ""
    return [title, "",
            f"- Machine: {c.machine()}",
            f"- Load average (1 / 5 / 15 min): {load_start} at the start, {c.loadavg()} at the end",
            f"- Versions: {c.versions_line()}",
            f"- Date: {started}",
            f"- Command: `{a.command}` (from the repository root, after "
            f"`python setup.py build_ext --inplace`){quick}",
            *[f"- {m}" for m in method], ""]


def notes_lines(run: Run, prefix: tuple) -> list[str]:
    notes = sorted({v for k, v in run.notes.items() if k.startswith(prefix)})
    return (["", "Notes:", ""] + [f"- {n}" for n in notes]) if notes else []
