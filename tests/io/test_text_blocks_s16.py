"""The CSV/TSV reader a block of lines at a time, its reprint check on arrays (issues 30, 32): the same answers
as the reader it replaced (which dtype a text reads back as, the values bit for bit, the error naming a
line), in memory within a small factor of the table."""

from __future__ import annotations

import io
import warnings
from decimal import ROUND_DOWN, ROUND_HALF_EVEN, ROUND_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from pecli.errors import TableFileError
from pecli.io import reprint, text
from pecli.io.tensor import Tensor
from tests.conftest import INTERPRETER_MB, run_peak

# -- the reader as it was before the blocks (pecli/io/text.py at b8544d2), the reference of every answer --


def _reference_digits(field: str) -> int:
    mantissa = field.lower().split("e")[0].lstrip("+-").replace(".", "")
    return len(mantissa.lstrip("0")) if mantissa.isdigit() else 0


def _reference_reprinted(rounded: np.ndarray, digits: np.ndarray, parsed: np.ndarray) -> bool:
    finite = np.isfinite(parsed)
    return all(
        float(f"{float(value):.{count}g}") == written
        for value, count, written in zip(rounded[finite], digits[finite], parsed[finite], strict=True)
    )


def _reference_read(data: bytes) -> tuple[str, bytes, tuple[int, ...]] | str:
    """The old whole-file reader's dtype, values and shape for ``data``, or the message it refused it with."""
    lines = [line for line in data.decode("latin-1").splitlines() if line.strip()]
    first = lines[0] if lines else ""
    delimiter = "\t" if "\t" in first and "," not in first else ","
    kind = "TSV" if delimiter == "\t" else "CSV"
    columns = len(first.split(delimiter)) if lines else 0
    try:
        with warnings.catch_warnings():  # no lines: numpy warns of no data, the check below refuses the file
            warnings.simplefilter("ignore", UserWarning)
            array = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, comments=None, ndmin=2)
    except ValueError:
        array = None
    if array is None or array.shape != (len(lines), columns):
        return str(text._first_bad_line("t.csv", lines, delimiter, columns, kind))
    fields = [field.strip() for line in lines for field in line.split(delimiter)]
    digits = np.array([_reference_digits(field) for field in fields]).reshape(array.shape)
    for dtype, written in (("float16", 5), ("float32", 9)):
        if digits.max(initial=0) < written - 1 or digits.max(initial=0) > written:
            continue
        with np.errstate(over="ignore"):
            rounded = array.astype(dtype)
        if np.array_equal(np.isfinite(rounded), np.isfinite(array)) and _reference_reprinted(rounded, digits, array):
            array = rounded
            break
    return array.dtype.name, array.tobytes(), array.shape


def _read(data: bytes) -> tuple[str, bytes, tuple[int, ...]] | str:
    try:
        entries, _ = text.text_entries(io.BytesIO(data), "t.csv", len(data))
    except TableFileError as error:
        return str(error)
    array = entries[""].load()
    return array.dtype.name, array.tobytes(), array.shape


