"""The import graph of the fastbpe package, read from the code (ast for .py, the import
lines of .pyx/.pxd): which module imports which, whether lazily (inside a function), and
which names it takes; and the layers of docs/architecture.md.  Used by tests/test_layers.py
and by hand: `python tests/import_graph.py` prints circles, imports that go up a layer, and
private names read across modules."""
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
        if path.suffix == ".pxd":
            return found
        text, indented = _strip_cython(text)
        tree = ast.parse(text)
    else:
        tree = ast.parse(text)
        indented = set()

    def visit(node, lazy):
        for child in ast.iter_child_nodes(node):
            inner = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            lazy_here = lazy or getattr(child, "lineno", 0) in indented
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                continue        # typing only: never imported at run time
            if isinstance(child, ast.ImportFrom):
                target = _resolve(name, is_package, child.level, child.module)
                if target.startswith("fastbpe"):
                    names = [a.name for a in child.names]
                    # `from . import x` imports the module fastbpe.x
                    subs = [n for n in names if _is_module(f"{target}.{n}")]
                    for s in subs:
                        found.append((f"{target}.{s}", [], lazy_here, child.lineno))
                    rest = [n for n in names if n not in subs]
                    if rest:
                        found.append((target, rest, lazy_here, child.lineno))
            elif isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("fastbpe"):
                        found.append((a.name, [], lazy_here, child.lineno))
            visit(child, inner)

    visit(tree, False)
    return found


def _is_type_checking(test) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _strip_cython(text: str) -> tuple[str, set[int]]:
    """Enough of a .pyx as Python for ast to find its imports: its import lines, at their
    own line numbers (other lines blank), and the numbers of the indented (lazy) ones."""
    lines = text.splitlines()
    keep = [""] * len(lines)
    lazy = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        s = line.strip()
        if s.startswith(("import ", "from ")) and " cimport " not in s:
            first = i
            block = [s]
            while block[-1].endswith(("(", ",", "\\")) and i + 1 < len(lines):
                i += 1
                block.append(lines[i].strip())
            statement = " ".join(block).replace("\\", "")
            try:
                ast.parse(statement)
            except SyntaxError:     # prose in a docstring that starts with "from"
                i += 1
                continue
            keep[first] = statement
            if line[:1].isspace():
                lazy.add(first + 1)
        i += 1
    return "\n".join(keep), lazy


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


# ----------------------------------------------------------------------------------------
# private attributes read across modules: `enc._table` in corpus.py reaches into encoding.py


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


# Names that start with "_" but are public API (namedtuple's methods and fields).
PUBLIC_UNDERSCORE = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}
_ATTRIBUTE_FUNCTIONS = {"getattr", "hasattr", "setattr", "delattr"}
_SELF = {"self", "cls"}


class _ModuleAttributes(ast.NodeVisitor):
    """One module's `_names`: those it defines (functions, classes, module names, class
    attributes, `self._x = ...`) per class and for the module, and every access `obj._x`
    (also `getattr(obj, "_x")`) with whether it goes through self/cls/super()."""

    def __init__(self, module: str, tree: ast.Module, is_package: bool = False):
        self.module = module
        self.is_package = is_package
        self.imports: dict[str, tuple[str, str]] = {}   # local name -> (module, name)
        self.classes: dict[str, dict] = {}              # class name -> {"bases", "defines"}
        self.defined: set[str] = set()
        self.accesses: list[tuple[str, bool, str | None, int]] = []  # name, via self, class, line
        self._class: list[str] = []
        self.visit(tree)

    def _define(self, name: str) -> None:
        if _is_private(name):
            self.defined.add(name)
            if self._class:
                self.classes[self._class[-1]]["defines"].add(name)

    def visit_ImportFrom(self, node):
        target = _resolve(self.module, self.is_package, node.level, node.module)
        for a in node.names:
            self.imports[a.asname or a.name] = (target, a.name)
            self._define(a.asname or a.name)

    def visit_Import(self, node):
        for a in node.names:
            self._define((a.asname or a.name).split(".")[0])

    def visit_ClassDef(self, node):
        self._define(node.name)
        self.classes[node.name] = {"bases": [ast.unparse(b) for b in node.bases], "defines": set()}
        self._class.append(node.name)
        self.generic_visit(node)
        self._class.pop()

    def visit_FunctionDef(self, node):
        self._define(node.name)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Store):
            self._define(node.id)

    def visit_Assign(self, node):
        # __slots__ = ("_a", "_b") defines the names
        if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            for c in ast.walk(node.value):
                if isinstance(c, ast.Constant) and isinstance(c.value, str):
                    self._define(c.value)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        if _is_private(node.attr) and node.attr not in PUBLIC_UNDERSCORE:
            via_self = _is_self(node.value)
            if via_self and isinstance(node.ctx, ast.Store):
                self._define(node.attr)
            self.accesses.append((node.attr, via_self, self._class[-1] if self._class else None, node.lineno))
        self.generic_visit(node)

    def visit_Call(self, node):
        if (isinstance(node.func, ast.Name) and node.func.id in _ATTRIBUTE_FUNCTIONS and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and _is_private(node.args[1].value)):
            self.accesses.append((node.args[1].value, _is_self(node.args[0]),
                                  self._class[-1] if self._class else None, node.lineno))
        self.generic_visit(node)


