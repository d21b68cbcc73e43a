"""bench/peers.py's charts: the encode and models sections drawn from the run's own results.

The rows come from the same cells the markdown tables show (median and min–max over runs; an
inexact or missing library gets no bar), and the SVG written is the same bytes for the same
numbers (no date, no random ids), so a committed chart changes only when the numbers do.
"""
from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"
if not (BENCH / "charts.py").is_file():   # an unpacked sdist carries tests/ but not bench/
    pytest.skip("bench/ is not here (an sdist has no benchmarks)", allow_module_level=True)
sys.path.insert(0, str(BENCH))

import charts  # noqa: E402
import encode_sections  # noqa: E402
import models_section  # noqa: E402

needs_matplotlib = pytest.mark.skipif(not charts.available(),
                                      reason="matplotlib is not installed (it is in the bench extra)")


def _row(mb_per_s: float, digest: str = "d") -> dict:
    return {"seconds": [1.0], "bytes": [mb_per_s * 1e6], "digests": [digest]}


def _results(speeds: dict, inexact=()) -> dict:
    """A run's results: {(lib, vocab): {"rows": {corpus: row}}} with the reference's digests."""
    out = {}
    for (lib, vocab, corpus), v in speeds.items():
        digest = "wrong" if lib in inexact else "d"
        out.setdefault((lib, vocab), {"rows": {}})["rows"][corpus] = _row(v, digest)
    return out


RUN = SimpleNamespace(note=lambda key, text: None)
VOCABS = ["cl100k_base", "DeepSeek-R1-Distill-Llama tokenizer.json"]


def _runs():
    runs = []
    for scale in (1.0, 0.8, 1.2):
        speeds = {}
        for vocab, ref in zip(VOCABS, ("tiktoken", "HF tokenizers")):
            for corpus in ("English", "code"):
                speeds[ref, vocab, corpus] = 10 * scale
                speeds["fastbpe", vocab, corpus] = 100 * scale
                speeds["fastokens", vocab, corpus] = 90 * scale
                speeds["kitoken", vocab, corpus] = 50 * scale
        runs.append(_results(speeds, inexact=("kitoken",)))
    return runs


def test_encode_chart_rows_are_the_tables_exact_medians():
    rows = encode_sections.encode_chart_rows(RUN, _runs(), ["fastbpe", "fastokens", "kitoken", "tiktoken", "HF tokenizers"],
                                   VOCABS, ["English", "code"])
    assert [(r["group"], r["corpus"]) for r in rows] == [
        ("cl100k_base", "English"), ("cl100k_base", "code"),
        ("DeepSeek-Llama", "English"), ("DeepSeek-Llama", "code")]
    for r in rows:
        assert "kitoken" not in r["values"]  # inexact: no bar
        assert r["values"]["fastbpe"] == pytest.approx((100, 80, 120))
        assert r["values"]["fastokens"] == pytest.approx((90, 72, 108))
    assert set(rows[0]["values"]) == {"fastbpe", "fastokens", "tiktoken"}
    assert set(rows[2]["values"]) == {"fastbpe", "fastokens", "HF tokenizers"}


def test_models_chart_rows_keep_only_measured_exact_cells():
    speeds = {("gpt2", "English", "fastbpe"): 70.0, ("gpt2", "English", "fastbpe ids"): 35.0,
              ("gpt2", "English", "HF tokenizers"): 2.0, ("gpt2", "English", "fastokens"): None}
    rows = models_section.chart_rows(speeds, {"gpt2": "p"}, ["English"])
    assert rows == [{"group": "gpt2", "corpus": "English",
                     "values": {"fastbpe encode_batch": (70.0, 70.0, 70.0), "fastbpe encode_ids_batch": (35.0, 35.0, 35.0),
                                "HF tokenizers": (2.0, 2.0, 2.0)}}]


