"""Session 7's attack on costs (issue 30, class 4): plot's terminal view of a relative bias (ALiBi's
heads, T5's buckets, KERPLE) draws the block means of its len × len slices from the offset curve,
in memory bounded by the cells drawn, and they equal the whole slices' block means."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from pecli.cli.app import app
from pecli.cli.relative_plot import _curve_cells, _curve_sample
from pecli.render.downsample import block_average
from pecli.render.scale import finite_sample
from pecli.schemes.spec import TableSpec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_ADDRESS_LIMIT = 1536 << 20  # 1.5 GiB of address space: the old slices (t5 at 8192: 1.4 GB resident) do not fit
_SIZE = ["--terminal", "--width", "80", "--height", "30"]
_SGR = re.compile(r"\x1b\[[0-9;]*m")

SCHEMES = [["alibi", "--heads", "4"], ["t5"], ["t5", "--causal"], ["kerple"]]


def _spec(args: list[str], length: int) -> TableSpec:
    params: dict[str, object] = {"heads": int(args[2])} if args[1:2] == ["--heads"] else {}
    if "--causal" in args:
        params["bidirectional"] = False
    return TableSpec.resolve(args[0], None, params, length=length, dim=None, dtype="float64", name="pe").single()


@pytest.mark.parametrize("args", SCHEMES, ids=lambda a: " ".join(a))
def test_cells_are_the_whole_slices_block_means(args):
    length = 701
    from pecli.cli.relative import _offset_curves
    from pecli.cli.relative_input import RelativeInput

    spec = _spec(args, length)
    heads = np.asarray(spec.array(), dtype=np.float64)
    heads = heads if heads.ndim == 3 else heads[None]
    curves = np.asarray(_offset_curves(RelativeInput(args[0], dict(spec.params), length, None, args[0])))
    assert curves.shape == (len(heads), 2 * length - 1)
    for curve, head in zip(curves, heads, strict=True):
        cells = _curve_cells(curve, length, (22, 75))
        whole = block_average(head, 22, 75, uniform=True, even=True)
        assert np.array_equal(cells.row_edges, whole.row_edges) and np.array_equal(cells.col_edges, whole.col_edges)
        assert cells.values.shape == whole.values.shape and cells.values.shape[1] > 60
        np.testing.assert_allclose(cells.values, whole.values, rtol=1e-9, atol=1e-9)
        # the colour scale's percentile sample: the very values the slice's own sample holds
        assert np.array_equal(_curve_sample(curve, length, 7, 3), finite_sample(head, 7, 3))


# and tables that are no f(m − n) (ALiBi's key form: rows alike) or no matrix (its slopes): the whole-slice way
DRAWN = [*SCHEMES, ["alibi", "--heads", "4", "--form", "key"], ["alibi", "--heads", "4", "--part", "slopes"],
         ["alibi", "--heads", "8", "--head", "3"], ["kerple", "--r1", "2", "--r2", "0.5"]]  # fmt: skip


@pytest.mark.parametrize("args", DRAWN, ids=lambda a: " ".join(a))
@pytest.mark.parametrize("extra", [[], ["--robust"], ["--scale", "per-panel"], ["--vmin", "-3", "--vmax", "0"]])
def test_scheme_view_draws_what_its_table_file_draws(tmp_path, args, extra):
    # a file goes the whole-slice way; the scheme itself, the curve's: the same picture, scale and value line
    path = str(tmp_path / "bias.safetensors")
    runner = CliRunner()
    written = runner.invoke(app, ["generate", *args, "--len", "701", "-o", path])
    assert written.exit_code == 0, written.output
    env = {"COLORTERM": "truecolor"}
    scheme = runner.invoke(app, ["plot", *args, "--len", "701", *_SIZE, "--title", "T", *extra], env=env)
    table = runner.invoke(app, ["plot", path, *_SIZE, "--title", "T", *extra], env=env)
    assert scheme.exit_code == table.exit_code == 0, scheme.output + table.output
    assert scheme.output == table.output.replace("T — bias.safetensors", "T")
    assert "701" in _SGR.sub("", scheme.output) or "slopes" in args  # the slopes: a row of 4


def test_learned_t5_bias_view_draws_what_its_table_file_draws(tmp_path):
    weights = str(tmp_path / "w.npy")
    np.save(weights, np.random.default_rng(0).normal(size=(32, 4)))
    args = ["t5", "--part", "bias", "--bias-from", weights]
    path = str(tmp_path / "bias.safetensors")
    runner = CliRunner()
    assert runner.invoke(app, ["generate", *args, "--len", "701", "-o", path]).exit_code == 0
    scheme = runner.invoke(app, ["plot", *args, "--len", "701", *_SIZE, "--title", "T"], env={"COLORTERM": "truecolor"})
    table = runner.invoke(app, ["plot", path, *_SIZE, "--title", "T"], env={"COLORTERM": "truecolor"})
    assert scheme.exit_code == table.exit_code == 0, scheme.output + table.output
    assert scheme.output == table.output.replace("T — bias.safetensors", "T")
    assert "4 panels in one colour scale" in scheme.output


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_ADDRESS_LIMIT, _ADDRESS_LIMIT))


@pytest.mark.skipif(sys.platform != "linux", reason="address-space limit as Linux applies it")
@pytest.mark.parametrize(
    ("args", "value_line"),
    [(["t5", "--len", "8192"], "values 0 … 31"), (["t5", "--len", "65536"], "values 0 … 31"),
     (["alibi", "--heads", "8", "--len", "65536"], "values -3.277e+04 … 0")],
)  # fmt: skip
def test_long_bias_is_drawn_in_bounded_memory(tmp_path, args, value_line):
    # the old view computed every slice: t5 at 8192 held 1.4 GB (past this cap), at 65536 it was refused (32 GiB)
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NO_COLOR="1")
    argv = ["pecli", "plot", *args, "--terminal", "--width", "80", "--height", "20"]
    # the child states its own peak resident memory as it exits (after typer's SystemExit): VmHWM, its address
    # space's high-water mark — not ru_maxrss, which Linux carries over exec from the forked test worker
    script = (
        f"import runpy, sys; sys.argv = {argv!r}\n"
        "try:\n    runpy.run_module('pecli', run_name='__main__')\n"
        "finally:\n    hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
        "    print('PEAK', hwm, file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=str(tmp_path),
                          env=env, preexec_fn=_limit, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    side = args[-1]
    assert f"of {side} × {side}" in done.stdout or f"{side} × {side} →" in done.stdout, done.stdout
    assert value_line in done.stdout
    peak = int(done.stderr.split("PEAK")[-1]) << 10
    assert peak < 300 << 20, peak  # the cells and O(len) curves (~80 MB), not len² (t5 at 8192: 1.4 GB)


@pytest.mark.skipif(sys.platform != "linux", reason="address-space limit as Linux applies it")
def test_curves_too_long_are_refused_before_work(tmp_path):
    # 8 heads at 10^10 positions: the O(heads · len) curves themselves (4.7 TiB) cannot fit; at 10^8 (48 GiB)
    # the view was killed for memory (24 GB resident) before this check
    env = dict(os.environ, PYTHONPATH=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", "pecli", "plot", "alibi", "--heads", "8", "--len", "10000000000", *_SIZE],
        capture_output=True, text=True, cwd=str(tmp_path), env=env, preexec_fn=_limit, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert "offset curves of the bias would take 4.7 TiB" in line and "(use a smaller --len)" in line, line
