"""``pecli info`` (headers, metadata, --stats, huge sparse files) and ``pecli schemes`` (the registry)."""

from __future__ import annotations

import json
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pecli
from pecli.io import Tensor, write_tensors
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.params import PARAMS
from pecli.schemes.presets import PRESETS, get_preset
from tests.conftest import assert_clean_error, run_pecli


def _safetensors_header_only(path, tensors: dict, metadata: dict, data_bytes: int) -> None:
    """A safetensors file whose data region is a hole (truncate): nothing but the header is written."""
    header = dict(tensors)
    header["__metadata__"] = metadata
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    with open(path, "wb") as handle:
        handle.write(struct.pack("<Q", len(raw)) + raw)
        handle.truncate(8 + len(raw) + data_bytes)


def test_info_of_a_pecli_file_names_scheme_parameters_and_stats(cli, tmp_path):
    target = tmp_path / "fs.safetensors"
    assert cli("generate", "--preset", "fairseq", "--d", "8", "--len", "6", "-o", str(target)).code == 0
    result = cli("info", str(target), "--stats", "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.out)
    expected = pecli.encode(None, 6, 8, preset="fairseq").astype(np.float64)
    (tensor,) = report["tensors"]
    assert tensor["name"] == "pe" and tensor["shape"] == [6, 8] and tensor["dtype"] == "float32"
    assert tensor["nbytes"] == 6 * 8 * 4 and report["size"] == os.path.getsize(target)
    for stat, value in (("min", expected.min()), ("max", expected.max()), ("mean", expected.mean())):
        assert tensor["stats"][stat] == pytest.approx(value, abs=1e-6)
    assert tensor["stats"]["std"] == pytest.approx(expected.std(), abs=1e-6)
    assert report["pecli"]["scheme"] == "sinusoidal" and report["pecli"]["preset"] == "fairseq"
    assert report["pecli"]["params"] == {**SCHEMES["sinusoidal"].defaults, **get_preset("fairseq").params}
    text = cli("info", str(target)).out
    assert "pe  [6, 8]  float32  192 B" in text
    assert "sinusoidal (preset fairseq)" in text and "offset=2" in text and "min" not in text


def test_info_lists_every_tensor_of_a_checkpoint_and_its_own_metadata(cli, tmp_path):
    target = tmp_path / "model.safetensors"
    tensors = {
        "encoder.pos_embed": Tensor.from_array(np.arange(12, dtype=np.float16).reshape(3, 4)),
        "head.bias": Tensor.from_array(np.array([-2, 5], dtype=np.int64)),
    }
    write_tensors(str(target), tensors, fmt="safetensors", metadata={"format": "pt", "note": "[/x] kept"})
    report = json.loads(cli("info", str(target), "--json", "--stats").out)
    by_name = {t["name"]: t for t in report["tensors"]}
    assert by_name["encoder.pos_embed"]["shape"] == [3, 4] and by_name["encoder.pos_embed"]["dtype"] == "float16"
    assert by_name["encoder.pos_embed"]["stats"]["max"] == 11 and by_name["head.bias"]["stats"]["mean"] == 1.5
    assert report["pecli"] is None and report["metadata"] == {"format": "pt", "note": "[/x] kept"}
    only = json.loads(cli("info", str(target), "--key", "head.bias", "--json").out)
    assert [t["name"] for t in only["tensors"]] == ["head.bias"] and "stats" not in only["tensors"][0]
    text = cli("info", str(target)).out
    assert "metadata:\n  format: pt\n  note: [/x] kept" in text


def test_info_of_npy_from_stdin_with_stats(tmp_path):
    generated = run_pecli("generate", "count", "--d", "3", "--len", "4", "-o", "-")
    result = run_pecli("info", "-", "--stats", "--json", stdin=generated.stdout)
    assert result.code == 0, result.stderr
    (tensor,) = json.loads(result.out)["tensors"]
    assert tensor["shape"] == [4, 3] and tensor["stats"] == {"min": 0.0, "max": 3.0, "mean": 1.5, "std": 1.25**0.5}


def test_info_reads_only_the_header_of_a_terabyte_file(cli, tmp_path):
    target = tmp_path / "huge.safetensors"
    shape = [1 << 20, 1 << 18]  # 1 TiB of float32, never written: the file is sparse
    nbytes = 4 * shape[0] * shape[1]
    _safetensors_header_only(
        target, {"w": {"dtype": "F32", "shape": shape, "data_offsets": [0, nbytes]}}, {"format": "pt"}, nbytes
    )
    assert os.stat(target).st_blocks * 512 < 1 << 20  # really a hole, not a terabyte on disk
    result = cli("info", str(target), "--json")
    assert result.code == 0, result.stderr
    assert json.loads(result.out)["tensors"] == [{"name": "w", "shape": shape, "dtype": "float32", "nbytes": nbytes}]
    # --stats of it would read a terabyte a block at a time (tests/analysis/test_stats.py bounds
    # its memory); a format read whole is refused with the size: tests/cli/test_bad_inputs.py


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["missing.npy"], ["no such file", "or - for stdin"]),
        (["notes.txt"], ["not a .npy"]),
        (["pe.safetensors", "--key", "pos"], ["no tensor 'pos'", "pe"]),
        ([], ["missing argument"]),
    ],
)
def test_info_bad_input(cli, tmp_path, args, words):
    (tmp_path / "notes.txt").write_text("hello")
    assert cli("generate", "--d", "2", "--len", "2", "-o", str(tmp_path / "pe.safetensors")).code == 0
    args = [str(tmp_path / a) if a.endswith((".npy", ".txt", ".safetensors")) else a for a in args]
    assert_clean_error(cli("info", *args), 2, *words)


