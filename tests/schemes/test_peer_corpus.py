"""identify and compare on the peer corpus: tables written by the real libraries (tests/data/peers).

tests/data/make_peer_tables.py wrote them and recorded, per table, the library, its version, the
call and the expected answer: a pecli command, ``random``, or ``not yet supported: …`` (a
convention pecli lacks, which identify must not claim).
"""

from __future__ import annotations

import functools
import json
import shlex

import numpy as np
import pytest

from pecli.analysis.compare import compare_tables
from pecli.analysis.identify import Identification, identify_table
from pecli.analysis.value_precision import arithmetic_tolerance, rounding_tolerance
from pecli.cli.reproduce import reproduce
from pecli.io import read_table
from pecli.schemes.timestep import parse_range, parse_timesteps
from tests.paths import DATA

PEERS = DATA / "peers"
RECORDS = json.loads((PEERS / "PROVENANCE.json").read_text())


def _load(name: str) -> np.ndarray:
    table = np.load(PEERS / f"{name}.npy")
    squeezable = table.ndim == 3 and 1 in table.shape[:2]
    return table.reshape(-1, table.shape[-1]) if squeezable else table


def _query_row(command: str, length: int) -> int:
    """The query row of an (H, 1, L) ALiBi peer: BLOOM's key form is alike on every row, MPT's is the last."""
    return 0 if "--form key" in command else length - 1


@functools.cache
def _identified(name: str) -> Identification:
    """One identification per table, shared by the tests that look at it."""
    return identify_table(_load(name))


def _options(command: str) -> tuple[list[str], set[tuple[str, ...]]]:
    """A pecli command as (its leading words, its set of options): the order of options does not matter."""
    words = shlex.split(command)
    first = next(i for i, word in enumerate(words) if word.startswith("-"))
    options, i = set(), first
    while i < len(words):
        takes_value = i + 1 < len(words) and not words[i + 1].startswith("--")
        options.add((words[i], words[i + 1]) if takes_value else (words[i],))
        i += 2 if takes_value else 1
    return words[:first], options


def _cases(kind: str) -> list:
    """The tables whose expected answer is a pecli command (``kind="command"``), or the others."""
    wanted = kind == "command"
    return [
        pytest.param(name, record["expect"], id=name)
        for name, record in RECORDS.items()
        if record["expect"].startswith("pecli") == wanted
    ]


def _generate(cli, tmp_path, command: str) -> np.ndarray:
    argv = shlex.split(command)[1:]
    argv[argv.index("-o") + 1] = str(tmp_path / argv[argv.index("-o") + 1])
    argv += ["--dtype", "float64"]
    result = cli(*argv)
    assert result.code == 0, result.stderr
    return read_table(argv[argv.index("-o") + 1]).array


@pytest.mark.parametrize("name", list(RECORDS))
def test_provenance_is_recorded(name):
    record = RECORDS[name]
    assert record["library"] and record["version"] and record["call"]
    table = np.load(PEERS / f"{name}.npy")
    assert list(table.shape) == record["shape"] and table.dtype.name == record["dtype"]
    assert np.isfinite(table).all()


def _within_noise(table: np.ndarray, reference: np.ndarray, command: str) -> None:
    """|table − reference| within amplitude·eps·|p| at position p (t for timestep rows, 2 + row for fairseq),
    eps that of the table's arithmetic: float32's, or float64's for a float64 table (its values need it)."""
    arithmetic = "float64" if table.dtype == np.float64 else "float32"
    table = table.reshape(reference.shape)
    if command.startswith("pecli generate alibi"):  # ALiBi's biases: plain products, rounded once
        scale = float(np.abs(reference).max())
        assert np.all(np.abs(table - reference) <= rounding_tolerance(arithmetic, scale=scale))
        return
    flags = dict(option for option in _options(command)[1] if len(option) == 2)
    first = int(flags.get("--offset", 2 if "--preset fairseq" in command else 0))
    positions = np.arange(len(table)) + first
    if command.startswith("pecli timestep"):
        words = shlex.split(command)[2:]
        arguments = words[1] if words[0] == "--range" else " ".join(words[: words.index("--dim")])
        positions = (parse_range(arguments) if words[0] == "--range" else parse_timesteps(arguments)).array()
    # the angle's error is scaled with the values (x-transformers' amplitude d^-0.5)
    amplitude = float(flags.get("--amplitude", 1.0))
    if arithmetic == "float32":
        noise = arithmetic_tolerance(len(table), "float32", scale=amplitude, positions=positions * amplitude)
    else:  # four units of float64 roundoff, and eps64 per unit of angle
        noise = (
            rounding_tolerance("float64", scale=amplitude) + np.finfo(np.float64).eps * amplitude * positions[:, None]
        )
    assert np.all(np.abs(table - reference) <= noise), float(np.abs(table - reference).max())
    if not command.startswith("pecli timestep"):  # compare's data-driven tolerance takes rows as positions
        assert compare_tables(table, reference.astype(table.dtype)).agree


@pytest.mark.parametrize(("name", "command"), _cases("command"))
def test_the_expected_command_is_the_library_within_noise(name, command, cli, tmp_path):
    """Every convention pecli claims is the library's, within eps32·|p| at position p."""
    table = np.load(PEERS / f"{name}.npy")
    reference = _generate(cli, tmp_path, command)
    if reference.ndim == 3 and table.shape[1] == 1:  # one query row per head (BLOOM's, MPT's ALiBi)
        reference = reference[:, _query_row(command, table.shape[-1])]
    _within_noise(table, reference.reshape(_load(name).shape), command)


@pytest.mark.parametrize(("name", "command"), _cases("command"))
def test_identify_names_the_convention(name, command, cli, tmp_path):
    """identify's reproduce command is the simplest true description: the preset or round parameters used."""
    found = _identified(name)
    assert found.level in ("exact", "approximate"), found.best.describe()
    # a library that computed in float32 is named so: the same command, with the arithmetic it used
    words, options = _options(reproduce(found))
    options.discard(("--arithmetic", "float32"))
    assert (words, options) == _options(command) or (
        found.best.presets and command.split()[3] in found.best.presets
    ), reproduce(found)
    reference = _generate(cli, tmp_path, reproduce(found))
    if found.query_row is not None:
        reference = reference[:, found.query_row]
    _within_noise(_load(name), reference, reproduce(found))


@pytest.mark.parametrize(("name", "expect"), _cases("other"))
def test_random_and_unsupported_tables_are_no_match(name, expect, cli):
    """Never a false match: a random table, or a convention pecli lacks, exits 1."""
    result = cli("identify", str(PEERS / f"{name}.npy"))
    assert result.code in (1, 2), result.out
    if expect == "random":
        assert result.code == 1 and "random table: consistent with N(0, σ²), σ = " in result.out


def test_the_cli_path(cli):
    result = cli("identify", str(PEERS / "m2m100_padding1_rows2on_128x64.npy"))
    assert result.code == 0, result.stderr
    assert "reproduce: pecli generate --preset fairseq --arithmetic float32 --d 64 --len 128 -o pe.npy" in result.out
