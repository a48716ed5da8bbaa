"""The committed completion scripts complete commands, scheme names and --preset values in real shells."""

from __future__ import annotations

import subprocess
import time
import uuid

import pytest

from pecli.cli.app import COMMANDS
from pecli.schemes.catalog import SCHEMES
from pecli.schemes.presets import PRESETS, get_preset
from tests.conftest import require_tool
from tests.paths import ROOT

ROOT = ROOT
PRESET_NAMES = list(dict.fromkeys(p.name for p in PRESETS.values()))
COMPLETIONS = ROOT / "completions"


def _bash_complete(env: dict[str, str], *words: str) -> list[str]:
    """COMPREPLY of the committed bash function for the command line ``words`` (last word being completed)."""
    require_tool("bash")
    quoted = " ".join(f"'{w}'" for w in words)
    script = (
        f"source '{COMPLETIONS / 'pecli.bash'}'\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}\n"
        '_pecli_completion pecli; printf "%s\\n" "${COMPREPLY[@]}"'
    )
    completed = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return [line for line in completed.stdout.splitlines() if line]


def test_bash_completes_commands_schemes_presets_and_choices(shell_env):
    assert _bash_complete(shell_env, "pecli", "gen") == ["generate"]
    assert set(_bash_complete(shell_env, "pecli", "")) >= set(COMMANDS)
    assert _bash_complete(shell_env, "pecli", "generate", "") == list(SCHEMES)
    assert _bash_complete(shell_env, "pecli", "generate", "binary") == [s for s in SCHEMES if s.startswith("binary")]
    assert _bash_complete(shell_env, "pecli", "generate", "--preset", "") == PRESET_NAMES
    sinusoidal_presets = [p.name for p in PRESETS.values() if p.scheme == "sinusoidal"]
    assert _bash_complete(shell_env, "pecli", "generate", "sinusoidal", "--preset", "") == sinusoidal_presets
    assert _bash_complete(shell_env, "pecli", "generate", "--preset", "guid") == ["guided-diffusion"]
    layouts = list(dict.fromkeys(v for s in SCHEMES.values() for v in s.choices.get("layout", ())))
    assert _bash_complete(shell_env, "pecli", "generate", "--layout", "") == layouts
    sinusoidal_layouts = list(SCHEMES["sinusoidal"].choices["layout"])
    assert _bash_complete(shell_env, "pecli", "generate", "sinusoidal", "--layout", "") == sinusoidal_layouts
    assert "--list-presets" in _bash_complete(shell_env, "pecli", "generate", "--li")


#: (command line up to the option, word typed, completions): every option whose values are a fixed set
FIXED_CHOICES = [
    (("generate", "--dtype"), "b", ["bfloat16"]),
    (("generate", "--dtype"), "", ["float32", "float64", "float16", "bfloat16"]),
    (("generate", "--format"), "", ["npy", "safetensors", "pt", "csv", "tsv"]),
    (("generate", "--format"), "s", ["safetensors"]),
    (("timestep", "--dtype"), "float1", ["float16"]),
    (("compare", "--dtype"), "bf", ["bfloat16"]),
    (("plot", "--view"), "", ["wavelength", "pca", "precision"]),
    (("plot", "--view"), "pr", ["precision"]),
    (("plot", "--scale"), "", ["shared", "per-panel"]),
    (("plot", "--color-scale"), "per", ["per-panel"]),
    (("distance", "--metric"), "", ["dot", "cosine", "euclidean"]),
    (("distance", "--qk"), "", ["ones", "random"]),
    (("distance", "--format"), "c", ["csv"]),
    (("info", "--as"), "hf", ["hf-v4", "hf-v5"]),
    (("resample", "--method"), "b", ["bicubic", "bilinear"]),
    (("resample", "--convention"), "", ["timm", "hf", "dinov2-original"]),
    (("resample", "--format"), "t", ["tsv"]),
]


@pytest.mark.parametrize(("words", "typed", "expected"), FIXED_CHOICES)
def test_bash_completes_options_with_a_fixed_set_of_values(shell_env, words, typed, expected):
    assert _bash_complete(shell_env, "pecli", *words, typed) == expected


