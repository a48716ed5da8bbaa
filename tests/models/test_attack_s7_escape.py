"""Attack round seven on escaping and truthful messages (issue 30, classes 2, 3 and 6): each test failed before its fix.

Text from a file (a tensor name, a metadata value, a file name) never reaches the terminal with its
control characters intact, ``--json`` included; a model directory's shard index that is no regular
file, or names a shard that is none, is named for what it is; every reader of the index refuses the
same corrupt ones.
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from tests.conftest import assert_clean_error, run_in_process

#: C1 CSI, DEL, a bidirectional override and isolate, the line and paragraph separators
_BAD = "x\u009b2J\x7f\u202e\u2066\u2028\u2029y"
_RAW = ("\u009b", "\x7f", "\u202e", "\u2066", "\u2028", "\u2029")
_TINY_GPT2 = os.path.join(os.path.dirname(__file__), "..", "data", "models", "tiny-gpt2")
_INDEX = "model.safetensors.index.json"


def _tables(tmp_path):
    from safetensors.numpy import save_file

    table = np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32)
    save_file({"pos" + _BAD: table}, str(tmp_path / "m.safetensors"), metadata={"note": _BAD})
    npy = tmp_path / f"t{_BAD}.npy"
    np.save(npy, table)
    return str(tmp_path / "m.safetensors"), str(npy)


@pytest.mark.parametrize(
    "command",
    [
        lambda m, npy, out: ("info", m, "--json"),
        lambda m, npy, out: ("info", npy, "--json"),
        lambda m, npy, out: ("identify", m, "--json"),
        lambda m, npy, out: ("compare", npy, m, "--json"),
        lambda m, npy, out: ("generate", "sinusoidal", "--d", "4", "--len", "4", "-o", out, "--json"),
    ],
    ids=["info-safetensors", "info-npy", "identify", "compare", "generate"],
)
def test_json_output_escapes_c1_bidi_and_line_separators_from_files(tmp_path, command):
    # json.dumps(ensure_ascii=False) wrote U+009B (CSI), U+202E and U+2028 from a name raw to the terminal
    # (info, generate); identify and compare escaped their source labels already and are kept as guards
    model, npy = _tables(tmp_path)
    result = run_in_process(*command(model, npy, str(tmp_path / f"o{_BAD}.npy")))
    assert result.code in (0, 1), result.stderr
    text = result.out
    assert not any(char in text for char in _RAW), ascii(text[:300])
    json.loads(text)  # still one valid document
    assert "\\u009b" in text or "\\\\x9b" in text, text[:300]


def test_json_output_keeps_the_exact_names_when_parsed(tmp_path):
    model, _ = _tables(tmp_path)
    result = run_in_process("info", model, "--json")
    assert result.code == 0, result.stderr
    document = json.loads(result.out)
    assert [tensor["name"] for tensor in document["tensors"]] == ["pos" + _BAD]
    assert "\\u202e" in result.out and "\\u2028" in result.out


def _model(tmp_path, name="m"):
    target = tmp_path / name
    shutil.copytree(_TINY_GPT2, target)
    index = json.loads((target / _INDEX).read_text())
    holder = index["weight_map"]["wpe.weight"]
    other = next(shard for shard in set(index["weight_map"].values()) if shard != holder)
    return target, holder, other


def _edit_index(target, old, new):
    path = target / _INDEX
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda path: path.mkdir(), ("is a directory", "not a regular file")),
        (lambda path: os.mkfifo(path), ("is a FIFO", "not a regular file")),
        (lambda path: os.symlink("/dev/zero", path), ("character device", "not a regular file")),
    ],
    ids=["directory", "fifo", "dev-zero"],
)
@pytest.mark.parametrize("command", ["info", "identify"])
def test_a_shard_that_is_no_regular_file_is_named_so_not_missing(tmp_path, make, words, command):
    # it was "names shard …, which is missing (download every shard)": safe, but untrue
    target, holder, _ = _model(tmp_path)
    os.remove(target / holder)
    make(target / holder)
    result = run_in_process(command, str(target))
    assert_clean_error(result, 2, holder, *words)
    assert "missing" not in result.stderr


def test_a_shard_outside_the_model_directory_is_named_so(tmp_path):
    target, holder, _ = _model(tmp_path)
    (tmp_path / holder).write_bytes((target / holder).read_bytes())
    _edit_index(target, f'"wpe.weight": "{holder}"', f'"wpe.weight": "../{holder}"')
    result = run_in_process("info", str(target))
    assert_clean_error(result, 2, f"../{holder}", "not a file in the model directory")
    assert "missing" not in result.stderr


@pytest.mark.parametrize(
    ("make", "kind"),
    [(lambda path: os.mkfifo(path), "a FIFO"), (lambda path: os.symlink("/dev/zero", path), "a character device")],
    ids=["fifo", "dev-zero"],
)
def test_an_index_that_is_no_regular_file_is_named_so(tmp_path, make, kind):
    # it was "has no weights (model.safetensors or …index.json)" although the index is there
    target, _, _ = _model(tmp_path)
    os.remove(target / _INDEX)
    make(target / _INDEX)
    result = run_in_process("identify", str(target))
    assert_clean_error(result, 2, _INDEX, kind, "not a regular file")
    assert "has no weights" not in result.stderr


def _resample(target, out):
    return run_in_process(
        "resample", str(target), "--key", "wpe.weight", "--len", "40", "--in-checkpoint", "-o", str(out)
    )


@pytest.mark.parametrize("order", ["right-last", "right-first"])
def test_a_weight_named_twice_in_the_index_is_refused_by_every_reader(tmp_path, order):
    # json kept the last entry silently: info and identify exit 2 or 0 by its order, resample copied it (exit 0)
    target, holder, other = _model(tmp_path)
    pair = [f'"wpe.weight": "{other}"', f'"wpe.weight": "{holder}"']
    _edit_index(target, f'"wpe.weight": "{holder}"', ", ".join(pair if order == "right-last" else pair[::-1]))
    for command in ("info", "identify"):
        assert_clean_error(run_in_process(command, str(target)), 2, "names 'wpe.weight' twice")
    assert_clean_error(_resample(target, tmp_path / "out"), 2, "names 'wpe.weight' twice")
    assert not (tmp_path / "out").exists()


def test_an_index_placing_a_weight_in_the_wrong_shard_is_refused_alike_by_resample(tmp_path):
    target, holder, other = _model(tmp_path)
    _edit_index(target, f'"wpe.weight": "{holder}"', f'"wpe.weight": "{other}"')
    expected = ("places 'wpe.weight' in", "which does not hold it")
    assert_clean_error(run_in_process("identify", str(target)), 2, *expected)
    assert_clean_error(_resample(target, tmp_path / "out"), 2, *expected)
    assert not (tmp_path / "out").exists()


def test_a_checkpoint_copy_refuses_what_the_directory_reader_refuses(tmp_path):
    # the library path, not only the CLI: replace_in_directory read the index with its own, laxer checks
    from pecli.errors import TableFileError
    from pecli.io.checkpoint import replace_in_directory

    target, holder, other = _model(tmp_path)
    _edit_index(target, f'"wpe.weight": "{holder}"', f'"wpe.weight": "{holder}", "wpe.weight": "{other}"')
    with pytest.raises(TableFileError, match=r"names 'wpe\.weight' twice"):
        replace_in_directory(str(target), str(tmp_path / "out"), "wpe.weight", np.zeros((40, 16), np.float32))


def _gguf_settings(path, tensor_info: bytes = b"", tensors: int = 0, **numbers: int) -> str:
    """A llama GGUF file with 4096 context, 256 wide, 4 heads, base 10000; ``numbers`` (``rope__dimension_count``)
    set more uint32 keys; ``tensor_info`` lists ``tensors`` tensors whose data is 128 zero bytes."""
    import struct

    def text(value: str) -> bytes:
        return struct.pack("<Q", len(value.encode())) + value.encode()

    keys = {"context_length": 4096, "embedding_length": 256, "attention__head_count": 4, **numbers}
    entries = [text("general.architecture") + struct.pack("<I", 8) + text("llama")]
    entries += [text("llama." + key.replace("__", ".")) + struct.pack("<II", 4, value) for key, value in keys.items()]
    entries.append(text("llama.rope.freq_base") + struct.pack("<If", 6, 10000.0))
    body = b"GGUF" + struct.pack("<IQQ", 3, tensors, len(entries)) + b"".join(entries) + tensor_info
    path.write_bytes(body + bytes(-len(body) % 32) + bytes(128))
    return str(path)


def test_a_gguf_tensor_of_absurd_dimensions_is_sized_in_human_units(tmp_path):
    # it printed "ends at byte 115792089237316195423570985008687907853269984665640564039457584007913129639936…"
    import struct

    name = "token_embd.weight"
    info = struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I4QIQ", 4, *[2**63] * 4, 0, 0)
    path = _gguf_settings(tmp_path / "huge.gguf", info, tensors=1)
    result = run_in_process("info", path)
    assert_clean_error(result, 2, name, "9.2e+18 × 9.2e+18", "2.9e+76 bytes", "ends at byte 2.9e+76", "cut short")
    assert not any(len(digits) > 20 for digits in "".join(c if c.isdigit() else " " for c in result.stderr).split())


@pytest.mark.parametrize(
    ("numbers", "key"),
    [
        ({"rope__dimension_count": 2**31 - 2, "attention__key_length": 2**31 - 2}, "llama.rope.dimension_count"),
        ({"attention__key_length": 2**31 - 2}, "llama.attention.key_length"),
        ({"embedding_length": 2**31 - 2, "attention__head_count": 1}, "llama.embedding_length / llama.attention"),
    ],
    ids=["dimension_count", "key_length", "embedding_length"],
)
def test_a_very_wide_gguf_head_is_named_by_the_gguf_key_that_set_it(tmp_path, numbers, key):
    # it was "asks for rows of 2,147,483,646 values (head_dim 2147483646 …)": a config key the .gguf does not have
    path = _gguf_settings(tmp_path / "wide.gguf", **numbers)
    result = run_in_process("generate", "--from-config", path, "--len", "4", "-o", str(tmp_path / "t.safetensors"))
    assert_clean_error(result, 2, key, "2,147,483,646 rotated columns", "no model's head is that wide")
    assert "head_dim" not in result.stderr
    assert not (tmp_path / "t.safetensors").exists()
