"""What ``pecli distance`` inspects of a relative scheme: its parameters, sizes, and the query/key options.

A RoPE, ALiBi or T5 input is a scheme name (with the generate options) or a file pecli wrote,
whose metadata gives the parameters (only its header is read). ``--qk``/``--seed`` choose RoPE's
query and key, and are refused for every scheme without them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pecli.errors import ParameterError
from pecli.schemes.catalog import schemes_where
from pecli.schemes.presets import and_list
from pecli.text import literal_repr

__all__ = ["RELATIVE_SCHEMES", "RelativeInput", "check_qk", "relative_input"]

#: the schemes whose inspection is their effect on attention scores: those with a relative view
RELATIVE_SCHEMES = tuple(name for view in ("score", "bias", "buckets") for name in schemes_where(relative=view))
#: the schemes whose score has a query and a key (``--qk``, ``--seed``)
_SCORED = schemes_where(relative="score")
#: RoPE parameters that are not frequency options of the score functions
_NOT_FREQUENCY = ("part",)


@dataclass(frozen=True)
class RelativeInput:
    """A relative scheme to inspect: its parameters and sizes, from the command line or a file's metadata."""

    scheme: str
    params: dict[str, Any]
    length: int
    dim: int | None
    label: str
    qk: str = "ones"
    seed: int = 0

    @property
    def relative(self) -> str | None:
        """How the scheme acts between positions (its registry entry's ``relative``: score, bias, buckets).

        >>> RelativeInput("alibi", {"heads": 4}, 8, None, "alibi").relative
        'bias'
        """
        from pecli.schemes.catalog import SCHEMES

        return SCHEMES[self.scheme].relative

    @property
    def rotary_dim(self) -> int:
        """``dim``, which a score scheme (RoPE) has: the width its queries and keys rotate in.

        >>> RelativeInput("rope", {}, 8, 4, "rope").rotary_dim
        4
        """
        from pecli.schemes.checks import positive_int

        return positive_int("dim", self.dim)

    @property
    def rope_options(self) -> dict[str, Any]:
        """The keyword arguments of :func:`pecli.analysis.relative.rope_scores` and ``rope_profile``.

        >>> RelativeInput("rope", {"base": 1e4, "part": "cos", "factor": None}, 8, 4, "rope").rope_options
        {'base': 10000.0, 'qk': 'ones', 'seed': 0}
        """
        given = {name: value for name, value in self.params.items() if value is not None and name not in _NOT_FREQUENCY}
        return {**given, "qk": self.qk, "seed": self.seed}


def check_qk(scheme: str | None, qk: str | None, seed: int | None) -> None:
    """``--qk`` and ``--seed`` belong to RoPE, the one scheme with a query and a key; seed only with ``random``.

    >>> check_qk("rope", "random", 3)
    >>> try:
    ...     check_qk("alibi", "ones", None)
    ... except ParameterError as error:
    ...     print(error.message)
    --qk applies to rope, whose score has a query and a key; 'alibi' has none
    >>> try:
    ...     check_qk("t5", None, 3)
    ... except ParameterError as error:
    ...     print(error.message)
    --seed draws the random query and key of rope; 't5' has none
    """
    scored = scheme in _SCORED
    if qk is not None and not scored:
        what = repr(scheme) if scheme else "a table of position vectors"
        raise ParameterError(
            f"--qk applies to {and_list(list(_SCORED))}, whose score has a query and a key; {what} has none",
            hint=f"drop --qk, or inspect a {' or '.join(_SCORED)} scheme or file",
        )
    if seed is not None and scored and qk != "random":
        raise ParameterError("--seed draws the random query and key of --qk random", hint="add --qk random")
    if seed is not None and scheme in RELATIVE_SCHEMES and not scored:  # else ignored: nothing here is random
        raise ParameterError(
            f"--seed draws the random query and key of {and_list(list(_SCORED))}; {literal_repr(scheme)} has none",
            hint="drop --seed",
        )


