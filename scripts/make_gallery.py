"""Regenerate docs/gallery/: one small PNG and one terminal capture per scheme, drawn by ``pecli plot``/``distance``.

Run from the repository root: ``python scripts/make_gallery.py [DIRECTORY]``. tests/render/test_gallery.py
draws the same figures into a temporary directory and compares them with the committed ones
(``matplotlib.testing.compare.compare_images``), so a change in a picture must be looked at and
committed on purpose.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

GALLERY = Path(__file__).resolve().parent.parent / "docs" / "gallery"
#: small figures: the gallery is for looking, and stays well under a megabyte
IMAGE = ("--figsize", "5,3.6", "--dpi", "72")
TERMINAL = ("--no-color", "--width", "72", "--height", "22")

#: name -> (command and input, what the picture shows)
FIGURES: dict[str, tuple[tuple[str, ...], str]] = {
    "sinusoidal": (("plot", "sinusoidal", "--d", "256", "--len", "1024"), "Vaswani's interleaved sin/cos"),
    "sinusoidal-split": (
        ("plot", "sinusoidal", "--d", "256", "--len", "1024", "--layout", "split"),
        "the split layout: blocks never straddle the halves",
    ),
    "rope-cos": (("plot", "rope", "--d", "128", "--len", "2048", "--part", "cos"), "RoPE's cos table (half layout)"),
    "rope": (("plot", "rope", "--d", "64", "--len", "512"), "RoPE's cos and sin side by side, one colour scale"),
    "alibi-heads": (
        ("plot", "alibi", "--heads", "4", "--len", "32"),
        "ALiBi's heads as small multiples: one colour scale shows how fast each decays",
    ),
    "alibi-head": (
        ("plot", "alibi", "--heads", "8", "--head", "2", "--len", "64"),
        "one ALiBi head: query against key positions",
    ),
    "timestep": (("plot", "timestep", "--d", "128", "--len", "256"), "the diffusion timestep table"),
    "sincos2d": (("plot", "sincos2d", "--d", "64", "--grid", "14,14"), "a 14 × 14 patch grid (MAE/ViT)"),
    "learned": (("plot", "learned", "--d", "64", "--len", "128"), "a learned table: seeded normal values"),
    "distance-euclidean": (
        ("distance", "sinusoidal", "--d", "128", "--len", "256", "--metric", "euclidean"),
        "euclidean distances: a sequential map, 0 at the diagonal",
    ),
}


def _run(args: list[str]) -> str:
    """Run pecli in this process; its stdout (stderr is dropped: notes only)."""
    from pecli.cli.app import main

    stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    if code != 0:
        raise RuntimeError(f"pecli {' '.join(args)} exited with {code}")
    return stdout.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]


def make_gallery(directory: Path) -> list[Path]:
    """Draw every figure of :data:`FIGURES` into ``directory`` (PNG and terminal text); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (command, _) in FIGURES.items():
        image = directory / f"{name}.png"
        _run([*command, "-o", str(image), *IMAGE])
        text = directory / f"{name}.txt"
        text.write_text(_run([*command, *TERMINAL]), encoding="utf-8")
        written += [image, text]
    return written


def gallery_readme() -> str:
    """docs/gallery/README.md: each picture, what it shows, and the command that drew it."""
    lines = [
        "# Gallery",
        "",
        "Drawn by `python scripts/make_gallery.py`; `tests/render/test_gallery.py` fails when a picture changes.",
        "Each figure adds `-o NAME.png " + " ".join(IMAGE) + "`; each capture `" + " ".join(TERMINAL) + "`.",
        "",
    ]
    for name, (command, caption) in FIGURES.items():
        lines += [
            f"## {name}: {caption}",
            "",
            f"`pecli {' '.join(command)}`",
            "",
            f"![{name}]({name}.png) · [terminal]({name}.txt)",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else GALLERY
    for path in make_gallery(target):
        print(f"wrote {path}")
    (target / "README.md").write_text(gallery_readme(), encoding="utf-8")
