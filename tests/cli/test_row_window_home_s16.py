"""Row windows resolved by :mod:`pecli.sources` (the CLI passes only its words for the fix), ``distance --rows``
of a long table computing only those rows, and the ready ``--key`` example of a file of several tensors."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.cli.options import flag_for
from pecli.errors import ParameterError
from pecli.row_window import RowWindow, WindowHints
from pecli.sources import resolve_windows
from tests.conftest import CAPPED_BYTES, assert_clean_error, run_capped, run_peak

LONG = str(100_000_000)  # sinusoidal --d 64: 23.8 GiB as a whole float32 table


def _sinusoidal_rows(positions: np.ndarray, dim: int) -> np.ndarray:
    """The interleaved sinusoidal table's rows, from the formula (sin on even columns, cos on odd), in float64."""
    angles = positions[:, None] * 10000.0 ** (-np.arange(0, dim, 2) / dim)
    rows = np.empty((len(positions), dim))
    rows[:, 0::2], rows[:, 1::2] = np.sin(angles), np.cos(angles)
    return rows


def test_the_sources_windows_name_parameters_and_the_callers_words_for_fewer_rows():
    (table,) = resolve_windows("sinusoidal", dim=64, length=10**12)
    assert isinstance(table.array, RowWindow) and table.kind == "scheme" and table.label == "sinusoidal"
    with pytest.raises(ParameterError) as refused:
        np.asarray(table.array)
    assert refused.value.hint == "use a smaller length, or take a window of its rows"  # parameters, no flag
    assert refused.value.spelled(flag_for).endswith("(use a smaller --len, or take a window of its rows)")
    hints = WindowHints(narrower="ask for fewer", few_rows="ask for a few")
    (table,) = resolve_windows("sinusoidal", dim=64, length=10**12, hints=hints)
    with pytest.raises(ParameterError) as refused:
        table.array[0 : 10**12 - 1, :]
    assert refused.value.hint == "ask for fewer" and "rows 0:999999999999 of the table" in refused.value.message


def test_a_file_window_is_titled_and_keyed_as_the_file_is_read(tmp_path):
    from safetensors.numpy import save_file

    values = np.linspace(-1, 1, 24 * 4).reshape(24, 4)
    path = str(tmp_path / "p.safetensors")
    save_file({"model.pos_embed": values.astype(np.float32), "w": np.zeros(3, np.float32)}, path)
    (window,) = resolve_windows(path, key="pos_embed")
    whole = pecli.sources.resolve(path, key="pos_embed")
    assert (window.label, window.key, window.requested_key, window.dtype_name, window.kind) == (
        whole.label, whole.key, whole.requested_key, whole.dtype_name, whole.kind)  # fmt: skip
    np.testing.assert_array_equal(window.array[20:, 1:3], whole.array[20:, 1:3])
    with pytest.raises(ParameterError, match="applies to a scheme"):
        resolve_windows(path, dim=4)  # refused as resolve refuses it


def test_distance_rows_of_a_table_larger_than_memory_computes_those_rows(tmp_path):
    # was: "the table would take 23.8 GiB, more than … available (use a smaller --len or --d)", exit 2
    target = tmp_path / "d.npy"
    done = run_capped("distance", "sinusoidal", "--d", "64", "--len", LONG, "--rows", "-10:", "--dtype", "float64",
                      "-o", str(target))  # fmt: skip
    assert done.returncode == 0, done.stderr
    positions = np.arange(10**8 - 10, 10**8, dtype=np.float64)
    # the rows are rounded to float32 once before the dot product: 64 products of that rounding (≤ 6e-8 each)
    rows = _sinusoidal_rows(positions, 64)
    np.testing.assert_allclose(np.load(target), rows @ rows.T, rtol=0, atol=1e-5)
    assert np.allclose(np.diag(np.load(target)), 32.0, atol=1e-5)  # sin² + cos² on each of 32 pairs


def test_distance_rows_json_names_the_window_of_a_long_table(cli):
    result = cli("distance", "sinusoidal", "--d", "64", "--len", LONG, "--rows", "5:8", "--metric", "cosine",
                 "--json")  # fmt: skip
    assert result.code == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["positions"] == [5, 8]
    rows = _sinusoidal_rows(np.arange(5.0, 8.0), 64)
    unit = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    np.testing.assert_allclose(answer["matrix"], unit @ unit.T, atol=1e-6)


