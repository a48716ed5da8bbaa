"""Write tests/data/rope_inv_freq.npy and rope_inv_freq.json: RoPE inverse frequencies as transformers computes them.

Run with an environment that has torch and transformers (not needed by the tests themselves):

    /work/venvs/relative/bin/python tests/data/make_rope_references.py

Row r of the float32 table is ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](config,
seq_len=seq_len)[0]`` for the r-th case in the JSON file (a ``LlamaConfig`` with head_dim 128 and
``rope_parameters``), which records the library versions and each case's pecli parameters.
transformers computes in float32; pecli in float64, so the tests compare to float32 resolution.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
HEAD_DIM = 128
#: (rope_type, extra rope_parameters, pecli scaling parameters, base, seq_len)
CASES = [
    # transformers 5 has no "default" entry: linear with factor 1 is the unscaled frequencies
    ("linear", {"factor": 1.0}, {"scaling": "none"}, 10000.0, None),
    ("linear", {"factor": 4.0}, {"scaling": "linear", "factor": 4.0}, 10000.0, None),
    (
        "dynamic",
        {"factor": 2.0},  # dynamic NTK's original context is config.max_position_embeddings
        {"scaling": "dynamic", "factor": 2.0, "original_max_position": 4096, "length": 16384},
        10000.0,
        16384,
    ),
    (
        "yarn",
        {"factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 32.0, "beta_slow": 1.0},
        {"scaling": "yarn", "factor": 4.0, "original_max_position": 4096},
        10000.0,
        None,
    ),
    (
        "yarn",
        {"factor": 16.0, "original_max_position_embeddings": 2048, "beta_fast": 16.0, "beta_slow": 2.0},
        {"scaling": "yarn", "factor": 16.0, "original_max_position": 2048, "beta_fast": 16.0, "beta_slow": 2.0},
        1000000.0,
        None,
    ),
    (
        "llama3",
        {"factor": 8.0, "original_max_position_embeddings": 8192, "low_freq_factor": 1.0, "high_freq_factor": 4.0},
        {"scaling": "llama3", "factor": 8.0, "original_max_position": 8192},
        500000.0,
        None,
    ),
]


def main() -> None:
    # imported here: the test suite collects this file and has neither torch nor transformers
    import torch
    import transformers
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rows, records = [], []
    for rope_type, extra, pecli_params, base, seq_len in CASES:
        original = extra.get("original_max_position_embeddings", 4096)
        stretch = 1.0 if rope_type == "dynamic" else extra.get("factor", 1.0)
        config = LlamaConfig(
            hidden_size=HEAD_DIM * 32,
            num_attention_heads=32,
            head_dim=HEAD_DIM,
            max_position_embeddings=int(original * stretch),
            rope_parameters={"rope_type": rope_type, "rope_theta": base, **extra},
        )
        inv_freq, _ = ROPE_INIT_FUNCTIONS[rope_type](config, device="cpu", seq_len=seq_len)
        rows.append(inv_freq.numpy().astype(np.float32))
        records.append(
            {
                "rope_type": rope_type,
                "rope_parameters": extra,
                "seq_len": seq_len,
                "pecli": {"dim": HEAD_DIM, "base": base, **pecli_params},
            }
        )
    np.save(HERE / "rope_inv_freq.npy", np.stack(rows))
    record = {
        "library": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "call": "transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type](LlamaConfig(head_dim=128, "
        "rope_parameters={'rope_type': rope_type, 'rope_theta': base, ...}), device='cpu', seq_len=seq_len)[0]",
        "cases": records,
    }
    (HERE / "rope_inv_freq.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
