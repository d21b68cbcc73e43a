"""The house rules of docs/architecture.md, read from the code (tests/import_graph.py):
imports point down the layers, no import circles, no private names or attributes read across modules,
and no product or benchmark file grows past ~600 lines."""
import pathlib

import import_graph as ig

# Files allowed past the size limit, with the reason.  Shrink this list, never grow it.
LONG_FILES: dict[str, str] = {}
LINE_LIMIT = 650
GENERATED = ("_tables.h", "_tables.c")


def test_every_module_has_a_layer():
    unplaced = sorted({ig.layer_of(m)[1] for m in ig.all_modules() if ig.layer_of(m)[0] is None})
    assert not unplaced, f"add these to LAYERS in tests/import_graph.py and docs/architecture.md: {unplaced}"


def test_imports_point_down():
    bad = [f"{src}:{line} -> {dst}" for src, dst, _lazy, line in ig.upward_imports()
           if (src, dst) not in ig.ALLOWED_UP]
    assert not bad, "imports that go up a layer or across front ends: " + "; ".join(bad)


def test_allowed_exceptions_are_still_needed():
    # an exception whose import is gone is removed from the list (and from the docs)
    present = {(src, dst) for src, dst, _lazy, _line in ig.upward_imports()}
    assert set(ig.ALLOWED_UP) <= present, set(ig.ALLOWED_UP) - present


def test_allowed_circles_are_still_circles():
    circles = {tuple(c) for c in ig.cycles(ig.graph())}
    for pair in ig.ALLOWED_CIRCLES:
        assert tuple(sorted(pair)) in circles, f"{pair} is no circle now: remove it from ALLOWED_CIRCLES"


def test_no_import_circles():
    allowed = {tuple(sorted(pair)) for pair in ig.ALLOWED_CIRCLES}
    circles = [c for c in ig.cycles(ig.graph()) if tuple(c) not in allowed]
    assert not circles, circles


def test_no_private_names_across_modules():
    reads = [f"{src}:{line} takes {name} from {dst}" for src, dst, name, line in ig.private_reads()]
    assert not reads, reads


def test_no_private_attributes_read_across_modules():
    reads = [f"{mod}:{line} reaches .{name}" for mod, line, name, _how in ig.private_attribute_reads()
             if (mod, name) not in ig.ALLOWED_PRIVATE_ATTRIBUTES]
    assert not reads, "give the owner a public name for: " + "; ".join(reads)


def test_allowed_private_attributes_are_still_read():
    present = {(mod, name) for mod, _line, name, _how in ig.private_attribute_reads()}
    assert set(ig.ALLOWED_PRIVATE_ATTRIBUTES) <= present, set(ig.ALLOWED_PRIVATE_ATTRIBUTES) - present


def test_the_checker_sees_private_attributes():
    found = ig.private_attribute_reads({
        "fastbpe.encoding": "class Encoding:\n"
                            "    def __init__(self): self._table = 1\n"
                            "    def same(self, other): return other._table\n",
        "fastbpe.mixin": "class Mixin:\n    def size(self): return self._table\n",
        "fastbpe.tok": "from .mixin import Mixin\nclass Tok(Mixin):\n    def __init__(self): self._table = 2\n",
        "fastbpe.corpus": "def f(enc):\n    t = getattr(enc, '_far')\n    return enc._table, t._replace()\n",
        "fastbpe.sub": "from .encoding import Encoding\n"
                       "class Sub(Encoding):\n    def g(self, x): return self._table, self._other, x._table\n",
    })
    # another object's _name (also through getattr) and a self._name no class of the family
    # defines are reported; self._name of the class, its bases and its mixins are not
    assert [(m, line, name) for m, line, name, _how in found] == [
        ("fastbpe.corpus", 2, "_far"), ("fastbpe.corpus", 3, "_table"),
        ("fastbpe.sub", 3, "_other"), ("fastbpe.sub", 3, "_table")]


def test_no_god_files():
    # the benchmark scripts, tests and tools too (bench/peers.py reached 1,344 lines before it was
    # split by section, tests/test_encoding_parity.py 866)
    long = {}
    scripts = [path for folder in ("bench", "tests", "tools") for path in sorted((ig.ROOT / folder).glob("*.py"))]
    for path in ig.source_files() + sorted(ig.PACKAGE.rglob("*.h")) + sorted(ig.PACKAGE.rglob("*.pxi")) + scripts:
        rel = path.relative_to(ig.ROOT).as_posix()
        if rel.endswith(GENERATED) or rel in LONG_FILES:
            continue
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > LINE_LIMIT:
            long[rel] = n
    assert not long, f"split these by concern (limit {LINE_LIMIT} lines): {long}"


def test_long_file_exceptions_are_still_long():
    for rel in LONG_FILES:
        path = ig.ROOT / rel
        assert path.exists() and len(path.read_text(encoding="utf-8").splitlines()) > LINE_LIMIT, \
            f"{rel} fits now: remove it from LONG_FILES"


def test_the_checker_sees_imports():
    # the graph is read from the code: a known import must be found, lazily or not
    g = ig.graph()
    assert "fastbpe.registry" in g["fastbpe.encoding"]          # lazy, for pickling
    assert "fastbpe._core" in g["fastbpe.encoding"]             # module level
    assert "fastbpe._core" in g["fastbpe._merge_ids"]           # a cimport
    assert ig.layer_of("fastbpe.hf.tokenizer") == (4, "hf")
    assert ig.cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_docs_list_every_allowed_exception():
    doc = (ig.ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    for src, dst in [*ig.ALLOWED_UP, *ig.ALLOWED_CIRCLES]:
        assert f"`{src}` → `{dst}`" in doc, (src, dst)
    for module, name in ig.ALLOWED_PRIVATE_ATTRIBUTES:
        assert f"`{module}` reads `.{name}`" in doc, (module, name)