@pytest.fixture(params=[64, 1000, 1 << 20], ids=lambda size: f"blocks of {size} B")
def small_blocks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks (and digit-counting passes) small enough that a table spans many of them."""
    monkeypatch.setattr(text, "_BLOCK_BYTES", request.param)
    monkeypatch.setattr(reprint, "_PASS_BYTES", max(16, request.param // 4))


def _table(rng: np.random.Generator, dtype: str) -> np.ndarray:
    """A random table of ``dtype`` values over many decades, with zeros, powers of ten, nan and inf."""
    rows, columns = int(rng.integers(1, 30)), int(rng.integers(1, 20))
    limit = {"float16": 6e4, "float32": 3e38, "float64": 1e300}[dtype]
    values = rng.normal(size=(rows, columns)) * 10.0 ** rng.integers(-30, 30, size=(rows, columns))
    values[rng.random(values.shape) < 0.05] = 0.0
    powers = rng.random(values.shape) < 0.1
    values[powers] = 10.0 ** rng.integers(-8, 8, size=int(powers.sum()))
    if rng.random() < 0.3:
        values[rng.random(values.shape) < 0.1] = rng.choice([np.nan, np.inf, -np.inf])
    with np.errstate(over="ignore"):
        return np.clip(values, -limit, limit).astype(dtype)


@pytest.mark.parametrize("seed", range(40))
def test_pecli_text_reads_as_before(seed: int, small_blocks: None) -> None:
    """A table pecli wrote (float64, float32, float16; CSV or TSV) reads as the old reader read it: float32
    and float16 back bit for bit, float64 as float64."""
    rng = np.random.default_rng(seed)
    for dtype in ("float64", "float32", "float16"):
        table = _table(rng, dtype)
        data = b"".join(text.text_pieces(Tensor.from_array(table), "," if seed % 2 else "\t"))
        read = _read(data)
        assert read == _reference_read(data)
        assert read == (dtype, table.tobytes(), table.shape)


@pytest.mark.parametrize("fmt", ["%.6f", "%.4g", "%.5g", "%.8g", "%.9g", "%.3e", "%.9e", "%g", "%.17g"])
@pytest.mark.parametrize("seed", range(6))
def test_hand_written_text_reads_as_before(fmt: str, seed: int, small_blocks: None) -> None:
    """Text other programs write, with fewer (or more) digits, spaces, CRLF and blank lines, reads as the old
    reader read it: float32 only where every value is a float32's printing, else float64."""
    rng = np.random.default_rng(seed)
    for source in ("float64", "float32", "float16"):
        buffer = io.StringIO()
        np.savetxt(buffer, _table(rng, source).astype(np.float64), fmt=fmt, delimiter=",")
        written = buffer.getvalue()
        if seed % 3 == 1:
            written = written.replace("\n", "\r\n")
        if seed % 3 == 2:
            written = " " + written.replace(",", ", ") + "\n \n"
        assert _read(written.encode()) == _reference_read(written.encode())


def test_a_float32_table_is_told_from_its_text_only() -> None:
    """The property the check exists for: pecli's float32 text reads as float32, the float64 text of the
    same values cut to 9 digits (not a float32's printing) as float64."""
    float64_values = np.random.default_rng(1).normal(size=(50, 8))
    as_float32 = b"".join(text.text_pieces(Tensor.from_array(float64_values.astype(np.float32)), ","))
    cut = io.BytesIO()
    np.savetxt(cut, float64_values, fmt="%.9g", delimiter=",")
    assert _read(as_float32)[0] == "float32"
    assert _read(cut.getvalue())[0] == _reference_read(cut.getvalue())[0] == "float64"


def test_digits_counted_for_other_values_than_parsed_read_as_float64(monkeypatch: pytest.MonkeyPatch) -> None:
    """Should the digit count ever find another number of values than numpy parsed, the text is read as what
    it parses to (float64), never a traceback and never a dtype read from misaligned counts."""
    written = b"".join(text.text_pieces(Tensor.from_array(np.array([[0.1, 2.0]], dtype=np.float32)), ","))
    assert _read(written)[0] == "float32"
    monkeypatch.setattr(text, "significant_digits", lambda data, delimiter: np.array([9]))
    assert _read(written) == ("float64", np.array([[0.100000001, 2.0]]).tobytes(), (1, 2))


@pytest.mark.parametrize(
    "data",
    [
        b"1,2\n3\n",
        b"1,2\n3,x\n",
        b"1,2\n" * 200 + b"3,4,5\n",
        b"1,2\n" * 200 + b"3,nope\n" + b"1,2\n" * 50,
        b"1\t2\n3\t4\t\n",
        b" \n\n",
        b"1,2,\n",
        b"0.5\r\n\r\n1e400\r\n-inf\n",
    ],
)
def test_refusals_and_oddities_as_before(data: bytes, small_blocks: None) -> None:
    """A bad line in a later block is named by its number in the file, as the old reader named it."""
    assert _read(data) == _reference_read(data)


