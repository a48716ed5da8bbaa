"""The package people install: the sdist rebuilds the wheel, the wheel installs and runs on its own,
and its metadata asks for ranges that leave a user's newer torch alone."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

import pecli

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.xdist_group("packaging")  # one worker builds the sdist and wheel (the module fixture) once
NOT_SHIPPED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache")
SHARED_FILES = [
    "share/man/man1/pecli.1",
    "share/bash-completion/completions/pecli.bash",
    "share/zsh/site-functions/_pecli",
    "share/fish/vendor_completions.d/pecli.fish",
]


def _build(backend_call: str, source: Path, out: Path) -> Path:
    """Run a setuptools PEP 517 hook in ``source`` (no isolation: this interpreter's setuptools)."""
    code = f"import sys; from setuptools import build_meta; print(build_meta.{backend_call}(sys.argv[1]))"
    completed = subprocess.run(
        [sys.executable, "-c", code, str(out)], cwd=source, capture_output=True, text=True, timeout=300
    )
    assert completed.returncode == 0, completed.stderr
    return out / completed.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def dists(tmp_path_factory) -> tuple[Path, Path]:
    """(sdist, wheel), the wheel built from the unpacked sdist, not from the checkout."""
    work = tmp_path_factory.mktemp("dist")
    checkout = work / "checkout"
    shutil.copytree(ROOT, checkout, ignore=NOT_SHIPPED)
    sdist = _build("build_sdist", checkout, work)
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "unpacked", filter="data")
    (unpacked,) = (work / "unpacked").iterdir()
    return sdist, _build("build_wheel", unpacked, work)


def test_sdist_holds_what_a_rebuild_and_the_tests_need(dists):
    sdist, _ = dists
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    needed = ["README.md", "LICENSE", "pyproject.toml", "MANIFEST.in", "man/pecli.1", "scripts/generate_docs.py"]
    needed += ["completions/pecli.bash", "completions/_pecli", "completions/pecli.fish", "docs/index.md"]
    needed += ["tests/conftest.py", "tests/test_packaging.py", "tests/constraints-ci.txt", "pecli/__main__.py"]
    assert not [name for name in needed if name not in names]
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


def _wheel_metadata(wheel: Path):
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return Parser().parsestr(archive.read(name).decode())


def test_wheel_metadata_accepts_any_newer_torch(dists):
    metadata = _wheel_metadata(dists[1])
    assert metadata["Version"] == pecli.__version__
    assert metadata["License-Expression"] == "MIT" and metadata["License-File"] == "LICENSE"
    requirements = [Requirement(line) for line in metadata.get_all("Requires-Dist")]
    (torch,) = [r for r in requirements if r.name == "torch" and r.marker.evaluate({"extra": "torch"})]
    assert [version in torch.specifier for version in ("2.0.1", "2.1.0", "2.13.0", "2.14.1", "3.0")] == [
        False, True, True, True, True,
    ]  # fmt: skip
    caps = ("<", "<=", "~=", "==")
    capped = {r.name: str(r.specifier) for r in requirements if any(s.operator in caps for s in r.specifier)}
    assert capped == {"typer": "<0.29,>=0.26"}  # the one cap, with its reason in pyproject.toml


def _pins(constraints: str) -> dict[str, Version]:
    """name -> pinned version of a constraints file in tests/."""
    lines = (ROOT / "tests" / constraints).read_text().splitlines()
    requirements = [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]
    return {r.name.replace("_", "-").lower(): Version(next(iter(r.specifier)).version) for r in requirements}


def test_lowest_constraints_pin_the_stated_lower_bounds(dists):
    """tests/constraints-lowest.txt, which .ci/run installs, is exactly the floor of each published range."""
    requirements = map(Requirement, _wheel_metadata(dists[1]).get_all("Requires-Dist"))
    floors = {
        r.name.replace("_", "-").lower(): Version(s.version)
        for r in requirements
        if r.marker is None or r.marker.evaluate({"extra": "torch"})
        for s in r.specifier
        if s.operator == ">="
    }
    pins = _pins("constraints-lowest.txt")
    assert pins.pop("torch") == _pins("constraints-ci.txt")["torch"]  # no torch 2.1 CPU wheel reaches CI
    floors.pop("torch")
    assert pins == floors


def test_installed_wheel_runs_without_the_checkout(dists, tmp_path):
    """The wheel, installed into a fresh venv that borrows only this interpreter's dependencies."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True
    ).stdout.strip()
    # a path line, not a site dir: the .pth files there (this checkout's editable install) are not run
    Path(site, "borrowed-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # no PYTHONPATH, and --ignore-installed: pip must not take the checkout or the editable install for pecli
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index"]
    install += ["--ignore-installed", str(dists[1])]
    completed = subprocess.run(install, capture_output=True, text=True, env=env, timeout=300)
    assert completed.returncode == 0, completed.stderr
    assert not [path for path in SHARED_FILES if not (venv / path).is_file()]
    assert (venv / SHARED_FILES[0]).read_text() == (ROOT / "man" / "pecli.1").read_text()

    where = subprocess.run(
        [python, "-c", "import pecli; print(pecli.__file__)"], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    version = subprocess.run([venv / "bin" / "pecli", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith(f"pecli {pecli.__version__} (numpy ")
    generated = subprocess.run(
        [venv / "bin" / "pecli", "generate", "--d", "8", "--len", "4", "-o", "x.npy"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert generated.returncode == 0, generated.stderr
    numpy = pytest.importorskip("numpy")
    table = numpy.load(tmp_path / "x.npy")
    assert table.shape == (4, 8) and float(table[1, 0]) == pytest.approx(numpy.sin(1.0), abs=1e-7)
