"""Costs out of proportion to the input (issue 30, class 4), second attack: the fixes' tests."""

from __future__ import annotations

import os
import subprocess
import sys

_CAP = 3 << 29  # 1.5 GiB of address space
_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _capped(*args: str, code: str | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """``pecli ARGS`` (or Python ``code``) in a real process under an address-space cap of 1.5 GiB."""
    prefix = f"import resource; resource.setrlimit(resource.RLIMIT_AS, ({_CAP}, {_CAP}))\n"
    body = code or f"import sys; sys.argv = ['pecli', *{list(args)!r}]\nfrom pecli.__main__ import main\nmain()\n"
    env = {**os.environ, "PYTHONPATH": _ROOT}
    env.pop("PECLI_DEBUG", None)
    return subprocess.run([sys.executable, "-c", prefix + body], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=_ROOT)  # fmt: skip


def test_available_memory_counts_the_process_address_space_limit():
    # was MemAvailable alone (tens of GiB): a size check passed, then numpy ran out of memory
    done = _capped(code="from pecli.memory import available_memory\nprint(available_memory())\n")
    assert done.returncode == 0, done.stderr
    assert 0 < int(done.stdout) < _CAP


def test_a_slice_larger_than_the_cap_is_refused_with_its_size():
    # was "pecli: error: out of memory", exit 3, after the check had passed against MemAvailable
    done = _capped("plot", "alibi", "--heads", "8", "--len", "20000", "--slice", "0")
    assert done.returncode == 2, done.stderr
    assert "the 20000 × 20000 slice of the table would take 6.0 GiB, more than the" in done.stderr
