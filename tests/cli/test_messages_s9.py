"""Errors about a file's table name the file; a file's dtype is named as the file's (issue 30, session 9).

Found by this session's hostile-file attack: each test fails on the code before it.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import run_in_process

COMMANDS = [
    ["identify"],
    ["compare", "{f}"],
    ["plot", "--width", "40", "--height", "10"],
    ["resample", "--len", "16", "-o", "{out}"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_long_double_table_is_refused_as_the_files_dtype(tmp_path, command):
    """A float128 .npy: resample said "unknown dtype 'float128' (did you mean …)", as if --dtype had been given."""
    path = tmp_path / "wide.npy"
    np.save(path, np.ones((8, 4), dtype=np.longdouble))
    if np.dtype(np.longdouble).itemsize <= 8:
        pytest.skip("long double is float64 on this platform")
    name = np.dtype(np.longdouble).name
    args = [a.format(f=str(path), out=str(tmp_path / "out.npy")) for a in command[1:]]
    result = run_in_process(command[0], str(path), *args)
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    assert f"{path}: tensor array has dtype {name} (extended precision), which pecli does not read" in result.stderr
    assert "save it as float64" in result.stderr
    assert "unknown dtype" not in result.stderr
    assert not (tmp_path / "out.npy").exists()


@pytest.mark.parametrize(
    ("array", "command", "said"),
    [
        (np.full((8, 4), np.nan, dtype=np.float16), ["identify"], "the table holds NaN or infinite values"),
        (np.full((8, 4), np.inf, dtype=np.float32), ["resample", "--len", "16"], "the table holds 32 values that"),
        (np.ones((2, 4, 4), dtype=np.float32), ["resample", "--len", "16"], "a 3-D tensor of shape 2 × 4 × 4 is not"),
        (np.ones((8, 4), dtype=bool), ["resample", "--len", "16"], "an integer or boolean tensor (bool) is not"),
        (np.ones((8, 4), dtype=np.int64), ["resample", "--len", "16"], "an integer or boolean tensor (int64) is not"),
        (np.ones((8, 4), dtype=np.float32), ["plot", "--rows", "5:3", "--width", "40", "--height", "10"], "--rows 5:3"),
    ],
    ids=["identify-nan", "resample-inf", "resample-3d", "resample-bool", "resample-int", "plot-rows"],
)
def test_an_error_about_the_table_names_its_file(tmp_path, array, command, said):
    """The core gets an array, not a file: the CLI names the file (printable) once, where it prints the error."""
    path = tmp_path / "weird\x1bname.npy"
    np.save(path, array)
    out = tmp_path / "out.npy"
    result = run_in_process(
        command[0], str(path), *command[1:], *(["-o", str(out)] if command[0] == "resample" else [])
    )
    assert result.code == 2
    assert result.stderr.count("\n") == 1
    escaped = str(path).replace("\x1b", "\\x1b")
    assert result.stderr.startswith(f"pecli: error: {escaped}: {said}"), result.stderr
    assert "\x1b" not in result.stderr
    assert not out.exists()


def test_stdin_is_named_as_stdin(tmp_path):
    path = tmp_path / "nan.npy"
    np.save(path, np.full((8, 4), np.nan, dtype=np.float32))
    result = run_in_process("identify", "-", stdin=path.read_bytes())
    assert result.code == 2
    assert (
        result.stderr
        == "pecli: error: <stdin>: the table holds NaN or infinite values (no encoding convention produces them)\n"
    )


def test_an_error_that_names_the_file_or_no_table_is_left_alone(tmp_path):
    path = tmp_path / "pe.npy"
    np.save(path, np.ones((8, 4), dtype=np.float32))
    named = run_in_process("resample", str(path), "--len", "0", "-o", str(tmp_path / "o.npy"))
    assert named.code == 2
    assert str(path) not in named.stderr and named.stderr.startswith("pecli: error: --len"), named.stderr
    empty = tmp_path / "empty.npy"
    np.save(empty, np.ones((0, 4), dtype=np.float32))
    once = run_in_process("identify", str(empty))
    assert once.code == 2 and once.stderr.count(str(empty)) == 1, once.stderr


def _gguf_of_tensors(count: int, value: float = 0.0) -> bytes:
    """A GGUF file of ``count`` one-value float32 tensors (all at offset 0), as the hostile-file attack wrote it."""
    import struct

    def text(s: str) -> bytes:
        return struct.pack("<Q", len(s)) + s.encode()

    body = b"GGUF" + struct.pack("<IQQ", 3, count, 1) + text("general.architecture") + struct.pack("<I", 8)
    body += text("llama") + b"".join(text(f"t{i}") + struct.pack("<I1QIQ", 1, 1, 0, 0) for i in range(count))
    return body + bytes(-len(body) % 32) + np.float32(value).tobytes()


@pytest.mark.parametrize("command", [["compare", "{f}", "{f}"], ["info", "--json", "{f}"], ["info", "{f}"]])
def test_a_gguf_header_is_parsed_once_per_run(tmp_path, monkeypatch, command):
    """100,000 tensors: compare F F took 20 s, info --json 15 s, the header parsed in full 2 to 6 times a run."""
    import pecli.io.gguf as gguf

    path = tmp_path / "many.gguf"
    path.write_bytes(_gguf_of_tensors(500))
    described = []
    original = gguf._describe
    monkeypatch.setattr(gguf, "_describe", lambda cursor: described.append(1) or original(cursor))
    result = run_in_process(*(a.format(f=str(path)) for a in command))
    assert result.code in (0, 2), result.stderr
    assert len(described) == 500
    if command[0] == "compare":
        assert "holds 500 tensors; choose one with --key" in result.stderr


def test_a_gguf_rewritten_is_parsed_again(tmp_path):
    """The header is kept by the file's bytes: the same path rewritten is read afresh, never stale."""
    path = tmp_path / "one.gguf"
    path.write_bytes(_gguf_of_tensors(1, 1.5))
    first = run_in_process("info", "--stats", "--json", str(path))
    path.write_bytes(_gguf_of_tensors(2, 2.5))
    second = run_in_process("info", "--stats", "--json", str(path))
    assert first.code == second.code == 0
    assert '"t1"' not in first.out and '"t1"' in second.out
    assert "1.5" in first.out and "2.5" in second.out and "1.5" not in second.out


