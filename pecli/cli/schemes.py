"""``pecli schemes``: every scheme and preset of the registry, with formula, parameters and source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Optional

import typer

from pecli.cli.options import complete_scheme, output_options
from pecli.cli.output import Output
from pecli.errors import ParameterError, did_you_mean
from pecli.text import literal_repr

HELP = """List every scheme and preset: formula in one line, parameters with defaults, source.

With NAME, only that scheme and its presets in full, or the preset of that name (each one, where
several schemes have a preset so named, as diffusers). Read from the scheme registry, so a new
scheme appears here (and in every command) at once.

Examples:

\b
  pecli schemes
  pecli schemes rope
  pecli schemes fairseq
  pecli schemes --json
"""


def complete_scheme_or_preset(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of ``pecli schemes NAME``: the schemes, then the presets (each name once), starting with
    ``incomplete``.

    >>> [name for name, _ in complete_scheme_or_preset("fa")]
    ['fairseq']
    """
    from pecli.schemes.presets import PRESETS

    presets: dict[str, list[str]] = {}
    for preset in PRESETS.values():
        if preset.name.startswith(incomplete):
            presets.setdefault(preset.name, []).append(preset.scheme)
    listed = [(name, f"preset of {', '.join(owners)}") for name, owners in presets.items()]
    return complete_scheme(incomplete) + listed


def register(app: typer.Typer) -> None:
    app.command("schemes", help=HELP, short_help="List every scheme and preset with its formula and source.")(schemes)


@output_options
def schemes(
    name: Annotated[
        Optional[str],
        typer.Argument(
            help="One scheme to show, with its presets, or one preset.",
            metavar="NAME",
            autocompletion=complete_scheme_or_preset,
        ),
    ] = None,
    *,
    out: Output,
) -> None:
    document = catalog_document() if name is None else scheme_document(name)
    out.show(Catalog(document))
    if name is not None and not document["schemes"]:  # a preset: how to use it (a shared name needs its scheme)
        for preset in document["presets"]:
            out.note(f"hint: pecli generate {preset['scheme']} --preset {preset['name']}")


@dataclass(frozen=True)
class Catalog:
    """The registry's listing (:func:`catalog_document`) as a result: its JSON, or :func:`format_catalog`'s lines."""

    document: dict[str, list[dict[str, Any]]]

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        return self.document

    def text_lines(self) -> list[str]:
        return format_catalog(self.document)


def catalog_document() -> dict[str, list[dict[str, Any]]]:
    """The registry as one JSON-ready document: ``{"schemes": [...], "presets": [...]}``.

    >>> document = catalog_document()
    >>> sinusoidal = next(s for s in document["schemes"] if s["name"] == "sinusoidal")
    >>> sinusoidal["params"][0]
    {'name': 'base', 'flag': '--base', 'default': 10000.0, 'choices': None}
    """
    from pecli.schemes.catalog import SCHEMES
    from pecli.schemes.params import PARAMS
    from pecli.schemes.presets import PRESETS

    def flag(name: str) -> str:
        return PARAMS[name].flag if name in PARAMS else name

    return {
        "schemes": [
            {
                "name": scheme.name,
                "summary": scheme.summary,
                "formula": scheme.formula,
                "params": [
                    {
                        "name": name,
                        "flag": flag(name),
                        "default": default,
                        "choices": list(scheme.choices[name]) if name in scheme.choices else None,
                    }
                    for name, default in scheme.defaults.items()
                ],
                "presets": [p.name for p in PRESETS.values() if p.scheme == scheme.name],
                "source": scheme.source,
            }
            for scheme in SCHEMES.values()
        ],
        "presets": [
            {
                "name": preset.name,
                "scheme": preset.scheme,
                "params": dict(preset.params),
                "convention": preset.convention,
                "source": preset.source,
            }
            for preset in PRESETS.values()
        ],
    }


def scheme_document(name: str) -> dict[str, list[dict[str, Any]]]:
    """:func:`catalog_document` for ``name`` alone: a scheme's entry and its presets, or the preset(s) so named.

    A preset name (``fairseq``) gives its presets only, each naming its scheme; a name several schemes
    use (``diffusers``) gives each of them. Neither a scheme nor a preset is a
    :class:`~pecli.errors.ParameterError` naming the nearest names.

    >>> document = scheme_document("timestep")
    >>> [s["name"] for s in document["schemes"]], [p["name"] for p in document["presets"]]
    (['timestep'], ['ldm', 'guided-diffusion', 'diffusers', 'ddpm'])
    >>> [(p["name"], p["scheme"]) for p in scheme_document("fairseq")["presets"]]
    [('fairseq', 'sinusoidal')]
    """
    from pecli.schemes.catalog import SCHEMES, option_taking
    from pecli.schemes.presets import preset_names

    document = catalog_document()
    if name in SCHEMES:
        return {
            "schemes": [entry for entry in document["schemes"] if entry["name"] == name],
            "presets": [preset for preset in document["presets"] if preset["scheme"] == name],
        }
    if name in preset_names():
        return {"schemes": [], "presets": [preset for preset in document["presets"] if preset["name"] == name]}
    scheme = name.split(":", 1)[0]
    if ":" in name and (scheme in SCHEMES or scheme in preset_names()):  # a spec: its parameters set no listing
        raise ParameterError(
            f"{literal_repr(name)} is a spec (a scheme with parameters); schemes lists a scheme or a preset",
            hint=f"pecli schemes {scheme}",
        )
    raise ParameterError(
        f"unknown scheme or preset {literal_repr(name)}",
        hint=f"{literal_repr(name)} is a value of {found[0]}'s {{{found[1]}}}: pecli schemes {found[0]} lists it"
        if (found := option_taking(name))
        else did_you_mean(name, [*SCHEMES, *preset_names()]),
    )


def format_catalog(document: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The human-readable lines of :func:`catalog_document`: one block per scheme, then the presets.

    >>> format_catalog(catalog_document())[3]
    '  formula: PE[p, 2k] = sin(p / base^(2k/d)), PE[p, 2k+1] = cos(p / base^(2k/d))'
    """
    lines = ["Schemes:"] if document["schemes"] else []
    for scheme in document["schemes"]:
        lines += ["", f"{scheme['name']} — {scheme['summary']}", f"  formula: {scheme['formula']}"]
        params = [_describe_param(p) for p in scheme["params"]]
        lines.append(f"  options: {', '.join(params) if params else '(none)'}")
        if scheme["presets"]:
            lines.append(f"  presets: {', '.join(scheme['presets'])}")
        lines.append(f"  source:  {scheme['source']}")
    if not document["presets"]:
        return lines
    lines += [*([""] if lines else []), "Presets (--preset NAME):"]
    for preset in document["presets"]:
        settings = " ".join(f"{k}={_show(v)}" for k, v in preset["params"].items())
        lines += [
            "",
            f"{preset['name']} — {preset['scheme']}: {preset['convention']}",
            f"  sets:    {settings or '(nothing)'}",
            f"  source:  {preset['source']}",
        ]
    return lines


def _describe_param(param: dict[str, Any]) -> str:
    """``--base 10000.0``, ``--layout interleaved|split (interleaved)``, ``--cos-first (off)``.

    >>> _describe_param({"flag": "--layout", "default": "split", "choices": ["interleaved", "split"]})
    '--layout interleaved|split (split)'
    """
    if param["choices"]:
        return f"{param['flag']} {'|'.join(param['choices'])} ({_show(param['default'])})"
    return f"{param['flag']} {_show(param['default'])}"


def _show(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return "on" if value else "off"
    return str(value)
