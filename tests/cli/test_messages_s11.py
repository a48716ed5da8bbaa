"""Messages that blamed what the user did not give (issue 30, class 3).

The out-of-memory line names the files read, never the output the command was writing:

`pecli distance rope --d 64 --len 1000000000 -o d.npy` under a memory cap, with d.npy left from an earlier
run, said "out of memory reading d.npy (192 B)": the output, a 192-byte file, named as the table read.
"""

import numpy as np

from pecli.cli.app import _out_of_memory


def test_an_existing_output_is_not_named_as_read(tmp_path):
    output = tmp_path / "d.npy"
    np.save(output, np.zeros((4, 4), np.float32))
    for flag in ("-o", "--output"):
        line = _out_of_memory(["distance", "rope", "--d", "64", flag, str(output)])
        assert "d.npy" not in line and "reading" not in line
        assert line.startswith("out of memory (use a smaller --len or --d")


def test_an_input_file_beside_the_output_is_still_named(tmp_path):
    table, output = tmp_path / "t.npy", tmp_path / "d.npy"
    np.save(table, np.zeros((8, 4), np.float32))
    np.save(output, np.zeros((2, 2), np.float32))
    line = _out_of_memory(["distance", str(table), "-o", str(output)])
    assert str(table) in line and str(output) not in line
    assert line.startswith("out of memory reading")


def test_distance_dtype_with_profile_names_the_profile(cli, tmp_path):
    """`distance rope --profile --dtype float32 -o x.npy` said --dtype needs "-o FILE.npy", which was given."""
    output = tmp_path / "x.npy"
    result = cli("distance", "rope", "--d", "8", "--len", "8", "--profile", "--dtype", "float32", "-o", str(output))
    assert result.code == 2
    assert "--profile" in result.stderr and "-o FILE" not in result.stderr
    assert not output.exists()


def test_a_learned_table_without_weights_is_not_sent_to_plot(cli, tmp_path):
    """`generate --from-config` of BERT's config alone said "pecli plot DIR draws it"; plot: "has no weights"."""
    from tests.paths import DATA

    MODELS = DATA / "models"
    alone = cli("generate", "--from-config", str(MODELS / "bert"), "-o", str(tmp_path / "x.npy"))
    assert alone.code == 2 and "pecli plot tests" not in alone.stderr and "with its weights" in alone.stderr
    with_weights = cli("generate", "--from-config", str(MODELS / "tiny-bert"), "-o", str(tmp_path / "x.npy"))
    assert with_weights.code == 2 and "pecli plot" in with_weights.stderr
    assert cli("plot", str(MODELS / "tiny-bert"), "--terminal", "--width", "40").code == 0
