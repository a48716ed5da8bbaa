"""The README's console examples of distance, compare and identify are real: rerun them."""

from __future__ import annotations

import pathlib
import shlex

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _console_examples() -> list[tuple[str, list[str]]]:
    text = README.read_text()
    section = text[text.index("### `pecli distance`, `pecli compare`, `pecli identify`") :]
    section = section[: section.index("\n### ")]
    examples: list[tuple[str, list[str]]] = []
    for block in section.split("```console\n")[1:]:
        for line in block[: block.index("```")].splitlines():
            if line.startswith("$ "):
                examples.append((line[2:], []))
            else:
                examples[-1][1].append(line)
    return examples


def test_readme_console_examples(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    examples = _console_examples()
    assert len(examples) == 4
    for command, expected in examples:
        argv = shlex.split(command)
        assert argv[0] == "pecli"
        result = cli(*argv[1:])
        monkeypatch.chdir(tmp_path)  # the cli fixture undoes monkeypatches after each run
        assert result.out.splitlines()[: len(expected)] == expected, command
