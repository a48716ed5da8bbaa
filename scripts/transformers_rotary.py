"""The rotary modules transformers defines, and the config class each takes: what both sweeps and
rope_families.py walk (one module, so that neither script imports the other).

Run by those scripts: PYTHONPATH=. python scripts/sweep_transformers_rope.py
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys


def rotary_classes() -> list[tuple[str, str, type]]:
    """(package, class name, class) of every ``*RotaryEmbedding`` defined in a modeling module."""
    import transformers.models as models

    found = []
    for package in sorted(info.name for info in pkgutil.iter_modules(models.__path__)):
        try:
            module = importlib.import_module(f"transformers.models.{package}.modeling_{package}")
        except Exception:
            continue
        for name, obj in vars(module).items():
            if name.endswith("RotaryEmbedding") and isinstance(obj, type) and obj.__module__ == module.__name__:
                found.append((package, name, obj))
    return found


def config_class(rotary: type) -> type | None:
    """The config class the rotary module's ``__init__`` takes (its annotation), else None."""
    try:
        parameter = inspect.signature(rotary.__init__).parameters.get("config")
    except (TypeError, ValueError):
        return None
    if parameter is None:
        return None
    annotation = parameter.annotation
    if isinstance(annotation, str):
        annotation = vars(sys.modules[rotary.__module__]).get(annotation.split("|")[0].strip().strip("'\""))
    return annotation if isinstance(annotation, type) else None
