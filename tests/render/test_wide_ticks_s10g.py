"""compare -o of a wide table (64 × 1,000,000): the x-axis tick labels ran together ("200000400000…",
issue 30). Index axes reaching 10,000 are ticked in engineering notation (200k, 1M), a few across; a
128 × 64 table's ticks are as they were."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pecli.render import charts


@pytest.fixture
def drawn(monkeypatch):
    """The figures save_difference lays out, kept (and still saved)."""
    figures = []
    save = charts._save_laid_out

    def keep(figure, path, dpi):
        save(figure, path, dpi)
        figures.append(figure)

    monkeypatch.setattr(charts, "_save_laid_out", keep)
    return figures


def _labels(axes) -> list:
    renderer = axes.figure.canvas.get_renderer()
    low, high = sorted(axes.get_xlim())
    return [
        (label.get_text(), label.get_window_extent(renderer))
        for tick, label in zip(axes.get_xticks(), axes.get_xticklabels(), strict=True)
        if low <= tick <= high and label.get_text()
    ]


def test_a_million_columns_ticks_keep_apart(drawn, tmp_path):
    a = np.sin(np.arange(2 * 1_000_000, dtype=np.float64) * 1e-5).reshape(2, 1_000_000)
    charts.save_difference(a, a * 0.5, str(tmp_path / "wide.png"), labels=("a", "b"))
    (figure,) = drawn
    for axes in figure.axes[:3]:  # the three heatmaps (then their colourbars)
        labels = _labels(axes)
        assert [text for text, _ in labels] == ["0", "200k", "400k", "600k", "800k"]
        for (_, left), (_, right) in itertools.pairwise(labels):
            assert left.x1 + 5 < right.x0  # a gap between each label and the next


def test_a_128_by_64_table_keeps_its_ticks(drawn, tmp_path):
    a = np.cos(np.arange(128 * 64, dtype=np.float64) * 0.01).reshape(128, 64)
    charts.save_difference(a, a + 1.0, str(tmp_path / "normal.png"), labels=("a", "b"))
    axes = drawn[0].axes[0]
    assert [text for text, _ in _labels(axes)] == ["0", "20", "40", "60"]
    assert [label.get_text() for label in axes.get_yticklabels()][1:-1] == ["0", "20", "40", "60", "80", "100", "120"]
