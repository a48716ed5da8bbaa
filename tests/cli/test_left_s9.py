"""Defects found last session and left (issue 30): each test failed on the code before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process


@pytest.mark.parametrize(
    "command",
    [
        ("generate", "sinusoidal", "--d", "8", "--len", "4"),
        ("timestep", "1", "2", "--d", "8"),
        ("compare", "sinusoidal", "sinusoidal", "--d", "8", "--len", "4"),
        ("distance", "t5", "--len", "8"),
        ("plot", "sinusoidal", "--d", "8", "--len", "4"),
        ("resample", "TABLE", "--len", "8"),
    ],
    ids=lambda command: command[0],
)
@pytest.mark.parametrize("spelling", [("-o", ""), ("--output=",)])
def test_an_empty_output_path_is_a_usage_error(tmp_path, command, spelling):
    # generate, distance, plot and resample exited 3 (a runtime failure: "the output cannot be written")
    table = tmp_path / "t.npy"
    np.save(table, np.zeros((4, 8), np.float32))
    args = [str(table) if word == "TABLE" else word for word in command]
    result = run_in_process(*args, *spelling, cwd=str(tmp_path))
    assert result.code == 2, result.stderr
    message = "pecli: error: -o: the output path is empty (give a file name after -o, or leave -o out)"
    assert result.stderr.strip() == message
    assert result.stdout == b""
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.npy"]


@pytest.mark.parametrize(
    ("model_type", "arch", "extra"),
    [
        ("gpt_neox", "gptneox", {"rotary_pct": 0.25}),
        ("deepseek_v3", "deepseek2", {"qk_rope_head_dim": 64, "rope_scaling": {
            "type": "yarn", "factor": 40.0, "original_max_position_embeddings": 16, "mscale": 1.0,
            "mscale_all_dim": 1.0, "beta_fast": 32, "beta_slow": 1}}),
        ("deepseek_v2", "deepseek2", {"qk_rope_head_dim": 32}),
        ("cohere", "command-r", {}),
        ("mistral", "llama", {}),
        ("qwen2_moe", "qwen2moe", {}),
        ("phi", "phi2", {"partial_rotary_factor": 0.5}),
        ("llama", "llama", {}),
    ],
)  # fmt: skip
def test_the_gguf_view_names_llama_cpps_architecture_and_reads_back(tmp_path, model_type, arch, extra):
    # info --as gguf wrote the transformers model type (gpt_neox, deepseek_v3) where llama.cpp's converter writes
    # gptneox, deepseek2 (gguf.constants.MODEL_ARCH_NAMES); the view must still give the config's own table
    import json

    config = {"model_type": model_type, "hidden_size": 512, "num_attention_heads": 4,
              "max_position_embeddings": 64, "rope_theta": 10000.0, **extra}  # fmt: skip
    (tmp_path / "config.json").write_text(json.dumps(config))
    view = run_in_process("info", str(tmp_path / "config.json"), "--as", "gguf")
    assert view.code == 0, view.stderr
    metadata = json.loads(view.out)["metadata"]
    assert metadata["general.architecture"] == arch
    assert f"{arch}.rope.freq_base" in metadata
    (tmp_path / "view.json").write_bytes(view.stdout)
    tables = []
    for source in ("config.json", "view.json"):
        out = tmp_path / f"{source}.npy"
        result = run_in_process("generate", "--from-config", str(tmp_path / source), "--part", "cos", "--dtype",
                                "float64", "-o", str(out))  # fmt: skip
        assert result.code == 0, result.stderr
        tables.append(np.load(out))
    assert tables[0].shape == tables[1].shape and tables[0].shape[0] == 64
    np.testing.assert_allclose(tables[1], tables[0], rtol=1e-12, atol=0)


def _probe(tmp_path, name, *options):
    path = str(tmp_path / name)
    result = run_in_process("generate", "rope", "--d", "16", "--len", "8", *options, "--probe", "-o", path)
    assert result.code == 0, result.stderr
    return path


def test_two_probes_of_the_same_inputs_compare_their_rotations(tmp_path):
    # two probe files: "holds 6 tensors; choose one with --key (2-D candidates: none is 2-D)", exit 2
    import json

    first, same = _probe(tmp_path, "a.safetensors"), _probe(tmp_path, "b.safetensors")
    agreed = run_in_process("compare", first, same, "--json")
    assert agreed.code == 0, agreed.stderr
    report = json.loads(agreed.out)
    assert report["agree"] is True and report["engine"] == "b.safetensors"
    assert [tensor["max_abs_diff"] for tensor in report["tensors"].values()] == [0.0, 0.0]
    other_base = _probe(tmp_path, "c.safetensors", "--base", "500000")
    differs = run_in_process("compare", first, other_base)
    assert differs.code == 1, differs.stderr
    assert differs.out.count("cause: the base differs: the reference's is 10000, the rotation's 500000") == 2


def test_probes_of_different_inputs_are_refused_naming_what_differs(tmp_path):
    first, longer = _probe(tmp_path, "a.safetensors"), _probe(tmp_path, "b.safetensors", "--len", "12")
    result = run_in_process("compare", first, longer)
    assert result.code == 2
    assert result.stderr.startswith(
        "pecli: error: a.safetensors and b.safetensors are probes of different inputs: their positions differ "
        "(9 against 10)"
    )
    assert result.stderr.count("\n") == 1 and result.stdout == b""


def test_a_batch_of_one_is_read_as_positions_of_channels_and_says_so(tmp_path):
    # a (1, H, W) tensor was read as H positions of W channels without a word: ambiguous with a one-channel grid
    rng = np.random.default_rng(7)
    table = rng.normal(size=(1, 4, 5))
    np.save(tmp_path / "b.npy", table)
    np.save(tmp_path / "t.npy", table[0])
    batched = run_in_process("resample", str(tmp_path / "b.npy"), "--grid", "3x3", "-o", str(tmp_path / "b3.npy"))
    assert batched.code == 0, batched.stderr
    assert "from 1 × 4 × 5 (4 positions of 5 channels); grid=3x3" in batched.stderr + batched.out
    plain = run_in_process("resample", str(tmp_path / "t.npy"), "--grid", "3x3", "-o", str(tmp_path / "t3.npy"))
    assert plain.code == 0 and "positions of" not in plain.stderr + plain.out
    resampled = np.load(tmp_path / "b3.npy")
    assert resampled.shape == (1, 9, 5)
    np.testing.assert_array_equal(resampled[0], np.load(tmp_path / "t3.npy"))


def test_a_one_channel_grid_resamples_as_the_documented_h_w_by_1_table(tmp_path):
    # docs/resample.md: a one-channel (1, H, W) grid is given as (H·W, 1): torch's interpolate of the grid
    torch = pytest.importorskip("torch")
    grid = np.random.default_rng(3).normal(size=(1, 4, 4))
    np.save(tmp_path / "g.npy", grid.reshape(-1, 1))
    result = run_in_process("resample", str(tmp_path / "g.npy"), "--grid", "6x6", "--method", "bilinear",
                            "--no-antialias", "-o", str(tmp_path / "g6.npy"))  # fmt: skip
    assert result.code == 0, result.stderr
    expected = torch.nn.functional.interpolate(torch.from_numpy(grid)[None], size=(6, 6), mode="bilinear",
                                               align_corners=False)[0, 0].numpy()  # fmt: skip
    np.testing.assert_allclose(np.load(tmp_path / "g6.npy").reshape(6, 6), expected, rtol=0, atol=1e-12)
