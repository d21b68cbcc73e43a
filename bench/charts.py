"""Charts of bench/peers.py's encode and models sections, drawn from the same run's numbers.

    encode_chart(rows, path, subtitle)   # MB/s of every exact library, one panel per corpus
    models_chart(rows, path, subtitle)   # every shared tokenizer.json: fastbpe vs HF vs fastokens
    redraw(results_md, chart_dir)        # both again from a results file's tables (no rerun)

Rows are plain data made by peers.py (`encode_chart_rows`, models_section's `chart_rows`):
    {"group": "cl100k_base", "corpus": "English", "values": {lib: (median, low, high)}}
where a library missing from `values` was not exact or not measured (it gets no bar, never a
zero).  The files are SVG with their text kept as text and no date or random ids inside, so a
rerun on the same numbers writes the same bytes.  matplotlib is in the `bench` extra; without
it `available()` is False and peers.py says so instead of drawing.
"""
from __future__ import annotations

import re
from pathlib import Path

OURS = "fastbpe"
# fastbpe first and in the one strong colour; peers in muted colours, always the same per library
COLOURS = {
    "fastbpe": "#d62728", "fastbpe encode_batch": "#d62728", "fastbpe encode_ids_batch": "#ff9896",
    "fastokens": "#1f77b4", "splintr-rs": "#9467bd", "quicktok-v1": "#8c564b", "rs-bpe": "#e377c2",
    "gigatok": "#bcbd22", "tokie": "#17becf", "kitoken": "#7f7f7f",
    "tiktoken": "#2ca02c", "HF tokenizers": "#98df8a",
}
SPARE = ["#aec7e8", "#ffbb78", "#98df8a", "#c5b0d5", "#c49c94"]


def available() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "fastbpe",
                                "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    import matplotlib.pyplot as plt
    return plt


def _libs(rows: list) -> list:
    """Libraries in the order they first appear, fastbpe's first."""
    seen: list = []
    for r in rows:
        for lib in r["values"]:
            if lib not in seen:
                seen.append(lib)
    return sorted(seen, key=lambda lib: not lib.startswith(OURS))


def _colour(lib: str, libs: list) -> str:
    return COLOURS.get(lib) or SPARE[libs.index(lib) % len(SPARE)]


def _grouped_bars(ax, rows: list, groups: list, libs: list, log: bool) -> None:
    """Horizontal bars: one band per group (top to bottom), one bar per library in it."""
    height = 0.8 / max(1, len(libs))
    for j, lib in enumerate(libs):
        ys, xs, lo, hi = [], [], [], []
        for i, g in enumerate(groups):
            r = next((r for r in rows if r["group"] == g), None)
            if r is None or lib not in r["values"]:
                continue
            mid, low, high = r["values"][lib]
            ys.append(i - 0.4 + height * (j + 0.5))
            xs.append(mid)
            lo.append(mid - low)
            hi.append(high - mid)
        if not xs:
            continue
        errors = [lo, hi] if any(lo) or any(hi) else None
        ax.barh(ys, xs, height=height * 0.92, xerr=errors, color=_colour(lib, libs), label=lib,
                error_kw={"elinewidth": 0.6, "capsize": 1.5, "ecolor": "#333333"})
        if j == 0 and lib.startswith(OURS):  # fastbpe's own figure on its bars
            for y, x, top in zip(ys, xs, hi):
                ax.annotate(f"{x:.0f}" if x >= 10 else f"{x:.1f}", (x + top, y), xytext=(3, 0),
                            textcoords="offset points", va="center", fontsize=7)
    ax.set_yticks(range(len(groups)))
    ax.set_yticklabels(groups)
    ax.set_ylim(len(groups) - 0.5, -0.5)
    if log:
        ax.set_xscale("log")
    ax.grid(axis="x", color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)


def _draw(rows: list, path: Path, title: str, subtitle: str, xlabel: str, log: bool,
          band: float) -> Path:
    plt = _pyplot()
    corpora = list(dict.fromkeys(r["corpus"] for r in rows))
    groups = list(dict.fromkeys(r["group"] for r in rows))
    libs = _libs(rows)
    fig, axes = plt.subplots(1, len(corpora), sharey=True, squeeze=False,
                             figsize=(3.6 * len(corpora) + 1.8, band * len(groups) * max(1, len(libs)) ** 0.5 + 1.6))
    for ax, corpus in zip(axes[0], corpora):
        _grouped_bars(ax, [r for r in rows if r["corpus"] == corpus], groups, libs, log)
        ax.set_title(corpus)
        ax.set_xlabel(xlabel)
    handles, labels = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in labels:
                handles.append(h)
                labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 6), frameon=False)
    fig.suptitle(title, fontweight="bold")
    fig.text(0.5, 0.925, subtitle, ha="center", fontsize=7.5, color="#555555")
    fig.tight_layout(rect=(0, 0.05 + 0.02 * (len(labels) > 6), 1, 0.92))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, metadata={"Date": None, "Creator": None} if path.suffix == ".svg" else None)
    plt.close(fig)
    return path