def test_schemes_json_is_the_registry(cli):
    result = cli("schemes", "--json")
    assert result.code == 0 and result.stderr == ""
    document = json.loads(result.out)
    assert [s["name"] for s in document["schemes"]] == list(SCHEMES)
    assert [(p["scheme"], p["name"]) for p in document["presets"]] == [(p.scheme, p.name) for p in PRESETS.values()]
    for entry in document["schemes"]:
        scheme = SCHEMES[entry["name"]]
        assert entry["formula"] == scheme.formula and entry["source"] == scheme.source
        assert {p["name"]: p["default"] for p in entry["params"]} == dict(scheme.defaults)
        assert [p["flag"] for p in entry["params"]] == [PARAMS[n].flag for n in scheme.defaults]
        assert entry["presets"] == [p.name for p in PRESETS.values() if p.scheme == scheme.name]
    fairseq = next(p for p in document["presets"] if p["name"] == "fairseq")
    assert fairseq["params"]["offset"] == 2 and "sinusoidal_positional_embedding.py" in fairseq["source"]


def test_schemes_text_has_one_line_formula_options_and_source_per_scheme(cli):
    text = cli("schemes").out
    for scheme in SCHEMES.values():
        block = text.split(f"\n{scheme.name} — ", 1)[1].split("\n\n", 1)[0]
        assert f"formula: {scheme.formula}" in block and f"source:  {scheme.source}" in block
        for name in scheme.defaults:
            assert PARAMS[name].flag in block
    assert "--layout interleaved|split (interleaved)" in text and "--base 10000.0" in text
    for preset in PRESETS.values():
        assert f"\n{preset.name} — {preset.scheme}: {preset.convention}" in text


def test_schemes_name_shows_that_scheme_and_its_presets_only(cli):
    text = cli("schemes", "timestep").out
    headings = [block.split(" — ", 1)[0] for block in text.split("\n\n")[1:] if " — " in block.split("\n", 1)[0]]
    assert headings == ["timestep"] + [p.name for p in PRESETS.values() if p.scheme == "timestep"]
    assert f"formula: {SCHEMES['timestep'].formula}" in text and "\nsinusoidal — " not in text
    assert "\ndiffusers — timestep: " in text and "\ndiffusers — sinusoidal: " not in text
    document = json.loads(cli("schemes", "count", "--json").out)
    assert [s["name"] for s in document["schemes"]] == ["count"] and document["presets"] == []
    assert "Presets" not in cli("schemes", "count").out  # a scheme without presets lists none
    assert_clean_error(cli("schemes", "ropee"), 2, "unknown scheme or preset 'ropee'", "did you mean 'rope'")


def test_schemes_name_finds_a_preset_with_its_scheme_parameters_and_source(cli):
    """``schemes fairseq`` used to say "unknown scheme" although compare and generate accept the name."""
    result = cli("schemes", "fairseq")
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    assert lines[0] == "Presets (--preset NAME):" and "Schemes:" not in result.out
    assert lines[2].startswith("fairseq — sinusoidal: split [sin | cos]")
    assert lines[3] == "  sets:    layout=split cos_first=off freq_shift=1.0 offset=2"
    assert lines[4].startswith("  source:  facebookresearch/fairseq fairseq/modules/sinusoidal_positional_embedding.py")
    assert "hint: pecli generate sinusoidal --preset fairseq" in result.stderr
    document = json.loads(cli("schemes", "fairseq", "--json").out)
    assert document["schemes"] == [] and [(p["name"], p["scheme"]) for p in document["presets"]] == [
        ("fairseq", "sinusoidal")
    ]
    assert document["presets"][0]["params"]["offset"] == 2


def test_schemes_name_of_a_shared_preset_shows_each_scheme_s_one(cli):
    result = cli("schemes", "diffusers")
    assert result.code == 0, result.stderr
    assert [line.split(":")[0] for line in result.out.splitlines() if line.startswith("diffusers — ")] == [
        "diffusers — sinusoidal",
        "diffusers — timestep",
        "diffusers — sincos2d",
    ]
    assert "  sets:    layout=by-axis base_size=16.0 interpolation_scale=1.0" in result.out
    for scheme in ("sinusoidal", "timestep", "sincos2d"):
        assert f"hint: pecli generate {scheme} --preset diffusers" in result.stderr


