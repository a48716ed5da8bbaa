"""A negative value where click expects an option says how to pass it (issue 30: docs6 found
`pecli timestep -1 5 --dim 4` answered "No such option: -1" with no way forward)."""

from __future__ import annotations

import numpy as np


def test_a_negative_timestep_says_to_put_it_after_the_separator(cli, tmp_path):
    refused = cli("timestep", "-1", "5", "--dim", "4")
    assert refused.code == 2
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and "No such option: -1" in lines[0]
    assert "goes after '--'" in lines[0] and "pecli timestep [OPTIONS] -- -1 5" in lines[0]
    # the advice works: the same values after the separator
    path = tmp_path / "t.npy"
    done = cli("timestep", "--dim", "4", "-o", str(path), "--", "-1", "5")
    assert done.code == 0, done.stderr
    assert np.load(path).shape == (2, 4)


def test_an_unknown_option_gets_no_such_advice(cli):
    refused = cli("generate", "--d", "4", "--len", "2", "--bogus")
    assert refused.code == 2 and "goes after '--'" not in refused.stderr
