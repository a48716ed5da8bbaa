"""torch ``nn.Module``s over pecli's numpy core.

This module imports torch (it is pecli's torch module); nothing else in pecli imports it except
``.pt`` I/O and :mod:`pecli.torch_backend` (``--device``). Every table comes from the same core
functions the CLI writes, in float64 rounded once, so a module's output equals ``pecli generate``'s table.

>>> import torch
>>> pe = SinusoidalPositionalEncoding(8, max_len=16)
>>> pe(torch.zeros(2, 5, 8)).shape
torch.Size([2, 5, 8])
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import torch
    from torch import nn
except ImportError as error:  # the optional extra: say how to get it
    raise ImportError("pecli.torch needs torch: pip install 'pecli[torch]'") from error

from pecli.arguments import check_flag, check_has_values
from pecli.errors import ParameterError
from pecli.text import literal_repr

__all__ = [
    "RotaryEmbedding",
    "SinusoidalPositionalEncoding",
    "TimestepEmbedding",
    "to_tensor",
]


def to_tensor(array: np.ndarray) -> torch.Tensor:
    """A numpy table from the core as a torch tensor (bfloat16 through its bits: numpy has no bfloat16).

    >>> to_tensor(np.ones(2, dtype=np.float32)).dtype
    torch.float32
    """
    if array.dtype.name == "bfloat16":
        return torch.from_numpy(np.ascontiguousarray(array).view(np.uint16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(array).copy())


def _check_input(name: str, x: Any, layout: str, *, ndim: int, width: int) -> None:
    """A :class:`ParameterError` naming ``name`` unless ``x`` is a floating-point tensor whose last axis is ``width``,
    with ``ndim`` axes (at least ``ndim`` for a ``…`` layout). An integer tensor would get the table cast to
    integers (every value truncated to -1, 0 or 1), so it is refused instead."""
    if not isinstance(x, torch.Tensor):
        raise ParameterError(f"{name} must be a torch tensor {layout}, got {type(x).__name__}",
                             hint=f"pass torch.as_tensor({name})")  # fmt: skip
    if x.ndim != ndim if "…" not in layout else x.ndim < ndim:
        raise ParameterError(f"{name} must be {layout}, got shape {tuple(x.shape)}", hint=f"reshape {name} to {layout}")
    if x.shape[-1] != width:
        raise ParameterError(f"{name}'s last axis is {x.shape[-1]}, but the module's dim is {width}",
                             hint=f"build the module with dim={x.shape[-1]}")  # fmt: skip
    if not (x.is_floating_point() or x.is_complex()):
        raise ParameterError(f"{name} must be a floating-point tensor, got {x.dtype}",
                             hint=f"pass {name}.float()")  # fmt: skip


def _count(name: str, value: Any, *, least: int) -> int:
    """``value`` as an int >= ``least`` (a numpy or 0-d torch integer too), else a :class:`ParameterError`."""
    import operator

    try:
        number = operator.index(value) if not isinstance(value, bool) else None
    except TypeError:
        number = None
    if number is None or number < least:
        kind = "a positive integer" if least > 0 else "an integer >= 0"
        raise ParameterError(f"{name} must be {kind}, got {literal_repr(value)}", hint=f"pass e.g. {name}={least}")
    return number


class SinusoidalPositionalEncoding(nn.Module):
    """Adds a sinusoidal table (any sinusoidal preset) to its input, as a registered buffer.

    Args:
        dim: embedding dimension.
        max_len: rows of the table (the longest sequence).
        preset: a sinusoidal preset (``vaswani``, ``fairseq``, ``tensor2tensor``…); None: Vaswani.
        batch_first: input (batch, len, dim) if True, else (len, batch, dim).
        dtype: the buffer's dtype (float64 angles, rounded once).
        **params: sinusoidal parameters (``base``, ``layout``…), as ``pecli generate`` takes them.

    Example:
        >>> import pecli
        >>> module = SinusoidalPositionalEncoding(8, max_len=4, preset="fairseq")
        >>> bool((module.pe.numpy() == pecli.encode(None, 4, 8, preset="fairseq")).all())
        True
    """

    pe: torch.Tensor

    def __init__(
        self,
        dim: int,
        max_len: int,
        *,
        preset: str | None = None,
        batch_first: bool = True,
        dtype: str = "float32",
        **params: Any,
    ) -> None:
        super().__init__()
        from pecli.schemes import encode

        self.batch_first = check_flag("batch_first", batch_first)
        self.register_buffer("pe", to_tensor(encode("sinusoidal", max_len, dim, preset=preset, dtype=dtype, **params)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        order = "(batch, len, dim)" if self.batch_first else "(len, batch, dim)"
        _check_input("x", x, order, ndim=3, width=self.pe.shape[1])
        length = x.shape[1] if self.batch_first else x.shape[0]
        if length > self.pe.shape[0]:
            raise ParameterError(
                f"sequence of {length} positions, but the table has max_len = {self.pe.shape[0]}",
                hint=f"build the module with max_len >= {length}",
            )
        table = self.pe[:length]
        return x + (table if self.batch_first else table[:, None, :]).to(x.dtype)


class TimestepEmbedding(nn.Module):
    """Diffusion timestep embeddings of a 1-D tensor of (possibly fractional) timesteps: (N, dim).

    A module over the core's :func:`pecli.schemes.timestep.timestep_embedding` (``pecli timestep``):
    latent/guided-diffusion's ``timestep_embedding`` by default ([cos | sin], shift 0);
    ``flip_sin_to_cos=False, freq_shift=1`` is diffusers' ``get_timestep_embedding`` default.
    Computed in float64 from the timesteps as given, then rounded once to ``dtype``.

    Differentiable in the timesteps, as diffusers' is (continuous-time models train through t): when they
    require grad, the backward pass gives ∂E/∂t (``scale·ω`` times the quarter-turned sin and cos) in
    float64, itself differentiable; the values are the same exact table either way.

    Example:
        >>> TimestepEmbedding(4, dtype="float64")(torch.tensor([1.0])).numpy().round(10).tolist()
        [[0.5403023059, 0.9999500004, 0.8414709848, 0.0099998333]]
        >>> t = torch.tensor([1.0], dtype=torch.float64, requires_grad=True)
        >>> TimestepEmbedding(4, dtype="float64")(t)[0, 0].backward()  # d cos(t)/dt = −sin(1)
        >>> round(float(t.grad[0]), 10)
        -0.8414709848
    """

    def __init__(
        self,
        dim: int,
        *,
        max_period: float = 10000.0,
        flip_sin_to_cos: bool = True,
        freq_shift: float = 0.0,
        scale: float = 1.0,
        repeat_only: bool = False,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        from pecli.schemes.timestep import timestep_embedding

        self.params: dict[str, Any] = {
            "max_period": max_period,
            "flip_sin_to_cos": check_flag("flip_sin_to_cos", flip_sin_to_cos),
            "freq_shift": freq_shift,
            "scale": scale,
            "repeat_only": check_flag("repeat_only", repeat_only),
            "dtype": dtype,
        }
        self.dim = dim
        timestep_embedding([0.0], dim, **self.params)  # checks every parameter now, not at the first call

    def forward(self, timesteps: torch.Tensor) -> torch.Tensor:
        if not isinstance(timesteps, torch.Tensor):
            raise ParameterError(
                f"timesteps must be a torch tensor, got {type(timesteps).__name__}",
                hint="pass torch.as_tensor(timesteps); pecli.timestep_embedding takes numpy arrays and lists",
            )
        check_has_values(timesteps, "timesteps")
        if timesteps.is_complex():  # torch's cast to float64 would drop the imaginary parts with a warning
            raise ParameterError(f"timesteps must be real numbers, got {timesteps.dtype}",
                                 hint="pass timesteps.real if the imaginary parts are 0")  # fmt: skip
        if timesteps.requires_grad and torch.is_grad_enabled():
            return _DifferentiableTimesteps.apply(timesteps, self)
        return self.exact(timesteps)

    def exact(self, timesteps: torch.Tensor) -> torch.Tensor:
        """The embeddings of ``timesteps`` (any shape, flattened), computed by the core, on their device."""
        from pecli.schemes.timestep import timestep_embedding

        times = timesteps.detach().to("cpu", torch.float64).reshape(-1).numpy()
        return to_tensor(timestep_embedding(times, self.dim, **self.params)).to(timesteps.device)

    def derivative(self, timesteps: torch.Tensor) -> torch.Tensor:
        """∂E/∂t of each flattened timestep's row, (N, dim) in float64, by torch ops (so differentiable again)."""
        from pecli.schemes.timestep import timestep_frequencies

        times = timesteps.to(torch.float64).reshape(-1, 1)
        if self.params["repeat_only"]:  # E = t in every column
            return torch.ones_like(times).expand(-1, self.dim)
        freqs = torch.as_tensor(
            timestep_frequencies(self.dim, self.params["max_period"], self.params["freq_shift"], self.params["scale"]),
            device=times.device,
        )
        angles = times * freqs
        cos_slope, sin_slope = -torch.sin(angles) * freqs, torch.cos(angles) * freqs  # d cos(a)/dt, d sin(a)/dt
        halves = (cos_slope, sin_slope) if self.params["flip_sin_to_cos"] else (sin_slope, cos_slope)
        padding = times.new_zeros(times.shape[0], self.dim - 2 * freqs.shape[0])  # an odd dim's zero column
        return torch.cat([*halves, padding], dim=1)


