"""The sources build for every wheel target (issue 32), checked here on Linux x86-64.

The kernels' own C (the fastbpe/*.h headers and the C blocks inside .pyx/.pxd files) is compiled
with zig's clang (the `ziglang` package) for each OS and CPU the wheels cover, and once as
MSVC's cl.exe sees it: clang in MSVC mode with the macros cl.exe does not define taken away
(__GNUC__, __clang__, __SSE2__, __x86_64__), so each GCC/Clang builtin must have its MSVC or
plain-C path.  The Python parts that differ on Windows are checked by simulating it."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

from fastbpe.formats import atomic

FASTBPE = pathlib.Path(__file__).resolve().parent.parent / "fastbpe"
TARGETS = ["x86_64-linux-gnu", "aarch64-linux-gnu", "x86_64-linux-musl", "aarch64-linux-musl",
           "x86_64-macos", "aarch64-macos", "x86_64-windows-gnu"]
# what only GCC/Clang (or only Linux) has: none of it may reach cl.exe
GCC_ONLY = re.compile(r"__builtin_\w+|__attribute__|__atomic_\w+|_Thread_local|madvise|posix_memalign"
                      r"|__get_cpuid\w*|__cpuid_count|xgetbv")

# Uses of every header and C block, so that each inline function is compiled.
USES = """
int fb_use_all(const uint8_t *s, ptrdiff_t n, unsigned char *flag) {
    fb_window w;
    void *table = fb_table_alloc((size_t)1 << 22, 1);
    fb_window_init(&w, 0);
    fb_classifier_set(FB_CLS_AUTO);
    fb_window_extend(&w, s, n, 0, 1);
    fb_prefetch(s);
    free(table);
    fb_store_u8(flag, 1);
    return (int)(fb_ctz64(8) + fb_clz64(1)) + fb_cpu_has_avx2() + fb_load_u8(flag)
        + (int)fb_chain_state_get()->pos + FB_LITTLE_ENDIAN;
}
"""


def _c_blocks() -> str:
    """The C inside `cdef extern from *:` blocks of the .pyx/.pxd files, after the few Python
    types they name."""
    out = ["typedef ptrdiff_t Py_ssize_t;", "typedef struct _object PyObject;",
           "typedef struct _typeobject { PyObject* (*tp_alloc)(struct _typeobject*, Py_ssize_t);\n"
           "    PyObject* (*tp_new)(struct _typeobject*, PyObject*, PyObject*); } PyTypeObject;"]
    for path in sorted([*FASTBPE.glob("*.pyx"), *FASTBPE.glob("*.pxd")]):
        for m in re.finditer(r'cdef extern from \*:\n\s+"""(.*?)"""', path.read_text(encoding="utf-8"), re.S):
            out.append(f"/* {path.name} */\n{m.group(1)}")
    return "\n".join(out)


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    pytest.importorskip("ziglang", reason="the test extra installs ziglang (a clang for every target)")
    folder = tmp_path_factory.mktemp("portable")
    headers = "".join(f'#include "{h.name}"\n' for h in sorted(FASTBPE.glob("*.h")))
    (folder / "all.c").write_text("#include <stdint.h>\n#include <stddef.h>\n#include <stdlib.h>\n"
                                  + headers + _c_blocks() + USES, encoding="utf-8")
    return folder


def _zig(*args, cwd):
    return subprocess.run([sys.executable, "-m", "ziglang", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


@pytest.mark.parametrize("target", TARGETS)
def test_kernel_c_compiles_for_each_wheel_target(sources, target):
    out = _zig("cc", "-target", target, "-std=gnu11", "-O1", "-Wall", "-Wno-unused-function",
               "-Wno-unused-const-variable", "-Wno-unused-variable", "-Werror=implicit-function-declaration",
               f"-I{FASTBPE}", "-c", "all.c", "-o", f"{target}.o", cwd=sources)
    assert out.returncode == 0, out.stderr[-3000:]
    if target.endswith("macos"):
        # Apple's runtime has no ___cpu_model: __builtin_cpu_supports would make the module
        # fail to import on an Intel Mac
        pre = _zig("cc", "-target", target, f"-I{FASTBPE}", "-E", "-P", "all.c", cwd=sources)
        assert pre.returncode == 0, pre.stderr[-2000:]
        assert "__builtin_cpu_supports" not in pre.stdout and "__builtin_cpu_init" not in pre.stdout


def test_kernel_c_as_msvc_sees_it(sources):
    """cl.exe defines _MSC_VER and _M_X64 but neither __GNUC__, __clang__, __SSE2__ nor
    __x86_64__: clang in MSVC mode reads its intrinsic headers with its own macros, then they
    are taken away before our code (libc headers: declarations of the few functions used)."""
    stubs = sources / "msvc_libc"
    stubs.mkdir(exist_ok=True)
    (stubs / "stdlib.h").write_text("#include <stddef.h>\nvoid *malloc(size_t); void *calloc(size_t, size_t); void free(void *);\n"
                                    "unsigned __int64 _byteswap_uint64(unsigned __int64);\n")
    (stubs / "string.h").write_text("#include <stddef.h>\nvoid *memcpy(void *, const void *, size_t);\n"
                                    "void *memset(void *, int, size_t); void *memchr(const void *, int, size_t);\n")
    (stubs / "wchar.h").write_text("#include <stddef.h>\n")  # WCHAR_MAX (0xffff) from clang's stdint.h
    (stubs / "malloc.h").write_text("#include <stdlib.h>\nvoid *_aligned_malloc(size_t, size_t); void _aligned_free(void *);\n")
    (stubs / "setjmp.h").write_text("typedef int jmp_buf[16];\n")
    for linux_only in ("cpuid.h", "sys/mman.h"):
        (stubs / linux_only).parent.mkdir(exist_ok=True)
        (stubs / linux_only).write_text('#error "a GCC- or Linux-only header reached the MSVC build"\n')
    (sources / "msvc.c").write_text(
        "#include <intrin.h>\n#include <emmintrin.h>\n#include <immintrin.h>\n#include <string.h>\n"
        "#undef __clang__\n#undef __GNUC__\n#undef __SSE2__\n#undef __SSE__\n#undef __x86_64__\n#undef __BYTE_ORDER__\n"
        "#if defined(__GNUC__) || defined(__clang__) || !defined(_MSC_VER) || !defined(_M_X64)\n"
        '#error "not cl.exe\'s macros"\n#endif\n'
        "/* ---- fastbpe ---- */\n#include \"all.c\"\n", encoding="utf-8")
    include = pathlib.Path(__import__("ziglang").__file__).parent / "lib" / "include"
    flags = ["clang", "--target=x86_64-pc-windows-msvc", "-fms-extensions", "-fms-compatibility",
             "-nostdinc", "-isystem", str(include), f"-I{stubs}", f"-I{FASTBPE}",
             "-Wno-builtin-macro-redefined"]
    out = _zig(*flags, "-fsyntax-only", "-Wall", "-Wno-unused-function", "-Wno-unused-const-variable",
               "-Werror=implicit-function-declaration", "msvc.c", cwd=sources)
    assert out.returncode == 0, out.stderr[-3000:]
    pre = _zig(*flags, "-E", "-P", "msvc.c", cwd=sources)
    assert pre.returncode == 0, pre.stderr[-2000:]
    ours = pre.stdout[pre.stdout.index("fb_prefetch"):]  # _portable.h comes first of our headers
    assert not GCC_ONLY.findall(ours), sorted(set(GCC_ONLY.findall(ours)))
    macros = _zig(*flags, "-dM", "-E", "msvc.c", cwd=sources).stdout
    # SSE2 paths on (every x64 has it), AVX2 off (its code needs GCC/Clang's target attribute)
    for name, value in (("FB_MSVC", "1"), ("FB_HAVE_SSE2", "1"), ("FB_RUNS_SSE2", "1"), ("FB_HAVE_AVX2", "0")):
        assert f"#define {name} {value}\n" in macros, name


# --- the Python side, as on Windows -----------------------------------------------------------

def test_atomic_write_without_fchmod(tmp_path, monkeypatch):
    # Windows' os has no fchmod before Python 3.13: the temporary's mode is set by name
    monkeypatch.delattr(os, "fchmod", raising=False)
    target = tmp_path / "out.bin"
    data = b"a\nb\r\n\x00\xff"
    with atomic.atomic_writer(target) as f:
        f.write(data)
    assert target.read_bytes() == data


def test_no_process_probe_on_windows(monkeypatch):
    # os.kill(pid, 0) on Windows would send CTRL_C_EVENT to a process group, not probe
    monkeypatch.setattr(os, "name", "nt")
    monkeypatch.setattr(os, "kill", lambda *a: pytest.fail("os.kill called on Windows"))
    assert atomic.process_alive(os.getpid() + 1)


def test_binary_descriptors():
    assert atomic._O_BINARY == getattr(os, "O_BINARY", 0)  # O_BINARY where it exists (Windows)
