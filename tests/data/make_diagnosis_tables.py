"""Writes the tables docs/analysis.md diagnoses: transformers' own RoPE plus one shipped mistake.

Run from the repository root: ``python tests/data/make_diagnosis_tables.py``. Made with torch 2.13
(CPU) and transformers 5.23: ``LlamaRotaryEmbedding(LlamaConfig(hidden_size=512,
num_attention_heads=8, rope_parameters={"rope_type": "default", "rope_theta": 10000.0}))``, called
on positions ``torch.arange(512, dtype=torch.bfloat16).float()`` (huggingface/transformers#29285:
positions made in bfloat16); its cos is saved as float32.
"""

from pathlib import Path

import numpy as np
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

HERE = Path(__file__).parent / "diagnosis"


def main() -> None:
    config = LlamaConfig(
        hidden_size=512, num_attention_heads=8, max_position_embeddings=512,
        rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
    )  # fmt: skip
    positions = torch.arange(512, dtype=torch.bfloat16).float()[None]
    cos, _ = LlamaRotaryEmbedding(config)(torch.zeros(1, 1), positions)
    np.save(HERE / "cos_bf16_positions.npy", cos[0].numpy().astype(np.float32))


if __name__ == "__main__":
    main()
