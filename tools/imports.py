"""The import graph of the fastbpe package, read from the code (ast): which module imports
which, whether lazily (inside a function), and which names it takes.  Used by
tests/test_layers.py and by hand: `python tools/imports.py` prints circles, imports that go up
a layer, and private names read across modules."""
from __future__ import annotations

import ast
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "fastbpe"


def module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def source_files() -> list[pathlib.Path]:
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx", ".pxd"))


_CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport\s+\(?([\w\s,()]+)|cimport\s+([\w.]+))", re.M)


def _resolve(current: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def imports_of(path: pathlib.Path):
    """(imported module, names, lazy, line) for every fastbpe import in the file."""
    name = module_name(path)
    is_package = path.name == "__init__.py"
    found = []
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".pyx", ".pxd"):
        for m in _CIMPORT.finditer(text):
            target = m.group(1) or m.group(3)
            names = [n.strip() for n in (m.group(2) or "").replace("(", "").replace(")", "").split(",") if n.strip()]
            line = text.count("\n", 0, m.start()) + 1
            if target.startswith("fastbpe"):
                found.append((target, names, False, line))
        text = "\n".join(l for l in text.splitlines() if "cimport" not in l)
        if path.suffix == ".pxd":
            return found
        try:
            tree = ast.parse(_strip_cython(text))
        except SyntaxError:
            return found
    else:
        tree = ast.parse(text)

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                continue        # typing only: never imported at run time
            if isinstance(child, ast.ImportFrom):
                target = _resolve(name, is_package, child.level, child.module)
                if target.startswith("fastbpe"):
                    names = [a.name for a in child.names]
                    # `from . import x` imports the module fastbpe.x
                    subs = [n for n in names if _is_module(f"{target}.{n}")]
                    for s in subs:
                        found.append((f"{target}.{s}", [], lazy, child.lineno))
                    rest = [n for n in names if n not in subs]
                    if rest:
                        found.append((target, rest, lazy, child.lineno))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("fastbpe"):
                        found.append((a.name, [], lazy, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return found


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _strip_cython(text: str) -> str:
    """Enough of a .pyx as Python for ast to find its imports: keep only import lines."""
    keep = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith(("import ", "from ")) and " cimport " not in s:
            block = [s]
            while block[-1].endswith(("(", ",", "\\")) and i + 1 < len(lines):
                i += 1
                block.append(lines[i].strip())
            keep.append(" ".join(block).replace("\\", ""))
        i += 1
    return "\n".join(keep)


_MODULES: set[str] | None = None


def all_modules() -> set[str]:
    global _MODULES
    if _MODULES is None:
        _MODULES = {module_name(p) for p in source_files() if p.suffix != ".pxd"} | \
                   {module_name(p) for p in source_files() if p.suffix == ".pxd"}
    return _MODULES


def _is_module(name: str) -> bool:
    return name in all_modules()


def graph(include_lazy: bool = True) -> dict[str, set[str]]:
    g: dict[str, set[str]] = {}
    for p in source_files():
        src = module_name(p)
        for target, _names, lazy, _line in imports_of(p):
            if lazy and not include_lazy:
                continue
            while target not in all_modules() and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != src:
                g.setdefault(src, set()).add(target)
        g.setdefault(src, set())
    return g


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(g):
        if v not in index:
            strong(v)
    return out


def private_reads():
    """(importer, module, name): a `_private` name taken from another fastbpe module.
    Private modules (fastbpe._core) are fine to import from; private names in them are not."""
    out = []
    for p in source_files():
        src = module_name(p)
        for target, names, _lazy, line in imports_of(p):
            for n in names:
                if n.startswith("_") and not n.startswith("__") and target != src:
                    out.append((src, target, n, line))
    return out


if __name__ == "__main__":
    g = graph()
    print("circles (lazy imports included):")
    for c in cycles(g):
        print("  ", " <-> ".join(c))
    print("private names read across modules:")
    for r in private_reads():
        print("  ", *r)
