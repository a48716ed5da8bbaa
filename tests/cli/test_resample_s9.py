"""``pecli resample`` and ``pecli distance`` (issue 30): the memory a big table takes, a target too large refused
before the table is read, and messages that name what to do."""

from __future__ import annotations

import numpy as np

from pecli.io import Tensor, write_tensors
from tests.conftest import run_capped, run_in_process

#: an address-space cap below the old peak (the input, its float64 copy: 3× the input) and above the new one
_CAP = 1 << 30


def _big_table(path, rows: int, columns: int) -> str:
    """A float32 .npy of rows × columns written through a memory map (the test process holds none of it)."""
    table = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(rows, columns))
    table[:] = np.sin(np.arange(columns, dtype=np.float32))[None, :] + np.arange(rows, dtype=np.float32)[:, None]
    table.flush()
    del table
    return str(path)


def _capped(*args: str):
    code = (f"import resource, sys; resource.setrlimit(resource.RLIMIT_AS, ({_CAP}, {_CAP}))\n"
            f"sys.argv = ['pecli', *{list(args)!r}]\nfrom pecli.__main__ import main\nmain()\n")  # fmt: skip
    return run_capped(code=code)


def test_resample_length_of_a_table_a_third_of_the_cap_fits(tmp_path):
    # was a float64 copy of the whole table (2× the float32 input) beside it: exit 3 (out of memory) under 1 GiB
    source = _big_table(tmp_path / "big.npy", 81920, 1024)  # 320 MiB
    done = _capped("resample", source, "--len", "512", "-o", str(tmp_path / "r.npy"))
    assert done.returncode == 0, done.stderr
    result = np.load(tmp_path / "r.npy")
    assert result.shape == (512, 1024)
    # linear from 81920 rows to 512: row i samples source position 160·(i + ½) − ½; rows rise by 1 each
    np.testing.assert_allclose(result[:, 0], 160 * (np.arange(512) + 0.5) - 0.5, rtol=1e-6)


def test_distance_profile_of_a_table_a_third_of_the_cap_fits(tmp_path):
    # was the whole table in float64 (2× the input) held for every tile: exit 3 under 1 GiB
    source = _big_table(tmp_path / "wide.npy", 20480, 4096)  # 320 MiB
    done = _capped("distance", source, "--profile", "--max-offset", "2", "--metric", "euclidean", "--json")
    assert done.returncode == 0, done.stderr
    assert '"mean"' in done.stdout


def test_a_target_larger_than_memory_is_refused_before_the_table_is_read(tmp_path):
    # was refused only after the input had been read whole: a 4 GiB table (a sparse file) ran out of memory
    # under the cap (exit 3) before the size was checked
    path = tmp_path / "huge.npy"
    header = np.lib.format.header_data_from_array_1_0(np.empty((1, 1024), np.float32))
    with open(path, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {**header, "shape": (1 << 20, 1024)})
        handle.truncate(handle.tell() + (1 << 20) * 1024 * 4)
    done = _capped("resample", str(path), "--len", "1000000000000", "-o", str(tmp_path / "r.npy"))
    assert done.returncode == 2, done.stderr
    assert "the resampled table would take 10.9 PiB" in done.stderr  # 10^12 rows × 1024 × (8 + 4) bytes
    assert not (tmp_path / "r.npy").exists()


def test_a_bfloat16_table_to_npy_names_the_outputs_that_keep_it(tmp_path):
    # was "npy cannot store bfloat16 … use --dtype float32", but resample has no --dtype
    import ml_dtypes

    table = np.linspace(-1, 1, 16 * 8).reshape(16, 8).astype(ml_dtypes.bfloat16)
    write_tensors(str(tmp_path / "bf.safetensors"), {"pe": Tensor.from_array(table)}, fmt="safetensors")
    result = run_in_process("resample", str(tmp_path / "bf.safetensors"), "--len", "4", "-o", str(tmp_path / "r.npy"))
    assert result.code == 2
    assert "--dtype" not in result.stderr
    assert "bfloat16" in result.stderr and "-o resampled.safetensors or -o resampled.pt" in result.stderr
    done = run_in_process("resample", str(tmp_path / "bf.safetensors"), "--len", "4", "-o", str(tmp_path / "r.pt"))
    assert done.code == 0, done.stderr
    assert "bfloat16" in done.stderr


def test_a_0d_table_names_its_shape(tmp_path):
    # was "a 0-D tensor of shape  is not a position table"
    np.save(tmp_path / "zero.npy", np.float32(1.5))
    result = run_in_process("resample", str(tmp_path / "zero.npy"), "--len", "4", "-o", str(tmp_path / "r.npy"))
    assert result.code == 2
    assert "a 0-D tensor (a single value, shape ()) is not a position table" in result.stderr
    assert "shape  is" not in result.stderr


def test_a_vit_table_without_prefix_tokens_names_the_count_that_leaves_a_square(tmp_path):
    # was "the table's 197 positions are not a square grid (… or the leading class tokens as --prefix-tokens)"
    np.save(tmp_path / "vit.npy", np.ones((1, 197, 8), np.float32))
    result = run_in_process("resample", str(tmp_path / "vit.npy"), "--grid", "4x4", "-o", str(tmp_path / "r.npy"))
    assert result.code == 2
    assert "197 = 1 + 14×14" in result.stderr and "give --prefix-tokens 1 " in result.stderr
    # a class token and 4 registers before 14 × 14 (DINOv2 with registers: 1 + 4 + 196 = 201)
    np.save(tmp_path / "reg.npy", np.ones((201, 8), np.float32))
    result = run_in_process("resample", str(tmp_path / "reg.npy"), "--grid", "4x4", "-o", str(tmp_path / "r.npy"))
    assert "201 = 5 + 14×14" in result.stderr and "give --prefix-tokens 5 " in result.stderr
    # no small count fits: the message as it was
    np.save(tmp_path / "odd.npy", np.ones((160, 8), np.float32))
    result = run_in_process("resample", "odd.npy", "--grid", "4x4", "-o", "r.npy", cwd=str(tmp_path))
    assert "the table's 160 positions are not a square grid (give its grid as --from-grid HxW" in result.stderr


def test_a_checkpoint_lists_its_pos_embed_first(tmp_path):
    # was "(2-D candidates: 'blocks.0.attn.qkv.weight' [24, 8])": the (1, N, C) pos_embed, THE table, unlisted
    tensors = {
        "cls_token": np.ones((1, 1, 8), np.float32),
        "blocks.0.attn.qkv.weight": np.ones((24, 8), np.float32),
        "pos_embed": np.ones((1, 197, 8), np.float32),
    }
    write_tensors(str(tmp_path / "vit.safetensors"), {k: Tensor.from_array(v) for k, v in tensors.items()},
                  fmt="safetensors")  # fmt: skip
    result = run_in_process(
        "resample", str(tmp_path / "vit.safetensors"), "--grid", "4x4", "-o", str(tmp_path / "r.npy")
    )
    assert result.code == 2
    assert "holds 3 tensors; choose one with --key" in result.stderr
    assert "'pos_embed' [1, 197, 8]; 'blocks.0.attn.qkv.weight' [24, 8])" in result.stderr
    assert "cls_token" not in result.stderr