def _llama_gguf(extra: list[tuple[str, int, bytes]]) -> bytes:
    """A llama GGUF of settings only: context 4096, width 256, 4 heads, and ``extra`` (key, type, value)."""
    import struct

    def text(s: str) -> bytes:
        return struct.pack("<Q", len(s)) + s.encode()

    settings = [
        ("general.architecture", 8, text("llama")),
        ("llama.context_length", 4, struct.pack("<I", 4096)),
        ("llama.embedding_length", 4, struct.pack("<I", 256)),
        ("llama.attention.head_count", 4, struct.pack("<I", 4)),
        *extra,
    ]
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, len(settings))
    return body + b"".join(text(key) + struct.pack("<I", kind) + value for key, kind, value in settings)


@pytest.mark.parametrize(
    ("extra", "key", "context"),
    [
        (
            [
                ("llama.rope.scaling.type", 8, b"\x04\0\0\0\0\0\0\0yarn"),
                ("llama.rope.scaling.factor", 12, np.float64(1e308).tobytes()),
                ("llama.rope.scaling.original_context_length", 4, np.uint32(4096).tobytes()),
            ],
            "llama.rope.scaling.factor = 1e+308",
            "4,096",
        ),
        ([("llama.rope.scale_linear", 6, np.float32(1e6).tobytes())], "llama.rope.scale_linear = 1e+06", "4,096"),
    ],
    ids=["yarn-1e308", "linear-1e6"],
)
def test_an_absurd_scaling_factor_is_refused_naming_its_key(tmp_path, extra, key, context):
    """YaRN by 1e308 gave cos values of ±71.9 (attention factor 0.1·ln(factor) + 1) with exit 0."""
    path = tmp_path / "m.gguf"
    path.write_bytes(_llama_gguf(extra))
    out = tmp_path / "cos.npy"
    result = run_in_process("generate", "--from-config", str(path), "--len", "8", "--part", "cos", "-o", str(out))
    assert result.code == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert f"{path}: {key} stretches the context of {context} positions past the last position" in result.stderr
    assert "2,147,483,647" in result.stderr
    assert not out.exists()


def test_a_real_yarn_factor_is_read(tmp_path):
    """DeepSeek-V3's YaRN: factor 40 over 4,096 positions (163,840) is a model, not corruption."""
    path = tmp_path / "m.gguf"
    yarn = [
        ("llama.rope.scaling.type", 8, b"\x04\0\0\0\0\0\0\0yarn"),
        ("llama.rope.scaling.factor", 6, np.float32(40.0).tobytes()),
        ("llama.rope.scaling.original_context_length", 4, np.uint32(4096).tobytes()),
    ]
    path.write_bytes(_llama_gguf(yarn))
    out = tmp_path / "cos.npy"
    result = run_in_process("generate", "--from-config", str(path), "--len", "8", "--part", "cos", "-o", str(out))
    assert result.code == 0, result.stderr
    cos = np.load(out)
    assert cos.shape == (8, 64) and np.abs(cos).max() <= 0.1 * np.log(40.0) + 1 + 1e-6