def encode_chart(rows: list, path: Path, subtitle: str = "") -> Path:
    """The encode section: MB/s, one core, every exact library, bars of median with min–max."""
    return _draw(rows, path, "Encode, one core (MB/s of UTF-8 input; higher is better)", subtitle,
                 "MB/s", log=False, band=0.34)


def models_chart(rows: list, path: Path, subtitle: str = "") -> Path:
    """The models section: encode_batch MB/s per tokenizer.json file (log scale: HF is ~50× slower)."""
    return _draw(rows, path, "Every shared tokenizer.json, encode_batch of 2 kB documents, one core "
                 "(MB/s, log scale)", subtitle, "MB/s", log=True, band=0.3)


# ------------------------------------------------------------------ charts from a results file

_NUMBER = re.compile(r"^(?:HF )?([0-9.]+)(?: \(([0-9.]+)–([0-9.]+)\))?$")


def _cell_value(text: str):
    """(median, low, high) of a table cell ("118 (114–124)", "HF 1.5", "26"), None for
    "inexact", "n/a", "–", "error" and anything else that is not a measured number."""
    m = _NUMBER.match(text.strip())
    if not m:
        return None
    mid = float(m.group(1))
    return (mid, float(m.group(2)), float(m.group(3))) if m.group(2) else (mid, mid, mid)


def _section(text: str, name: str) -> str | None:
    m = re.search(rf"<!-- {name}:start -->(.*?)<!-- {name}:end -->", text, re.S)
    return m.group(1) if m else None


def _table(section: str) -> list:
    """The section's first markdown table as lists of cells (header first)."""
    rows = []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not all(set(c) <= set("-:") for c in cells):
                rows.append(cells)
        elif rows:
            break
    return rows


def _header_subtitle(section: str, name: str) -> str:
    def field(label):
        m = re.search(rf"^- {label}: (.*)$", section, re.M)
        return m.group(1) if m else "?"
    rev = re.search(r"fastbpe git ([0-9a-f]+(?: \+ local changes)?)", section)
    runs = re.search(r"--runs (\d+)", field("Command"))
    how = (f"median of {runs.group(1)} runs (bars: min–max), " if runs and name == "encode" and runs.group(1) != "1"
           else "one run, ")
    return (f"{how}each library in a fresh process pinned to one core, ids checked; {field('Date')}, "
            f"fastbpe {rev.group(1) if rev else '?'}, load {field('Load average [^:]*').split(' / ')[0]}; "
            f"python bench/peers.py --sections {name}")


def encode_rows_from_table(table: list) -> list:
    """charts rows from the encode section's table (vocab, corpus, libraries..., tiktoken / HF,
    ratio); the exported cl100k_base row is fastbpe's second front end, not a comparison row."""
    head = table[0]
    libs = head[2:-2]
    rows = []
    for cells in table[1:]:
        vocab, corpus = cells[0], cells[1]
        if vocab.startswith("cl100k_base as"):
            continue
        values = {}
        for lib, text in zip(libs, cells[2:-2]):
            v = _cell_value(text)
            if v is not None:
                values[lib] = v
        ref = _cell_value(cells[-2])
        if ref is not None:
            values["HF tokenizers" if cells[-2].startswith("HF") else "tiktoken"] = ref
        rows.append({"group": vocab.replace(" tokenizer.json", "").replace("DeepSeek-R1-Distill-", "DeepSeek-"),
                     "corpus": corpus, "values": values})
    return rows


MODEL_COLUMNS = {"fastbpe encode_batch": "fastbpe encode_batch", "fastbpe encode_ids_batch": "fastbpe encode_ids_batch",
                 "HF": "HF tokenizers", "fastokens": "fastokens"}


def models_rows_from_table(table: list) -> list:
    """charts rows from the models section's first table (file, engine, corpus, columns...)."""
    head = table[0]
    rows = []
    for cells in table[1:]:
        values = {}
        for column, lib in MODEL_COLUMNS.items():
            if column in head:
                v = _cell_value(cells[head.index(column)])
                if v is not None:
                    values[lib] = v
        rows.append({"group": cells[0], "corpus": cells[2], "values": values})
    return rows


def redraw(results: Path, chart_dir: Path) -> list:
    """The encode and models charts again from a results file's tables (the numbers a run
    wrote there), into chart_dir; the paths written."""
    text = Path(results).read_text(encoding="utf-8")
    written = []
    for name, parse, draw in (("encode", encode_rows_from_table, encode_chart),
                              ("models", models_rows_from_table, models_chart)):
        section = _section(text, name)
        if section is None or not _table(section):
            continue
        written.append(draw(parse(_table(section)), Path(chart_dir) / f"{name}.svg", _header_subtitle(section, name)))
    return written
