"""Scheme specs written as text: ``NAME`` or ``NAME:param=value,…`` (compare's A and B, --properties, the Python API).

NAME is a scheme or a preset; values are parsed by the kind of the parameter in
:data:`pecli.schemes.params.PARAMS`. A comma starts a new parameter only when ``param=`` follows
it, so a value may hold commas (``sincos2d:grid=14,14``; ``grid=14x14`` says the same).
``SCHEME:preset=NAME,…`` picks one of the scheme's presets (a name several schemes share, such as
``diffusers``, needs it). Every malformed part gets its own message.

>>> spec = parse_spec("sinusoidal:layout=split,freq_shift=1")
>>> spec.scheme, spec.preset, spec.params
('sinusoidal', None, {'layout': 'split', 'freq_shift': 1.0})
>>> parse_spec("fairseq:base=500000").preset
'fairseq'
>>> parse_spec("sincos2d:grid=14,14,cls_token=true").params
{'grid': '14,14', 'cls_token': True}
>>> spec = parse_spec("sincos2d:preset=mae,grid=14x14")
>>> spec.scheme, spec.preset, spec.params
('sincos2d', 'mae', {'grid': '14x14'})
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from pecli.errors import _PARAMETER, ParameterError, did_you_mean, names_a_parameter, respelled
from pecli.text import ascii_float, ascii_int, literal, literal_repr

#: the sizes a spec takes from its caller (--len, --d, the other table), not from its text
_SIZES = ("length", "dim")
_TRUE, _FALSE = ("true", "1", "yes", "on"), ("false", "0", "no", "off")
#: the commas that separate parameters: those followed by ``name=`` (a value may hold other commas)
_SEPARATOR = re.compile(r",(?=\s*[A-Za-z_][\w-]*\s*=)")


@dataclass(frozen=True)
class SchemeSpec:
    """A parsed spec: a scheme or a preset, and the parameters it sets."""

    text: str
    scheme: str | None
    preset: str | None
    params: dict[str, Any] = field(default_factory=dict)

    def table(self, *, length: int | None, dim: int | None, dtype: str = "float32"):
        """The :class:`~pecli.schemes.spec.TableSpec` of this spec at a shape (parameter values checked)."""
        from pecli.schemes.spec import TableSpec

        with self.blaming():
            return TableSpec.resolve(self.scheme, self.preset, self.params, length=length, dim=dim, dtype=dtype).check()

    @contextmanager
    def blaming(self) -> Iterator[None]:
        """Errors about this spec's values raised inside, said in the spec's words (:meth:`blamed`).

        >>> spec = parse_spec("rope:base=0")
        >>> try:
        ...     with spec.blaming():
        ...         raise ParameterError("{base} must be above 1, got 0", hint="e.g. {base=10000}")
        ... except ParameterError as error:
        ...     print(error)
        in spec 'rope:base=0': base must be above 1, got 0 (e.g. base=10000)
        """
        try:
            yield
        except ParameterError as error:
            raise self.blamed(error) from None

    def resolved(self) -> tuple[Any, dict[str, Any]]:
        """The :class:`~pecli.schemes.catalog.Scheme` and its full parameters (values checked by name and kind).

        >>> scheme, params = parse_spec("fairseq").resolved()
        >>> scheme.name, params["layout"]
        ('sinusoidal', 'split')
        """
        from pecli.schemes.catalog import resolve

        with self.blaming():
            return resolve(self.scheme, self.preset, self.params)

    def merged(self, preset: str | None, params: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
        """The scheme, preset and parameters of this spec with ``preset`` and ``params`` given beside it (a
        command line's ``--preset`` and scheme options): the same parameter given both ways must agree.

        >>> parse_spec("rope:base=500000").merged(None, {"factor": 4.0})
        ('rope', None, {'base': 500000.0, 'factor': 4.0})
        >>> parse_spec("fairseq").merged("fairseq", {})
        ('sinusoidal', 'fairseq', {})
        >>> try:
        ...     parse_spec("rope:base=500000").merged(None, {"base": 10000.0})
        ... except ParameterError as error:
        ...     print(error.message)
        base=500000 in spec 'rope:base=500000' and base=10000 disagree
        """
        from pecli.schemes.presets import get_preset

        if preset is not None and self.preset is not None and preset != self.preset:
            raise ParameterError(
                f"preset {literal(str(self.preset))} in spec {literal_repr(self.text)}"
                f" and {{preset={literal(preset)}}} disagree",
                hint="give the preset once: in the spec or as {preset}",
            )
        for name, value in params.items():
            if name in self.params and not _same_value(self.params[name], value):
                raise ParameterError(
                    f"{name}={literal(self._raw(name))} in spec {literal_repr(self.text)}"
                    f" and {{{name}={literal(_shown(value))}}} disagree",
                    hint=f"give {name} once: in the spec or as {{{name}}}",
                )
        chosen = self.preset or preset
        scheme = self.scheme if self.scheme is not None else get_preset(str(chosen)).scheme
        return scheme, chosen, {**self.params, **params}

    def _raw(self, name: str) -> str:
        """The value of parameter ``name`` as the spec's text writes it."""
        _, _, rest = self.text.partition(":")
        for item in _SEPARATOR.split(rest) if rest else []:
            key, _, value = item.partition("=")
            if key.strip().replace("-", "_") == name:
                return value.strip()
        return _shown(self.params.get(name))

    def blamed(self, error: ParameterError, only: Collection[str] | None = None) -> ParameterError:
        """``error`` about a value of this spec, said in the spec's words: ``in spec 'rope:base=-1': base …``.

        The spec sets the scheme's parameters, so they are named as it names them (``base``,
        ``original_max_position=4096``), never as flags the user did not type; the sizes (``length``,
        ``dim``) come from the caller and stay placeholders. An error naming no parameter is returned as is.
        ``only``: the parameters the spec's text sets, where others are given beside it as options (those
        stay placeholders, for the caller to spell).

        >>> spec = parse_spec("rope:base=-1")
        >>> str(spec.blamed(ParameterError("{base} must be > 1", hint="e.g. {base=10000}")))
        "in spec 'rope:base=-1': base must be > 1 (e.g. base=10000)"
        """
        template = " ".join(text for text in error._templates if text is not None)  # the hint may name it alone
        own = [name for name in _names_in(template) if name not in _SIZES and (only is None or name in only)]
        if not names_a_parameter(template, own):
            return error

        def spell(name: str, example: str | None) -> str | None:
            if name not in own:
                return None
            return name if example is None else f"{name}={example}"

        message, hint = respelled(error, spell)
        misplaced = [name for name in own if names_a_parameter(error._templates[0], [name])]
        hint = next(filter(None, (self._elsewhere(name) for name in misplaced)), hint)
        return ParameterError(f"in spec {literal_repr(self.text)}: {message}", hint=hint)

    def _elsewhere(self, name: str) -> str | None:
        """The hint for this spec's value of ``name`` when it is no value of ``name`` but one of another
        option: that option, in a spec that runs (:func:`spec_elsewhere`). None otherwise.

        >>> parse_spec("rope:base=500000,layout=yarn")._elsewhere("layout")
        "'yarn' is a value of scaling: e.g. rope:scaling=yarn,factor=4,original_max_position=4096,base=500000"
        >>> parse_spec("rope:layout=half")._elsewhere("layout") is None
        True
        """
        from pecli.schemes.catalog import SCHEMES
        from pecli.schemes.presets import get_preset

        scheme = self.scheme if self.scheme is not None else get_preset(str(self.preset)).scheme
        value = self.params.get(name)
        if value in SCHEMES[scheme].choices.get(name, (value,)):
            return None  # a valid value: the error is about something else
        return spec_elsewhere(self.text, value, scheme, besides=name)

    def query_rows(self, *, heads: int, length: int, dtype: str = "float32") -> tuple[Any, Any] | None:
        """A per-head spec's bias at query position 0 of each of ``heads`` heads over ``length`` keys: the
        (heads, length) array a (heads, 1, length) table holds, and its :class:`~pecli.schemes.spec.TableSpec`.
        The scheme's ``query_row`` parameters apply unless the spec sets them; ``heads`` unless it sets its own.
        None for a scheme without heads, or a spec that picks one head.

        >>> rows, table = parse_spec("alibi").query_rows(heads=2, length=3, dtype="float64")
        >>> rows.tolist(), table.params["form"], table.shape
        ([[0.0, 0.0625, 0.125], [0.0, 0.00390625, 0.0078125]], 'key', (2, 3, 3))
        >>> parse_spec("sinusoidal").query_rows(heads=2, length=3) is None
        True
        """
        from dataclasses import replace

        import numpy as np

        scheme, params = self.resolved()
        if "heads" not in scheme.defaults or params.get("head") is not None:
            return None
        given = {**{k: v for k, v in scheme.query_row.items() if k not in self.params}, **self.params}
        if given.get("heads") is None and params.get("heads") is None:
            given["heads"] = heads
        table = replace(self, params=given).table(length=length, dim=None, dtype=dtype)
        count = table.shape[0]
        with self.blaming():
            rows = [replace(table, params={**table.params, "head": head}).rows(range(0, 1)) for head in range(count)]
        return np.concatenate(rows), table


def spec_elsewhere(text: str, value: object, scheme: str | None, *, besides: str | None) -> str | None:
    """The hint for ``value``, given in spec ``text`` as ``besides`` (None: as the spec's name), when it is a
    value of another option (:func:`~pecli.schemes.catalog.option_taking`): that option, and the spec
    rewritten with it (and what it needs) in place of the misplaced value, keeping the rest as typed.

    >>> spec_elsewhere("rope:preset=llama3", "llama3", "rope", besides="preset")
    "'llama3' is a value of scaling: e.g. rope:scaling=llama3,factor=4,original_max_position=4096"
    >>> spec_elsewhere("rope:scaling=yarn,layout=llama3", "llama3", "rope", besides="layout")
    "'llama3' is a value of scaling: e.g. rope:factor=4,original_max_position=4096,scaling=llama3"
    >>> spec_elsewhere("llama3:factor=8", "llama3", None, besides=None)
    "'llama3' is a value of rope's scaling: e.g. rope:scaling=llama3,original_max_position=4096,factor=8"
    >>> spec_elsewhere("sinusoidal:layout=fairseq", "fairseq", "sinusoidal", besides="layout")
    "'fairseq' is a value of preset: e.g. sinusoidal:preset=fairseq"
    >>> spec_elsewhere("rope:layout=nope", "nope", "rope", besides="layout") is None
    True
    """
    from pecli.schemes.catalog import option_taking, value_elsewhere

    found = option_taking(value, scheme, besides=besides)
    if found is None:
        return None
    owner, option = found
    template = value_elsewhere(value, owner, besides=besides) or ""
    examples = [(m.group(1), m.group(2)) for m in _PARAMETER.finditer(template.partition(": e.g. ")[2])]
    _, _, rest = text.partition(":")
    pairs = [item.partition("=") for item in _SEPARATOR.split(rest)] if rest else []
    items = [(key.strip().replace("-", "_"), raw) for key, _, raw in pairs]
    if besides is not None:  # the misplaced value goes where it belongs, in place of the option's own if given
        items = [(key, str(value) if key == option else raw) for key, raw in items if key != besides]
    given = {key for key, _ in items}
    items = [(key, example) for key, example in examples if example is not None and key not in given] + items
    whose = "" if owner == scheme else f"{owner}'s "
    written = f"{owner}:" + ",".join(f"{key}={raw.strip()}" for key, raw in items)
    return f"{literal_repr(value)} is a value of {whose}{option}: e.g. {literal(written)}"


def _same_value(first: Any, second: Any) -> bool:
    """Whether two values of a parameter say the same: equal, or the same integers however separated (a grid's
    ``14x14`` and ``14,14``).

    >>> _same_value(2.0, 2.0), _same_value("14x14", "14, 14"), _same_value("14x14", "14,16")
    (True, True, False)
    """
    if first == second:
        return True
    if not (isinstance(first, str) and isinstance(second, str)):
        return False
    sides = [re.split(r"[x,]", text.replace(" ", "")) for text in (first, second)]
    numbers = [[int(side) for side in pieces] if all(p.isascii() and p.isdigit() for p in pieces) else None
               for pieces in sides]  # fmt: skip
    return numbers[0] is not None and numbers[0] == numbers[1]


def _shown(value: Any) -> str:
    """A parameter's value as a command line writes it: ``true``, ``500000``, ``0.5``.

    >>> _shown(True), _shown(500000.0), _shown(0.5), _shown("yarn")
    ('true', '500000', '0.5', 'yarn')
    """
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return str(value)


def names_a_scheme(text: str) -> bool:
    """Whether ``text``'s name (before any ``:``) is a scheme or a preset: a spec, however its values read.

    >>> names_a_scheme("fairseq:base=1.5"), names_a_scheme("rope"), names_a_scheme("pe.npy")
    (True, True, False)
    """
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.presets import preset_names

    name = text.partition(":")[0]
    return name in SCHEMES or name in preset_names()


def _names_in(template: str) -> list[str]:
    return [match.group(1) for match in _PARAMETER.finditer(template)]


def looks_like_spec(text: str) -> bool:
    """Whether ``text`` names a scheme spec rather than a file (an existing path, or ``-``, is a file).

    >>> looks_like_spec("sinusoidal:layout=split"), looks_like_spec("fairseq"), looks_like_spec("pe.npy")
    (True, True, False)
    """
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.presets import preset_names

    if text == "-" or os.path.exists(text):
        return False
    name, colon, _ = text.partition(":")
    if name in SCHEMES or name in preset_names():
        return True
    if os.sep in name:
        return False  # a path that does not exist: reading it says so
    if colon:
        return True  # NAME:… with an unknown NAME: parse_spec says which part is wrong
    return "." not in text  # a bare word is a misspelt scheme; with a dot, a missing file


def _value(spec: str, name: str, text: str, kind: type, optional: bool) -> Any:
    where = f"in spec {literal_repr(spec)}: {name}={literal(text)}"
    if optional and text.lower() == "none":
        return None
    if kind is bool:
        if text.lower() in _TRUE + _FALSE:
            return text.lower() in _TRUE
        raise ParameterError(
            f"{where}: {literal_repr(text)} is not true or false", hint=f"write {name}=true or {name}=false"
        )
    if kind is int:
        try:
            return ascii_int(text)
        except ValueError:
            raise ParameterError(f"{where}: {literal_repr(text)} is not an integer", hint=f"e.g. {name}=2") from None
    if kind is float:
        try:
            value = ascii_float(text)
        except ValueError:
            raise ParameterError(f"{where}: {literal_repr(text)} is not a number", hint=f"e.g. {name}=1") from None
        if not math.isfinite(value):
            raise ParameterError(f"{where}: {literal_repr(text)} is not a finite number", hint=f"e.g. {name}=1")
        return value
    return text


def parse_spec(text: str) -> SchemeSpec:
    """Parse ``NAME`` or ``NAME:param=value,…``; a :class:`ParameterError` names the malformed part."""
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.params import PARAMS
    from pecli.schemes.presets import PRESETS, and_list, get_preset, preset_names, preset_schemes

    name, colon, rest = text.partition(":")
    if not name:
        raise ParameterError(
            f"scheme spec {literal_repr(text)} has no name before ':'", hint="e.g. sinusoidal:layout=split"
        )
    if name not in SCHEMES and name not in preset_names():
        raise ParameterError(
            f"unknown scheme {literal_repr(name)} in spec {literal_repr(text)}",
            hint=spec_elsewhere(text, name, None, besides=None) or did_you_mean(name, [*SCHEMES, *preset_names()]),
        )
    scheme, preset = (name, None) if name in SCHEMES else (None, name)
    if preset is not None and len(preset_schemes(preset)) > 1:
        owners = preset_schemes(preset)
        raise ParameterError(
            f"preset {literal_repr(preset)} in spec {literal_repr(text)} belongs to "
            f"{and_list(owners)}: name the scheme",
            hint=f"e.g. {owners[0]}:preset={preset}" + (f",{literal(rest)}" if rest else ""),
        )
    takes = SCHEMES[name].defaults if scheme else SCHEMES[get_preset(name).scheme].defaults
    params: dict[str, Any] = {}
    if colon and not rest:
        raise ParameterError(
            f"scheme spec {literal_repr(text)} ends with ':'", hint=f"drop it, or add param=value: {name}:base=500"
        )
    for item in _SEPARATOR.split(rest) if rest else []:
        key, equals, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not equals or not key or not value.strip():
            raise ParameterError(
                f"{literal_repr(item)} in spec {literal_repr(text)} is not param=value",
                hint=f"e.g. {name}:{next(iter(takes), 'base')}=…",
            )
        if key == "preset" and scheme is not None and preset is None:
            own = [preset_name for scheme_name, preset_name in PRESETS if scheme_name == scheme]
            if value.strip() not in own:
                raise ParameterError(
                    f"{literal_repr(scheme)} has no preset {literal_repr(value.strip())} (in spec "
                    f"{literal_repr(text)})",
                    hint=spec_elsewhere(text, value.strip(), scheme, besides="preset")
                    or (did_you_mean(value.strip(), own) if own else f"{literal_repr(scheme)} has no presets"),
                )
            preset = value.strip()
            continue
        if key not in takes:
            raise ParameterError(
                f"{literal_repr(name)} takes no parameter {literal_repr(key)} (in spec {literal_repr(text)})",
                hint=did_you_mean(key, takes) if takes else "it has no parameters",
            )
        if key in params:
            raise ParameterError(
                f"{literal_repr(key)} is given twice in spec {literal_repr(text)}", hint="give each parameter once"
            )
        params[key] = _value(text, key, value.strip(), PARAMS[key].kind, takes[key] is None)
    return SchemeSpec(text, scheme, preset, params)
