"""identify reads decoding's ALiBi slices, (H, q, L) with 1 < q < L: the last q query rows of L keys,
checked row by row against the candidate (issue 30)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import pecli
from pecli.analysis.identify import identify_table


@pytest.mark.parametrize(
    ("params", "rows"),
    [
        ({"heads": 8}, 4),
        ({"heads": 8, "form": "key"}, 2),
        ({"heads": 12, "total_heads": 16}, 7),
        ({"heads": 32, "form": "key", "arithmetic": "bfloat16", "head_dim": 64}, 5),
    ],
)
def test_the_last_query_rows_are_named(params, rows) -> None:
    full = pecli.encode("alibi", 16, None, **params)
    found = identify_table(full[:, -rows:, :])
    assert found.level == "exact"
    assert found.best.scheme == "alibi"
    assert {name: found.best.params[name] for name in params} == params
    assert found.query_start == 16 - rows
    # the recipe writes the full biases, whose last rows are the table (what compare then calls the same)
    assert found.recipe().length == 16
    regenerated = pecli.encode("alibi", 16, None, **params)[:, 16 - rows :, :]
    np.testing.assert_array_equal(regenerated, full[:, -rows:, :])


def test_every_query_row_is_checked() -> None:
    table = pecli.encode("alibi", 16, None, heads=8)[:, -4:, :].copy()
    table[3, 1, 2] += 0.01  # one entry of a middle row of the last head
    found = identify_table(table)
    assert found.level == "none"
    assert found.best.max_error == pytest.approx(0.01, rel=1e-3)


def test_the_first_query_rows_are_not_read_as_the_last() -> None:
    # the distance form's first rows are not its last: no match is claimed
    found = identify_table(pecli.encode("alibi", 16, None, heads=8)[:, :4, :])
    assert found.level == "none"


def test_cli_names_the_slice_and_json_gives_its_first_row(cli, tmp_path) -> None:
    path = tmp_path / "decoding.npy"
    np.save(path, pecli.encode("alibi", 32, None, heads=4, form="key")[:, -3:, :])
    result = cli("identify", str(path), "--json")
    assert result.code == 0, result.stderr
    report = json.loads(result.out)
    assert report["query_start"] == 29 and report["shape"] == [4, 3, 32]
    assert report["command"] == "pecli generate alibi --heads 4 --form key --len 32 -o pe.npy"
    text = cli("identify", str(path))
    assert "query rows 29 to 31 of each head: pe[:, 29:, :] of the 4 × 32 × 32 biases" in text.out


def test_more_query_rows_than_keys_is_still_refused(cli, tmp_path) -> None:
    path = tmp_path / "wide.npy"
    np.save(path, np.zeros((4, 8, 6), dtype=np.float32) - 1.0)
    result = cli("identify", str(path))
    assert result.code == 2
    assert "(H, q, L)" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_one_row_rope2d_grid_is_named_before_the_1d_reading(cli, tmp_path) -> None:
    # grid 1,8: the row axis stands at 0 (cos 0 = 1), which a 1-D RoPE at base 1e8 holds within rounding; the
    # grid writes it bit for bit (within half a rounding), so it is named (session 13: it was "also" only), the
    # 1-D reading the next best
    path = tmp_path / "grid.npy"
    np.save(path, pecli.encode("rope2d", None, 32, grid="1,8", part="cos"))
    found = identify_table(np.load(path))
    assert found.level == "exact" and found.best.scheme == "rope2d" and found.best.params["grid"] == "1,8"
    assert found.runners_up and found.runners_up[0].scheme == "rope"
    assert found.best.max_error < found.runners_up[0].max_error <= found.tolerance
    text = cli("identify", str(path)).out
    assert "match: rope2d: grid=1,8 part=cos" in text
    assert "  reproduce: pecli generate rope2d --grid 1,8 --part cos --d 32 -o pe.npy" in text
    report = json.loads(cli("identify", str(path), "--json").out)
    assert report["command"] == "pecli generate rope2d --grid 1,8 --part cos --d 32 -o pe.npy"


def test_a_1d_table_far_from_any_grid_gets_no_grid_note() -> None:
    assert identify_table(pecli.encode("rope", 64, 32, part="cos")).also is None
