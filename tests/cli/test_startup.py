"""Start-up hygiene: what the fast paths import, checked in fresh interpreters."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.paths import ROOT

HEAVY = ("torch", "matplotlib", "rich", "pydantic", "pandas", "scipy", "numpy.ma")


def imported_after(args: list[str], cwd) -> dict:
    """Run ``main(args)`` in a fresh interpreter; return its exit code and the heavy modules it loaded."""
    code = (
        "import json, sys\n"
        "from pecli.cli.app import main\n"
        f"rc = main({args!r})\n"
        f"heavy = sorted(({{m.split('.')[0] for m in sys.modules}} | set(sys.modules)) & set({HEAVY!r}))\n"
        "print(json.dumps({'rc': rc, 'heavy': heavy, 'numpy': 'numpy' in sys.modules,"
        " 'commands': sorted(m for m in sys.modules if m.startswith('pecli.cli.') and m.count('.') == 2)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    *printed, last = done.stdout.strip().splitlines()
    return {**json.loads(last), "stdout": "\n".join(printed)}


@pytest.mark.parametrize("output", ["pe.safetensors", "pe.npy", None])
def test_generate_imports_no_torch_matplotlib_or_rich(tmp_path, output):
    args = ["generate", "--d", "512", "--len", "2048"] + (["-o", output] if output else [])
    result = imported_after(args, tmp_path)
    assert result["rc"] == 0
    assert result["heavy"] == []
    if output:
        assert (tmp_path / output).stat().st_size > 2048 * 512 * 4


def test_a_command_run_loads_only_its_own_module(tmp_path):
    from pecli.cli.app import COMMANDS

    result = imported_after(["generate", "--d", "4", "--len", "2", "-o", "x.npy"], tmp_path)
    others = {f"pecli.cli.{name}" for name in COMMANDS} - {"pecli.cli.generate"}
    assert "pecli.cli.generate" in result["commands"]
    assert not others & set(result["commands"])


def test_help_imports_no_numpy_and_lists_every_command(tmp_path):
    from pecli.cli.app import app

    result = imported_after(["--help"], tmp_path)
    assert result["rc"] == 0 and not result["numpy"] and result["heavy"] == []
    names = [info.name for info in app.registered_commands]
    assert names and all(f"  {name} " in result["stdout"] for name in names)


def test_typer_private_modules_are_imported_by_the_adapter_only():
    """typer._click and typer._completion_classes sit behind pecli/cli/_typer_compat.py (the typer pin's one place)."""
    import re

    root = ROOT
    private = re.compile(r"^\s*(from|import)\s+typer\._", re.MULTILINE)
    sources = [*root.joinpath("pecli").rglob("*.py"), *root.joinpath("scripts").rglob("*.py")]
    users = sorted(str(path.relative_to(root)) for path in sources if private.search(path.read_text(encoding="utf-8")))
    assert users == ["pecli/cli/_typer_compat.py"]


def test_terminal_plot_of_a_file_imports_no_matplotlib_or_numpy_ma(tmp_path):
    """np.percentile imports numpy.ma (~20 ms): the colour scale takes its percentile by a partial sort."""
    assert imported_after(["generate", "--d", "64", "--len", "256", "-o", "pe.npy"], tmp_path)["rc"] == 0
    result = imported_after(["plot", "pe.npy", "--terminal", "--width", "80", "--height", "30"], tmp_path)
    assert result["rc"] == 0 and result["heavy"] == []
    assert result["stdout"].count("▀") > 100


def test_scheme_options_look_each_parameters_schemes_up_once(monkeypatch):
    """Ordering every command's scheme options scanned the registry once per pair of parameters (~20 ms a start)."""
    from pecli.cli import options
    from pecli.schemes.catalog import SCHEMES

    calls = []
    looked_up = options.schemes_taking
    monkeypatch.setattr(options, "schemes_taking", lambda name: calls.append(name) or looked_up(name))
    names = tuple(options.PARAMS)
    order = options._panel_order(names)
    assert len(calls) == len(names) and sorted(order) == sorted(names)
    # shared parameters first, then each scheme's, in the registry's order
    schemes = list(SCHEMES)
    headings = [options.scheme_panel(name) for name in order]
    ranks = [0 if heading == options.SCHEME_PANEL else schemes.index(heading.split()[0]) + 1 for heading in headings]
    assert ranks == sorted(ranks) and ranks[0] == 0 and ranks[-1] > 0


def test_the_console_script_builds_without_the_collector_and_runs_the_command_with_it(tmp_path):
    """``python -m pecli``: no cycle collection while Typer and the options are built (~20 ms of a
    terminal plot's start); the command itself runs with the collector on, the start's objects frozen."""
    code = (
        "import gc, sys\n"
        "seen = []\n"
        "from pecli.__main__ import main\n"
        "import pecli.cli.app as app\n"
        "collecting = app.start_collecting\n"
        "def spy():\n"
        "    seen.append(('before', gc.isenabled()))\n"
        "    collecting()\n"
        "    seen.append(('after', gc.isenabled(), gc.get_freeze_count() > 1000))\n"
        "app.start_collecting = spy\n"
        "sys.argv = ['pecli', 'generate', '--d', '4', '--len', '2', '-o', 'x.npy']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exit_:\n"
        "    print(exit_.code, seen)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert done.stdout.split("\n")[-2] == "0 [('before', False), ('after', True, True)]"


def _classes_and_modules_after(args: list[str], cwd) -> dict:
    """Run ``main(args)`` in a fresh interpreter; the dataclasses it created and the modules it loaded."""
    code = (
        "import dataclasses, json, sys\n"
        "made = []\n"
        "process = dataclasses._process_class\n"
        "def counted(cls, *args, **kwargs):\n"
        "    made.append(cls.__qualname__)\n"
        "    return process(cls, *args, **kwargs)\n"
        "dataclasses._process_class = counted\n"
        "from pecli.cli.app import main\n"
        f"rc = main({args!r})\n"
        "print(json.dumps({'rc': rc, 'made': made, 'modules': sorted(sys.modules)}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_terminal_plot_of_a_file_builds_no_image_classes_and_loads_no_writer(tmp_path):
    """The -o image classes and distance's request (~5 ms of dataclasses), and tempfile (a writer's), are not
    needed to draw a file in the terminal."""
    assert imported_after(["generate", "--d", "64", "--len", "256", "-o", "pe.npy"], tmp_path)["rc"] == 0
    result = _classes_and_modules_after(["plot", "pe.npy", "--terminal", "--width", "80", "--height", "30"], tmp_path)
    assert result["rc"] == 0
    assert {"DrawingStyle", "TerminalHeatmap"} <= set(result["made"])
    assert not {"ImageFile", "HeatmapImage", "LinesImage", "DistanceRequest"} & set(result["made"])
    assert "tempfile" not in result["modules"]


def test_generate_does_not_load_the_input_helpers(tmp_path):
    """generate reads stdin only for --bias-from -: pecli.cli.stdin, not pecli.cli.inputs (its TableView…)."""
    result = _classes_and_modules_after(["generate", "--d", "8", "--len", "4", "-o", "x.npy"], tmp_path)
    assert result["rc"] == 0 and (tmp_path / "x.npy").exists()
    assert "pecli.cli.inputs" not in result["modules"] and "TableView" not in result["made"]


def test_terminal_plot_of_a_safetensors_file_loads_only_its_reader(tmp_path):
    """pecli.io imports each format's module where that format is used: a .safetensors read loads neither
    the .npy, .pt and GGUF readers nor the atomic-write helpers (pecli.io.atomic, with shutil's archives)."""
    assert imported_after(["generate", "--d", "64", "--len", "256", "-o", "pe.safetensors"], tmp_path)["rc"] == 0
    args = ["plot", "pe.safetensors", "--terminal", "--width", "80", "--height", "30"]
    result = _classes_and_modules_after(args, tmp_path)
    assert result["rc"] == 0
    assert "pecli.io.safetensors" in result["modules"]
    assert not {"pecli.io.npy", "pecli.io.pt", "pecli.io.gguf", "pecli.io.atomic"} & set(result["modules"])


def test_the_write_helpers_still_import_from_pecli_io():
    """The names pecli.io gives lazily from pecli.io.atomic are the same objects; an unknown name is still an error."""
    import pecli.io
    from pecli.io import TEMP_MARKER, atomic, check_free_space, check_output_path

    assert (TEMP_MARKER, check_free_space, check_output_path) == (
        atomic.TEMP_MARKER,
        atomic.check_free_space,
        atomic.check_output_path,
    )
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        pecli.io.not_a_name  # noqa: B018
