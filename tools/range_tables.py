"""What the gen_hf_*.py tools share: code points merged into inclusive ranges, and the generated
Python module that holds them (tuples of ranges, a few to a line)."""
import os


def ranges(points, value=None) -> list:
    """Sorted code points as inclusive (first, last) ranges; with `value` (code point -> number),
    (first, last, number) ranges whose points share the number."""
    out = []
    for c in points:
        v = None if value is None else value[c]
        if out and out[-1][1] == c - 1 and (v is None or out[-1][2] == v):
            out[-1] = (out[-1][0], c) + out[-1][2:]
        else:
            out.append((c, c) if v is None else (c, c, v))
    return out


def write_module(name: str, docstring: list, tables: dict, per_line: int) -> str:
    """Write fastbpe/hf/<name>: the docstring's lines, then NAME = (ranges...) for each table."""
    lines = list(docstring)
    for table, rows in tables.items():
        lines += ["", f"{table} = ("]
        cells = ["(" + ", ".join([f"0x{r[0]:X}", f"0x{r[1]:X}"] + [str(x) for x in r[2:]]) + ")," for r in rows]
        lines += ["    " + " ".join(cells[i:i + per_line]) for i in range(0, len(cells), per_line)]
        lines.append(")")
    path = os.path.join(os.path.dirname(__file__), "..", "fastbpe", "hf", name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return path
