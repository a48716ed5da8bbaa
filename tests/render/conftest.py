"""Fixtures of the figure tests."""

from __future__ import annotations

import pytest

from pecli.render import charts


@pytest.fixture
def drawn(monkeypatch):
    """The figures charts.py saves, kept instead of written."""
    figures = []
    monkeypatch.setattr(charts, "_save_laid_out", lambda figure, path, dpi: figures.append(figure))
    return figures
