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