@pytest.mark.parametrize("command", ["info", "schemes"])
def test_quiet_and_no_color_mean_the_same_as_elsewhere(cli, tmp_path, command):
    """-q/--no-color are accepted by every printing command; the JSON document is unchanged by them."""
    args = [str(tmp_path / "pe.npy")] if command == "info" else []
    if command == "info":
        assert cli("generate", "--d", "4", "--len", "3", "-o", args[0]).code == 0
    plain = cli(command, *args, "--json")
    switched = cli(command, *args, "--json", "-q", "--no-color")
    assert plain.code == switched.code == 0 and switched.stderr == ""
    assert json.loads(switched.out) == json.loads(plain.out)


@settings(max_examples=40, deadline=None)
@given(
    dtype=st.sampled_from(["float32", "float64", "float16", "int16", "uint64", "bool"]),
    counts=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    special=st.sampled_from([None, np.nan, np.inf, 1e300]),
    seed=st.integers(0, 2**16),
)
def test_batched_stats_equal_one_tensor_at_a_time_bit_for_bit(dtype, counts, special, seed):
    # many small tensors share a batch; a NaN, an infinity or a huge value sends a row down the careful path
    from pecli.analysis.stats import all_tensor_stats, tensor_stats
    from pecli.io import StoredTensor

    rng = np.random.default_rng(seed)
    tensors = []
    for index, count in enumerate(counts):
        values = (rng.standard_normal(count) * 1e3).astype(dtype) if dtype != "bool" else rng.random(count) < 0.5
        if special is not None and count and index % 3 == 0 and values.dtype.kind == "f":
            with np.errstate(over="ignore"):  # 1e300 is inf in float16 and float32
                values[rng.integers(count)] = special
        tensors.append((f"t{index}", StoredTensor((count,), dtype, lambda values=values: values), values.nbytes))
    expected = [tensor_stats(entry, key, nbytes) for key, entry, nbytes in tensors]
    assert repr(all_tensor_stats(tensors)) == repr(expected)


def test_info_shows_only_the_parameters_that_were_set(cli, tmp_path):
    """A RoPE file listed ``factor=None original_max_position=None …`` (14 unset parameters); generate shows none."""
    target = tmp_path / "rope.safetensors"
    assert cli("generate", "rope", "--d", "8", "--len", "4", "-o", str(target)).code == 0
    result = cli("info", str(target))
    assert result.code == 0, result.stderr
    assert "=None" not in result.out
    assert "  parameters: base=10000.0 layout=half scaling=none offset=0 partial_rotary_factor=1.0\n" in result.out
    generated = cli("generate", "rope", "--d", "8", "--len", "4").out.splitlines()[1]
    assert result.out.splitlines()[-1] == generated  # the same line generate prints
    document = json.loads(cli("info", str(target), "--json").out)
    assert document["pecli"]["params"]["factor"] is None  # --json still names every parameter


@pytest.mark.parametrize("fmt", ["csv", "tsv"])
def test_info_and_the_readers_read_back_the_text_pecli_writes(cli, tmp_path, fmt):
    """``pecli info t.csv`` of generate's own CSV said "not a .npy, .safetensors or .pt file" (exit 2)."""
    from pecli.io import read_table

    expected = pecli.encode("sinusoidal", 5, 6)  # float32
    target = tmp_path / f"t.{fmt}"
    assert cli("generate", "--d", "6", "--len", "5", "-o", str(target)).code == 0
    piped = cli("generate", "--d", "6", "--len", "5", "-o", "-", "--format", fmt).stdout
    assert piped == target.read_bytes()
    for source, stdin in ((str(target), b""), ("-", piped)):
        result = cli("info", source, "--stats", stdin=stdin)
        assert result.code == 0, result.stderr
        assert "(array)  [5, 6]  float32" in result.out  # every value written with float32's digits: float32
        assert f"max {expected.max():.6g}" in result.out
    table = read_table(str(target))
    assert table.array.shape == (5, 6) and table.array.dtype == np.float32
    np.testing.assert_array_equal(table.array, expected)  # every float32 value back exactly
    compared = cli("compare", str(target), "sinusoidal", "--d", "6", "--len", "5")
    assert compared.code == 0, compared.out + compared.stderr


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (b"1,2\n3\n", ["nor a csv table", "line 2 holds 1 value"]),
        (b"1\t2\n3\t4\n5\t6\n7\t8\n9\tx\n", ["nor a tsv table", "line 5 holds 'x'"]),  # past the 16 bytes sniffed
        (b"0.1 0.2\n", ["not a .npy", "'0.1 0.2'"]),
    ],
)
def test_info_refuses_text_that_is_not_a_table_naming_the_line(cli, tmp_path, text, words):
    (tmp_path / "bad.csv").write_bytes(text)
    assert_clean_error(cli("info", str(tmp_path / "bad.csv")), 2, *words)
