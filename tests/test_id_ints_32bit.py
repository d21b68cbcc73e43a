"""review: _id_output's immortal int block on a 32-bit CPython 3.11 (armv7 Raspberry Pi OS bookworm,
win32, i686 musl: 30-bit digits are the default from 3.11 on every platform, so the block is used).

Below 3.12 the block's ints get a reference count of 2^60 on 64-bit but PY_SSIZE_T_MAX / 2 = 2^30 - 1
on 32-bit; a list of ids takes no reference and each freed item takes one (measured on 3.9/3.11:
freeing 100,000 items lowers the count by 100,000).  So after ~1.07e9 freed occurrences of one id (a
common token: ~3% of ~30e9 tokens) the count reaches 0 and CPython frees an int inside the block
(PyObject_Free on an interior pointer of a PyMem_RawCalloc block): a crash or heap corruption.

The test runs the module's own C block (fb_id_ints_reserve) compiled for i386 (zig's clang, as tests/test_portability does) against a
minimal Python.h that lays ints out as 32-bit CPython 3.11 does, and asserts that either the block is
not used there, or its margin is >= 2^50 freed items.  Failed after 3125d30: block used, margin 2^30
(from the review: /work/team/review-test_id_ints_32bit.py)."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

FASTBPE = pathlib.Path(__file__).resolve().parent.parent / "fastbpe"
if not (FASTBPE / "_id_output.pyx").exists():
    FASTBPE = pathlib.Path.cwd() / "fastbpe"

STUB = r"""
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#define PY_VERSION_HEX 0x030B07F0
#define SIZEOF_VOID_P 4
#define SIZEOF_SIZE_T 4
typedef int Py_ssize_t;                         /* 32-bit */
#define PY_SSIZE_T_MAX ((Py_ssize_t)(((size_t)-1) >> 1))
typedef struct _typeobject { Py_ssize_t tp_basicsize, tp_itemsize; } PyTypeObject;
typedef struct _object { Py_ssize_t ob_refcnt; PyTypeObject* ob_type; } PyObject;
typedef struct { PyObject ob_base; Py_ssize_t ob_size; uint32_t ob_digit[1]; } PyLongObject;
static PyTypeObject PyLong_Type = {12, 4};      /* offsetof(ob_digit) and a 30-bit digit, on i386/armv7 */
static PyObject _Py_NoneStruct = {1, 0};
#define Py_None (&_Py_NoneStruct)
#define Py_TYPE(o) (((PyObject*)(o))->ob_type)
#define Py_SIZE(o) (((PyLongObject*)(o))->ob_size)
static PyObject* PyLong_FromLong(long v) {
    PyLongObject* o = calloc(1, 16);
    o->ob_base.ob_refcnt = 1; o->ob_base.ob_type = &PyLong_Type;
    o->ob_size = v != 0; o->ob_digit[0] = (uint32_t)v;
    return (PyObject*)o;
}
#define Py_DECREF(o) free(o)
#define Py_XDECREF(o) free(o)
#define PyMem_RawCalloc calloc
#define PyMem_RawFree free
#define PyErr_NoMemory() ((void)0)
"""

MAIN = r"""
int main(void) {
    if (fb_id_ints_reserve(1000) != 0) return 2;
    if (fb_id_off || fb_id_count == 0) { printf("off\n"); return 0; }
    printf("%ld\n", (long)((PyObject*)(fb_id_base + 1000 * FB_ID_STRIDE))->ob_refcnt);
    return 0;
}
"""


def _c_block() -> str:
    text = (FASTBPE / "_id_output.pyx").read_text(encoding="utf-8")
    m = re.search(r'cdef extern from "Python.h":[^\n]*\n\s+"""(.*?)"""', text, re.S)
    assert m, "the C block of _id_output.pyx"
    return m.group(1)


def test_block_margin_on_32_bit_cpython_3_11(tmp_path):
    pytest.importorskip("ziglang", reason="the test extra installs ziglang (a clang for every target)")
    src = tmp_path / "idints32.c"
    src.write_text(STUB + _c_block() + MAIN, encoding="utf-8")
    exe = tmp_path / "idints32"
    build = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", "x86-linux-musl", "-O1",
                            "-o", str(exe), str(src)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr[-2000:]
    try:
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    except OSError as e:   # a kernel without 32-bit x86 support
        pytest.skip(f"cannot run an i386 binary here: {e}")
    assert run.returncode == 0, run.stderr
    out = run.stdout.strip()
    if out == "off":
        return
    margin = int(out)
    assert margin >= 2 ** 50, (
        f"32-bit CPython 3.11: the block is used with a reference count of {margin} (~2^30): "
        "~1e9 freed list items holding one id bring it to 0 and CPython frees memory it never allocated")