@needs_matplotlib
def test_encode_chart_is_an_svg_of_the_rows_and_reproducible(tmp_path):
    rows = encode_sections.encode_chart_rows(RUN, _runs(), ["fastbpe", "fastokens", "kitoken", "tiktoken", "HF tokenizers"],
                                   VOCABS, ["English", "code"])
    a = charts.encode_chart(rows, tmp_path / "a.svg", "one test run")
    b = charts.encode_chart(rows, tmp_path / "b.svg", "one test run")
    text = a.read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text
    for word in ("fastbpe", "fastokens", "tiktoken", "HF tokenizers", "DeepSeek-Llama", "English", "code",
                 "one test run"):
        assert word in text  # text kept as text (svg.fonttype none)
    assert "kitoken" not in text
    assert a.read_bytes() == b.read_bytes()


@needs_matplotlib
def test_models_chart_draws_a_log_axis_and_skips_empty_cells(tmp_path):
    speeds = {}
    for name in ("gpt2", "clip"):
        for corpus in ("English", "multilingual"):
            speeds[name, corpus, "fastbpe"] = 50.0 if name == "gpt2" else 0.3
            speeds[name, corpus, "HF tokenizers"] = 1.5
            speeds[name, corpus, "fastokens"] = 60.0 if name == "gpt2" else None
    rows = models_section.chart_rows(speeds, {"gpt2": "p", "clip": "q"}, ["English", "multilingual"])
    path = charts.models_chart(rows, tmp_path / "models.svg")
    text = path.read_text(encoding="utf-8")
    assert "clip" in text and "gpt2" in text and "fastokens" in text
    assert "10^{1}" in text or "10¹" in text or "$\\mathdefault{10^{1}}$" in text


def test_redraw_reads_back_the_tables_peers_writes(tmp_path):
    """--redraw: the charts again from a results file; the encode table's cells read back are
    the rows the run drew from (numbers chosen to survive the table's rounding)."""
    libs = ["fastbpe", "fastokens", "kitoken", "tiktoken", "HF tokenizers"]
    runs = _runs()
    lines = encode_sections.encode_table(RUN, runs, libs, VOCABS, ["English", "code"])
    section = "\n".join(["<!-- encode:start -->", "## Encode", "",
                         "- Load average (1 / 5 / 15 min): 0.50 / 0.40 / 0.30 at the start, 1 / 1 / 1 at the end",
                         "- Versions: fastbpe git abc1234, fastokens 0.3.5", "- Date: 2026-11-27 11:00 UTC",
                         "- Command: `python bench/peers.py --sections encode --runs 3` (from the root)", "",
                         *lines, "<!-- encode:end -->"])
    table = charts._table(charts._section(section, "encode"))
    assert charts.encode_rows_from_table(table) == encode_sections.encode_chart_rows(RUN, runs, libs, VOCABS, ["English", "code"])
    subtitle = charts._header_subtitle(section, "encode")
    assert "median of 3 runs" in subtitle and "abc1234" in subtitle and "load 0.50" in subtitle
    speeds = {("gpt2", "English", "fastbpe"): 70.0, ("gpt2", "English", "fastbpe ids"): 35.0,
              ("gpt2", "English", "HF tokenizers"): 2.0, ("gpt2", "English", "fastokens"): None}
    models = [["file", "engine", "corpus", "fastbpe encode_batch", "fastbpe encode_ids_batch", "HF", "fastokens",
               "fastbpe/HF", "fastbpe/fastokens"], ["gpt2", "kernel", "English", "70", "35", "HF 2.0", "n/a", "35×", "–"]]
    assert charts.models_rows_from_table(models) == models_section.chart_rows(speeds, {"gpt2": "p"}, ["English"])
    if charts.available():
        (tmp_path / "RESULTS.md").write_text(section, encoding="utf-8")
        assert [p.name for p in charts.redraw(tmp_path / "RESULTS.md", tmp_path / "charts")] == ["encode.svg"]


def test_cell_values():
    assert charts._cell_value("118 (114–124)") == (118, 114, 124)
    assert charts._cell_value("HF 1.5 (1.3–1.5)") == (1.5, 1.3, 1.5)
    assert charts._cell_value("0.34") == (0.34, 0.34, 0.34)
    for text in ("inexact", "n/a", "–", "error", "12 (unchecked)"):
        assert charts._cell_value(text) is None
