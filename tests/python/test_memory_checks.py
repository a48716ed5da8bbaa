"""The memory check reads a cgroup's limit once per process and what is in use at each check (issue 32:
identify makes hundreds of checks, each had re-read four cgroup files and the whole of /proc/meminfo)."""

from __future__ import annotations

import sys

import pytest

from pecli import memory


def test_cgroup_room_reads_usage_each_check_and_the_limit_once(tmp_path, monkeypatch):
    (tmp_path / "memory.max").write_text("1000\n")
    (tmp_path / "memory.current").write_text("900\n")
    (tmp_path / "memory.stat").write_text("anon 100\nfile 800\nkernel 0\n")
    monkeypatch.setattr(memory, "_cgroup_limit", lambda: (str(tmp_path), "1000"))
    # 1000 less (900 in use less 800 of reclaimable page cache)
    assert memory._cgroup_left() == 900
    (tmp_path / "memory.current").write_text("990\n")
    (tmp_path / "memory.stat").write_text("anon 190\nfile 0\n")
    assert memory._cgroup_left() == 10  # usage is read again
    (tmp_path / "memory.stat").unlink()
    assert memory._cgroup_left() == 10  # no memory.stat: no page cache counted


def test_cgroup_limit_is_read_once_per_process(monkeypatch):
    opened: list[str] = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_open(path, *args, **kwargs)

    memory._cgroup_limit.cache_clear()
    monkeypatch.setattr("builtins.open", counting_open)
    try:
        first = memory._cgroup_limit()
        reads = len(opened)
        assert memory._cgroup_limit() == first
        assert len(opened) == reads
    finally:
        memory._cgroup_limit.cache_clear()


@pytest.mark.skipif(sys.platform != "linux", reason="/proc/meminfo is Linux's")
def test_meminfo_available_matches_the_file():
    text = open("/proc/meminfo").read()  # noqa: SIM115 - the file the check reads
    kib = int(next(line for line in text.splitlines() if line.startswith("MemAvailable:")).split()[1])
    # what is free moves between the two reads: the same order of magnitude
    assert abs(memory._meminfo_available() - kib * 1024) < max(kib * 1024 // 2, 1 << 26)
