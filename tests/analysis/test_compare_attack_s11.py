"""compare attacked (issue 30): one table in every format pecli reads against its float64 truth, the text's
figures against the JSON's, and the messages of inputs that go wrong.

Found and fixed: the JSON's "beyond" named entry (0, 0) with |A − B| 0 wherever the tolerance is 0 (--exact,
--atol 0, two integer tables) and held an entry when only NaN differ; a given tolerance's verdict read
"max |A − B| 0.01" beside "different beyond atol 0.01"; B's missing tensor, or a spec's error, was led by A's
file name; a spec's width taken from the other table was blamed on a --d never typed."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import torch
from safetensors.numpy import save_file
from safetensors.torch import save_file as save_torch

import pecli


@pytest.fixture
def truth(tmp_path):
    table = pecli.encode("sinusoidal", 32, 16, dtype="float64")
    np.save(tmp_path / "t64.npy", table)
    return table


def _write(path, table, how):
    """``table`` saved as ``how`` says; the path written."""
    tensor = torch.tensor(table)
    if how == "npy32":
        np.save(path / "x.npy", table.astype(np.float32))
        return path / "x.npy"
    if how == "npy16":
        np.save(path / "x.npy", table.astype(np.float16))
        return path / "x.npy"
    if how in ("st32", "st32meta"):
        metadata = {"scheme": "sinusoidal"} if how == "st32meta" else None
        save_file({"pe": table.astype(np.float32)}, str(path / "x.safetensors"), metadata=metadata)
        return path / "x.safetensors"
    if how == "stbf16":
        save_torch({"pe": tensor.to(torch.bfloat16)}, str(path / "x.safetensors"))
        return path / "x.safetensors"
    target = path / "x.pt"
    torch.save(
        {
            "ptbf16": tensor.to(torch.bfloat16),
            "ptdict": {"pe": tensor.float()},
            "ptstate": torch.nn.Embedding.from_pretrained(tensor.float()).state_dict(),
        }[how],
        target,
    )
    return target


_FORMATS = ["npy32", "npy16", "st32", "st32meta", "stbf16", "ptbf16", "ptdict", "ptstate"]
_FIGURE = re.compile(r"^(max \|A − B\||mean \|A − B\||max relative)\s+(\S+)", re.M)


def _text_figures(out):
    return {name: float(value) for name, value in _FIGURE.findall(out)}


@pytest.mark.parametrize("how", _FORMATS)
def test_every_format_agrees_with_its_truth_and_a_change_is_found(cli, tmp_path, truth, how):
    stored = str(_write(tmp_path, truth, how))
    for changed in (False, True):
        if changed:  # one entry off by 0.05: beyond bfloat16's rounding (0.031 at most), at its place
            other = truth.copy()
            other[5, 3] += 0.05
            stored = str(_write(tmp_path, other, how))
        text = cli("compare", stored, str(tmp_path / "t64.npy"))
        report = json.loads(cli("compare", stored, str(tmp_path / "t64.npy"), "--json").out)
        assert text.code == int(changed) and report["agree"] is (not changed), text.out
        figures = _text_figures(text.out)
        for name, field in (("max |A − B|", "max_abs"), ("mean |A − B|", "mean_abs"), ("max relative", "max_rel")):
            assert figures[name] == pytest.approx(report[field], rel=1e-5), (name, text.out)
        assert f"position {report['worst']['position']}, dimension {report['worst']['dimension']}" in text.out
        if changed:
            assert report["worst"] == {"position": 5, "dimension": 3}
            assert (report["beyond"]["position"], report["beyond"]["dimension"]) == (5, 3)
            assert report["max_abs"] == pytest.approx(0.05, abs=0.004)  # bfloat16 rounds 0.05 + v by ≤ 0.004
        else:
            assert report["beyond"] is None


@pytest.mark.parametrize("options", [(), ("--exact",), ("--atol", "0")])
def test_beyond_names_the_differing_entry_where_the_tolerance_is_zero(cli, tmp_path, options):
    a = np.arange(12).reshape(3, 4)
    b = a.copy()
    b[2, 1] += 3  # integers: the data-driven tolerance is 0 too
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    report = json.loads(cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), *options, "--json").out)
    assert report["agree"] is False
    assert report["beyond"] == {"position": 2, "dimension": 1, "abs": 3.0, "tolerance": 0.0}  # was (0, 0), 0
    text = cli("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), *options)
    assert text.code == 1
    if not options or options[0] != "--exact":
        assert "at position 2, dimension 1: |A − B| 3 > tolerance 0 there" in text.out, text.out


def test_only_nan_differing_has_no_entry_beyond(cli, tmp_path, truth):
    other = truth.copy()
    other[3, 4] = np.nan
    np.save(tmp_path / "n.npy", other)
    result = cli("compare", str(tmp_path / "t64.npy"), str(tmp_path / "n.npy"), "--json")
    report = json.loads(result.out)
    assert result.code == 1 and report["beyond"] is None  # was {position 0, dimension 0, abs 0}
    assert report["nan_in_one"] == {"count": 1, "first": {"position": 3, "dimension": 4}}


def test_a_given_tolerance_names_the_entry_with_digits_that_tell_them_apart(cli, tmp_path):
    table = np.full((8, 4), 0.1)
    other = table.copy()
    other[5, 3] += 0.3  # |A − B| = 0.30000000000000004 in float64: beyond atol 0.3
    np.save(tmp_path / "a.npy", table)
    np.save(tmp_path / "b.npy", other)
    args = ("compare", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--atol", "0.3")
    text, report = cli(*args), json.loads(cli(*args, "--json").out)
    assert text.code == 1 and report["max_abs"] > 0.3
    assert _text_figures(text.out)["max |A − B|"] == 0.3  # at 6 digits: the verdict must say more
    verdict = next(line for line in text.out.splitlines() if line.startswith("different"))
    found = re.search(r"at position 5, dimension 3: \|A − B\| (\S+) > tolerance (\S+) there", verdict)
    assert found is not None, verdict
    shown_abs, shown_tolerance = map(float, found.groups())
    assert shown_abs > shown_tolerance == 0.3  # the text's own figures say why: 0.3 > 0.3 did not
    assert shown_abs == pytest.approx(report["beyond"]["abs"], rel=1e-15)


def test_b_s_missing_tensor_is_not_led_by_a_s_name(cli, tmp_path, truth):
    torch.save({"pe": torch.tensor(truth)}, tmp_path / "dict.pt")
    torch.save(torch.nn.Embedding.from_pretrained(torch.tensor(truth)).state_dict(), tmp_path / "state.pt")
    result = cli("compare", str(tmp_path / "dict.pt"), str(tmp_path / "state.pt"), "--key", "pe")
    assert result.code == 2
    assert result.stderr.startswith(f"pecli: error: {tmp_path / 'state.pt'} has no tensor 'pe'"), result.stderr
    assert "dict.pt" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_a_spec_s_error_is_not_led_by_the_file_s_name(cli, tmp_path, truth):
    result = cli("compare", str(tmp_path / "t64.npy"), "rope")
    assert result.code == 2 and result.stderr.startswith("pecli: error: in spec 'rope': "), result.stderr
    assert "t64.npy" not in result.stderr


def test_a_width_from_the_other_table_is_not_blamed_on_d(cli, tmp_path, truth):
    result = cli("compare", str(tmp_path / "t64.npy"), "fourier")  # 16 columns: not 2·L + 1
    assert result.code == 2 and "--d" not in result.stderr, result.stderr
    assert "A's width 16 is not 2·L + 1" in result.stderr and "num_freqs" in result.stderr
    given = cli("compare", str(tmp_path / "t64.npy"), "fourier", "--d", "16")  # typed: named as typed
    assert given.code == 2 and "--d 16 is not 2·L + 1" in given.stderr
    # a spec that sets its own width: computed at it, and the shapes differ (was "drop --d", never given)
    own = cli("compare", str(tmp_path / "t64.npy"), "fourier:num_freqs=3")
    assert own.code == 2 and "A is 32 × 16, B is 32 × 7" in own.stderr and "--d" not in own.stderr.split("(")[0]
