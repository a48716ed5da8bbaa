"""Attack round of session 6 on the pictures (issue 30): what each figure shows, read from the figure itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from matplotlib.figure import Figure

from tests.conftest import run_in_process

MODELS = Path(__file__).resolve().parents[1] / "data" / "models"


@pytest.fixture
def drawn(monkeypatch):
    """The figures the command saves, in order (they are still written)."""
    figures: list[Figure] = []
    real = Figure.savefig

    def save(self, *args, **kwargs):
        figures.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", save)
    return figures


def _titles(figure: Figure) -> str:
    texts = [axes.get_title() for axes in figure.axes]
    if figure._suptitle is not None:
        texts.append(figure._suptitle.get_text())
    return "\n".join(texts)


def test_a_model_directory_s_distance_figure_names_the_model(tmp_path, drawn):
    # the title ran "rotary score … — rope: base=500000.0, scaling=llama3, factor=8.0, …" and the
    # shortening cut the model's name, which came last
    result = run_in_process("distance", str(MODELS / "llama3"), "-o", str(tmp_path / "d.png"))
    assert result.code == 0, result.stderr
    [figure] = drawn
    title = _titles(figure)
    assert title.replace("\n", " ").rstrip().endswith("— llama3"), title
    assert "scaling=llama3" in title


def test_fit_title_keeps_the_closing_name_and_its_line_budget():
    from pecli.render.titles import fit_title

    title = "dot — rope: " + ", ".join(f"parameter{i}=1.0" for i in range(40)) + " — my-model"
    fitted = fit_title(title, 4.0)
    lines = fitted.split("\n")
    assert len(lines) == 2 and lines[-1].endswith("… — my-model"), fitted
    longest = max(len(line) for line in fit_title("x" * 10, 4.0, max_lines=1).split("\n"))
    assert longest <= 10
    # a short title is untouched, and a long closing part is shortened as any text
    assert fit_title("dot — a.npy", 8.0) == "dot — a.npy"
    assert fit_title("a " * 200 + "— " + "b" * 300, 4.0).count("\n") == 1


@pytest.mark.parametrize("value", [3.0, -2.0, 0.0])
def test_a_constant_table_s_colour_bar_says_its_one_value(tmp_path, drawn, value):
    # the colour bar read "value (3 … 4)" for a table of 3s: the unit span given to the map, not the data
    import numpy as np

    path = tmp_path / "flat.npy"
    np.save(path, np.full((50, 16), value))
    result = run_in_process("plot", str(path), "-o", str(tmp_path / "flat.png"))
    assert result.code == 0, result.stderr
    [figure] = drawn
    labels = [axes.get_ylabel() for axes in figure.axes]
    assert f"value: every one {value + 0.0:g}" in labels, labels
    [heatmap] = [axes for axes in figure.axes if axes.get_xlabel() == "Embedding Dimension"]
    [image] = [*heatmap.images, *heatmap.collections]
    assert np.all(np.asarray(image.get_array()) == value)


def test_grey_cells_are_named_in_the_figure(tmp_path, drawn):
    # rows of NaN were drawn grey with nothing in the image saying what grey means (only a warning on stderr)
    import numpy as np

    table = np.random.default_rng(0).normal(size=(40, 16))
    table[10:13] = np.nan
    np.save(tmp_path / "nan.npy", table)
    result = run_in_process("plot", str(tmp_path / "nan.npy"), "-o", str(tmp_path / "nan.png"))
    assert result.code == 0, result.stderr
    [figure] = drawn
    assert [text.get_text() for text in figure.texts] == ["grey: 48 NaN or ±inf values"]


def test_a_finite_table_s_figure_has_no_grey_note(tmp_path, drawn):
    import numpy as np

    np.save(tmp_path / "ok.npy", np.random.default_rng(0).normal(size=(40, 16)))
    assert run_in_process("plot", str(tmp_path / "ok.npy"), "-o", str(tmp_path / "ok.png")).code == 0
    [figure] = drawn
    assert figure.texts == []


def _axes_pixels(figure: Figure, x_label: str) -> tuple[float, float]:
    """The pixel height and width of the axes whose x label starts with ``x_label``."""
    figure.canvas.draw()
    [axes] = [axes for axes in figure.axes if axes.get_xlabel().startswith(x_label)]
    box = axes.get_window_extent()
    return box.height + 1, box.width + 1  # a partial pixel at either edge


def _heatmap_cells(figure: Figure):
    import numpy as np

    [axes] = [axes for axes in figure.axes if axes.get_xlabel() == "Position"]
    [mesh] = [*axes.images, *axes.collections]
    return np.asarray(mesh.get_array())


@pytest.mark.parametrize("size", [[], ["--dpi", "200", "--figsize", "4,4"]])
def test_a_long_distance_matrix_gets_one_cell_per_pixel_and_says_so(tmp_path, drawn, size):
    # block means were 600 × 700 cells whatever the figure: drawn into 462 × 435 pixels (aliasing the
    # diagonal away), and the figure's note said "averaged to 599 pixels"
    import numpy as np

    np.save(tmp_path / "long.npy", np.random.default_rng(0).normal(size=(3000, 4)))
    result = run_in_process("distance", str(tmp_path / "long.npy"), "-o", str(tmp_path / "d.png"), *size)
    assert result.code == 0, result.stderr
    [figure] = drawn
    rows, cols = _heatmap_cells(figure).shape
    high, wide = _axes_pixels(figure, "Position")
    assert high / 2 < rows <= high and wide / 2 < cols <= wide, (rows, cols, high, wide)
    [note] = [text.get_text() for text in figure.texts]
    assert f"rows averaged to {rows} pixels" in note and f"columns averaged to {cols} (3000)" in note


def test_a_long_score_matrix_figure_gets_one_cell_per_pixel(tmp_path, drawn):
    result = run_in_process("distance", "rope", "--d", "8", "--len", "2000", "-o", str(tmp_path / "r.png"))
    assert result.code == 0, result.stderr
    [figure] = drawn
    [axes] = [axes for axes in figure.axes if axes.get_xlabel().startswith("Key position")]
    [mesh] = [*axes.images, *axes.collections]
    rows, cols = mesh.get_array().shape
    high, wide = _axes_pixels(figure, "Key position")
    assert high / 2 < rows <= high and wide / 2 < cols <= wide, (rows, cols, high, wide)


@pytest.mark.parametrize(
    ("args", "stop"),
    [
        (["--len", "20000"], "offsets 0..1024 of 19999"),
        (["--len", "400", "--max-offset", "50"], "offsets 0..50 of 399"),
    ],
)
def test_a_profile_that_stops_early_says_so_in_the_figure(tmp_path, drawn, args, stop):
    # the x axis ended at offset 1024 of 19999 and only stderr said the profile stopped there
    result = run_in_process("distance", "sinusoidal", "--d", "16", *args, "--profile", "-o", str(tmp_path / "p.png"))
    assert result.code == 0, result.stderr
    [figure] = drawn
    assert stop in _titles(figure).replace("\n", " ")
    [axes] = [axes for axes in figure.axes if axes.lines]
    assert max(line.get_xdata()[-1] for line in axes.lines) == int(stop.split("..")[1].split()[0])


def test_a_whole_profile_claims_no_stop(tmp_path, drawn):
    result = run_in_process(
        "distance", "sinusoidal", "--d", "16", "--len", "400", "--profile", "-o", str(tmp_path / "p.png")
    )
    assert result.code == 0, result.stderr
    assert "offsets 0.." not in _titles(drawn[0])


def _y_axis(figure: Figure) -> tuple[str, list[float]]:
    [axes] = [axes for axes in figure.axes if axes.get_xlabel() == "Embedding Dimension"]
    low, high = sorted(axes.get_ylim())
    return axes.get_ylabel(), [float(tick) for tick in axes.get_yticks() if low <= tick <= high]  # the ticks drawn


def test_timesteps_listed_evenly_are_the_y_axis_and_uneven_ones_are_not_called_timesteps(tmp_path, drawn):
    # "pecli timestep 0 250 999" drew rows 0, 1, 2 under the label "Timestep t", and an even list
    # 0 250 500 the same row numbers; a range's ticks reached −100, a timestep no row has
    for name, steps in (("even", ["0", "250", "500"]), ("uneven", ["0", "250", "999"])):
        path = str(tmp_path / f"{name}.safetensors")
        assert run_in_process("timestep", *steps, "--dim", "16", "-o", path).code == 0
        assert run_in_process("plot", path, "-o", str(tmp_path / f"{name}.png")).code == 0
    even, uneven = (_y_axis(figure) for figure in drawn)
    assert even[0] == "Timestep t"
    assert min(even[1]) == 0 and max(even[1]) == 500 and len(even[1]) * 100 > 250
    assert uneven[0] != "Timestep t" and "unevenly" in uneven[0]
    assert uneven[1] == [0.0, 1.0, 2.0]


def test_a_timestep_range_s_ticks_stay_on_its_timesteps(tmp_path, drawn):
    path = str(tmp_path / "range.safetensors")
    assert run_in_process("timestep", "--range", "100:1000:300", "--dim", "16", "-o", path).code == 0
    assert run_in_process("plot", path, "-o", str(tmp_path / "range.png")).code == 0
    label, ticks = _y_axis(drawn[0])
    assert label == "Timestep t" and ticks and min(ticks) >= 100 and max(ticks) <= 950


def test_a_terminal_distance_heatmap_of_block_means_does_not_call_them_values():
    # "values 5.688 … 13.79" under a 64 × 64 dot matrix whose values reach 16 (the diagonal): the
    # range of the block means, named as the matrix's
    args = ("distance", "sinusoidal", "--d", "32", "--len", "64", "--height", "15", "--no-color")
    drawn = run_in_process(*args, "--width", "100").out.splitlines()
    assert "64 × 64 → 8 × 64 block means" in drawn[-2]
    assert drawn[-1].split()[:2] == ["block", "means"]
    high = float(drawn[-1].split()[-1])
    exact = run_in_process(*args, "--json").out
    import json

    top = max(max(row) for row in json.loads(exact)["matrix"])
    assert top == pytest.approx(16.0, abs=1e-3) and top > high
    small = run_in_process("distance", "sinusoidal", "--d", "32", "--len", "8", "--width", "100", "--height", "30",
                           "--no-color").out.splitlines()  # fmt: skip
    assert small[-1].split()[0] == "values" and small[-1].split()[-1] == "16"
