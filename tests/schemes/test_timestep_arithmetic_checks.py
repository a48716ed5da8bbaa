"""A timestep table in a library's arithmetic is checked like the exact one: d // 2 − freq_shift ≤ 0 is refused
by name (diffusers' float32 code divides by it and returns NaN), with no numpy warning on the way."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pecli
from pecli.errors import ParameterError


@pytest.mark.parametrize("arithmetic", [None, "float32", "bfloat16"])
@pytest.mark.parametrize(("dim", "shift"), [(2, 1.0), (3, 1.0), (4, 2.0), (5, 3.0)])
def test_a_zero_or_negative_denominator_is_refused_in_every_arithmetic(dim: int, shift: float, arithmetic) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "invalid value encountered in divide" before the refusal was the defect
        with pytest.raises(ParameterError, match=r"freq_shift.*d // 2 − shift"):
            pecli.timestep_embedding([0.0, 1.0, 2.0], dim, freq_shift=shift, arithmetic=arithmetic)


def test_a_positive_denominator_in_float32_matches_diffusers() -> None:
    torch = pytest.importorskip("torch")
    from diffusers.models.embeddings import get_timestep_embedding

    times = np.array([0.0, 1.5, 250.0, 999.0])
    for dim, shift in ((3, 0.5), (8, 1.0), (9, 0.0)):
        ours = pecli.timestep_embedding(times, dim, flip_sin_to_cos=False, freq_shift=shift, arithmetic="float32",
                                        dtype="float32")  # fmt: skip
        theirs = get_timestep_embedding(torch.tensor(times, dtype=torch.float32), dim, flip_sin_to_cos=False,
                                        downscale_freq_shift=shift).numpy()  # fmt: skip
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=2e-6)
