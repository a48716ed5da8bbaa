"""Session 6's attack on ``pecli identify`` (issue 30, class 1: a false answer).

A match is a promise: its printed command regenerates the table, as ``pecli compare`` checks it
(exit 0). These tables, made by real libraries (transformers, diffusers) or at random parameters,
were once named by a command whose table ``compare`` rejects: a base rounded to six digits, ALiBi
slopes computed in float32 by BLOOM's code, a dynamic-NTK guess.
identify now verifies its candidate by regenerating it at the reproduce dtype and comparing it
entry by entry before naming it; failing that it names the next candidate that does, or says no match.
"""

from __future__ import annotations

import shlex

import numpy as np
import pytest

from pecli.analysis.identify import identify_table


def _claim_holds(cli, tmp_path, table: np.ndarray, name: str = "table.npy") -> int:
    """identify's exit code on ``table``; when it claims a match, its command's table passes compare."""
    path = tmp_path / name
    np.save(path, table)
    found = cli("identify", str(path))
    assert found.code in (0, 1), found.stderr
    if found.code == 0:
        command = next(line for line in found.out.splitlines() if "reproduce: " in line).split("reproduce: ")[1]
        argv = shlex.split(command)[1:]
        argv[argv.index("-o") + 1] = str(tmp_path / "regenerated.npy")
        assert cli(*argv).code == 0
        compared = cli("compare", str(path), str(tmp_path / "regenerated.npy"))
        assert compared.code == 0, f"identify claimed `{command}`, which compare rejects:\n{compared.out}"
    return found.code


def _sinusoid(length: int, dim: int, base: float, offset: int, amplitude: float) -> np.ndarray:
    """Interleaved [sin, cos] at ω_i = base^(−i/h) (frequency shift 0), in float64, rounded once to float32."""
    half = dim // 2
    angles = (np.arange(length) + offset)[:, None] * base ** (-np.arange(half) / half)[None]
    return (amplitude * np.stack([np.sin(angles), np.cos(angles)], 2).reshape(length, dim)).astype(np.float32)


@pytest.mark.parametrize(
    ("length", "dim", "base", "offset", "amplitude"),
    [(5, 6, 14597.631435716607, 1, 0.5), (8, 8, 2232.743568154665, 1, 0.125), (8, 4, 27956.947488810143, 5, 1.0)],
)
def test_a_base_read_off_a_short_table_is_printed_so_that_it_regenerates_it(
    length, dim, base, offset, amplitude, cli, tmp_path
):
    """A short table's base was rounded to six digits (14597.6): within identify's noise at the table's
    scale, but 1.5e-6 off relatively at small values, which compare (entry by entry) rejects."""
    table = _sinusoid(length, dim, base, offset, amplitude)
    assert _claim_holds(cli, tmp_path, table) == 0
    found = identify_table(table)
    assert found.best.params["base"] == pytest.approx(base, rel=1e-6)


def test_bloom_alibi_slopes_in_float32_are_not_claimed_by_a_command_that_misses_them(cli, tmp_path):
    """transformers' build_alibi_tensor computes 40 heads' slopes as float32 powers: up to 4 units of
    roundoff off the correctly rounded slopes pecli writes. identify named ``--heads 40 --part slopes``
    (exit 0), whose table compare rejects; now it says no match and names the closest."""
    torch = pytest.importorskip("torch")
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    biases = bloom.build_alibi_tensor(torch.ones(1, 4), 40, torch.float32).reshape(40, 1, 4)
    slopes = biases[:, 0, 1].numpy()
    assert _claim_holds(cli, tmp_path, slopes) == 1
    found = identify_table(slopes)
    assert (found.level, found.unverified, found.best.params["heads"]) == ("none", True, 40)
    # 8 heads' slopes are powers of 1/2, exact in float32: still named
    exact = bloom.build_alibi_tensor(torch.ones(1, 4), 8, torch.float32).reshape(8, 1, 4)[:, 0, 1].numpy()
    assert _claim_holds(cli, tmp_path, exact) == 0


def test_float16_dynamic_rope_sin_is_not_named_by_a_guess_compare_rejects(cli, tmp_path):
    """transformers' dynamic-NTK rotary sin (base 49084.53, partial rotary 0.25 of head_dim 32, pairs
    interleaved) at 200 positions, stored in float16: identify printed a dynamic scaling (factor 4,
    original 127) whose table is 2e-3 off, beyond float16 rounding."""
    torch = pytest.importorskip("torch")
    base, rotary = 49084.531527762054, 8
    inverse = 1.0 / (base ** (torch.arange(0, rotary, 2, dtype=torch.int64).float() / rotary))
    angles = torch.arange(200, dtype=torch.float32)[:, None] * inverse[None]
    table = angles.repeat_interleave(2, -1).sin().to(torch.float16).numpy()
    _claim_holds(cli, tmp_path, table)


def test_a_table_equal_bit_for_bit_to_its_match_needs_no_second_regeneration(monkeypatch):
    """The full check already regenerates every row: a table that is the candidate rounded once, bit for bit,
    is what its command writes, so the compare-style verification (a second full regeneration, 1.8 → 4.2 s on
    a 256 MiB table) is skipped for it; a table that is not (each value one unit in its last place off) is still
    verified."""
    import pecli
    from pecli.analysis.identify import search, verify

    calls = []
    original = verify._regenerates
    monkeypatch.setattr(verify, "_regenerates", lambda *args: calls.append(args) or original(*args))
    table = pecli.encode("sinusoidal", 4096, 64)  # float32, rounded once from float64
    result = search.identify_table(table)
    assert result.level != "none" and result.best.scheme == "sinusoidal"
    assert calls == []
    nudged = np.nextafter(table, np.float32(2)).astype(np.float32)  # one unit in the last place up: not exact
    assert search.identify_table(nudged).level != "none"
    assert calls  # verified the long way
