"""Write tests/data/t5_buckets.npy and t5_buckets.json: T5's buckets as transformers computes them.

Run with an environment that has torch and transformers (not needed by the tests themselves):

    /work/venvs/relative/bin/python tests/data/make_t5_references.py

Row r of the int8 table holds ``T5Attention._relative_position_bucket(torch.arange(-4096, 4097),
bidirectional, num_buckets, max_distance)`` for the r-th configuration listed in the JSON file,
which also records the library versions and the call. Configurations where transformers returns
buckets outside 0..num_buckets − 1 (max_distance not above the exact buckets' reach: its log ratio
is 0 or negative) are listed as ``invalid`` with the range it returned; pecli refuses them.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
REACH = 4096
#: the grid asked for, then configurations where float32 and float64 arithmetic give different buckets
CONFIGS = [
    *itertools.product((True, False), (8, 32, 64), (16, 128, 256)),
    (False, 9, 128),
    (False, 10, 160),
    (True, 96, 81),
]


def main() -> None:
    # imported here: the test suite collects this file and has neither torch nor transformers
    import torch
    import transformers
    from transformers.models.t5.modeling_t5 import T5Attention

    relative_position = torch.arange(-REACH, REACH + 1, dtype=torch.long)
    configs, invalid, rows = [], [], []
    for bidirectional, num_buckets, max_distance in CONFIGS:
        buckets = T5Attention._relative_position_bucket(
            relative_position, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        config = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
        low, high = int(buckets.min()), int(buckets.max())
        if low < 0 or high >= num_buckets:
            invalid.append({**config, "returned": [low, high]})
            continue
        configs.append(config)
        rows.append(buckets.numpy().astype(np.int8))
    np.save(HERE / "t5_buckets.npy", np.stack(rows))
    record = {
        "library": f"transformers {transformers.__version__}, torch {torch.__version__}",
        "call": "transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket("
        f"torch.arange({-REACH}, {REACH + 1}), bidirectional, num_buckets, max_distance)",
        "relative_positions": [-REACH, REACH],
        "configs": configs,
        "invalid": invalid,
    }
    (HERE / "t5_buckets.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
