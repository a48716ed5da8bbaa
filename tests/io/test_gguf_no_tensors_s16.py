"""A GGUF of rope metadata and no tensors: every command says it holds none, and how to get its table (issue 30).

compare with --key-b said it "holds one unnamed table … keys name the tensors of .safetensors and .pt files".
"""

from __future__ import annotations

from pathlib import Path

import gguf
import numpy as np

from tests.conftest import run_in_process


def test_a_gguf_without_tensors_is_named_so_with_the_way_to_its_table(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(str(model), "llama")
    writer.add_context_length(128), writer.add_embedding_length(64), writer.add_head_count(2)
    writer.add_rope_freq_base(10000.0)
    writer.write_header_to_file(), writer.write_kv_data_to_file(), writer.write_tensors_to_file(), writer.close()
    table = tmp_path / "a.npy"
    np.save(table, np.zeros((128, 32), np.float32))
    for args in (("compare", str(table), str(model), "--key-b", "cos"), ("identify", str(model)),
                 ("compare", str(table), str(model))):  # fmt: skip
        result = run_in_process(*args)
        assert result.code == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "holds no tensors" in result.stderr and "unnamed" not in result.stderr
        assert f"pecli generate --from-config {model}" in result.stderr
    written = tmp_path / "pe.safetensors"
    assert run_in_process("generate", "--from-config", str(model), "-o", str(written)).code == 0
