"""What ``identify`` shows: an :class:`~pecli.analysis.identify.Identification` of a named table, as text or JSON.

The recipe that writes the table again is spelled by whoever shows the report: the library
writes it as a Python call (``str``), the CLI as its command line.

>>> import pecli
>>> from pecli.analysis.identify import identify_table
>>> report = IdentifyReport(identify_table(pecli.encode(None, 64, 32, preset="fairseq")), "pe.npy")
>>> lines = render_text(report).splitlines()
>>> print(lines[0]); print(lines[1]); print(lines[3])
pe.npy: 64 × 32, dtype float32, value precision float32
match: sinusoidal (preset fairseq): layout=split freq_shift=1.0 offset=2
  reproduce: sinusoidal(preset='fairseq', dim=32, length=64) -> pe.npy
>>> report.to_json()["match"], report.to_json()["source"]
('exact', 'pe.npy')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pecli.analysis.identify.result import Identification, Recipe
from pecli.errors import Message
from pecli.report import Shown, render_text
from pecli.schemes.catalog import SCHEMES
from pecli.text import literal_repr

__all__ = ["IdentifyReport", "render_text"]


@dataclass(frozen=True)
class IdentifyReport(Shown):
    """An identification of the table ``source`` (its label); ``command`` spells each recipe."""

    found: Identification
    source: str
    command: Callable[[Recipe], str] = field(default=str, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, **self.found.to_json(self.command)}

    def text_lines(self) -> list[str]:
        found = self.found
        best = found.best
        # the file's dtype and the coarsest dtype that holds every value exactly are two separate figures
        shape = " × ".join(map(str, found.shape))
        lines = [f"{self.source}: {shape}, dtype {found.dtype}, value precision {found.precision}"]
        if found.parts:
            tensors = " and ".join(literal_repr(name) for name in found.parts)  # repr escapes control characters
            lines.append(Message(f"  read as one table: its tensors {tensors} (pass {{key}} to take one)"))
        if found.level == "exact":
            lines.append(f"match: {best.describe()}")
            lines.append(f"  max error {best.max_error:.3g} (within {found.precision} rounding, {found.tolerance:.3g})")
            arithmetic = best.params.get("arithmetic")
            if arithmetic not in (None, "float64"):
                held = "" if arithmetic == "float32" else f", positions held in {arithmetic}"
                if not SCHEMES[best.scheme].angles:  # ALiBi's: HF Falcon's slopes × positions
                    held = f"slopes and positions held in {arithmetic}, their product rounded to it"
                    lines.append(f"  computed in {arithmetic} arithmetic ({held})")
                else:
                    lines.append(
                        f"  computed in {arithmetic} arithmetic (float32 frequencies, angles and cos/sin{held})"
                    )
        elif found.level == "approximate":
            lines.append(f"approximate match: {best.describe()}")
            lines.append(
                f"  max error {best.max_error:.3g}, above {found.precision} rounding ({found.tolerance:.3g}) but "
                "within float32 arithmetic (2^-23·|p| at position p): the table was computed in float32"
            )
        elif found.reason:
            lines.append(f"cannot tell: {found.reason}")
            return lines
        else:
            if found.gaussian:
                lines.append(
                    f"random table: consistent with N(0, σ²), σ = {found.value_std:.4g} (a learned or Gaussian init)"
                )
            else:
                lines.append("no known convention matches")
                lines.append(f"  values: mean {found.value_mean:.4g}, standard deviation {found.value_std:.4g}")
            lines.append(f"  closest: {best.describe()}, max error {best.max_error:.3g}")
            lines += _undetermined(found)
            if found.unverified:
                lines.append(
                    "  (within float32 arithmetic at the table's scale, but its table differs entry by entry beyond "
                    "compare's tolerance: no command reproduces it)"
                )
            if found.transposed is not None:
                lines.append(
                    f"  (the table looks transposed: d × len; read as {_swap(found.shape)} "
                    f"it is {found.transposed.describe()})"
                )
            return lines
        lines.append(f"  reproduce: {self.command(found.recipe())}")
        lines += self._extras()
        return lines

    def _extras(self) -> list[str]:
        """The same table described another way, the query row it is, and a runner-up that comes near."""
        found, lines = self.found, _undetermined(self.found)
        equivalent = found.equivalent()
        if equivalent is not None:
            half = found.shape[-1] // 2
            base = f"{found.best.params['base']:g}^({half}/{half - 1})"
            lines.append(
                f"  equivalently: freq_shift 0 at base {base} = {equivalent.params['base']:.10g} (the same table)"
            )
        if found.also is not None:
            grid = found.also.params.get("grid")
            if found.also.timesteps is not None:
                why = f"{_alias_step(found)} writes it within rounding too: this table cannot tell them apart"
            elif grid is not None:
                why = f"a grid of one row, {grid}: this table cannot tell it from the 1-D reading"
            else:
                why = (
                    "frequencies held in a half type at one base are exact ones at another: this table cannot "
                    "tell them apart"
                )
            lines.append(
                f"  also within rounding: {found.also.describe()}, max error {found.also.max_error:.3g} ({why})"
            )
            lines.append(f"    reproduce: {self.command(found._recipe_for(found.also))}")
        if found.query_row is not None:
            heads, length, row = found.shape[0], found.shape[-1], found.query_row
            biases = f"{heads} × {length} × {length}"
            lines.append(
                f"  the table is query row {row} of each head: pe[:, {row}:{row + 1}, :] of the {biases} biases"
            )
        if found.query_start is not None:
            heads, length, first = found.shape[0], found.shape[-1], found.query_start
            lines.append(
                f"  the table is query rows {first} to {length - 1} of each head: pe[:, {first}:, :] of the "
                f"{heads} × {length} × {length} biases (the command writes them all; take those rows to compare)"
            )
        # a runner-up is news only when it comes near: within 100× the rounding tolerance
        for candidate in [c for c in found.runners_up[:1] if c.max_error <= 100 * found.tolerance]:
            within = (
                " (also within rounding: this table cannot tell them apart)"
                if candidate.max_error <= found.tolerance
                else ""
            )
            lines.append(f"next best: {candidate.describe()}, max error {candidate.max_error:.3g}{within}")
        return lines


def _undetermined(found: Identification) -> list[str]:
    """One line for each thing the table cannot tell (a parameter only bounded, readings written alike)."""
    return [f"  this table cannot tell: {entry.parameter}: {entry.note}" for entry in found.undetermined]


def _alias_step(found: Identification) -> str:
    """Each row's other t, as the report says it: ``each t + n·628.319 (n = 1, 2, …)`` where every row's
    alternative is its t moved by the same step (the frequencies' common turn), else ``each row's other t``."""
    steps = (
        [other - mine for mine, other in zip(found.best.timesteps or (), found.also.timesteps or (), strict=True)]
        if found.also is not None
        else []
    )
    moved = [step for step in steps if step != 0]
    if moved and all(abs(step - moved[0]) <= 1e-3 * abs(moved[0]) for step in moved):
        return f"each row's t + n·{moved[0]:.6g} (n = 1, 2, …)"
    return "each row's other t"


def _swap(shape: tuple[int, ...]) -> str:
    """``shape``'s last two axes swapped, as the report writes a shape."""
    return " × ".join(map(str, (*shape[:-2], shape[-1], shape[-2])))
