"""``pecli plot FILE --view pca``: a trained position table's positions in the plane of their first two
principal components.

The numbers are :func:`pecli.analysis.pca.position_pca`'s; the figure :mod:`pecli.render.pca`'s
(with ``-o``); ``--json`` gives the explained variance ratio and the coordinates.
"""

from __future__ import annotations

from pecli.cli.output import Output
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = ["plot_pca"]

#: components whose explained variance is listed (the figure draws the first two)
COMPONENTS = 8


def plot_pca(
    out: Output,
    source: str,
    *,
    output: str | None,
    key: str | None,
    grid: str | None,
    title: str | None,
    dpi: float = 100.0,
    figsize: tuple[float, float] = (7.0, 6.0),
) -> None:
    """Draw (or list as JSON) the first principal components of the position table in ``source``."""
    from pecli.cli.inputs import is_file_input, load_input

    if not is_file_input(source):
        raise ParameterError(
            f"--view pca shows what a trained table learned; {literal_repr(source)} is a scheme",
            hint="give a table file or a model directory, e.g. pecli plot model.safetensors --view pca -o pca.png",
        )
    shape = None
    if grid is not None:
        from pecli.cli.resample import parse_grid

        shape = parse_grid(grid, "--grid")
    if output is not None:
        from pecli.io import check_output_path
        from pecli.render.image import image_format

        check_output_path(output)
        image_format(output)
    table = load_input(out, source, key=key)
    from pecli.analysis.pca import position_pca

    rows = table.array.shape[-2] if table.array.ndim >= 2 else 0
    channels = table.array.shape[-1] if table.array.ndim >= 2 else 0
    result = position_pca(table.array, components=max(2, min(COMPONENTS, rows - 1, channels)), grid=shape)
    heading = title if title is not None else f"{table.label} — first two principal components"
    from pecli.report import Deferred

    if output is not None:
        from pecli.render.pca import save_pca

        save_pca(result, output, title=heading, dpi=dpi, figsize=figsize)
        out.note(f"wrote {output} ({round(figsize[0] * dpi)} × {round(figsize[1] * dpi)} px)")
        out.show(Deferred(result.as_dict, list))
        return
    ratios = ", ".join(f"{100 * value:.1f}%" for value in result.explained_variance_ratio)
    lines = [
        heading,
        f"explained variance of the first {len(result.explained_variance_ratio)} components: {ratios}",
        "the picture is an image: add -o pca.png (or --json for the coordinates)",
    ]
    out.show(Deferred(result.as_dict, lambda: lines))
