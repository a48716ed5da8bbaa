"""Issue 32: a figure of A, B and A − B is drawn once, and the same as before."""

import functools

import numpy as np
import pytest

import pecli
from pecli.render import charts


def _stacks() -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(pecli.encode("alibi", 64, None, heads=4), dtype=np.float64)
    return a, 1.1 * a + np.sin(np.arange(64.0))


def _count_draws(monkeypatch) -> dict[str, int]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    counts = {"draw": 0, "print_png": 0}
    draw, print_png = Figure.draw, FigureCanvasAgg.print_png

    def counted_draw(self, renderer):
        counts["draw"] += 1
        return draw(self, renderer)

    @functools.wraps(print_png)  # savefig passes only the keywords its signature names
    def counted_print_png(self, *args, **kwargs):
        counts["print_png"] += 1
        return print_png(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "draw", counted_draw)
    monkeypatch.setattr(FigureCanvasAgg, "print_png", counted_print_png)
    return counts


def test_a_stack_of_heads_is_drawn_once(monkeypatch, tmp_path):
    """savefig drew the figure twice (a layout pass, then the rendering one): 2 draws, 2 print_png."""
    a, b = _stacks()
    counts = _count_draws(monkeypatch)
    charts.save_difference(a, b, str(tmp_path / "fig.png"), labels=("a.npy", "b.npy"))
    assert counts == {"draw": 1, "print_png": 1}


@pytest.mark.parametrize("case", ["stack", "table", "row"])
def test_one_draw_gives_the_picture_of_two(monkeypatch, tmp_path, case):
    """The PNG is byte for byte the one savefig's two passes gave (its layout engine left set)."""
    a, b = _stacks()
    a, b = {"stack": (a, b), "table": (a[1], b[1]), "row": (a[1, 3], b[1, 3])}[case]
    charts.save_difference(a, b, str(tmp_path / "once.png"), labels=("a", "b"))
    counts = _count_draws(monkeypatch)
    monkeypatch.setattr(charts, "_save_laid_out", charts.save_figure)  # the old way: savefig lays it out
    charts.save_difference(a, b, str(tmp_path / "twice.png"), labels=("a", "b"))
    assert counts["draw"] == 2  # the old way did draw twice
    assert (tmp_path / "once.png").read_bytes() == (tmp_path / "twice.png").read_bytes()


def test_a_profile_is_drawn_once(monkeypatch, tmp_path):
    h = np.arange(-20, 21.0)
    counts = _count_draws(monkeypatch)
    charts.save_profile(h, np.cos(h / 5), np.cos(h / 5) - 0.2, np.cos(h / 5) + 0.1, str(tmp_path / "p.png"),
                        title="dot", y_label="dot")  # fmt: skip
    assert counts == {"draw": 1, "print_png": 1}
