"""Write tests/data/resample_timm.npz (timm's resample_abs_pos_embed), for tests/analysis/test_resample.py.

timm 1.0.31 imports torchvision, whose CPU build is not installable here: it is stubbed in
sys.modules in this script only (resample_abs_pos_embed never touches it). Run:

    python scripts/reference_resample_timm.py
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from importlib import metadata
from pathlib import Path

import numpy as np
import torch


class _Placeholder(type):
    """A placeholder class whose every attribute is another placeholder (``InterpolationMode.NEAREST``)."""

    def __getattr__(cls, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Placeholder(name, (), {})
        setattr(cls, name, value)
        return value


class _Stub(types.ModuleType):
    """A torchvision module whose every attribute is a placeholder (timm only names them at import)."""

    def __getattr__(self, name: str) -> type:
        if name.startswith("__"):
            raise AttributeError(name)
        value = _Placeholder(name, (), {})
        setattr(self, name, value)
        return value


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname == "torchvision" or fullname.startswith("torchvision."):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _Stub(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


sys.meta_path.insert(0, _StubFinder())
from timm.layers.pos_embed import resample_abs_pos_embed  # noqa: E402

#: (name, source grid, target grid, call's keyword arguments)
CASES = [
    ("up", (7, 7), [12, 12], {}),
    ("down", (12, 12), [5, 5], {}),
    ("nonsquare", (4, 6), [9, 5], {"old_size": [4, 6]}),
]


def main() -> None:
    rng = np.random.default_rng(33)
    arrays: dict[str, np.ndarray] = {}
    calls = []
    for name, (h, w), new_size, kwargs in CASES:
        table = rng.standard_normal((1, 1 + h * w, 16)).astype(np.float32)
        result = resample_abs_pos_embed(torch.from_numpy(table), new_size, num_prefix_tokens=1, **kwargs)
        arrays[f"{name}_input"], arrays[f"{name}_output"] = table, result.numpy()
        calls.append(f"{name}: resample_abs_pos_embed(table, {new_size}, num_prefix_tokens=1, {kwargs})")
    arrays["provenance"] = np.array([f"timm {metadata.version('timm')}, torch {metadata.version('torch')}", *calls])
    target = Path(__file__).resolve().parent.parent / "tests" / "data" / "resample_timm.npz"
    np.savez(target, **arrays)
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
