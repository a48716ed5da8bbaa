"""``--from-config`` for the sinusoidal families against transformers' own modules, on seeded random configs:
Marian, M2M100, FSMT and Speech2Text (fairseq's tables: row 0 is position padding_idx + 1) and Whisper's encoder.
Odd widths and every padding index included; tolerances are float32's noise at the largest angle."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

import pecli

torch = pytest.importorskip("torch")


def _reference(family: str, dim: int, length: int, pad: int) -> np.ndarray | None:
    if family == "marian":
        from transformers.models.marian.modeling_marian import MarianSinusoidalPositionalEmbedding

        return MarianSinusoidalPositionalEmbedding(length, dim).create_weight().double().numpy()
    if family == "whisper":
        from transformers.models.whisper.modeling_whisper import sinusoids

        return None if dim % 2 else sinusoids(length, dim).double().numpy()
    if family == "m2m_100":
        from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding as Module
    elif family == "speech_to_text":
        from transformers.models.speech_to_text.modeling_speech_to_text import (
            Speech2TextSinusoidalPositionalEmbedding as Module,
        )
    else:
        from transformers.models.fsmt.modeling_fsmt import SinusoidalPositionalEmbedding as Module
    # the module's row index is the position number: the first real token is at padding_idx + 1
    return Module.get_embedding(length + pad + 1, dim, pad).double().numpy()[pad + 1 :]


_LENGTH_KEY = {"speech_to_text": "max_source_positions", "whisper": "max_source_positions"}


@pytest.mark.parametrize("family", ["marian", "m2m_100", "fsmt", "speech_to_text", "whisper"])
def test_from_config_matches_the_family_module(family: str, tmp_path) -> None:
    rng = random.Random(family)
    for _ in range(5):
        dim, length, pad = rng.choice([7, 8, 15, 33, 64, 512]), rng.choice([4, 100, 1024]), rng.choice([0, 1, 2, 5])
        expected = _reference(family, dim, length, pad)
        if expected is None:
            continue
        config = {"model_type": family, "d_model": dim, _LENGTH_KEY.get(family, "max_position_embeddings"): length,
                  "pad_token_id": pad}  # fmt: skip
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config))
        (ours,) = pecli.from_config(str(path), dtype="float64").values()
        assert ours.shape == expected.shape, (config, ours.shape, expected.shape)
        # transformers computes in float32: its angles carry ≈ 2^-24 · (largest position) of noise
        np.testing.assert_allclose(ours, expected, rtol=0, atol=4 * 2.0**-24 * (length + pad + 2), err_msg=str(config))
