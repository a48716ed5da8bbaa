"""A model id (``org/name``, optionally ``@revision``) → its snapshot in the local Hugging Face cache,
offline, never downloading.

huggingface_hub's own ``snapshot_download(local_files_only=True)`` answers when it is installed; else
the documented layout is read: ``$HF_HUB_CACHE`` (or ``$HF_HOME/hub``, or ``~/.cache/huggingface/hub``)
``/models--org--name/refs/<revision>`` names a commit, ``snapshots/<commit>/`` holds the files.

>>> is_model_id("meta-llama/Llama-3.1-8B@main"), is_model_id("./config.json"), is_model_id("a/b/c")
(True, False, False)
"""

from __future__ import annotations

import os
import re

from pecli.errors import TableFileError
from pecli.text import literal

__all__ = ["cache_directory", "is_model_id", "resolve_model_id"]

_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$")


def is_model_id(source: str) -> bool:
    """Whether ``source`` reads as ``org/name[@revision]`` and names no existing path."""
    return bool(_ID.match(source)) and not os.path.exists(source) and not source.endswith(".json")


def cache_directory() -> str:
    """The hub cache: ``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``."""
    if os.environ.get("HF_HUB_CACHE"):
        return os.environ["HF_HUB_CACHE"]
    home = os.environ.get("HF_HOME") or os.path.join(os.path.expanduser("~"), ".cache", "huggingface")
    return os.path.join(home, "hub")


def resolve_model_id(model_id: str) -> str:
    """The snapshot directory of ``model_id`` in the local cache; a TableFileError when it is not cached."""
    repo, _, revision = model_id.partition("@")
    revision = revision or "main"
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        snapshot = _from_layout(repo, revision)
    else:
        try:
            snapshot = snapshot_download(repo, revision=revision, local_files_only=True, cache_dir=cache_directory())
        except Exception:  # huggingface_hub's not-cached errors vary by version
            snapshot = None
    if snapshot is None or not os.path.isdir(snapshot):
        raise TableFileError(
            f"{literal(model_id)} is not in the local Hugging Face cache ({literal(cache_directory())})",
            hint=f"fetch it with: hf download {repo} config.json" + f" (revision {revision})" * (revision != "main"),
        )
    return snapshot


def _from_layout(repo: str, revision: str) -> str | None:
    """The snapshot by the documented layout: refs/<revision> names a commit, or the revision is one."""
    base = os.path.join(cache_directory(), "models--" + repo.replace("/", "--"))
    ref = os.path.join(base, "refs", revision)
    commit = revision
    if os.path.isfile(ref):
        with open(ref) as file:
            commit = file.read().strip()
    snapshot = os.path.join(base, "snapshots", commit)
    return snapshot if commit and "/" not in commit and os.path.isdir(snapshot) else None
