"""Build the Cython kernels.  Every ``fastbpe/*.pyx`` becomes one extension module."""
import glob
import os
import re
import sys

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

if sys.platform == "win32":
    compile_args = ["/O2"]
else:
    compile_args = ["-O3", "-fno-strict-aliasing"]

# Cython's C goes to build/cython/, not beside the sources in fastbpe/.  A checkout built
# before keeps its fastbpe/*.c: each is moved there once (its time kept), so nothing is
# regenerated or recompiled for the move.
C_DIR = os.path.join("build", "cython")
for pyx in glob.glob(os.path.join("fastbpe", "*.pyx")):
    old_c, new_c = pyx[:-4] + ".c", os.path.join(C_DIR, pyx[:-4] + ".c")
    if os.path.exists(old_c) and not os.path.exists(new_c):
        os.makedirs(os.path.dirname(new_c), exist_ok=True)
        os.replace(old_c, new_c)


def headers_read_by(path, seen=None):
    """The C headers a module's C reads, through its .pxd/.pxi and nested #includes:
    setuptools recompiles a module only when a file in ``depends`` is newer, and a
    header change leaves Cython's .c as it was."""
    seen = set() if seen is None else seen
    if path in seen or not os.path.exists(path):
        return seen
    seen.add(path)
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for name in re.findall(r'["<]([\w./]+\.(?:h|pxi|pxd))[">]', text):
        headers_read_by(os.path.join("fastbpe", os.path.basename(name)), seen)
    for a, b in re.findall(r"cimport\s+([\w.]+)|from\s+([\w.]+)\s+cimport", text):
        headers_read_by(os.path.join("fastbpe", (a or b).split(".")[-1] + ".pxd"), seen)
    return seen


extensions = [
    Extension(
        "fastbpe." + os.path.splitext(os.path.basename(path))[0],
        [path],
        depends=sorted(h for h in headers_read_by(path) if h.endswith(".h")),
        include_dirs=["fastbpe", numpy.get_include()],
        extra_compile_args=compile_args,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for path in sorted(glob.glob(os.path.join("fastbpe", "*.pyx")))
]

setup(
    # compile the modules on every core (pip install, python -m build, cibuildwheel alike)
    options={"build_ext": {"parallel": os.cpu_count() or 1}},
    ext_modules=cythonize(
        extensions,
        build_dir=C_DIR,
        language_level=3,
        compiler_directives={
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
    ),
)
