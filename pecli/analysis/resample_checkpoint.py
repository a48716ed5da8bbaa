"""A resampled position table written into a copy of its checkpoint, and what the copy leaves for the user to do.

:func:`stored_table` finds the tensor a resample reads (a table file's, or a model directory's, whichever weights
transformers loads: ``model.safetensors``, its shards, or ``pytorch_model.bin``), from headers alone;
:func:`write_checkpoint_copy` writes the copy (:mod:`pecli.io.checkpoint`, :mod:`pecli.io.pt_checkpoint`); and
:func:`copy_notes` says what the copy still holds at the old size: optimizer state, other weight files, the
config's length or image size, a table the same config key sizes. Notes name Python parameters
(:class:`~pecli.errors.Message`), which the CLI spells as its flags.

>>> import os, tempfile, numpy as np
>>> from pecli.io import Tensor, write_tensors
>>> folder = tempfile.mkdtemp()
>>> source, copy = os.path.join(folder, "m.safetensors"), os.path.join(folder, "new.safetensors")
>>> write_tensors(source, {"pos": Tensor.from_array(np.zeros((4, 2), np.float32))}, fmt="safetensors")
>>> stored_table(source, "pos")
('pos', (4, 2), 'float32')
>>> done = write_checkpoint_copy(source, copy, "pos", np.ones((6, 2), np.float32), note="len=6")
>>> done.old_shape, done.shape, copy_notes(done, source, copy, {"length": 6, "keep_rows": 0})
((4, 2), (6, 2), ([], []))
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Mapping
from typing import Any

import numpy as np

from pecli.errors import Message
from pecli.io.checkpoint_files import CheckpointCopy
from pecli.models.directory import ModelDirectory
from pecli.text import literal, shown

__all__ = ["PT_SUFFIXES", "copy_notes", "open_weights", "stored_table", "write_checkpoint_copy"]

#: the names a torch.save checkpoint goes by (transformers' pytorch_model.bin among them)
PT_SUFFIXES = (".pt", ".pth", ".bin")


def open_weights(path: str) -> ModelDirectory:
    """Model directory ``path`` with the weights transformers loads from it: as
    :func:`~pecli.models.open_model_directory` finds safetensors weights, else ``pytorch_model.bin`` (or its
    shards), whose tensors' names and shapes are read from the file."""
    from pecli.io.checkpoint_files import weight_files
    from pecli.models import open_model_directory

    loaded = weight_files(path)
    if loaded is None or not loaded.torch_save:
        return open_model_directory(path)  # its errors: no config.json, no weights
    from pecli.io import read_tensors
    from pecli.models.config import read_config

    config = read_config(path)
    weights = dict(loaded.weight_map)
    if loaded.index is None:
        single = os.path.join(path, loaded.files[0])
        weights = dict.fromkeys(read_tensors(single)[0], single)
    return ModelDirectory(path, config, weights)


def stored_table(source: str, key: str | None) -> tuple[str, tuple[int, ...], str]:
    """The tensor a resample of ``source`` reads (its name, shape and stored dtype), from headers alone: ``key``
    exact or a part of one name, a file's only or own tensor, a model directory's one position table."""
    if os.path.isdir(source):
        stored = open_weights(source).stored_table(key)
        return stored.name, stored.shape, stored.dtype
    from pecli.io import chosen_tensor

    return chosen_tensor(source, key)


def write_checkpoint_copy(
    source: str, output: str, name: str, table: np.ndarray, *, note: str | None = None
) -> CheckpointCopy:
    """Copy checkpoint ``source`` (a .safetensors or torch.save file, or a model directory) to ``output`` with
    tensor ``name`` replaced by ``table``; ``note`` goes into a safetensors file's metadata as ``pecli_resample``
    (a torch.save file has none)."""
    from pecli.io import checkpoint

    if os.path.isdir(source):
        return checkpoint.replace_in_directory(source, output, name, table, note=_metadata(note))
    if source.lower().endswith(PT_SUFFIXES):
        from pecli.io.pt_checkpoint import replace_pt_tensor

        return replace_pt_tensor(source, output, name, table)
    return checkpoint.replace_tensor(source, output, name, table, note=_metadata(note))


def _metadata(note: str | None) -> dict[str, str] | None:
    return None if note is None else {"pecli_resample": note}


def _shape(shape: tuple[int, ...]) -> str:
    return " × ".join(map(str, shape))


def _listed(names: tuple[str, ...], suffix: str = "") -> str:
    listed = ", ".join(literal(shown(name)) + suffix for name in names[:3])
    return listed + (f" and {len(names) - 3} more" if len(names) > 3 else "")


def _pronouns(names: tuple[str, ...]) -> tuple[str, str]:
    """ "it" and "copied as it was" for one name, "them" and "copied as they were" for several."""
    return ("it", "copied as it was") if len(names) == 1 else ("them", "copied as they were")