def _tmux_tab(env: dict[str, str], shell: list[str], setup: list[str], typed: str, expect: str) -> str:
    """Type ``typed`` and TAB in an interactive ``shell`` inside tmux; wait for ``expect`` on screen."""
    require_tool("tmux")
    socket = f"pecli-test-{uuid.uuid4().hex}"  # a server of its own: no pane of an earlier test is read
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "200", "-y", "40", *shell], env=env, check=True)
    try:

        def wait_for(text: str) -> str:
            deadline = time.monotonic() + 60  # each TAB starts python: slow on a busy machine
            while True:
                screen = subprocess.run([*tmux, "capture-pane", "-p"], capture_output=True, text=True).stdout
                if text in screen or time.monotonic() > deadline:
                    return screen
                time.sleep(0.2)

        # the shell must be at its prompt, line editor active, before the TAB is typed
        for line in [*setup, "echo ready-$((6 * 7))"]:
            subprocess.run([*tmux, "send-keys", line, "Enter"], check=True)
        wait_for("ready-42")
        subprocess.run([*tmux, "send-keys", typed], check=True)
        wait_for(typed)
        subprocess.run([*tmux, "send-keys", "Tab"], check=True)
        return wait_for(expect)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def test_real_tab_in_interactive_bash(shell_env):
    require_tool("bash")
    screen = _tmux_tab(
        shell_env,
        ["bash", "--norc", "--noprofile", "-i"],
        ["PS1='$ '", f"source '{COMPLETIONS / 'pecli.bash'}'"],
        "pecli gen",
        "$ pecli generate",
    )
    assert "$ pecli generate" in screen, screen


@pytest.mark.parametrize(
    ("typed", "expect"),
    [
        ("pecli gen", "pecli generate"),
        ("pecli generate --preset fair", "pecli generate --preset fairseq"),
        ("pecli generate memn", "pecli generate memn2n"),
        ("pecli generate --dtype b", "pecli generate --dtype bfloat16"),
        ("pecli generate --format saf", "pecli generate --format safetensors"),
        ("pecli plot --view pc", "pecli plot --view pca"),
    ],
)
def test_real_tab_in_zsh_autoloaded_from_fpath(shell_env, typed, expect):
    require_tool("zsh")
    screen = _tmux_tab(
        shell_env,
        ["zsh", "-f", "-i"],
        ["PS1='%% '", f"fpath=('{COMPLETIONS}' $fpath)", "autoload -U compinit && compinit -u -D"],
        typed,
        f"% {expect}",
    )
    assert f"% {expect}" in screen, screen


def _fish_complete(env: dict[str, str], line: str) -> list[str]:
    require_tool("fish")
    script = f"source '{COMPLETIONS / 'pecli.fish'}'; complete -C '{line}'"
    completed = subprocess.run(
        ["fish", "--no-config", "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert completed.returncode == 0, completed.stderr
    return [entry.split("\t")[0] for entry in completed.stdout.splitlines()]


def test_fish_completes_commands_schemes_and_presets(shell_env):
    assert _fish_complete(shell_env, "pecli gen") == ["generate"]
    assert _fish_complete(shell_env, "pecli generate binary") == [s for s in SCHEMES if s.startswith("binary")]
    assert _fish_complete(shell_env, "pecli generate --preset ") == sorted(PRESET_NAMES)  # fish sorts
    require_tool("fish")
    script = f"source '{COMPLETIONS / 'pecli.fish'}'; complete -C 'pecli generate --preset fair'"
    described = subprocess.run(["fish", "--no-config", "-c", script], capture_output=True, text=True, env=shell_env)
    assert described.stdout == f"fairseq\tsinusoidal: {get_preset('fairseq').convention}\n"  # literal, one line


@pytest.mark.parametrize(("words", "typed", "expected"), FIXED_CHOICES)
def test_fish_completes_options_with_a_fixed_set_of_values(shell_env, words, typed, expected):
    assert _fish_complete(shell_env, " ".join(("pecli", *words, typed))) == sorted(expected)  # fish sorts
