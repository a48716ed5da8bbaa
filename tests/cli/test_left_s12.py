"""Session 12 (issue 30): an output never replaces an input; notes say what was drawn and why; preset and stdin
messages say the truth once."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.conftest import run_in_process


def _refused(result, *parts: str) -> None:
    assert result.code == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for part in parts:
        assert part in lines[0], lines[0]


@pytest.fixture
def table(tmp_path):
    """A 16 × 8 table file, a second copy, and symbolic links to the first; the working directory is tmp_path."""
    values = np.linspace(-1.0, 1.0, 16 * 8, dtype=np.float32).reshape(16, 8)
    np.save(tmp_path / "s.npy", values)
    np.save(tmp_path / "t.npy", values[::-1].copy())
    os.symlink("s.npy", tmp_path / "link.npy")
    os.symlink("s.npy", tmp_path / "fig.png")
    return tmp_path


@pytest.mark.parametrize(
    ("args", "output"),
    [
        (("distance", "s.npy"), "s.npy"),  # the same name
        (("distance", "link.npy"), "s.npy"),  # the input a link to the output
        (("distance", "s.npy"), "link.npy"),  # the output a link to the input
        (("distance", "s.npy"), "fig.png"),  # an image through a link
        (("distance", "s.npy", "--profile"), "./sub/../s.npy"),
        (("plot", "s.npy"), "fig.png"),
        (("plot", "s.npy", "--lines", "0"), "./fig.png"),
        (("plot", "s.npy", "--view", "pca"), "fig.png"),
        (("resample", "s.npy", "--len", "32"), "link.npy"),
        (("compare", "t.npy", "s.npy"), "fig.png"),  # compare's figure through a link to B
        (("compare", "s.npy", "t.npy"), "fig.png"),  # … to A
    ],
)
def test_an_output_never_replaces_an_input(table, args, output):
    (table / "sub").mkdir()
    before = (table / "s.npy").read_bytes()
    result = run_in_process(*args, "-o", output, cwd=str(table))
    _refused(result, f"-o {output!r} would overwrite the input", "give a new path")
    assert (table / "s.npy").read_bytes() == before


def test_generate_never_writes_over_the_config_it_reads(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    config = '{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 32}'
    (model / "config.json").write_text(config)
    for extra in ((), ("--probe",)):
        result = run_in_process("generate", "--from-config", str(model), *extra, "-o", str(model / "config.json"),
                                "--format", "safetensors")  # fmt: skip
        _refused(result, "would overwrite the input")
        assert (model / "config.json").read_text() == config


def test_a_new_output_beside_the_input_is_written(table):
    result = run_in_process("distance", "s.npy", "-o", "d.npy", cwd=str(table))
    assert result.code == 0, result.stderr
    values = np.load(table / "s.npy").astype(np.float64)
    np.testing.assert_allclose(np.load(table / "d.npy"), values @ values.T, rtol=1e-6, atol=1e-6)


@pytest.fixture
def outliers(tmp_path):
    """Signed values in ±0.1 with two outliers (1.9 and -1.0): plot's robust limits engage."""
    values = np.random.default_rng(0).uniform(-0.1, 0.1, (64, 32))
    values[3, 3], values[5, 5] = 1.9, -1.0
    np.save(tmp_path / "o.npy", values.astype(np.float32))
    return tmp_path, values.astype(np.float32).astype(np.float64)


def _note(result) -> str:
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("colour limits")]
    return line


def test_the_colour_note_names_the_limit_given_and_the_one_chosen(outliers):
    """--robust --vmax 0.5 draws -P99(|x|) … 0.5: the note said ±0.5, of the 99th percentile, up to ±0.5."""
    tmp_path, values = outliers
    reach = np.percentile(np.abs(values), 99.0)
    result = run_in_process("plot", "o.npy", "--robust", "--vmax", "0.5", "--terminal", "--width", "60", "--height",
                            "12", cwd=str(tmp_path))  # fmt: skip
    assert result.code == 0, result.stderr
    note = _note(result)
    assert note.startswith(f"colour limits {-reach:.3g} (99th percentile of |x|, negated) … 0.5 (--vmax);"), note
    assert "up to ±1.9" in note and "±0.5" not in note
    share = np.mean((values < -reach) | (values > 0.5))
    assert f"{share:.2%}" in note
    # the terminal's scale says the same limits
    assert f"{-reach:.4g}" in result.out and "0.5" in result.out.splitlines()[-2]


def test_a_given_vmin_is_named_not_mirrored(outliers):
    """--vmin 0 draws 0 … P99(|x|): the note said ±P99."""
    tmp_path, values = outliers
    reach = np.percentile(np.abs(values), 99.0)
    result = run_in_process("plot", "o.npy", "--vmin", "0", "--terminal", "--width", "60", "--height", "12",
                            cwd=str(tmp_path))  # fmt: skip
    note = _note(result)
    assert note.startswith(f"colour limits 0 (--vmin) … {reach:.3g} (99th percentile of |x|);"), note
    assert "--no-robust or --vmax for the full range" in note