def copy_notes(
    done: CheckpointCopy, source: str, output: str, settings: Mapping[str, Any]
) -> tuple[list[Message], list[Message]]:
    """The warnings and notes on the copy ``done`` of ``source`` written to ``output`` by a resample of
    ``settings`` (``grid`` and ``prefix_tokens``, or ``length`` and ``keep_rows``): what keeps the old shape."""
    warnings, notes = [], []
    old, where, key = _shape(done.old_shape), literal(output), literal(done.key)
    if done.stale:
        it, copied = _pronouns(done.stale)
        warnings.append(
            Message(
                f"{where}: {_listed(done.stale)} keep{'s' if it == 'it' else ''} {key}'s old shape {old} ({copied}): "
                f"start the optimizer afresh, or resample {it} too"
            )
        )
    if done.old_files:
        it, copied = _pronouns(done.old_files)
        loads = literal(os.path.basename(done.file))
        warnings.append(
            Message(
                f"{where}: {_listed(done.old_files)} still hold{'s' if it == 'it' else ''} {key} at its old shape "
                f"{old} ({copied}, not rewritten; transformers loads {loads}): delete {it} from the copy, or resample "
                f"{it} too"
            )
        )
    if done.unread_files:
        it, copied = _pronouns(done.unread_files)
        notes.append(
            Message(
                f"{where}: {_listed(done.unread_files)} {copied}, not rewritten (pecli cannot read {it}): delete {it} "
                f"from the copy if {'it holds' if it == 'it' else 'they hold'} {key}'s old table"
            )
        )
    if done.left_out:
        notes.append(
            Message(
                f"{where} lacks {_listed(done.left_out, os.sep)}: a model directory's subdirectories are not copied; "
                f"copy them from {literal(source)} if the model needs them (a sentence-transformers model's 1_Pooling/ "
                "is one)"
            )
        )
    if os.path.isdir(source):
        notes += _stale_config(source, output, done.key, settings, done.old_shape[-2], done.shape[-2])
    return warnings, notes


def _stale_config(
    source: str, output: str, key: str, settings: Mapping[str, Any], before: int, rows: int
) -> list[Message]:
    """A model directory's copy whose config.json still states the old table length (or a ViT's image size): a
    note naming the key and the value to set (transformers refuses a weight whose size disagrees with its
    config), the other table the same key sizes (BART's), and the rows before the first position that
    ``keep_rows`` leaves out of the interpolation (OPT's and BART's 2). ``before``: the table's rows; ``rows``:
    the copy's."""
    from pecli.models import config as model_config

    try:
        with open(os.path.join(source, "config.json"), encoding="utf-8") as handle:
            config = json.load(handle)
    except (OSError, ValueError):
        return []
    if not isinstance(config, dict):
        return []
    stated_in = f"{literal(os.path.join(output, 'config.json'))} still says"
    refused = "or transformers refuses to load the weights"
    if "grid" in settings:
        prefix, (height, width) = settings["prefix_tokens"], settings["grid"]
        stale = model_config.stale_image_size(config, before - prefix, (height, width))
        if stale is None:
            return []
        pair = "" if isinstance(stale[2], int) else " (height, width)"
        if pair and not model_config.image_size_takes_pair(config):
            pair += (
                ": a ViT-style config takes a pair; a model that reads one number (CLIP, SigLIP) cannot load a "
                "non-square grid"
            )
        return [
            Message(
                f"{stated_in} image_size = {_json(stale[1])} (copied as it was): set it to "
                f"{_json(stale[2])}{pair} for the {height * width}-patch grid ({height}x{width}), {refused}"
            )
        ]
    setting = model_config.length_setting(config, key)
    if setting is None:
        return []
    notes = []
    if settings["keep_rows"] < setting.offset:
        notes.append(
            Message(
                f"{literal(key)}'s first {setting.offset} rows precede its first position "
                f"({literal(str(config['model_type']))} offsets positions by {setting.offset}) and were resampled as "
                f"positions: {{keep_rows={setting.offset}}} keeps them as they are"
            )
        )
    needed = setting.needed(rows)
    others = _other_tables(output, setting.siblings, rows)
    also = ""
    if others:
        example = f"pecli resample {literal(shlex.quote(output))} {{key={literal(others[0])}}} {{length={rows}}} … "
        also = (
            f"resample {literal(' and '.join(others))} to {rows} rows too, which {literal(setting.key)} sizes as well"
            f" (with the same options: {example}{{in_checkpoint}} {{output=NEW}})"
        )
    if setting.stated != needed:
        fix = f"set it to {needed} for the {rows}-row table" + (f", and {also}" if also else "")
        stated = f"{stated_in} {literal(setting.key)} = {setting.stated}"
        notes.append(Message(f"{stated} (copied as it was): {fix}, {refused}"))
    elif also:
        notes.append(Message(f"{literal(output)}: {also}, {refused}"))
    return notes


def _other_tables(output: str, names: tuple[str, ...], rows: int) -> list[str]:
    """Of the tables ``names`` (sized by the same config key), those in the copy ``output`` not of ``rows`` rows."""
    from pecli.errors import PecliError

    others = []
    for name in names:
        try:
            shape = open_weights(output).stored_table(name).shape
        except PecliError:  # not in this checkpoint
            continue
        if shape[0] != rows:
            others.append(name)
    return others


def _json(value: Any) -> str:
    return str(value) if isinstance(value, int) else "[" + ", ".join(map(str, value)) + "]"