class _DifferentiableTimesteps(torch.autograd.Function):
    """The module's exact table forward; backward: the incoming gradient times ∂E/∂t, summed over each row."""

    @staticmethod
    def forward(ctx: Any, timesteps: torch.Tensor, module: TimestepEmbedding) -> torch.Tensor:
        ctx.save_for_backward(timesteps)
        ctx.module = module
        return module.exact(timesteps)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (timesteps,) = ctx.saved_tensors
        slopes = ctx.module.derivative(timesteps)
        grad_t = (grad.to(torch.float64) * slopes).sum(dim=1)
        return grad_t.reshape(timesteps.shape).to(timesteps.dtype), None


class RotaryEmbedding(nn.Module):
    """Rotary position embedding applied to queries and keys (…, len, dim), over pecli's RoPE tables.

    Args:
        dim: head dimension (even).
        max_len: positions precomputed (more are computed on demand).
        base: θ base.
        layout: ``half`` (HF Llama's rotate_half) or ``interleaved`` (GPT-J / Meta pairs).
        scaling: ``none``, ``linear``, ``dynamic``, ``yarn`` or ``llama3`` with its parameters
            (``factor``, ``original_max_position``…), as ``pecli generate rope`` takes them.
            ``dynamic`` recomputes the tables for each sequence length, as HF does.
        dtype: the tables' dtype (float64 angles, rounded once).

    Example:
        >>> rope = RotaryEmbedding(4, max_len=2, dtype="float64")
        >>> q = torch.tensor([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0]], dtype=torch.float64)
        >>> rope(q, q)[0][1].numpy().round(10).tolist()
        [-1.9841106486, 1.9599006675, 2.4623779024, 4.0197996683]
    """

    cos: torch.Tensor
    sin: torch.Tensor

    def __init__(
        self,
        dim: int,
        max_len: int = 2048,
        *,
        base: float = 10000.0,
        layout: str = "half",
        scaling: str = "none",
        dtype: str = "float32",
        **scaling_params: Any,
    ) -> None:
        super().__init__()
        self.params = {"base": base, "layout": layout, "scaling": scaling, **scaling_params}
        self.dim, self.layout, self.dtype = dim, layout, dtype
        cos, sin = self._tables(max_len)  # rope_table checks it (as its length)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)

    def _tables(self, length: int, start: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Rows ``start … length − 1`` of the ``length``-position tables (only those rows are computed)."""
        from pecli.schemes import encode

        rows = range(start, length)
        return tuple(  # type: ignore[return-value]
            to_tensor(encode("rope", length, self.dim, part=part, dtype=self.dtype, rows=rows, **self.params))
            for part in ("cos", "sin")
        )

    def tables(self, length: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The (length, dim) cos and sin tables: ``pecli generate rope --len length``'s tensors."""
        length = _count("length", length, least=1)
        if self.params["scaling"] == "dynamic" or length > self.cos.shape[0]:
            cos, sin = self._tables(length)
            return cos.to(self.cos.device), sin.to(self.sin.device)
        return self.cos[:length], self.sin[:length]

    def forward(self, q: torch.Tensor, k: torch.Tensor, offset: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
        """Rotate ``q`` and ``k`` (…, len, dim) for positions ``offset … offset + len − 1``."""
        from pecli.schemes.rope import apply_rotary

        offset = _count("offset", offset, least=0)
        for name, x in (("q", q), ("k", k)):
            _check_input(name, x, "(…, len, dim)", ndim=2, width=self.dim)
        if q.shape[-2] != k.shape[-2]:
            raise ParameterError(f"q has {q.shape[-2]} positions but k has {k.shape[-2]}",
                                 hint="rotate q and k of one sequence (the same len axis)")  # fmt: skip
        length = q.shape[-2]
        if self.params["scaling"] == "dynamic" or offset + length > self.cos.shape[0]:
            # only the rows rotated: an offset far past the cache costs len rows, not offset + len
            cos, sin = (table.to(self.cos.device) for table in self._tables(offset + length, start=offset))
        else:
            cos, sin = self.cos[offset : offset + length], self.sin[offset : offset + length]
        return (
            apply_rotary(q, cos.to(q.dtype), sin.to(q.dtype), self.layout),
            apply_rotary(k, cos.to(k.dtype), sin.to(k.dtype), self.layout),
        )
