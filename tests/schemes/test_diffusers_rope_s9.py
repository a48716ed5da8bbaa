"""diffusers' RoPE and 2-D sin-cos helpers against pecli's rope2d, rope and sincos2d, seeded random parameters.

diffusers 0.42.1 (huggingface/diffusers src/diffusers/models/embeddings.py): get_2d_rotary_pos_embed
(rope2d's claimed convention), get_1d_rotary_pos_embed with float64 frequencies (rope, both layouts)
and get_2d_sincos_pos_embed (sincos2d, base_size, interpolation_scale, cls/extra tokens).
"""

from __future__ import annotations

import numpy as np
import pytest

from pecli.schemes.grid import sincos2d_table
from pecli.schemes.rope import rope_table
from pecli.schemes.rope2d import rope2d_table

torch = pytest.importorskip("torch")
embeddings = pytest.importorskip("diffusers.models.embeddings")


def _noise(largest_position: float) -> float:
    """float32 angles and cos/sin: a few eps32 per unit of angle, plus rounding of the values."""
    return 4e-7 * (1.0 + largest_position) + 1e-6


@pytest.mark.parametrize("case", range(12))
def test_get_2d_rotary_pos_embed_is_rope2d(case):
    rng = np.random.default_rng(900 + case)
    d = 4 * int(rng.integers(1, 33))
    h, w = (int(x) for x in rng.integers(1, 20, 2))
    cos, sin = embeddings.get_2d_rotary_pos_embed(d, ((0, 0), (h, w)), (h, w), use_real=True)
    for part, library in (("cos", cos), ("sin", sin)):
        ours = rope2d_table(None, d, grid=f"{h},{w}", part=part, dtype="float64")
        assert ours.shape == tuple(library.shape)
        assert np.abs(library.numpy() - ours).max() <= _noise(max(h, w)), (d, h, w, part)


@pytest.mark.parametrize("case", range(12))
def test_get_1d_rotary_pos_embed_is_rope(case):
    rng = np.random.default_rng(950 + case)
    d = 2 * int(rng.integers(1, 65))
    length = int(rng.integers(1, 300))
    theta = float(rng.choice([50.0, 100.0, 10000.0, 500000.0, 1e6]))
    interleaved = bool(rng.integers(0, 2))
    cos, sin = embeddings.get_1d_rotary_pos_embed(
        d, length, theta=theta, use_real=True, repeat_interleave_real=interleaved, freqs_dtype=torch.float64
    )
    layout = "interleaved" if interleaved else "half"
    for part, library in (("cos", cos), ("sin", sin)):
        ours = rope_table(length, d, base=theta, part=part, layout=layout, dtype="float64")
        assert np.abs(library.numpy() - ours).max() <= _noise(length), (d, length, theta, layout, part)


@pytest.mark.parametrize("case", range(12))
def test_get_2d_sincos_pos_embed_is_sincos2d(case):
    rng = np.random.default_rng(990 + case)
    d = 4 * int(rng.integers(1, 33))
    n = int(rng.integers(1, 20))
    base_size = float(rng.choice([8, 16, 32, 64]))
    scale = float(rng.choice([0.5, 1.0, 1.5, 2.0]))
    cls_token = bool(rng.integers(0, 2))
    extra = int(rng.integers(0, 3)) if cls_token else 0
    library = embeddings.get_2d_sincos_pos_embed(
        d,
        n,
        cls_token=cls_token,
        extra_tokens=extra,
        interpolation_scale=scale,
        base_size=base_size,
        output_type="pt",
    )
    ours = sincos2d_table(
        None,
        d,
        grid=f"{n},{n}",
        cls_token=cls_token,
        extra_tokens=extra if cls_token else None,
        base_size=base_size,
        interpolation_scale=scale,
        layout="by-axis",
        dtype="float64",
    )
    assert ours.shape == tuple(library.shape)
    assert np.abs(library.numpy() - ours).max() <= _noise(n * base_size / n / scale), (d, n, base_size, scale)


@pytest.mark.parametrize(("dim", "length", "interleaved"), [(54, 261, False), (84, 215, True)])
def test_identify_names_a_plain_base_50_rope_without_a_no_op_scaling(dim, length, interleaved):
    """diffusers' RoPE at theta 50 was named ``--scaling llama3 --factor 2 --original-max-position 2048``:
    a Llama 3 scaling whose every wavelength (at most 2π·50) is below its high-frequency bound moves
    no frequency, so the plain base is the simpler true reading."""
    from pecli.analysis.identify import identify_table
    from pecli.cli.reproduce import reproduce

    cos, _ = embeddings.get_1d_rotary_pos_embed(
        dim, length, theta=50.0, use_real=True, repeat_interleave_real=interleaved, freqs_dtype=torch.float64
    )
    found = identify_table(cos.numpy())
    assert found.level == "exact"
    assert found.best.scheme == "rope" and found.best.params["base"] == 50.0
    assert found.best.params.get("scaling") in (None, "none"), reproduce(found)