@pytest.mark.parametrize("dtype, most", [("float32", 9), ("float16", 5)])
def test_reprinted_decides_each_value_as_formatting_does(dtype: str, most: int) -> None:
    """The float64 comparison agrees with formatting each value, on decimals at, beside and between the
    roundings of random float32 (float16) values: ties, powers of ten, subnormals and the largest values."""
    rng = np.random.default_rng(7)
    cases = []
    for _ in range(1500):
        if dtype == "float32":
            value = float(np.uint32(rng.integers(1, 0x7F800000)).view(np.float32))
        else:
            value = float(np.uint16(rng.integers(1, 0x7C00)).view(np.float16))
        digits = int(rng.integers(1, most + 1))
        exact = Decimal(value)
        step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
        for rounding in (ROUND_HALF_EVEN, ROUND_UP, ROUND_DOWN):
            near = exact.quantize(step, rounding=rounding)
            cases += [near, near + step, near - step]
    for power in range(-45, 39):  # a power of ten's lower neighbours print a digit finer: 0.0099999998 at 8
        for digits in range(1, most + 1):
            step = Decimal(1).scaleb(power - digits + 1)
            cases += [Decimal(1).scaleb(power).quantize(step), Decimal(1).scaleb(power) - step]
    for decimal in cases:
        written = format(decimal, "E")
        parsed = np.array([float(written)])
        digits = np.array([_reference_digits(written)])
        if not np.isfinite(parsed[0]) or parsed[0] == 0 or digits[0] > most:
            continue
        with np.errstate(over="ignore"):
            rounded = parsed.astype(dtype)
        if np.isfinite(rounded[0]):
            assert reprint.reprinted(rounded, digits, parsed) == _reference_reprinted(rounded, digits, parsed), written


def test_significant_digits_count_as_before() -> None:
    """Digit counts over every way numpy reads a number (signs, points, exponents, spaces, nan, inf) match the
    old count field by field."""
    rng = np.random.default_rng(3)
    fields = ["nan", "-inf", "+Infinity", "NaN", "1e400", "-1.23456789E-999", " 0 ", "0.0", "-0", ".5", "5."]
    while len(fields) < 3000:
        mantissa = "".join(rng.choice(list("0000123456789"), size=int(rng.integers(1, 12))))
        point = int(rng.integers(0, len(mantissa) + 1))
        field = rng.choice(["", "-", "+"]) + mantissa[:point] + rng.choice([".", ""]) + mantissa[point:]
        field += rng.choice(["", f"e{rng.integers(-40, 40)}", f"E+{rng.integers(0, 9)}"])
        fields.append(rng.choice(["", " ", "\xa0"]) + field + rng.choice(["", " ", "\x1f"]))
    readable = [field for field in fields if np.loadtxt([field], delimiter=",", comments=None).size == 1]
    assert len(readable) > 2000
    counted = reprint.significant_digits(",".join(readable).encode("latin-1"), b",")
    assert counted.tolist() == [_reference_digits(field.strip()) for field in readable]


def test_reading_a_csv_takes_memory_of_the_table_not_of_its_text(tmp_path: Path) -> None:
    """info --stats of a 1000 × 2000 float32 CSV (24 MB of text, 2 million fields) in a capped child: its peak
    stays within 4 float64 copies of the table; the whole-file reader took 300 MB (field strings)."""
    path = tmp_path / "pe.csv"
    table = np.sin(np.arange(1000)[:, None] * 0.01 * np.arange(1, 2001)[None, :]).astype(np.float32)
    path.write_bytes(b"".join(text.text_pieces(Tensor.from_array(table), ",")))
    code, stdout, stderr, peak = run_peak("info", str(path), "--stats")
    assert code == 0, stderr
    assert "[1000, 2000]  float32" in stdout
    table_mb = table.size * 8 / 2**20
    assert peak < INTERPRETER_MB + 4 * table_mb, f"peak {peak:.0f} MB for a {table_mb:.0f} MiB float64 table"
