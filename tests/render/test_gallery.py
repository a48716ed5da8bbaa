"""The gallery is a baseline: redraw every figure and compare it with the committed one.

A failure here means a picture changed: look at the new one (``python scripts/make_gallery.py``
rewrites docs/gallery/) and commit it only if it is what a reader should see.
"""

from __future__ import annotations

import importlib.util

import pytest

from tests.paths import ROOT

ROOT = ROOT
GALLERY = ROOT / "docs" / "gallery"

pytestmark = pytest.mark.xdist_group("gallery")  # one worker redraws the gallery (the module fixture) once


def _make_gallery_module():
    spec = importlib.util.spec_from_file_location("make_gallery", ROOT / "scripts" / "make_gallery.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def redrawn(tmp_path_factory):
    module = _make_gallery_module()
    directory = tmp_path_factory.mktemp("gallery")
    module.make_gallery(directory)
    return module, directory


def test_every_figure_matches_its_committed_baseline(redrawn):
    from matplotlib.testing.compare import compare_images

    module, directory = redrawn
    for name in module.FIGURES:
        failure = compare_images(str(GALLERY / f"{name}.png"), str(directory / f"{name}.png"), tol=2)
        assert failure is None, failure


def test_every_terminal_capture_matches_its_committed_baseline(redrawn):
    module, directory = redrawn
    for name in module.FIGURES:
        expected = (GALLERY / f"{name}.txt").read_text(encoding="utf-8")
        assert (directory / f"{name}.txt").read_text(encoding="utf-8") == expected, name


def test_gallery_readme_is_current_and_linked_and_small(redrawn):
    module, _ = redrawn
    assert (GALLERY / "README.md").read_text(encoding="utf-8") == module.gallery_readme()
    assert "gallery/README.md" in (ROOT / "docs" / "plot.md").read_text(encoding="utf-8")
    assert sum(path.stat().st_size for path in GALLERY.iterdir()) < 2_000_000