def _is_self(node) -> bool:
    """self, cls, super(), type(self): the object's own attributes."""
    if isinstance(node, ast.Name):
        return node.id in _SELF
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and (
        node.func.id == "super" or (node.func.id == "type" and len(node.args) == 1 and _is_self(node.args[0])))


def _class_families(modules: dict[str, _ModuleAttributes]) -> dict[tuple[str, str], set[str]]:
    """(module, class) -> the `_names` its family defines: a class, its fastbpe base classes and
    mixins, and their subclasses are one object (a class split across files by concern)."""
    parent = {}

    def find(k):
        while parent.setdefault(k, k) != k:
            k = parent[k]
        return k

    for mod, attrs in modules.items():
        for cls, info in attrs.classes.items():
            find((mod, cls))
            for base in info["bases"]:
                if base in attrs.classes:
                    target = (mod, base)
                elif base in attrs.imports:             # from .tokenizer import Tokenizer
                    target = attrs.imports[base]
                elif base.split(".")[0] in attrs.imports:  # from . import base; base.Tokenizer
                    module, name = attrs.imports[base.split(".")[0]]
                    target = (f"{module}.{name}", base.split(".", 1)[1])
                else:
                    continue    # not a fastbpe class
                if target[0] in modules:
                    parent[find((mod, cls))] = find(target)
    defines: dict = {}
    for mod, attrs in modules.items():
        for cls, info in attrs.classes.items():
            defines.setdefault(find((mod, cls)), set()).update(info["defines"])
    return {k: defines.get(find(k), set()) for k in parent}


def private_attribute_reads(sources: dict[str, str] | None = None):
    """(module, line, name, how): an attribute `obj._name` reached (read, written or through
    getattr) in a module that does not define `_name` itself.  Through self/cls/super() the
    names of the class's family count as its own (a mixin of `hf.Tokenizer` in another file
    is part of that class); any other object's private attribute must be this module's own.
    `sources` ({module: Python text}) replaces the package's files (for testing the checker)."""
    if sources is None:
        sources = {module_name(p): p.read_text(encoding="utf-8") for p in source_files() if p.suffix == ".py"}
    packages = {module_name(p) for p in source_files() if p.name == "__init__.py"}
    modules = {m: _ModuleAttributes(m, ast.parse(text), m in packages) for m, text in sources.items()}
    families = _class_families(modules)
    out = []
    for mod, attrs in modules.items():
        for name, via_self, cls, line in attrs.accesses:
            if name in attrs.defined:
                continue
            if via_self and cls is not None and name in families.get((mod, cls), ()):
                continue
            out.append((mod, line, name, "self" if via_self else "object"))
    if sources is None:
        for p in source_files():
            if p.suffix in (".pyx", ".pxd"):
                out += _cython_private_reads(p)
    return sorted(out)


_CYTHON_ACCESS = re.compile(r"\b(\w+)\.(_[A-Za-z0-9]\w*)\b")