def test_distance_rows_of_a_file_larger_than_the_cap_reads_only_those_rows(tmp_path):
    path = tmp_path / "big.npy"
    count = 2 * CAPPED_BYTES // (64 * 4)  # twice the cap, sparse on disk
    table = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(count, 64))
    last = np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64)
    table[count - 4 :] = last
    table.flush()
    del table
    target = tmp_path / "d.npy"
    code, _, stderr, peak_mb = run_peak("distance", str(path), "--rows", "-4:", "--metric", "euclidean",
                                        "--dtype", "float64", "-o", str(target))  # fmt: skip
    assert code == 0, stderr
    wide = last.astype(np.float64)
    expected = np.sqrt(((wide[:, None, :] - wide[None, :, :]) ** 2).sum(axis=-1))
    np.testing.assert_allclose(np.load(target), expected, atol=1e-12)
    assert peak_mb < 400


def test_distance_rows_of_a_long_relative_score_is_still_refused(cli):
    result = cli("distance", "rope", "--d", "64", "--len", LONG, "--rows", "0:10")
    assert_clean_error(result, 2, "--rows", "rope's score")


@pytest.fixture
def gemma3_file(cli, tmp_path):
    """``generate --from-config`` of a minimal Gemma 3 text config: one cos and sin per layer type."""
    directory = tmp_path / "gemma3"
    directory.mkdir()
    rope = {"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6}}  # fmt: skip
    config = {"model_type": "gemma3_text", "hidden_size": 64, "num_attention_heads": 4, "head_dim": 16,
              "max_position_embeddings": 64, "layer_types": list(rope), "rope_parameters": rope}  # fmt: skip
    (directory / "config.json").write_text(json.dumps(config))
    target = tmp_path / "g3.safetensors"
    done = cli("generate", "--from-config", str(directory), "--len", "64", "-o", str(target))
    assert done.code == 0, done.stderr
    return target


def test_several_tensors_refusal_gives_a_ready_key(cli, gemma3_file):
    result = cli("identify", str(gemma3_file))
    ready = "holds 4 tensors; choose one with --key (e.g. --key full_attention.cos; 2-D candidates:"
    assert_clean_error(result, 2, ready, "'sliding_attention.sin' [64, 16])")
    # the example works as written
    chosen = cli("identify", str(gemma3_file), "--key", "full_attention.cos", "--json")
    assert chosen.code in (0, 1), chosen.stderr
    assert "holds 4 tensors" not in chosen.stderr


def test_the_ready_key_is_the_position_table_before_other_2d_tensors(cli, tmp_path):
    from safetensors.numpy import save_file

    path = tmp_path / "vit.safetensors"
    save_file({"qkv.weight": np.zeros((24, 8), np.float32), "pos_embed": np.zeros((1, 17, 8), np.float32),
               "head.weight": np.zeros((10, 8), np.float32)}, str(path))  # fmt: skip
    result = cli("identify", str(path))
    assert_clean_error(result, 2, "(e.g. --key pos_embed; candidates (2-D or (1, N, C)): 'pos_embed' [1, 17, 8];")


def test_the_ready_key_of_a_hostile_name_is_escaped(cli, tmp_path):
    from safetensors.numpy import save_file

    hostile = "pos\x1b]0;pwned\x07\x1b[2J"
    path = tmp_path / "h.safetensors"
    save_file({hostile: np.zeros((4, 2), np.float32), "z": np.zeros((4, 2), np.float32)}, str(path))
    result = cli("identify", str(path))
    assert_clean_error(result, 2, "holds 2 tensors")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert r"(e.g. --key 'pos\x1b]0;pwned\x07\x1b[2J'; 2-D candidates:" in result.stderr
    spaced = tmp_path / "s.safetensors"
    save_file({"z": np.zeros((4, 2), np.float32), "pos embed {len}": np.zeros((4, 2), np.float32)}, str(spaced))
    result = cli("identify", str(spaced))
    assert "(e.g. --key 'pos embed {len}'; 2-D candidates:" in result.stderr  # shell-quoted, braces as they are
