"""The torch backend of ``pecli generate --device``: phasors computed by torch on a CUDA device.

Imported only when ``--device`` names a GPU; the core never imports it, the CLI passes it to
:func:`pecli.schemes.backend.angles_on`.

>>> import numpy as np
>>> TorchPhasors(check_device("cpu")).phasors(np.array([1.0]), np.array([0.5])).round(6).tolist()
[[(0.877583+0.479426j)]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from pecli.errors import ParameterError

__all__ = ["TorchPhasors", "check_device"]


def check_device(device: str) -> str:
    """``device`` if torch can compute there; a one-line :class:`ParameterError` when no such GPU exists.

    >>> check_device("cpu")
    'cpu'
    """
    if device == "cpu":
        return device
    if not torch.cuda.is_available():
        raise ParameterError(
            f"{{device={device}}}: no CUDA GPU is available (torch {torch.__version__} sees none)",
            hint="drop {device} to compute on the CPU",
        )
    index = torch.device(device).index
    if index is not None and index >= torch.cuda.device_count():
        raise ParameterError(
            f"{{device={device}}}: there are {torch.cuda.device_count()} CUDA devices",
            hint=f"use {{device=cuda:0}} … cuda:{torch.cuda.device_count() - 1}",
        )
    return device


@dataclass(frozen=True)
class TorchPhasors:
    """A :class:`~pecli.schemes.backend.PhasorBackend`: ``exp(i·p·ω)`` by torch on ``device``, in float64."""

    device: str

    def phasors(self, positions: np.ndarray, freqs: np.ndarray) -> np.ndarray:
        """The phasors as a numpy complex128 array (computed on the device, copied back)."""
        p = torch.as_tensor(np.asarray(positions, dtype=np.float64), device=self.device)
        f = torch.as_tensor(np.asarray(freqs, dtype=np.float64), device=self.device)
        angles = torch.outer(p, f)
        return torch.complex(torch.cos(angles), torch.sin(angles)).cpu().numpy()
