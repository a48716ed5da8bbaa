"""The Python API's arguments, read and checked once for :mod:`pecli.api`, :mod:`pecli.testing` and the probe check.

Each check raises a one-line :class:`~pecli.errors.ParameterError` naming the parameter and the fix.
Torch is never imported: a tensor is recognised by its methods.

>>> source_text(__import__("pathlib").Path("config.json"), "source")
'config.json'
>>> as_array([[1, 2], [3, 4]], "table")[0].shape
(2, 2)
>>> check_tolerance("atol", -1.0)
Traceback (most recent call last):
pecli.errors.ParameterError: atol must be a finite number >= 0, got -1.0 (e.g. atol=1e-6)
"""

from __future__ import annotations

import numbers
import os
from typing import Any

import numpy as np

from pecli.errors import ParameterError
from pecli.text import literal, literal_repr

__all__ = ["as_array", "check_flag", "check_has_values", "check_tolerance", "source_text"]


def source_text(value: Any, label: str, *, expected: str | None = None, hint: str = "") -> Any:
    """``value`` as the text the source resolvers read: a path (``pathlib.Path``, ``os.PathLike``) as its
    text, bytes refused by name. With ``expected`` (what the text names, for the message, and ``hint``, the
    fix) anything else not a str is refused too; without it, anything else (an array, a tensor) is returned
    as it is.

    >>> source_text(b"c.json", "source")
    Traceback (most recent call last):
    pecli.errors.ParameterError: source is bytes, not a str path (pass 'c.json' (the bytes decoded) or a pathlib.Path)
    >>> source_text(5, "reference", expected="a config.json or a scheme spec", hint="pass e.g. 'rope'")
    Traceback (most recent call last):
    pecli.errors.ParameterError: reference must be a config.json or a scheme spec, got int (pass e.g. 'rope')
    """
    if isinstance(value, os.PathLike):
        value = os.fspath(value)  # a bytes path (os.fsencode'd) stays bytes: refused below
    if isinstance(value, bytes):
        decoded = _shown(value)
        raise ParameterError(
            f"{label} is bytes, not a str path", hint=f"pass {decoded} (the bytes decoded) or a pathlib.Path"
        )
    if expected is not None and not isinstance(value, str):
        raise ParameterError(f"{label} must be {expected}, got {type(value).__name__}", hint=hint)
    return value


def _shown(value: bytes) -> str:
    """``value`` as the str literal it decodes to, cut to a short line."""
    text = repr(value.decode("utf-8", "replace"))
    return literal(text if len(text) <= 40 else text[:37] + "...'")  # for a message, which is a template


def as_array(value: Any, label: str) -> tuple[np.ndarray, str]:
    """``value`` as a numpy array and its stored dtype's name when numpy holds it wider ("" otherwise): a
    torch tensor is detached and moved to the CPU (bfloat16 widened to float32, which holds it exactly); a
    ragged list is refused by name instead of numpy's error.

    >>> as_array([[1.0], [2.0, 3.0]], "table")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    pecli.errors.ParameterError: table has rows of different lengths (a ragged list), so it is no table (...)
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):  # a torch tensor, without importing torch
        check_has_values(value, label)
        value = value.detach().cpu()
        if str(value.dtype) == "torch.bfloat16":
            return np.asarray(value.float().numpy()), "bfloat16"
        return np.asarray(value.numpy()), ""
    try:
        return np.asarray(value), ""
    except (ValueError, TypeError) as error:  # ragged nested lists: "inhomogeneous shape …"
        raise ParameterError(
            f"{label} has rows of different lengths (a ragged {type(value).__name__}), so it is no table",
            hint="pass a rectangular array (every row the same length)",
        ) from error


def check_has_values(tensor: Any, label: str) -> None:
    """A :class:`ParameterError` when ``tensor`` is a torch tensor on the meta device (a shape without values)."""
    if getattr(getattr(tensor, "device", None), "type", None) == "meta":
        raise ParameterError(f"{label} is a meta tensor: it has a shape but no values to read",
                             hint="pass the tensor after it is materialised (on 'cpu' or 'cuda')")  # fmt: skip


def check_flag(name: str, value: Any) -> bool:
    """``value`` as a bool, if it is one (numpy's too); anything else (``"no"``, which is truthy) refused by name.

    >>> check_flag("exact", "no")
    Traceback (most recent call last):
    pecli.errors.ParameterError: exact must be True or False, got 'no' (pass exact=True or exact=False)
    """
    if not isinstance(value, (bool, np.bool_)):
        raise ParameterError(
            f"{name} must be True or False, got {literal_repr(value)}", hint=f"pass {name}=True or {name}=False"
        )
    return bool(value)


def check_tolerance(name: str, value: Any) -> None:
    """A :class:`ParameterError` naming ``name`` unless ``value`` is None or a finite real number >= 0.

    >>> check_tolerance("rtol", None), check_tolerance("rtol", 0)
    (None, None)
    """
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (0 <= float(value) < float("inf")):
        raise ParameterError(
            f"{name} must be a finite number >= 0, got {literal_repr(value)}", hint=f"e.g. {name}=1e-6"
        )