def test_the_colourbar_caption_agrees_with_the_note():
    from pecli.render.image import extend_arrows
    from pecli.render.scale import color_scale

    values = np.concatenate([np.linspace(-0.1, 0.1, 999), [1.9]])
    given_top = color_scale(values, vmax=0.5)
    assert given_top.caption == f"value ({given_top.low:.4g} … 0.5); lower limit at the 99th percentile"
    assert not given_top.caption.startswith("value, 0 at the centre")  # 0 is not the middle of -0.099 … 0.5
    assert extend_arrows(given_top) == "both"  # 1.9 lies beyond the given 0.5 (the arrow was missing)
    # a sequential map whose one limit is given and the other the smallest value: no percentile, no note
    from pecli.cli.drawing import color_note

    assert color_note(color_scale(np.abs(values), vmax=0.5, robust=True)) is None


@pytest.mark.parametrize(
    ("args", "hint"),
    [
        (("generate", "rope", "--preset", "LLAMA3"), "drop --preset"),  # no scheme has it
        (("generate", "rope", "--preset", "FAIRSEQ", "--d", "8", "--len", "4"), "'fairseq' is a preset of sinusoidal"),
        (("plot", "alibi", "--preset", "mae", "--heads", "2", "--len", "4"), "'mae' is a preset of sincos2d"),
    ],
)
def test_a_scheme_without_presets_says_so(args, hint):
    result = run_in_process(*args)
    _refused(result, f"scheme {args[1]!r} has no preset {args[3]!r}: it has no presets", hint)
    assert "vaswani" not in result.stderr  # not the other schemes' list


def test_an_unknown_scheme_with_a_preset_is_named_first():
    _refused(run_in_process("generate", "ropee", "--preset", "x"), "unknown scheme 'ropee'", "did you mean 'rope'")


@pytest.mark.parametrize(
    ("spec", "named"),
    [("rope:base=3", "base in 'rope:base=3'"), ("sinusoidal:preset=fairseq", "preset in 'sinusoidal:preset=fairseq'")],
)
def test_list_presets_refuses_a_spec_parameter(spec, named):
    _refused(run_in_process("generate", spec, "--list-presets"), f"so {named} would do nothing", "from the spec")


def test_list_presets_of_a_plain_scheme_still_lists():
    result = run_in_process("generate", "sinusoidal", "--list-presets")
    assert result.code == 0 and "fairseq" in result.out, result.stderr


class _TerminalBytes:
    """A binary stdin that is a terminal (reading it would wait for someone typing)."""

    def isatty(self) -> bool:
        return True

    def read(self, *_: object) -> bytes:
        raise AssertionError("a terminal is never read")


class _TerminalText:
    buffer = _TerminalBytes()

    def isatty(self) -> bool:
        return True


def test_a_terminal_on_stdin_is_refused_in_one_wording(monkeypatch):
    """plot - / --bias-from - (pecli.cli.stdin) and info - (pecli.io.source) said it two ways."""
    from pecli.cli.output import Output
    from pecli.cli.stdin import stdin_table
    from pecli.errors import PecliError
    from pecli.io.source import read_stdin

    messages = set()
    for read in (lambda: stdin_table(Output(stdin=_TerminalText())), lambda: read_stdin(_TerminalBytes())):
        with pytest.raises(PecliError) as caught:
            read()
        assert caught.value.exit_code == 2
        messages.add(str(caught.value))
    (message,) = messages
    assert message.startswith("refusing to read a table from the terminal (stdin is not redirected)"), message


class _RefusingTerminal:
    """A stderr on a terminal that refuses every write (a hung-up terminal: EIO)."""

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        raise OSError(5, "Input/output error")

    def flush(self) -> None:
        raise OSError(5, "Input/output error")


def test_identify_progress_survives_a_stderr_that_refuses_writes(monkeypatch):
    from pecli.cli import identify
    from pecli.cli.output import Output

    monkeypatch.setattr(identify, "_PROGRESS_AFTER", 0.0)
    out = Output(stderr=_RefusingTerminal())  # type: ignore[arg-type]
    with identify._progress_line(out) as show:
        assert show is not None
        show("rotary")  # wrote straight to out.stderr: OSError
    assert not isinstance(out.stderr, _RefusingTerminal)  # given up for the rest of the run


@pytest.mark.parametrize(
    ("args", "holds_npy"),
    [
        (("generate", "--d", "8", "--len", "4"), True),
        (("generate", "rope", "--d", "8", "--len", "4"), False),  # cos and sin: npy holds one tensor
        (("generate", "--d", "8", "--len", "4", "--dtype", "bfloat16"), False),  # npy has no bfloat16
        (("timestep", "1", "2", "--dim", "8", "--dtype", "bfloat16"), False),
    ],
)
def test_the_save_hint_offers_only_formats_that_hold_the_table(tmp_path, args, holds_npy):
    result = run_in_process(*args)
    assert result.code == 0, result.stderr
    (hint,) = [line for line in result.stderr.splitlines() if line.startswith("hint: save it with")]
    assert (".npy" in hint) is holds_npy, hint
    # the hint's claim is the writer's: .npy is written exactly when the hint offers it
    written = run_in_process(*args, "-o", str(tmp_path / "x.npy"))
    assert written.code == (0 if holds_npy else 2), written.stderr
