"""Build the Cython kernels.  Every ``fastbpe/*.pyx`` becomes one extension module."""
import glob
import os
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

extensions = [
    Extension(
        "fastbpe." + os.path.splitext(os.path.basename(path))[0],
        [path],
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