def _cython_private_reads(path: pathlib.Path):
    """The same for a Cython file, by pattern: `obj._name` (obj not self) for a `_name` the
    file never defines (def/cdef/assignment)."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in _CYTHON_ACCESS.finditer(text):
        obj, name = m.groups()
        if obj in _SELF or obj == "fastbpe" or not _is_private(name):
            continue    # fastbpe._hash is a module path (cimport), not an attribute
        if re.search(rf"(?:\bdef|\bcdef[^\n]*?|\bclass)\s+{name}\b|\b{name}\s*=", text):
            continue
        line = text.count("\n", 0, m.start()) + 1
        if text.splitlines()[line - 1].lstrip().startswith("#"):
            continue
        out.append((module_name(path), line, name, "object"))
    return out


# The layers of docs/architecture.md, by the module's first name under fastbpe.  A private
# module not listed here (fastbpe._core, ...) is a kernel: layer 0.
LAYERS = {
    1: ["patterns", "regex_dialects", "pattern_program", "program_items", "pattern_dfa", "program_cache", "plan", "pretokenize", "text", "threads", "special_tokens", "progress", "pure_bpe",
        "formats", "visualise", "show_html", "shards", "normalize"],
    2: ["encoding", "alternatives", "_unstable", "registry", "vocab_sources", "corpus", "core",
        "load", "model"],
    3: ["counting", "trainer", "trainers", "bpe_model"],
    4: ["minbpe", "hf", "gguf", "ubpe", "mistral", "sentencepiece", "distributed", "_educational"],
    5: ["cli", "__main__"],
}
FRONT_END = 4

# Imports that go up a layer on purpose, with the reason (docs/architecture.md lists them).
ALLOWED_UP = {
    ("fastbpe._pretokenize", "fastbpe.patterns"):
        "the C scanner recognises the known pattern strings, kept once in patterns.py (constants only)",
    ("fastbpe.hf.tokenizer", "fastbpe.sentencepiece"):
        "Tokenizer.from_file / from_sentencepiece hand a SentencePiece .model file to its front end "
        "(one lazy import, as for .gguf files: issue 33's entry point)",
    ("fastbpe.hf.tokenizer", "fastbpe.gguf"):
        "Tokenizer.from_file / from_gguf hand a .gguf file to the gguf front end (one lazy import: "
        "issue 21's one-line entry point for llama.cpp files)",
}


# Circles kept on purpose, with the reason (docs/architecture.md lists them).
ALLOWED_CIRCLES = {
    ("fastbpe.encoding", "fastbpe.registry"):
        "the registry builds encodings; Encoding.__getstate__/__setstate__ import it lazily "
        "so that a registered encoding pickles by name",
}


# Private attributes read across modules on purpose, (module, name) -> the reason
# (docs/architecture.md lists them).
ALLOWED_PRIVATE_ATTRIBUTES: dict[tuple[str, str], str] = {
    **{("fastbpe.formats.tiktoken_bpe", name):
       "encoding_fields reads an Encoding, fastbpe's or tiktoken's own, by tiktoken's field names: "
       "tiktoken has no public ones (the one place that does; fastbpe's own code uses "
       "Encoding.pattern / mergeable_ranks / special_tokens)"
       for name in ("_mergeable_ranks", "_pat_str", "_special_tokens")},
    ("fastbpe.hf.oniguruma", "_lib"):
        "the oniguruma package's C entry point: its public search re-encodes the text per match",
    ("fastbpe.hf.transformers_patch", "_tokenizer"):
        "transformers keeps a fast tokenizer's backend there; swapping it is the patch",
}


def layer_of(module: str) -> tuple[int | None, str]:
    """(layer, the module's first name under fastbpe); the package itself is the top."""
    parts = module.split(".")
    if len(parts) == 1:
        return 5, "fastbpe"
    top = parts[1]
    for number, names in LAYERS.items():
        if top in names:
            return number, top
    if top.startswith("_"):
        return 0, top
    return None, top


def resolve_module(target: str) -> str:
    """The module an import names (`fastbpe.x.y` where y is a name in module x -> fastbpe.x)."""
    while target not in all_modules() and "." in target:
        target = target.rsplit(".", 1)[0]
    return target


def upward_imports():
    """(importer, imported, lazy, line) for every import that goes up a layer, or from one
    front end into another."""
    out = []
    for p in source_files():
        src = module_name(p)
        src_layer, src_top = layer_of(src)
        for target, _names, lazy, line in imports_of(p):
            target = resolve_module(target)
            dst_layer, dst_top = layer_of(target)
            if src_layer is None or dst_layer is None:
                continue    # unlisted: test_layers reports it
            if dst_layer > src_layer or (src_layer == dst_layer == FRONT_END and src_top != dst_top):
                out.append((src, target, lazy, line))
    return out


if __name__ == "__main__":
    print("imports up a layer or across front ends:")
    for src, dst, lazy, line in upward_imports():
        why = ALLOWED_UP.get((src, dst), "NOT ALLOWED")
        print(f"   {src}:{line} -> {dst}{' (lazy)' if lazy else ''}: {why}")
    g = graph()
    print("circles (lazy imports included):")
    print("   (allowed: " + "; ".join(" <-> ".join(c) for c in ALLOWED_CIRCLES) + ")")
    for c in cycles(g):
        print("  ", " <-> ".join(c))
    print("private names read across modules:")
    for r in private_reads():
        print("  ", *r)
    print("private attributes reached across modules:")
    for mod, line, name, how in private_attribute_reads():
        why = ALLOWED_PRIVATE_ATTRIBUTES.get((mod, name), "NOT ALLOWED")
        print(f"   {mod}:{line} .{name} ({how}): {why}")
