"""The bad-input catalogue: every known way to call pecli wrongly.

Each case is one line: the command line, the exit code, and the words its one-line error must
contain; optionally stdin bytes, files to create first (from :data:`FILES`), and a terminal for
stdout or stdin. For every case the test asserts:

- the exit code;
- exactly one non-empty line on stderr, ``pecli: error: …``, short, naming the problem (the
  words), with no traceback, no "Exception ignored" noise and no "internal error";
- no new file in the working directory (no output, no temporary), and every file that was there
  before — inputs and an existing output alike — byte-for-byte unchanged.

Cases run through the real entry point in this process (the subject is the error, not the
process), except those that need a terminal or a closed stream; one case for each command and exit
code also runs as a real process, whose result must be the same.

Every command and scheme a case names exists, so no case is skipped: a case for an unknown command
fails (its usage error is not the one the case expects). ``python -m tests.cli.test_bad_inputs``
prints the catalogue's outcomes as a table.
"""

from __future__ import annotations

import functools
import io
import json
import os
import pty
import re
import shlex
import struct
import subprocess
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

from pecli.cli.app import COMMANDS
from tests.conftest import Result, require_module, run_in_process, run_pecli
from tests.mounts import unwritable_directory

# ---------------------------------------------------------------------------------------------
# input files, built on demand


def _start(index: int) -> int:
    """Byte offset of tensor ``index`` of many-keys.safetensors: tensor i holds i + 1 float32 values."""
    return 2 * index * (index + 1)


