"""Packaging (issue 32): the metadata, the wheel builds cibuildwheel would run, the workflow
file, and one real build here: `python -m build` makes the sdist and a wheel from it; the wheel
installs into a fresh venv without Cython or a compiler and passes tools/wheel_smoke.py;
`auditwheel show` gives the platform tag it can carry.  The build takes ~3½ minutes on 2 cores
(deselect it with `-m "not packaging"`)."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

import pytest

import fastbpe

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(REPO, "pyproject.toml")
WORKFLOW = os.path.join(REPO, ".github", "workflows", "wheels.yml")

if not os.path.exists(PYPROJECT):
    pytest.skip("not run from a source tree (no pyproject.toml beside tests/)", allow_module_level=True)


def _toml():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml needs tomllib (3.11+) or tomli")
    with open(PYPROJECT, "rb") as f:
        return tomllib.load(f)


META = _toml()
PROJECT = META["project"]
CIBW = META["tool"]["cibuildwheel"]


def supported_pythons() -> list[str]:
    """The CPython minor versions the classifiers name ("3.9", ...), in order."""
    found = [c.rsplit(":: ", 1)[1] for c in PROJECT["classifiers"]
             if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)]
    return sorted(found, key=lambda v: int(v.split(".")[1]))


# --- metadata -------------------------------------------------------------------------------

def test_supported_pythons_agree():
    versions = supported_pythons()
    minors = [int(v.split(".")[1]) for v in versions]
    assert minors == list(range(minors[0], minors[-1] + 1)), f"a gap in the classifiers: {versions}"
    assert PROJECT["requires-python"] == f">={versions[0]}"
    assert CIBW["build"] == [f"cp3{m}-*" for m in minors]
    readme = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    assert f"Python {versions[0]}–{versions[-1]}" in readme, "README must name the supported Pythons"


def test_metadata_complete():
    assert PROJECT["license"] == "MIT"  # an SPDX expression, not the deprecated table
    assert "LICENSE" in PROJECT["license-files"]
    assert not [c for c in PROJECT["classifiers"] if c.startswith("License ::")]  # PEP 639: one place
    assert "fastbpe developers" in open(os.path.join(REPO, "LICENSE")).read()
    for prefix in ("Development Status ::", "Operating System :: POSIX :: Linux", "Operating System :: MacOS",
                   "Operating System :: Microsoft :: Windows", "Programming Language :: Cython",
                   "Programming Language :: Python :: 3 :: Only", "Typing :: Typed"):
        assert [c for c in PROJECT["classifiers"] if c.startswith(prefix)], prefix
    assert PROJECT["authors"] and PROJECT["readme"] == "README.md" and PROJECT["description"]
    setuptools_cfg = META["tool"]["setuptools"]
    assert setuptools_cfg["include-package-data"] is False  # wheels: no generated .c files
    assert "*.c" in setuptools_cfg["exclude-package-data"]["fastbpe"]


def test_version_has_one_source():
    # pyproject reads fastbpe.__version__; the CLI prints it (tests/test_cli_commands.py); the
    # changelog has a section for it; the built wheel's metadata is checked by the smoke test
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert META["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fastbpe.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", fastbpe.__version__)
    changelog = open(os.path.join(REPO, "CHANGELOG.md"), encoding="utf-8").read()
    assert re.search(rf"^## {re.escape(fastbpe.__version__)}\b", changelog, re.M)


# --- the wheel builds cibuildwheel would run, and the workflow that runs them ------------------

PLATFORM_TAGS = {  # platform -> {arch in pyproject: the identifiers' platform parts}
    "linux": {"x86_64": ["manylinux_x86_64", "musllinux_x86_64"],
              "aarch64": ["manylinux_aarch64", "musllinux_aarch64"]},
    "macos": {"x86_64": ["macosx_x86_64"], "arm64": ["macosx_arm64"]},
    "windows": {"AMD64": ["win_amd64"]},
}


@pytest.mark.parametrize("platform", sorted(PLATFORM_TAGS))
def test_cibuildwheel_lists_every_supported_python(platform):
    pytest.importorskip("cibuildwheel", reason="cibuildwheel runs on Python 3.11+ (the test extra installs it there)")
    out = subprocess.run([sys.executable, "-m", "cibuildwheel", "--print-build-identifiers",
                          "--platform", platform], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    listed = set(out.stdout.split())
    assert CIBW[platform]["archs"] == list(PLATFORM_TAGS[platform])
    expected = {f"cp{v.replace('.', '')}-{tag}" for v in supported_pythons()
                for tags in PLATFORM_TAGS[platform].values() for tag in tags}
    assert listed == expected, (sorted(listed - expected), sorted(expected - listed))


# The actions the workflow may name, each at a version checked to exist, with the inputs its
# action.yml declares at that version (read from the actions' repositories, 2026-11-27).
ACTIONS = {
    "actions/checkout@v7": {"repository", "ref", "token", "persist-credentials", "path", "clean",
                            "fetch-depth", "fetch-tags", "lfs", "submodules", "sparse-checkout"},
    "actions/setup-python@v7": {"python-version", "python-version-file", "cache", "architecture",
                                "check-latest", "allow-prereleases", "freethreaded", "update-environment"},
    "actions/upload-artifact@v7": {"name", "path", "if-no-files-found", "retention-days",
                                   "compression-level", "overwrite", "include-hidden-files"},
    "pypa/cibuildwheel@v4.2.0": {"package-dir", "output-dir", "config-file", "only", "extras"},
}
CIBW_ENV = {"CIBW_PLATFORM", "CIBW_ARCHS"}  # what the matrix may set (the rest is in pyproject)


def test_workflow_builds_every_platform_and_the_sdist():
    yaml = pytest.importorskip("yaml", reason="the test extra installs PyYAML")
    with open(WORKFLOW, encoding="utf-8") as f:
        flow = yaml.safe_load(f)
    triggers = flow.get("on", flow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(triggers)
    jobs = flow["jobs"]
    steps = [step for job in jobs.values() for step in job["steps"]]
    for step in steps:
        if "uses" in step:
            assert step["uses"] in ACTIONS, f"unchecked action or version: {step['uses']}"
            assert set(step.get("with", {})) <= ACTIONS[step["uses"]], step
    # one runner per (platform, arch) of [tool.cibuildwheel], each building only its own arch
    built = [(entry["platform"], entry["archs"]) for entry in jobs["wheels"]["strategy"]["matrix"]["include"]]
    wanted = [(platform, arch) for platform in PLATFORM_TAGS for arch in CIBW[platform]["archs"]]
    assert sorted(built) == sorted(wanted)
    (cibw_step,) = [s for s in jobs["wheels"]["steps"] if s.get("uses", "").startswith("pypa/cibuildwheel@")]
    assert set(cibw_step["env"]) == CIBW_ENV
    assert cibw_step["env"]["CIBW_ARCHS"] == "${{ matrix.archs }}"
    assert cibw_step["env"]["CIBW_PLATFORM"] == "${{ matrix.platform }}"
    uploads = [s for s in jobs["wheels"]["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads and uploads[0]["with"]["path"].endswith("*.whl")
    sdist_runs = " ".join(s.get("run", "") for s in jobs["sdist"]["steps"])
    assert "python -m build" in sdist_runs
    # the smoke test cibuildwheel runs on each installed wheel exists and is what CI checks here
    assert CIBW["test-command"] == "python tools/wheel_smoke.py"
    assert CIBW["test-sources"] == ["tools/wheel_smoke.py"]
    assert os.path.exists(os.path.join(REPO, "tools", "wheel_smoke.py"))


# --- one real build: sdist, the wheel from it, a fresh venv ----------------------------------

LEFTOVERS = re.compile(r"(\.c|\.o|\.obj|\.so|\.pyd|\.pyc|\.html)$|(^|/)(__pycache__|build|dist|\.pytest_cache|\.hypothesis)/")


def _tracked_package_files() -> set[str]:
    """The files under fastbpe/ a wheel must carry: git's tracked .py/.pyx/.pxd/.pxi/.h and py.typed
    (pyproject's package-data), or, outside a git checkout, the same patterns on disk."""
    patterns = (".py", ".pyx", ".pxd", ".pxi", ".h", "py.typed")
    out = subprocess.run(["git", "ls-files", "fastbpe"], cwd=REPO, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout.strip():
        names = out.stdout.split()
    else:
        names = [os.path.relpath(p, REPO).replace(os.sep, "/")
                 for p in glob.glob(os.path.join(REPO, "fastbpe", "**", "*"), recursive=True)]
    return {n for n in names if n.endswith(patterns) and "__pycache__" not in n}


def test_every_package_file_is_package_data():
    # a tracked file under fastbpe/ of another kind (a data file) would be left out of the
    # wheel: add its pattern to [tool.setuptools.package-data] and to _tracked_package_files
    out = subprocess.run(["git", "ls-files", "fastbpe"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        pytest.skip("not a git checkout")
    assert set(out.stdout.split()) == _tracked_package_files()
    assert META["tool"]["setuptools"]["package-data"]["fastbpe"] == ["*.pyx", "*.pxd", "*.pxi", "*.h", "py.typed"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(sdist path, wheel path): `python -m build` makes the sdist, then the wheel from it."""
    pytest.importorskip("build", reason="the test extra installs build")
    out_dir = tmp_path_factory.mktemp("dist")
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out_dir), REPO],
                         capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, f"{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    print(f"python -m build: {time.perf_counter() - started:.0f} s")
    (sdist,) = out_dir.glob("*.tar.gz")
    (wheel,) = out_dir.glob("*.whl")
    return sdist, wheel


@pytest.mark.packaging
def test_sdist_has_the_sources_and_no_leftovers(built):
    sdist, _ = built
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert _tracked_package_files() <= names
    for needed in ["LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "setup.py", "MANIFEST.in",
                   "tests/conftest.py", "tests/helpers.py", "tests/datasources.py", "tests/reference.py",
                   "tests/reference_encode.py", "tools/tiktoken_unicode_overrides.txt", "tools/wheel_smoke.py"]:
        assert needed in names, needed
    assert not [n for n in names if LEFTOVERS.search(n)]


@pytest.mark.packaging
def test_wheel_from_the_sdist_has_exactly_the_package(built):
    _, wheel = built
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    dist_info = {n for n in names if n.split("/", 1)[0].endswith(".dist-info")}
    files = names - dist_info
    extensions = {n for n in files if n.endswith((".so", ".pyd"))}
    kernels = {n[:-4] for n in _tracked_package_files() if n.endswith(".pyx")}
    assert {n.split(".", 1)[0] for n in extensions} == kernels  # one compiled module per .pyx
    assert files - extensions == _tracked_package_files()      # and the package's files, no more
    assert not [n for n in files - extensions if LEFTOVERS.search(n)]
    metadata = zipfile.ZipFile(wheel).read(next(n for n in dist_info if n.endswith("/METADATA"))).decode()
    assert f"\nVersion: {fastbpe.__version__}\n" in metadata
    assert f"\nRequires-Python: {PROJECT['requires-python']}\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    assert any(n.endswith("/licenses/LICENSE") for n in dist_info)


@pytest.mark.packaging
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="auditwheel reads Linux (ELF) wheels")
def test_auditwheel_gives_a_platform_tag(built):
    _, wheel = built
    auditwheel = shutil.which("auditwheel") or pytest.skip("the test extra installs auditwheel")
    out = subprocess.run([auditwheel, "show", str(wheel)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    text = " ".join(out.stdout.split())
    tag = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    assert tag, text
    print(f"auditwheel show: {tag.group(1)}")
    assert re.fullmatch(r"(many|musl)linux_\d+_\d+_\w+", tag.group(1)), text
    assert "system-provided shared libraries" not in text or "libpython" not in text


@pytest.mark.packaging
def test_wheel_installs_and_runs_without_cython_or_a_compiler(built, tmp_path):
    _, wheel = built
    venv = tmp_path / "venv"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = str(next(p for p in (venv / "bin" / "python", venv / "Scripts" / "python.exe") if p.exists()))
    # no PYTHONPATH anywhere: a checkout on it (PYTHONPATH=. pytest) would look installed to pip
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CC", "CXX", "LDSHARED")}
    out = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                          "--disable-pip-version-check", "--only-binary", ":all:", str(wheel)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    installed = time.perf_counter() - started
    # no compiler and no Cython: PATH holds only the venv; the smoke test runs outside the repo
    env["PATH"] = os.path.dirname(python)
    probe = subprocess.run([python, "-c", "import importlib.util as u, shutil; "
                            "print(u.find_spec('Cython'), [c for c in ('cc', 'gcc', 'clang', 'cl') if shutil.which(c)])"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert probe.stdout.split() == ["None", "[]"], probe.stdout + probe.stderr
    smoke = tmp_path / "wheel_smoke.py"
    shutil.copy(os.path.join(REPO, "tools", "wheel_smoke.py"), smoke)
    out = subprocess.run([python, str(smoke)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert str(venv) in out.stdout  # the venv's fastbpe, not the checkout's
    print(f"venv + install: {installed:.1f} s; smoke test:\n{out.stdout}")