def relative_input(
    source: str,
    *,
    preset: str | None,
    scheme_params: dict[str, Any],
    length: int | None,
    dim: int | None,
    qk: str | None,
    layer_type: str | None = None,
) -> RelativeInput | None:
    """The relative scheme ``source`` names (a scheme, or a file pecli wrote), or None for any other input.

    Only a file's header is read; a model's config (or directory, or id) gives the scheme its table has
    (``layer_type``: of that layer type), ``length`` rows (default: the model's context).
    ``--seed`` is RoPE's random query and key here, not a scheme parameter.
    """
    from pecli.cli.inputs import is_file_input

    params = dict(scheme_params)
    seed = params.pop("seed", None)
    from pecli.sources import is_config_source

    if is_file_input(source) and is_config_source(source):
        return _config_input(source, preset=preset, params=params, length=length, dim=dim, qk=qk, seed=seed,
                             layer_type=layer_type)  # fmt: skip
    if is_file_input(source):
        scheme, found = _file_scheme(source)
        check_qk(scheme, qk, seed)
        if found is None:
            return None
        pairs = (("{preset}", preset), ("{dim}", dim), ("{length}", length))
        given = [flag for flag, value in pairs if value is not None]
        if given or params:
            named = given + [f"{{{name}}}" for name in params]  # flags as the user typed them
            raise ParameterError(
                f"{', '.join(named)} appl{'ies' if len(named) == 1 else 'y'} to a scheme,"
                f" but {literal_repr(source)} is a file",
                hint=f"drop {'it' if len(named) == 1 else 'them'}: the file's metadata gives its parameters",
            )
        label = _label(found.scheme, found.params, source)
        return RelativeInput(found.scheme, dict(found.params), found.length, found.dim, label, qk or "ones", seed or 0)
    scheme = _named_scheme(source, preset)
    check_qk(scheme, qk, seed)
    if scheme is None:
        return None
    from pecli.cli.common import build_table

    spec = build_table(scheme, preset, params, length=length, dim=dim, dtype="float64", name="pe")
    checked = spec.parts()[0].check()
    return RelativeInput(scheme, dict(spec.params), checked.length, spec.dim, _label(scheme, spec.params), qk or "ones",
                         seed or 0)  # fmt: skip


def _config_input(source: str, *, preset: str | None, params: dict[str, Any], length: int | None, dim: int | None,
                  qk: str | None, seed: int | None, layer_type: str | None) -> RelativeInput | None:  # fmt: skip
    """A model's config whose table is a relative scheme's (RoPE): that scheme, ``length`` rows; else None."""
    from pecli.sources import config_table_spec

    given = [flag for flag, value in (("{preset}", preset), ("{dim}", dim)) if value is not None]
    if given or params:
        flags = given + [f"{{{name}}}" for name in params]  # flags as the user typed them
        raise ParameterError(
            f"{', '.join(flags)} {'applies' if len(flags) == 1 else 'apply'} to a scheme,"
            f" but {literal_repr(source)} is a model's config",
            hint="drop them: the config gives its parameters (--len its rows)",
        )
    spec = config_table_spec(source, length=length, layer_type=layer_type)
    scheme = None if spec is None else spec.scheme
    check_qk(scheme, qk, seed)
    if spec is None or scheme not in RELATIVE_SCHEMES:
        return None
    where = os.path.basename(os.path.normpath(source)) + (f" ({layer_type})" if layer_type is not None else "")
    return RelativeInput(scheme, dict(spec.params), spec.length, spec.dim, _label(scheme, spec.params, where),
                         qk or "ones", seed or 0)  # fmt: skip


def _file_scheme(source: str) -> tuple[str | None, Any]:
    """The scheme a file pecli wrote records, and its :class:`TableSpec` when that is a relative scheme.

    A file of one table per layer type (``generate --from-config`` of Gemma 3: ``TYPE.cos``, ``TYPE.sin``)
    records each type's parameters under ``layer_types``, no one scheme's: its tensors are tables of
    position vectors, one picked with ``--key`` as every command picks one (None, None).
    """
    if source == "-" or os.path.isdir(source):
        return None, None  # stdin cannot be read twice; a model directory is read by load_input
    from pecli.io import read_tensors
    from pecli.schemes.spec import TableSpec

    _, metadata = read_tensors(source)
    if "layer_types" in metadata:
        return None, None
    scheme = metadata.get("scheme")
    if scheme not in RELATIVE_SCHEMES:
        return scheme, None
    return scheme, TableSpec.from_metadata(metadata)


def _named_scheme(source: str, preset: str | None) -> str | None:
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.presets import get_preset

    if source in SCHEMES:
        return source if source in RELATIVE_SCHEMES else None
    if preset is not None:
        scheme = get_preset(preset, None).scheme
        return scheme if scheme in RELATIVE_SCHEMES else None
    return None


def _label(scheme: str, params: dict[str, Any], where: str = "") -> str:
    """The titles' name for the input: the scheme, the parameters that differ from its defaults, the file.

    >>> _label("alibi", {"heads": 8, "head": None, "part": "bias", "form": "distance"}, "a.safetensors")
    'alibi: heads=8 — a.safetensors'
    """
    from pecli.render.titles import scheme_title

    return scheme_title(scheme, params, skip=("part",)) + (f" — {where}" if where else "")