def _npy(array: np.ndarray, *, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def _npy_with_header(header: str, data_bytes: int) -> bytes:
    """A version 1.0 .npy file with a hand-written header (shapes and dtypes np.save cannot write)."""
    encoded = header.encode("latin1")
    encoded += b" " * (-(10 + len(encoded) + 1) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(encoded)) + encoded + bytes(data_bytes)


def _safetensors(header: dict, data: bytes) -> bytes:
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def _pt(build: Callable) -> bytes:
    torch = require_module("torch")
    buffer = io.BytesIO()
    torch.save(build(torch), buffer)
    return buffer.getvalue()


def _legacy_pt_claiming(count: int) -> bytes:
    """A legacy (non-zip) torch.save file whose storage claims ``count`` floats, for 8 bytes of data."""
    torch = require_module("torch")
    buffer = io.BytesIO()
    torch.save({"pe": torch.zeros(2)}, buffer, _use_new_zipfile_serialization=False)
    data = buffer.getvalue()
    size = data.index(b"K\x02N")  # the storage's element count (BININT1 2) just before its NONE
    return data[:size] + b"\x8a\x05" + count.to_bytes(5, "little") + data[size + 2 :]


class _RunsCode:
    """A pickle that would run a shell command when unpickled without weights_only."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def _table(length: int = 6, dim: int = 4) -> np.ndarray:
    return np.arange(length * dim, dtype=np.float32).reshape(length, dim) / (length * dim)


#: name -> bytes of a file a case can ask for; the name is also the file name in the case's directory
FILES: dict[str, Callable[[], bytes]] = {
    "pe.npy": lambda: _npy(_table()),
    "small.npy": lambda: _npy(_table(3, 4)),
    "old.npy": lambda: b"an existing output file, which a failing run must leave alone",
    "old.png": lambda: b"\x89PNG an existing image",
    "empty.npy": lambda: b"",
    "junk.npy": lambda: b"this is plain text, not a table\n",
    "truncated.npy": lambda: _npy(np.zeros((100, 100), np.float32))[:1000],
    "bad-header.npy": lambda: b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',}\n",
    "cube.npy": lambda: _npy(np.zeros((2, 3, 4), np.float32)),
    "hyper.npy": lambda: _npy(np.zeros((2, 2, 3, 4), np.float32)),
    "strings.npy": lambda: _npy(np.array([["a", "b"], ["c", "d"]])),
    "complex.npy": lambda: _npy(np.ones((3, 4), np.complex64)),
    "objects.npy": lambda: _npy(np.array([[{"a": 1}, None]], dtype=object), allow_pickle=True),
    "zero-rows.npy": lambda: _npy(np.zeros((0, 4), np.float32)),
    "truncated.safetensors": lambda: _safetensors(
        {"pe": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}, b"\0" * 10
    ),
    "long-header.safetensors": lambda: struct.pack("<Q", 1 << 20) + b'{"pe": {}}',
    "list-header.safetensors": lambda: _safetensors([1, 2], b""),  # type: ignore[arg-type]
    "huge-shape.safetensors": lambda: _safetensors(
        {"pe": {"dtype": "F32", "shape": [1 << 30, 1 << 20], "data_offsets": [0, 16]}}, b"\0" * 16
    ),
    "overlap.safetensors": lambda: _safetensors(
        {
            "a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
            "b": {"dtype": "F32", "shape": [2, 2], "data_offsets": [8, 24]},
        },
        b"\0" * 24,
    ),
    "ckpt.safetensors": lambda: _safetensors(
        {
            "embeddings.position_embeddings.weight": {"dtype": "F32", "shape": [4, 2], "data_offsets": [0, 32]},
            "embeddings.word_embeddings.weight": {"dtype": "F32", "shape": [8, 2], "data_offsets": [32, 96]},
        },
        b"\0" * 96,
    ),
    "escape.safetensors": lambda: _safetensors(
        {
            "__metadata__": {"t": "\x1b]0;pwned\x07\x1b[2J"},
            "pos\x1b[2J": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
            "word\nembeddings": {"dtype": "F32", "shape": [4, 2], "data_offsets": [16, 48]},
        },
        b"\0" * 48,
    ),
    "many-keys.safetensors": lambda: _safetensors(
        # shapes differ (1 × 1 … 1 × 25): not panels of one table, so plot must ask for --key
        {f"layer{i:02d}": {"dtype": "F32", "shape": [1, i + 1], "data_offsets": [_start(i), _start(i + 1)]}
         for i in range(25)},
        b"\0" * _start(25),
    ),
    "f8.safetensors": lambda: _safetensors(
        {"pe": {"dtype": "F8_E4M3", "shape": [2, 2], "data_offsets": [0, 4]}}, b"\0" * 4
    ),
    "metadata-number.safetensors": lambda: _safetensors(
        {"__metadata__": {"base": 10000}, "pe": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4
    ),
    "metadata-zero.safetensors": lambda: _safetensors(
        {"__metadata__": 0, "pe": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 4
    ),
    "huge-dimension.safetensors": lambda: _safetensors(
        {"pe": {"dtype": "F32", "shape": [10**30, 0], "data_offsets": [0, 0]}}, b""
    ),
    "bool-shape.npy": lambda: _npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (True, 2), }", 8),
    "deep.npy": lambda: _npy_with_header(f"{{'descr': '<f4', 'fortran_order': False, 'shape': ({'1, ' * 100}), }}", 4),
    "legacy-huge.pt": lambda: _legacy_pt_claiming(10**12),  # 4 TB: torch's allocation fails
    # 20 GB: on a machine with more memory torch allocates it, reads 8 bytes, and says "wrong byte size"
    "legacy-20gb.pt": lambda: _legacy_pt_claiming(5 * 10**9),
    "runs-code.pt": lambda: _pt(lambda torch: {"pe": torch.zeros(2, 2), "payload": _RunsCode()}),
    "expanded.pt": lambda: _pt(lambda torch: {"pe": torch.zeros(1).expand(1 << 12, 1 << 12)}),
    "expanded-huge.pt": lambda: _pt(lambda torch: {"pe": torch.zeros(1).expand(1 << 20, 1 << 20)}),
    # one entry past the limit of 100,000 tensors a file: small files whose entries would cost memory
    "too-many.safetensors": lambda: _safetensors(
        {f"t{i}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(100_001)}, b""
    ),
    "too-many.pt": lambda: _pt(lambda torch: [torch.zeros(1)] * 100_001),
}


@functools.cache
def _file_bytes(name: str) -> bytes:
    return FILES[name]()


# ---------------------------------------------------------------------------------------------
# the catalogue


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    code: int
    words: tuple[str, ...]
    stdin: bytes = b""
    files: tuple[str, ...] = ()
    #: "stdout" or "stdin": that stream is a terminal; "closed": no stdout at all; "stdin-closed": no stdin
    tty: str | None = None

    @property
    def command(self) -> str:
        return self.args[0]

    @property
    def id(self) -> str:
        streams = {"stdout": " >terminal", "stdin": " <terminal", "closed": " >&-", "stdin-closed": " <&-"}
        streams = streams.get(self.tty or "", "")
        return " ".join(self.args)[:80] + streams + (f" <<{self.stdin[:12]!r}" if self.stdin else "")


def case(
    command_line: str,
    code: int,
    *words: str,
    stdin: bytes = b"",
    files: tuple[str, ...] = (),
    tty: str | None = None,
) -> Case:
    """One bad invocation: ``pecli COMMAND_LINE`` exits ``code`` with a one-line error holding ``words``."""
    return Case(tuple(shlex.split(command_line)), code, words, stdin, files, tty)


SHAPE = "--d 4 --len 4"

#: what must never reach a terminal from pecli's messages: C0/C1 controls and DEL (escapes, newlines)
CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f]")

CASES: list[Case] = [
    # -- generate: numbers
    case("generate --d 0 --len 4", 2, "--d", "positive"),
    case("generate --d -3 --len 4", 2, "--d", "positive"),
    case("generate --d 4 --len 0", 2, "--len", "positive"),
    case("generate --d x --len 4", 2, "--d", "'x'"),
    case("generate --d 4 --len 1.5", 2, "--len", "'1.5'"),
    case("generate --d 4", 2, "missing", "--len"),
    case(f"generate {SHAPE} --base 1", 2, "base", "greater than 1"),
    case(f"generate {SHAPE} --base nan", 2, "base", "nan"),
    case(f"generate {SHAPE} --base inf", 2, "base", "inf"),
    case(f"generate {SHAPE} --base -1e400", 2, "base"),
    case(f"generate {SHAPE} --freq-shift nan", 2, "--freq-shift", "finite"),
    case(f"generate {SHAPE} --freq-shift 2", 2, "--freq-shift 2", "d // 2"),
    case(f"generate {SHAPE} --offset 99999999999999999999", 2, "2^53", "--offset"),
    case(f"generate learned {SHAPE} --std 0", 2, "std", "greater than 0"),
    case(f"generate learned {SHAPE} --std -1", 2, "std"),
    case(f"generate learned {SHAPE} --std nan", 2, "std", "nan"),
    case(f"generate learned {SHAPE} --seed -1", 2, "seed", "non-negative"),
    case(f"generate learned {SHAPE} --std 1e39", 2, "float32 cannot hold"),
    case("generate count --d 4 --len 70000 --dtype float16 -o c.npy", 2, "float16 cannot hold", "65504"),
    case("generate --d 100000000 --len 100000000 -o big.npy", 3, "would take", "free"),
    case("generate --d 1000000 --len 100000000", 2, "would take", "memory"),
    # -- generate: names
    case(f"generate sinusodal {SHAPE}", 2, "unknown scheme", "did you mean 'sinusoidal'"),
    case(f"generate '' {SHAPE}", 2, "unknown scheme ''", "sinusoidal"),
    case(f"generate {SHAPE} -o - --json", 2, "--json and -o -", "stdout"),
    case("timestep 1 2 --dim 4 -o - --json", 2, "--json and -o -", "stdout"),
    case(f"generate {SHAPE} --preset fairsec", 2, "unknown preset", "fairseq"),
    case(f"generate learned {SHAPE} --preset fairseq", 2, "preset 'fairseq'", "sinusoidal"),
    case(f"generate {SHAPE} --dtype int8", 2, "unknown dtype", "float32"),
    case(f"generate learned {SHAPE} --base 100", 2, "does not take", "--base"),
    case(f"generate {SHAPE} --layout zigzag", 2, "layout", "interleaved"),
    case(f"generate binary {SHAPE} --bit-order x", 2, "--bit-order 'x'", "valid: lsb, msb"),
    case(f"generate {SHAPE} --nope", 2, "--nope"),
    case(f"generate {SHAPE} one two", 2, "unexpected", "two"),
    case(f"generate {SHAPE} -o", 2, "-o", "requires an argument"),
    case(f"generate {SHAPE} --name __metadata__ -o t.safetensors", 2, "__metadata__", "reserved"),
    case(f"generate {SHAPE} --name '' -o t.safetensors", 2, "non-empty name"),
    # -- generate: formats and outputs
    case(f"generate {SHAPE} --format xls -o x.xls", 2, "unknown format", "xls"),
    case(f"generate {SHAPE} -o x.docx", 2, "format", ".docx"),
    case(f"generate {SHAPE} --format csv", 2, "--format needs an output"),
    case(f"generate {SHAPE} --dtype bfloat16 -o x.npy", 2, "npy cannot store bfloat16"),
    case(f"generate {SHAPE} --dtype bfloat16 -o - --format csv", 2, "csv cannot store bfloat16"),
    case(f"generate {SHAPE} -o nowhere/x.npy", 3, "'nowhere'", "does not exist"),
    case(f"generate {SHAPE} -o .", 3, "is a directory"),
    case(f"generate {SHAPE} -o ''", 2, "output path is empty"),
    case(f"generate {SHAPE} -o {{ro}}/x.npy", 3, "not writable"),
    case(f"generate {SHAPE} -o -", 3, "refusing to write binary", "terminal", tty="stdout"),
    case(f"generate {SHAPE} -o /dev/stdout --format npy", 3, "binary npy", "terminal /dev/stdout", tty="stdout"),
    case(f"generate {SHAPE} -o -", 3, "stdout is closed", tty="closed"),
    case(f"generate {SHAPE} -o - --format csv", 3, "stdout is closed", tty="closed"),
    case(f"generate {SHAPE}", 3, "stdout is closed", tty="closed"),
    case(f"generate {SHAPE} --base 0.5 -o old.npy", 2, "base", files=("old.npy",)),
    case("generate count --d 4 --len 70000 --dtype float16 -o old.npy", 2, "float16", files=("old.npy",)),
    case(f"generate {SHAPE} -o {{ro}}/old.npy --format npy", 3, "not writable"),
    # -- reading tables (plot is the first command to read them; the others share the loader)
    case("plot missing.npy", 2, "no such file", "missing.npy"),
    case("plot .", 2, "no config.json", "model directory"),
    case("plot empty.npy", 2, "empty.npy", "empty", files=("empty.npy",)),
    case("plot junk.npy", 2, "not a .npy, .safetensors, .pt or .gguf", files=("junk.npy",)),
    case("plot truncated.npy", 2, "truncated", files=("truncated.npy",)),
    case("plot bad-header.npy", 2, "not a valid .npy", files=("bad-header.npy",)),
    case("plot hyper.npy", 2, "(2, 2, 3, 4)", files=("hyper.npy",)),
    case("plot strings.npy", 2, "dtype", "not a real number", files=("strings.npy",)),
    case("plot complex.npy", 2, "complex64", "not a real number", files=("complex.npy",)),
    case("plot objects.npy", 2, "python objects", "never unpickles", files=("objects.npy",)),
    case("plot zero-rows.npy", 2, "empty", "(0, 4)", files=("zero-rows.npy",)),
    case("plot truncated.safetensors", 2, "ends at byte 64", files=("truncated.safetensors",)),
    case("plot long-header.safetensors", 2, "truncated", "header", files=("long-header.safetensors",)),
    case("plot list-header.safetensors", 2, "not a json object", files=("list-header.safetensors",)),
    case("plot huge-shape.safetensors", 2, "data_offsets", "span 16 bytes", files=("huge-shape.safetensors",)),
    case("plot overlap.safetensors", 2, "'b'", "overlaps", files=("overlap.safetensors",)),
    case("plot ckpt.safetensors", 2, "--key", "position_embeddings", files=("ckpt.safetensors",)),
    case(
        "plot ckpt.safetensors --key embeddings.position_embedding.weight",
        2,
        "no tensor",
        "did you mean 'embeddings.position_embeddings.weight'",
        files=("ckpt.safetensors",),
    ),
    case("plot runs-code.pt", 2, "weights_only", files=("runs-code.pt",)),
    case("plot expanded.pt", 2, "storage holds only 1", files=("expanded.pt",)),
    case("plot expanded-huge.pt", 2, "would take 4.0 TiB", "memory", files=("expanded-huge.pt",)),
    case("plot -", 2, "<stdin> is empty"),
    case("plot -", 2, "<stdin>", "not a .npy", stdin=b"0.1 0.2\n0.3 0.4\n"),
    case("plot -", 2, "stdin", "terminal", tty="stdin"),
    case("plot pe.npy --cmap RdBuu -o heat.png", 2, "unknown colormap 'RdBuu'", "RdBu", files=("pe.npy",)),
    case("plot pe.npy -o heat.xyz", 2, ".xyz", files=("pe.npy",)),
    case("plot pe.npy -o nowhere/heat.png", 3, "does not exist", files=("pe.npy",)),
    case("plot pe.npy -o {ro}/heat.png", 3, "not writable", files=("pe.npy",)),
    case("plot pe.npy --cmap nope -o old.png", 2, "unknown colormap", files=("pe.npy", "old.png")),
    case("plot pe.npy --rows 5:2", 2, "rows", files=("pe.npy",)),
    case(f"plot sinusodal {SHAPE}", 2, "sinusoidal"),
    case("plot pe.npy --d 4", 2, "--d", "file", files=("pe.npy",)),
    # -- distance, compare, identify, info
    case("distance pe.npy --metric manhattan", 2, "manhattan", "cosine", files=("pe.npy",)),
    case("distance cube.npy", 2, "(2, 3, 4)", files=("cube.npy",)),
    case("distance junk.npy", 2, "not a .npy", files=("junk.npy",)),
    case("distance sinusoidal --d 4 --len 4000000 -o d.npy", 3, "would take 58.2 TiB", "free"),
    case("distance pe.npy --rows 9:3", 2, "--rows 9:3", files=("pe.npy",)),
    case("distance pe.npy -o d.xyz", 2, ".xyz", files=("pe.npy",)),
    case("compare - -", 2, "both be -"),
    case("compare pe.npy pe.npy --rtol nan", 2, "--rtol", "nan", files=("pe.npy",)),
    case("compare pe.npy small.npy", 2, "shape", files=("pe.npy", "small.npy")),
    case("compare pe.npy pe.npy --atol -1", 2, "atol", files=("pe.npy",)),
    case("compare pe.npy sinusoidal:layout=zigzag", 2, "layout", "zigzag", files=("pe.npy",)),
    case("compare pe.npy sinusoidal:base", 2, "base", files=("pe.npy",)),
    case("compare pe.npy truncated.npy", 2, "truncated", files=("pe.npy", "truncated.npy")),
    case("identify objects.npy", 2, "objects", files=("objects.npy",)),
    case("identify complex.npy", 2, "complex64", files=("complex.npy",)),
    case("info missing.safetensors", 2, "no such file"),
    case("info junk.npy", 2, "not a .npy", files=("junk.npy",)),
    case("info long-header.safetensors", 2, "truncated", files=("long-header.safetensors",)),
    case("info overlap.safetensors", 2, "overlaps", files=("overlap.safetensors",)),
    case("info ckpt.safetensors --key nope", 2, "nope", files=("ckpt.safetensors",)),
    case("info runs-code.pt", 2, "weights_only", files=("runs-code.pt",)),
    case("info -", 2, "empty"),
    case("schemes nope", 2, "unknown scheme or preset 'nope'", "valid:"),
    # -- text from files is escaped; inputs that cost more than they weigh; odd headers
    case("info escape.safetensors --key nope", 2, "pos\\x1b[2J", "word\\nembeddings", files=("escape.safetensors",)),
    case("plot escape.safetensors", 2, "--key", "pos\\x1b[2J", files=("escape.safetensors",)),
    case("plot 'a\x1b[2Jb.npy'", 2, "no such file", "a\\x1b[2Jb.npy"),
    case("plot many-keys.safetensors", 2, "'layer09'", "and 15 more", files=("many-keys.safetensors",)),
    case("info /dev/zero", 2, "/dev/zero", "not a .npy"),
    case("plot /dev/urandom", 2, "/dev/urandom"),
    case("info -", 2, "<stdin>", "not a .npy", stdin=bytes(1 << 20)),
    case("info -", 2, "stdin is closed", tty="stdin-closed"),
    case("plot -", 2, "stdin is closed", tty="stdin-closed"),
    case("timestep - --dim 8", 2, "stdin is closed", tty="stdin-closed"),
    case("timestep - --dim 8", 2, "line 3", "binary data", stdin=b"1\n2\n" + bytes(1 << 20)),
    case("info f8.safetensors", 2, "F8_E4M3", "does not support", files=("f8.safetensors",)),
    case("info metadata-number.safetensors", 2, "__metadata__", "strings", files=("metadata-number.safetensors",)),
    case("info metadata-zero.safetensors", 2, "__metadata__", files=("metadata-zero.safetensors",)),
    case("info huge-dimension.safetensors", 2, "2^64", files=("huge-dimension.safetensors",)),
    case("info bool-shape.npy", 2, "invalid shape (True, 2)", files=("bool-shape.npy",)),
    case("plot bool-shape.npy", 2, "invalid shape (True, 2)", files=("bool-shape.npy",)),
    case("info deep.npy", 2, "100 dimensions", files=("deep.npy",)),
    case("info legacy-huge.pt", 2, "storage larger than the memory", files=("legacy-huge.pt",)),
    case("info legacy-20gb.pt", 2, "legacy-20gb.pt", "declares a storage larger than", files=("legacy-20gb.pt",)),
    case("info many-keys.safetensors --key nope", 2, "layer19 and 5 more", files=("many-keys.safetensors",)),
    case("info too-many.safetensors", 2, "more than 100000 tensors", files=("too-many.safetensors",)),
    case("plot too-many.safetensors --key t7", 2, "more than 100000 tensors", files=("too-many.safetensors",)),
    case("info too-many.pt", 2, "more than 100000 tensors", files=("too-many.pt",)),
    # -- timestep
    case("timestep 1 abc --dim 4", 2, "'abc'"),
    case("timestep - --dim 4", 2, "empty"),
    case("timestep - --dim 4", 2, "'x'", "line 2", stdin=b"1 2\nx 3\n"),
    case("timestep nan --dim 4", 2, "nan"),
    case("timestep 1 inf --dim 4", 2, "inf"),
    case("timestep 1 --dim 0", 2, "--d", "positive"),
    case("timestep 1 --dim 3 --freq-shift 1", 2, "shift"),
    case("timestep 1 --dim 4 --max-period 1", 2, "max-period"),
    case("timestep --range 0:10:0 --dim 4", 2, "step"),
    case("timestep --range 5:1 --dim 4", 2, "range"),
    case("timestep 1 --dim 4 --scale nan", 2, "scale"),
    case("timestep 1 --dim 4 -o old.npy --max-period 0", 2, "max-period", files=("old.npy",)),
    case("timestep 1 --dim 4 --dtype int8", 2, "unknown dtype"),
    case("timestep 1 --dim 4 --preset nope", 2, "unknown preset"),
    case("timestep --range 0:10 1 2 --dim 4", 2, "both", "--range"),
    case("timestep --range a:b --dim 4", 2, "'a'", "--range"),
    case("timestep 1e400 --dim 4", 2, "'1e400'", "not finite"),
    case("timestep - --dim 4", 2, "line 1", "not a number", stdin=b"\x00\xff\x01"),
    case("timestep --range 0:1e12:1 --dim 4096 -o t.npy", 3, "would take"),
    case("timestep 1 --dim 4 -o -", 3, "refusing to write binary", tty="stdout"),
    case("timestep 1 --dim 4 -o nowhere/t.npy", 3, "does not exist"),
    # -- rope, sincos2d, coordconv, alibi, gaussian, fourier
    case("generate rope --d 5 --len 4 -o r.safetensors", 2, "even --d", "--d 6"),
    case("generate rope --d 8 --len 4 -o r.npy", 2, "npy holds one tensor", "--part"),
    case("generate rope --d 8 --len 4 --part nope -o r.npy", 2, "'nope'", "cos, sin"),
    case("generate rope --d 8 --len 4 --scaling warp", 2, "'warp'", "yarn"),
    case("generate rope --d 8 --len 4 --scaling linear --beta-fast 3", 2, "does not take --beta-fast"),
    case("generate sincos2d --d 6 --grid 2,2 -o s.npy", 2, "divisible by 4"),
    case("generate sincos2d --d 8 --grid 2,x -o s.npy", 2, "--grid", "'2,x'"),
    case("generate sincos2d --d 8 --grid 0,2 -o s.npy", 2, "'0,2'"),
    case("generate coordconv --grid 2,2,2 -o c.npy", 2, "two positive sides"),
    case("generate alibi --heads 0 --len 4 -o a.npy", 2, "heads", "positive"),
    case("generate alibi --heads 4 --len 4 --d 4 -o a.npy", 2, "alibi", "no --d"),
    case("generate alibi --heads 4 --len 100000 -o a.npy", 3, "would take"),
    case("generate gaussian --d 4 --len 4 --sigma nan", 2, "sigma", "nan"),
    case("generate gaussian --d 5 --len 4", 2, "even --d"),
    case("generate fourier --d 8 --len 4 --num-freqs 0", 2, "--num-freqs"),
    # -- extreme arguments: overflowing ranges, sizes and image settings
    case("timestep --range 0:1e308:1e-308 --dim 8", 2, "--range", "more than"),
    case("timestep --range 1:0:-1e-300 --dim 8", 2, "--range", "more than"),
    case("timestep --range 0:1:1e-320 --dim 8", 2, "--range", "more than"),
    case("timestep --range -1e308:1e308:1e300 --dim 8", 2, "--range", "more than"),
    case("generate --d 4611686018427387904 --len 1 -o -", 2, "widest row", "memory"),
    case(f"plot pe.npy --rows 1{'0' * 5000}:", 2, "--rows", "too many digits", files=("pe.npy",)),
    case(f"distance pe.npy --rows 0:1{'0' * 5000}", 2, "--rows", "too many digits", files=("pe.npy",)),
    case("plot pe.npy --rows ''", 2, "--rows", "A:B", files=("pe.npy",)),
    case("plot pe.npy -o p.png --dpi 1e-320", 2, "--dpi", "too low", files=("pe.npy",)),
    case("plot pe.npy -o p.png --dpi nan", 2, "--dpi", "positive", files=("pe.npy",)),
    case("plot pe.npy -o p.png --figsize 1e-300,1e-300", 2, "--figsize", "pixels", files=("pe.npy",)),
    case("plot pe.npy -o p.png --figsize 20000,1 --dpi 1", 2, "--dpi", "too low", files=("pe.npy",)),
    case("plot pe.npy -o p.png --figsize 300,1", 2, "--figsize", "30000", files=("pe.npy",)),
    case("distance sinusoidal --d 4 --len 60000 --json", 2, "as json", "memory"),
    case("generate alibi --heads 300000000 --len 4 -o -", 2, "--heads", "65536"),
    # -- numbers in ASCII digits only (int() and float() also read Arabic-Indic and fullwidth digits)
    case("generate --d \uff18 --len 4", 2, "--d", "must be an integer"),
    case("generate --d 8 --len \u0661\u0662", 2, "--len", "must be an integer"),
    case("generate --d 8 --len 4 --base \u0661\u0660", 2, "--base", "must be a number"),
    case("generate sincos2d --d 8 --grid \u0662,\u0662 -o s.npy", 2, "--grid", "two positive sides"),
    case("plot pe.npy --rows \u0661:\u0663", 2, "--rows", "ASCII digits", files=("pe.npy",)),
    case("plot pe.npy -o p.png --figsize \uff18,6", 2, "--figsize", "W,H", files=("pe.npy",)),
    case("plot pe.npy -o p.png --lines 0,\u0661", 2, "--lines", files=("pe.npy",)),
    case("timestep \u0661 2 --dim 8", 2, "argument 1", "not a number"),
    case("timestep --range 0:\u0661\u0660 --dim 8", 2, "--range", "not a number"),
    case("timestep - --dim 8", 2, "line 1", "not a number", stdin="\u0661 2".encode()),
    case("compare pe.npy sinusoidal:base=\u0661\u0660", 2, "base=", "not a number", files=("pe.npy",)),
    # -- messages blame only what was given, sizes in human units (issue 30, class 3; more in test_messages_blame)
    case("distance sinusoidal --d 4 --len 9223372036854775807 -o d.npy", 2, "2^53", "use a smaller --len)"),
    case("generate alibi --heads 65536 --len 9223372036854775807 -o b.npy", 3, "2.2e+43 bytes", "write elsewhere"),
    case("generate --d 9223372036854775807 --len 9223372036854775807 -o x.npy", 3, "3.4e+38 bytes"),
]

# ---------------------------------------------------------------------------------------------
# running a case


def _run_with_terminal(args: list[str], stream: str, cwd: str, stdin: bytes) -> Result:
    """Run pecli with stdout or stdin on a pseudo-terminal."""
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "pecli", *args],
            cwd=cwd,
            stdin=terminal if stream == "stdin" else subprocess.PIPE,
            stdout=terminal if stream == "stdout" else subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"},
        )
        os.close(terminal)
        out, err = process.communicate(input=None if stream == "stdin" else stdin, timeout=60)
        screen = b""
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
    finally:
        os.close(controller)
    return Result(process.returncode, (out or b"") + screen, err.decode())


def _run_with_closed(args: list[str], cwd: str, descriptor: int) -> Result:
    """Run pecli with file descriptor 1 (``>&-``) or 0 (``<&-``) closed."""
    completed = subprocess.run(
        [sys.executable, "-m", "pecli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: os.close(descriptor),
        env={k: v for k, v in os.environ.items() if k != "PECLI_DEBUG"},
        timeout=60,
        check=False,
    )
    return Result(completed.returncode, b"", completed.stderr.decode())


def _snapshot(directory: str) -> dict[str, bytes]:
    return {
        name: open(os.path.join(directory, name), "rb").read() if os.path.isfile(os.path.join(directory, name)) else b""
        for name in os.listdir(directory)
    }


def run_case(item: Case, directory: str, unwritable: str, *, process: bool = False) -> Result:
    """Create the case's files in ``directory``, run it there, and check that no file changed.

    In this process unless ``process`` or the case needs a terminal or a closed stream.
    """
    for name in item.files:
        with open(os.path.join(directory, name), "wb") as handle:
            handle.write(_file_bytes(name))
    before = _snapshot(directory)
    args = [arg.replace("{ro}", unwritable) for arg in item.args]
    if item.tty in ("closed", "stdin-closed"):
        result = _run_with_closed(args, directory, 1 if item.tty == "closed" else 0)
    elif item.tty:
        result = _run_with_terminal(args, item.tty, directory, item.stdin)
    elif process:
        result = run_pecli(*args, stdin=item.stdin, cwd=directory, timeout=60)
    else:
        result = run_in_process(*args, stdin=item.stdin, cwd=directory)
    after = _snapshot(directory)
    assert sorted(after) == sorted(before), f"files appeared or vanished: {sorted(set(after) ^ set(before))}"
    for name, content in before.items():
        assert after[name] == content, f"{name} changed"
    return result


def assert_one_line_error(result: Result, code: int, words: tuple[str, ...]) -> None:
    """The exit code, and one short ``pecli: error:`` line on stderr holding every word."""
    assert result.code == code, (result.code, result.stderr)
    for noise in ("Traceback", "Exception ignored", "internal error", "Warning:"):
        assert noise not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pecli: error: "), lines[0]
    assert len(lines[0]) <= 400, f"not short: {lines[0]}"
    assert not CONTROL_CHARACTERS.search(result.stderr.rstrip("\n")), f"raw control characters: {result.stderr!r}"
    for word in words:
        assert word.lower() in lines[0].lower(), (word, lines[0])


@pytest.fixture(scope="module")
def unwritable(tmp_path_factory):
    with unwritable_directory(str(tmp_path_factory.mktemp("readonly"))) as directory:
        yield directory


@pytest.mark.parametrize("item", CASES, ids=[c.id for c in CASES])
def test_bad_input(item: Case, tmp_path, request):
    needs_unwritable = any("{ro}" in arg for arg in item.args)
    unwritable = request.getfixturevalue("unwritable") if needs_unwritable else ""
    result = run_case(item, str(tmp_path), unwritable)
    assert_one_line_error(result, item.code, item.words)


def _first_of_each_command_and_code(cases: list[Case]) -> list[Case]:
    """The first case of each (command, exit code) among those that run in this process."""
    first: dict[tuple[str, int], Case] = {}
    for item in cases:
        if not item.tty:
            first.setdefault((item.command, item.code), item)
    return list(first.values())


#: cases that run in this process and, to show that it answers as a real one does, as a real process too
PROCESS_CASES = _first_of_each_command_and_code(CASES)


@pytest.mark.parametrize("item", PROCESS_CASES, ids=[c.id for c in PROCESS_CASES])
def test_bad_input_in_a_real_process_as_in_this_one(item: Case, tmp_path, request):
    needs_unwritable = any("{ro}" in arg for arg in item.args)
    unwritable = request.getfixturevalue("unwritable") if needs_unwritable else ""
    (tmp_path / "process").mkdir()
    (tmp_path / "here").mkdir()
    real = run_case(item, str(tmp_path / "process"), unwritable, process=True)
    assert_one_line_error(real, item.code, item.words)
    here = run_case(item, str(tmp_path / "here"), unwritable)
    here_stderr = here.stderr.replace(str(tmp_path / "here"), str(tmp_path / "process"))
    # the free disk space a message names moves while other processes write: the same words, any figure
    assert (real.code, _free_space_masked(real.stderr)) == (here.code, _free_space_masked(here_stderr))


def _free_space_masked(message: str) -> str:
    """``message`` with the free space it names (``only 1.2 TiB free``) replaced by a mark.

    >>> _free_space_masked("needs 2 TiB, only 1.5 GiB free on /tmp")
    'needs 2 TiB, only … free on /tmp'
    """
    return re.sub(r"[\d.]+ [KMGTPE]?i?B free", "… free", message)


def test_the_catalogue_is_large_and_covers_every_command():
    commands = {item.command for item in CASES}
    assert len(CASES) >= 40
    assert {"generate", "plot", "distance", "compare", "identify", "info", "timestep"} <= commands <= set(COMMANDS)
    assert sum(1 for item in CASES if item.command == "generate") >= 40


# ---------------------------------------------------------------------------------------------
# what a hostile or odd file does to output that succeeds


def test_text_from_a_file_reaches_the_terminal_escaped_and_json_exact(tmp_path):
    (tmp_path / "m.safetensors").write_bytes(_file_bytes("escape.safetensors"))
    shown = run_in_process("info", "m.safetensors", cwd=str(tmp_path))
    assert shown.code == 0, shown.stderr
    assert not CONTROL_CHARACTERS.search(shown.out.replace("\n", "")), shown.out
    assert "t: \\x1b]0;pwned\\x07\\x1b[2J" in shown.out and "word\\nembeddings" in shown.out
    exact = json.loads(run_in_process("info", "m.safetensors", "--json", cwd=str(tmp_path)).out)
    assert exact["metadata"]["t"] == "\x1b]0;pwned\x07\x1b[2J"
    assert {tensor["name"] for tensor in exact["tensors"]} == {"pos\x1b[2J", "word\nembeddings"}


def test_a_figure_title_from_a_file_is_escaped(tmp_path):
    header = {"__metadata__": {"scheme": "x\x1b[2J\ny", "pecli_version": "0"}}
    header["pe"] = {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
    (tmp_path / "m.safetensors").write_bytes(_safetensors(header, bytes(16)))
    result = run_in_process("plot", "m.safetensors", "--width", "40", cwd=str(tmp_path))
    assert result.code == 0, result.stderr
    assert "\x1b[2J" not in result.out + result.stderr and "x\ny" not in result.out


@pytest.mark.parametrize(
    "args",
    [("plot", "m.safetensors", "-o", "x.png"), ("distance", "m.safetensors", "-o", "x.png"),
     ("compare", "m.safetensors", "m.safetensors", "-o", "x.png")],
    ids=["plot", "distance", "compare"],
)
def test_text_from_a_file_is_escaped_in_the_figure_itself(tmp_path, monkeypatch, cli, args):
    """Every text drawn in a saved figure: a scheme and a tensor name from the file, escaped."""
    import matplotlib.figure

    header = {"__metadata__": {"scheme": "sin\x1b[31mred\nline2\x07", "pecli_version": "0"}}
    header["pe\x1b[2Jx\ny"] = {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}
    (tmp_path / "m.safetensors").write_bytes(_safetensors(header, bytes(64)))
    drawn: list[str] = []
    savefig = matplotlib.figure.Figure.savefig

    def record(figure, *arguments, **keywords):
        drawn.extend(text.get_text() for text in figure.findobj(lambda item: hasattr(item, "get_text")))
        return savefig(figure, *arguments, **keywords)

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", record)
    monkeypatch.chdir(tmp_path)
    result = cli(*args)
    assert result.code == 0 and result.stderr.startswith("wrote x.png"), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr  # no glyph or layout warnings
    assert drawn and not any(CONTROL_CHARACTERS.search(text.replace("\n", "")) for text in drawn), drawn
    assert not any("line2" in line and "sin" not in line for text in drawn for line in text.splitlines()), drawn


@pytest.mark.parametrize("how", ["fifo", "process-substitution", "dev-stdin"])
def test_info_stats_reads_a_pipe_once(tmp_path, how):
    """A pipe can be read once: the header and every tensor's statistics come from that one read."""
    generate = f"{shlex.quote(sys.executable)} -m pecli generate --d 4 --len 3 -o"
    info = f"{shlex.quote(sys.executable)} -m pecli info --stats --json"
    command = {
        "fifo": f"mkfifo p && ({generate} p --format npy -q &) && {info} p",
        "process-substitution": f"{info} <({generate} - -q)",
        "dev-stdin": f"{generate} - -q | {info} /dev/stdin",
    }[how]
    completed = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, capture_output=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    stats = json.loads(completed.stdout)["tensors"][0]["stats"]
    import pecli

    expected = pecli.encode(None, 3, 4).astype(np.float64)
    assert stats["min"] == expected.min() and stats["max"] == expected.max()
    assert stats["mean"] == pytest.approx(expected.mean(), rel=1e-12)


def test_nan_and_inf_reach_json_as_null_and_are_counted(tmp_path):
    table = np.ones((3, 4))
    table[1, 2] = np.nan
    np.save(tmp_path / "nan.npy", table)
    header = {"__metadata__": {"scheme": "sinusoidal", "base": "1e999", "pecli_version": "0"}}
    header["pe"] = {"dtype": "F32", "shape": [1, 2], "data_offsets": [0, 8]}
    (tmp_path / "inf.safetensors").write_bytes(_safetensors(header, bytes(8)))
    stats = json.loads(run_in_process("info", "nan.npy", "--stats", "--json", cwd=str(tmp_path)).out)
    assert stats["tensors"][0]["stats"] == {"min": 1.0, "max": 1.0, "mean": 1.0, "std": 0.0, "nan": 1}
    base = run_in_process("info", "inf.safetensors", "--json", cwd=str(tmp_path))
    assert base.code == 0, base.stderr
    assert json.loads(base.out)["pecli"]["params"]["base"] is None
    for args in (["distance", "nan.npy", "--json"], ["compare", "nan.npy", "nan.npy", "--json"]):
        result = run_in_process(*args, cwd=str(tmp_path))
        assert result.code in (0, 1) and "internal error" not in result.stderr, result.stderr
        json.loads(result.out)


def test_stats_of_values_near_the_float64_limit_do_not_overflow(tmp_path):
    np.save(tmp_path / "huge.npy", np.array([[1e308, -1e308], [1e308, 1e308]]))
    result = run_in_process("info", "huge.npy", "--stats", "--json", cwd=str(tmp_path))
    assert result.code == 0 and result.stderr == "", result.stderr
    stats = json.loads(result.out)["tensors"][0]["stats"]
    assert stats["mean"] == pytest.approx(0.5e308) and stats["std"] == pytest.approx(np.sqrt(0.75) * 1e308)


def test_odd_npy_dtypes_are_described(tmp_path):
    np.save(tmp_path / "records.npy", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i2")]))
    np.save(tmp_path / "strings.npy", np.array([["ab", "c"]]))
    np.save(tmp_path / "bytes.npy", np.array([[b"ab", b"c"]]))
    header = "{'descr': ('<f4', (2,)), 'fortran_order': False, 'shape': (3,), }"
    (tmp_path / "subarray.npy").write_bytes(_npy_with_header(header, 24))
    cases = [("records.npy", "|V6"), ("strings.npy", "<U2"), ("bytes.npy", "|S2"), ("subarray.npy", "|V8")]
    for name, dtype in cases:
        result = run_in_process("info", name, "--stats", "--json", cwd=str(tmp_path))
        assert result.code == 0, result.stderr
        tensor = json.loads(result.out)["tensors"][0]
        assert tensor["dtype"] == dtype and tensor["stats"] is None


def test_float8_and_quantized_pt_tensors_are_listed_and_refused_as_tables(tmp_path, cli):
    """In this process (torch is imported once), but one refusal in a fresh one too: there ml_dtypes, which
    teaches numpy the float8 names, is not yet imported."""
    torch = require_module("torch")
    state = {"f8": torch.zeros(2, 2).to(torch.float8_e4m3fn), "e5": torch.zeros(2, 2).to(torch.float8_e5m2)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated in torch
        state["q"] = torch.quantize_per_tensor(torch.zeros(2, 2), 0.1, 0, torch.qint8)
    torch.save(state, tmp_path / "odd.pt")
    listed = cli("info", "odd.pt", "--stats", "--json", cwd=str(tmp_path))
    assert listed.code == 0, listed.stderr
    dtypes = {tensor["name"]: tensor["dtype"] for tensor in json.loads(listed.out)["tensors"]}
    assert dtypes == {"f8": "float8_e4m3fn", "e5": "float8_e5m2", "q": "qint8"}
    for key, words in (("f8", "float8_e4m3fn"), ("q", "qint8")):
        assert_one_line_error(cli("plot", "odd.pt", "--key", key, cwd=str(tmp_path)), 2, (words, "not a real"))
    fresh = run_pecli("plot", "odd.pt", "--key", "e5", cwd=str(tmp_path))
    assert_one_line_error(fresh, 2, ("float8_e5m2", "not a real"))


def test_info_lists_a_bounded_number_of_tensors(tmp_path):
    count = 1500
    header = {f"t{i:04d}": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(count)}
    (tmp_path / "many.safetensors").write_bytes(_safetensors(header, b""))
    lines = run_in_process("info", "many.safetensors", cwd=str(tmp_path)).out.splitlines()
    assert lines[0].startswith(f"many.safetensors: {count} tensors, ")
    assert len(lines) == 1 + 1000 + 1 and lines[-1].startswith("  … and 500 more")


def test_numpy_warnings_are_one_line_each():
    """Overflow inside numpy (a 1e308 scale) is a one-line pecli warning, not a file, a line and source."""
    result = run_pecli("timestep", "1", "2", "--dim", "8", "--scale", "1e308")
    assert result.code == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.startswith("pecli: warning:")]
    assert warnings and "overflow encountered" in warnings[0], result.stderr
    assert "RuntimeWarning" not in result.stderr and ".py:" not in result.stderr, result.stderr


def _report() -> None:  # pragma: no cover - a tool for the closing note, run by hand
    import tempfile

    print("| # | command | exit | stderr |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory() as base, unwritable_directory(os.path.join(base, "ro")) as readonly:
        for number, item in enumerate(CASES, 1):
            directory = tempfile.mkdtemp(dir=base)
            result: Result | None = None
            try:
                result = run_case(item, directory, readonly)
                assert_one_line_error(result, item.code, item.words)
                verdict = "ok"
            except AssertionError as error:
                verdict = f"FAIL {str(error)[:80]}"
            line = result.stderr.strip().replace("|", "\\|") if result else ""
            print(f"| {number} | `pecli {item.id}` | {result.code if result else '?'} | {line} {verdict} |")


def test_a_huge_timestep_range_prints_its_first_rows_without_a_pass_over_the_table():
    """10^15 timesteps without -o: the first rows at once, min and max not computed (no hour-long pass)."""
    result = run_pecli("timestep", "--range", "0:1e15:1", "--dim", "4", "--dtype", "float64", timeout=30)
    assert result.code == 0, result.stderr
    lines = result.out.splitlines()
    assert lines[0].startswith("timestep: 1000000000000000 × 4 float64")
    assert "values: not computed for a table over 64.0 MiB" in lines[2]
    row_of_1 = next(line.split() for line in lines if line.split()[:1] == ["1"])
    # ldm's timestep_embedding at t = 1, d = 4: freqs 10000^(-k/2) = 1, 1/100; [cos | sin]
    expected = [np.cos(1), np.cos(0.01), np.sin(1), np.sin(0.01)]
    assert [float(v) for v in row_of_1[1:]] == pytest.approx(expected, abs=1e-6)
    summary = json.loads(run_pecli("timestep", "--range", "0:1e15:1", "--dim", "4", "--json", timeout=30).out)
    assert "min" not in summary and summary["timesteps"]["count"] == 10**15


@pytest.mark.parametrize(("extreme", "moderate"), [({"beta_fast": 1e308}, {"beta_fast": 1e100}),
                                                   ({"beta_slow": 1e-320}, {"beta_slow": 1e-100})])
def test_yarn_with_an_extreme_beta_is_refused_as_transformers_cannot_compute_it(extreme, moderate):
    """A beta of 1e308 (β·2π overflows: log(0)) or 1e-320 (an infinite dimension that truncate cannot round) makes
    transformers' _compute_yarn_parameters raise: refused, naming the field; 1e100 or 1e-100 still computes (session
    10 reversed session 5's choice of writing the limit table: a reference should not write a table no model loads)."""
    import pecli
    from pecli.errors import ParameterError

    scaling = {"scaling": "yarn", "factor": 4.0, "original_max_position": 4096, "part": "angle", "dtype": "float64"}
    name = next(iter(extreme))
    with pytest.raises(ParameterError, match="^" + re.escape(f"{name} = {extreme[name]!r} puts the ramp's end")):
        pecli.encode("rope", 64, 16, **scaling, **extreme)
    table = pecli.encode("rope", 64, 16, **scaling, **moderate)
    assert not np.array_equal(table, pecli.encode("rope", 64, 16, **scaling))


def test_a_title_in_dollars_is_drawn_as_written_not_as_mathtext(tmp_path):
    """500 nested braces between $…$ overflowed mathtext's parser (RecursionError); titles are plain text."""
    np.save(tmp_path / "pe.npy", _table())
    title = "$" + "{" * 500 + "x" + "}" * 500 + "$"
    result = run_in_process("plot", "pe.npy", "-o", "p.png", "--title", title, cwd=str(tmp_path))
    assert result.code == 0 and result.stderr.startswith("wrote p.png"), result.stderr
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_nan_at_the_same_places_compares_equal_and_is_counted(tmp_path):
    table = _table(8, 4).astype(np.float64)
    table[3, :] = np.nan
    table[5, 2] = np.nan
    np.save(tmp_path / "a.npy", table)
    np.save(tmp_path / "b.npy", table.copy())
    one_more = table.copy()
    one_more[0, 0] = np.nan
    np.save(tmp_path / "c.npy", one_more)
    same = run_in_process("compare", "a.npy", "b.npy", cwd=str(tmp_path))
    assert same.code == 0 and same.stderr == "", same.stderr
    nan_count = table.shape[1] + 1
    assert f"NaN at the same {nan_count} positions in both" in same.out and "same within" in same.out
    summary = json.loads(run_in_process("compare", "a.npy", "b.npy", "--json", cwd=str(tmp_path)).out)
    assert summary["agree"] is True and summary["same_nan"] == nan_count and summary["max_abs"] == 0.0
    for first, second in (("a.npy", "c.npy"), ("c.npy", "a.npy")):  # NaN in one table only is a difference
        differ = json.loads(run_in_process("compare", first, second, "--json", cwd=str(tmp_path)).out)
        # the figures cover the comparable entries; the NaN in one table only is counted and located apart
        assert differ["agree"] is False and differ["same_nan"] == nan_count and differ["max_abs"] == 0.0
        assert differ["nan_in_one"] == {"count": 1, "first": {"position": 0, "dimension": 0}}
        assert differ["diagnosis"] == []


def test_infinities_at_the_same_places_compare_equal(tmp_path):
    """inf in B made the relative allowance rtol · |B| = 0 · inf = NaN: a table differed from itself."""
    table = np.ones((6, 4))
    table[1, 2], table[2, 0] = np.inf, -np.inf
    np.save(tmp_path / "inf.npy", table)
    same = run_in_process("compare", "inf.npy", "inf.npy", cwd=str(tmp_path))
    assert same.code == 0 and "same within" in same.out, (same.out, same.stderr)
    other = table.copy()
    other[1, 2] = 1.0  # inf against a finite value is still a difference
    np.save(tmp_path / "other.npy", other)
    assert run_in_process("compare", "inf.npy", "other.npy", "--rtol", "0.5", cwd=str(tmp_path)).code == 1


def test_tables_near_the_float_limits_are_drawn(tmp_path, cli):
    """A colourbar from -1.7e308 to 1.7e308 spans inf (matplotlib: "Axis limits cannot be NaN or Inf",
    an internal error); a flat table of 2^64 - 1 got the span [x, x + 1] = [x, x] ("--vmin must be
    below --vmax", which the user never gave)."""
    np.save(tmp_path / "huge.npy", np.array([[1e308, -1e308], [1.7e308, 1e308]]))
    np.save(tmp_path / "flat.npy", np.full((6, 4), 2**64 - 1, dtype=np.uint64))
    np.save(tmp_path / "u64.npy", np.arange(24, dtype=np.uint64).reshape(6, 4) * 2**62)
    for args in (
        ("plot", "huge.npy", "-o", "h.png"),
        ("plot", "flat.npy", "-o", "f.png"),
        ("plot", "flat.npy", "--width", "30"),
        ("distance", "u64.npy", "-o", "d.png"),
        ("distance", "u64.npy"),
    ):
        result = cli(*args, cwd=str(tmp_path))  # in this process: a warning Python would print fails the check too
        assert result.code == 0, (args, result.stderr)
        lines = result.stderr.splitlines()
        assert all(line.startswith(("wrote ", "pecli: warning: ")) for line in lines), result.stderr


def test_identify_describes_a_table_near_the_float_limit_without_inf(tmp_path):
    np.save(tmp_path / "huge.npy", np.array([[1e308, -1e308], [1.7e308, 1e308], [1.7e308, 1.7e308]]))
    result = run_in_process("identify", "huge.npy", cwd=str(tmp_path))
    assert result.code == 1, result.stderr
    assert "values: mean 1.017e+308, standard deviation 9.547e+307" in result.out, result.out
    assert " inf" not in result.out, result.out


def test_a_printed_summary_counts_nan_rather_than_showing_min_inf_max_minus_inf(tmp_path):
    result = run_in_process("timestep", "1", "2", "--dim", "8", "--scale", "1e308")  # sin(inf) is NaN
    assert result.code == 0, result.stderr
    values = next(line for line in result.out.splitlines() if line.startswith("  values:"))
    assert re.fullmatch(r"  values: min -0\.99\d+, max 0\.95\d+, 2 NaN", values), values
    summary = json.loads(run_in_process("timestep", "1", "2", "--dim", "8", "--scale", "1e308", "--json").out)
    assert summary["nan"] == 2 and summary["min"] == pytest.approx(-0.99933, abs=1e-5)


def test_long_timestep_lists_are_files_pecli_reads_back(tmp_path, cli, monkeypatch):
    """Evenly spaced timesteps are recorded as their range (a short header, however many); uneven ones
    whose text would outgrow the header are refused before any file is written."""
    from pecli.io import read_table
    from pecli.schemes.spec import TableSpec

    steps = "\n".join(str(t) for t in range(0, 300_000, 3)).encode()
    result = run_in_process("timestep", "--dim", "4", "-", "-o", "t.safetensors", stdin=steps, cwd=str(tmp_path))
    assert result.code == 0, result.stderr
    written = read_table(str(tmp_path / "t.safetensors"))
    assert written.metadata["timesteps"] == "0:299998.5:3"  # 100,000 timesteps, stop half a step past the last
    spec = TableSpec.from_metadata(written.metadata)
    assert np.array_equal(spec.array(), written.array)  # the recorded range rebuilds the very table
    from safetensors.numpy import load_file  # and the reference reader takes the file as it is

    assert np.array_equal(load_file(str(tmp_path / "t.safetensors"))["t_emb"], written.array)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pecli.cli.timestep._MAX_RECORDED", 100)
    uneven = cli("timestep", "--dim", "4", *(str(t * t) for t in range(40)), "-o", "u.safetensors")
    assert uneven.code == 2 and "40 unevenly spaced timesteps" in uneven.stderr, uneven.stderr
    assert not (tmp_path / "u.safetensors").exists()


@pytest.mark.parametrize("decoding", ["utf-8:strict", "utf-8:surrogateescape"])
def test_timesteps_on_stdin_are_utf8_whatever_the_locale(decoding):
    # a strict stdin (en_US.UTF-8) raised UnicodeDecodeError on a byte that is not UTF-8: an internal error
    result = run_pecli("timestep", "-", "--dim", "4", stdin=b"1\n\xff\n", env={"PYTHONIOENCODING": decoding})
    assert_one_line_error(result, 2, ("line 2", "not a number"))
    # a character split across two reads is decoded whole ('xé', not two stray bytes)
    split = b"1\n" * 524287 + b"x\xc3\xa9\n"
    assert split.index(b"\xc3") == (1 << 20) - 1
    result = run_pecli("timestep", "-", "--dim", "4", stdin=split, env={"PYTHONIOENCODING": decoding})
    assert_one_line_error(result, 2, ("'xé'", "line 524288"))


if __name__ == "__main__":
    _report()
