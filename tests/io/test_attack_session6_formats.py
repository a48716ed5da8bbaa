"""Attack round on the table-file readers (issue 30, session 6): each test failed on the code before it.

Hand-made .npy, .safetensors and .pt files that pecli read wrongly, refused with a misleading reason,
or crashed on (exit 3); what the earlier round covers is in test_untrusted_files.py.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pecli.errors import TableFileError
from pecli.io import read_table, read_tensors
from tests.conftest import require_module

torch = require_module("torch")

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _pecli(*args: str, cwd: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": _ROOT}
    return subprocess.run(
        [sys.executable, "-m", "pecli", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def _npy(header: str, data: bytes, version: int = 1) -> bytes:
    text = header.encode("latin1")
    length_bytes = 2 if version == 1 else 4
    text += b" " * (-(len(text) + 8 + length_bytes + 1) % 64) + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + length + text + data


_TABLE = np.arange(32, dtype=np.float64).reshape(4, 8) / 7


# ---------------------------------------------------------------------------------------------
# names no output can encode: a JSON "\ud800" or a pickled lone surrogate was an internal error, exit 3


def test_a_safetensors_name_with_a_lone_surrogate_is_refused_in_one_line(tmp_path):
    header = b'{"\\ud800":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    (tmp_path / "s.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(4))
    with pytest.raises(TableFileError, match=r"'\\ud800' is not valid Unicode"):
        read_tensors(str(tmp_path / "s.safetensors"))
    done = _pecli("info", "s.safetensors", cwd=str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""  # before: the summary line, then the crash
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_safetensors_metadata_with_a_lone_surrogate_is_refused():
    header = b'{"__metadata__":{"k":"v\\udfff"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
    with pytest.raises(TableFileError, match="not valid Unicode"):
        read_table(io.BytesIO(struct.pack("<Q", len(header)) + header + bytes(4)))


def test_a_pt_key_with_a_lone_surrogate_is_refused():
    buffer = io.BytesIO()
    torch.save({"pe\ud800": torch.zeros(2, 2)}, buffer)
    with pytest.raises(TableFileError, match=r"'pe\\ud800' is not valid Unicode"):
        read_table(io.BytesIO(buffer.getvalue()))


# ---------------------------------------------------------------------------------------------
# .npy


def test_npy_version_3_is_read(tmp_path):
    """Format 3.0 (np.save's choice for a UTF-8 header) is 2.0's layout; it was refused as unsupported."""
    data = _npy("{'descr': '>f4', 'fortran_order': False, 'shape': (4, 8), }", _TABLE.astype(">f4").tobytes(), 3)
    np.testing.assert_array_equal(read_table(io.BytesIO(data)).array, _TABLE.astype(np.float32))


def test_npy_file_longer_than_its_header_declares_is_refused(tmp_path):
    """The header said 4 × 8 but 200 bytes followed: the first 128 were read as the table, exit 0."""
    path = tmp_path / "long.npy"
    path.write_bytes(_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4, 8), }", bytes(200)))
    with pytest.raises(TableFileError, match=r"declares shape \(4, 8\) \(128 B\) but 200 B of data follow"):
        read_table(str(path))
    done = _pecli("compare", "long.npy", "long.npy", cwd=str(tmp_path))
    assert done.returncode == 2 and "bytes appended" in done.stderr and "Traceback" not in done.stderr


def test_npy_truncation_is_said_in_human_units():
    shape = "(4294967296, 4294967296, 4294967296)"
    data = _npy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }", bytes(64))
    with pytest.raises(TableFileError) as caught:
        read_table(io.BytesIO(data))
    message = str(caught.value)
    assert "3.2e+29 bytes" in message and "316912650057057350374175801344" not in message


def test_an_npz_is_named_as_such(tmp_path):
    """A .npz (a zip of .npy files) was handed to torch, whose miniz error came back as the reason."""
    np.savez(tmp_path / "t.npz", pe=_TABLE, other=_TABLE)
    os.rename(tmp_path / "t.npz", tmp_path / "t.npy")
    with pytest.raises(TableFileError, match=r"t.npy is a .npz archive of numpy arrays \('pe', 'other'\)"):
        read_table(str(tmp_path / "t.npy"))


@pytest.mark.parametrize("descr", [">f4", ">f8", ">i8", "<f2"])
def test_npy_of_any_byte_order_reads_the_same_values(descr):
    data = _npy(
        f"{{'descr': '{descr}', 'fortran_order': True, 'shape': (4, 8), }}",
        np.arange(32.0).reshape(4, 8).astype(descr).tobytes(order="F"),
    )
    np.testing.assert_array_equal(read_table(io.BytesIO(data)).array, np.arange(32.0).reshape(4, 8))


# ---------------------------------------------------------------------------------------------
# .pt


def test_a_pickled_class_is_refused_without_advice_to_allow_it(tmp_path):
    """torch's message goes on "Please use torch.serialization.add_safe_globals([print])": the one
    thing pecli must not suggest; the reason now names the object and nothing runs."""
    marker = tmp_path / "ran"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    buffer = io.BytesIO()
    torch.save({"pe": torch.zeros(2, 2), "x": Evil()}, buffer)
    with pytest.raises(TableFileError) as caught:
        read_table(io.BytesIO(buffer.getvalue()))
    message = str(caught.value)
    assert "holds a pickled Python object (" in message and "never unpickles" in message
    assert "add_safe_globals" not in message and not marker.exists()


def test_a_missing_record_is_one_sentence(tmp_path):
    import zipfile

    buffer = io.BytesIO()
    torch.save({"pe": torch.zeros(2, 2)}, buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    with zipfile.ZipFile(tmp_path / "m.pt", "w", zipfile.ZIP_STORED) as target:
        for member in source.namelist():
            if not member.endswith("data/0"):
                target.writestr(member, source.read(member))
    with pytest.raises(TableFileError) as caught:
        read_table(str(tmp_path / "m.pt"))
    assert "a record of the archive is missing" in str(caught.value)
    assert "internal miniz error" not in str(caught.value)


_VIEW_OF_A_LARGE_STORAGE = textwrap.dedent(
    """
    import sys
    import numpy as np
    import torch
    from pecli.io import read_table

    def status(field):
        with open("/proc/self/status") as lines:
            return next(int(line.split()[1]) * 1024 for line in lines if line.startswith(field))

    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")  # the peak (VmHWM) restarts from what is resident now, not the imports' peak
    before = status("VmRSS:")
    table = read_table(sys.argv[1])
    print(status("VmHWM:") - before, float(table.array.sum()), table.array.shape)
    """
)


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="measures resident memory through /proc")
def test_a_small_view_of_a_large_storage_costs_its_own_size(tmp_path):
    """A 4 × 8 slice saved without .clone() keeps its 64 MiB storage in the file: torch.load read
    it all (peak +64 MiB for 128 bytes); mapped, only the view's pages are read."""
    storage = torch.arange(4096 * 4096, dtype=torch.float32).reshape(4096, 4096)
    torch.save({"pe": storage[:4, :8]}, tmp_path / "view.pt")
    assert os.path.getsize(tmp_path / "view.pt") > 64 << 20
    env = {**os.environ, "PYTHONPATH": _ROOT}
    done = subprocess.run(
        [sys.executable, "-c", _VIEW_OF_A_LARGE_STORAGE, str(tmp_path / "view.pt")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    grown, total, shape = done.stdout.split(maxsplit=2)
    assert float(total) == float(storage[:4, :8].double().sum()) and shape.strip() == "(4, 8)"
    assert int(grown) < 24 << 20, f"reading a 128-byte view grew the process by {int(grown) >> 20} MiB"


def test_safetensors_names_with_control_characters_are_listed_escaped(tmp_path):
    header = json.dumps(
        {
            "pe\x1b[31m": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
            "b\nnl": {"dtype": "F32", "shape": [2, 2], "data_offsets": [16, 32]},
        }
    ).encode()
    (tmp_path / "two.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + bytes(32))
    done = _pecli("identify", "two.safetensors", cwd=str(tmp_path))
    assert done.returncode == 2 and "\x1b" not in done.stderr and done.stderr.count("\n") == 1
    assert r"'pe\x1b[31m'" in done.stderr and r"'b\nnl'" in done.stderr


def test_a_mapped_pt_whose_record_is_shorter_than_its_storage_says_so(tmp_path):
    """Mapped (a file over the size read whole), torch says "Trying to resize storage that is not resizable"."""
    import zipfile

    buffer = io.BytesIO()
    torch.save({"pad": torch.ones(5_000_000), "pe": torch.zeros(300, 300)}, buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    with zipfile.ZipFile(tmp_path / "short.pt", "w", zipfile.ZIP_STORED) as target:
        for member in source.namelist():
            data = source.read(member)
            target.writestr(member, data[:1000] if member.endswith("data/1") else data)
    assert os.path.getsize(tmp_path / "short.pt") > 16 << 20
    with pytest.raises(TableFileError, match="declares a storage larger than the file holds"):
        read_table(str(tmp_path / "short.pt"), key="pe")
