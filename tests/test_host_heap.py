"""Every worker's host heap on transparent huge pages (``runner/worker.py``: glibc's
``glibc.malloc.hugetlb=1``), so that where a process's buffers land in physical memory no
longer sets a C++ kernel's speed for the whole process (docs/statistics.md)."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.runner.worker import HEAP_ON_HUGE_PAGES, host_heap_tunables, worker_env

THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")

# A child that mallocs 64 MiB through libc, touches every page and reports how much of its
# memory sits on huge pages (smaps_rollup's AnonHugePages, kB).
CHILD = r"""
import ctypes, re
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
n = 64 << 20
p = libc.malloc(n)
ctypes.memset(p, 1, n)
text = open("/proc/self/smaps_rollup").read()
print(re.search(r"AnonHugePages:\s+(\d+) kB", text).group(1))
"""


def test_the_heap_tunable_is_added_to_what_the_user_set():
    assert host_heap_tunables(None) == HEAP_ON_HUGE_PAGES == "glibc.malloc.hugetlb=1"
    assert host_heap_tunables("") == "glibc.malloc.hugetlb=1"
    assert host_heap_tunables("glibc.malloc.tcache_count=0") == "glibc.malloc.tcache_count=0:glibc.malloc.hugetlb=1"


def test_a_users_own_heap_setting_is_kept():
    assert host_heap_tunables("glibc.malloc.hugetlb=0") == "glibc.malloc.hugetlb=0"
    assert host_heap_tunables("glibc.malloc.hugetlb=2:glibc.pthread.rseq=0") == (
        "glibc.malloc.hugetlb=2:glibc.pthread.rseq=0")


def test_every_worker_gets_it(monkeypatch):
    monkeypatch.delenv("GLIBC_TUNABLES", raising=False)
    assert worker_env()["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=1"
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=0")
    assert worker_env()["GLIBC_TUNABLES"] == "glibc.malloc.hugetlb=0"


def _thp_mode() -> str:
    try:
        m = re.search(r"\[(\w+)\]", THP.read_text())
    except OSError:
        return "none"
    return m.group(1) if m else "none"


def _glibc_has_hugetlb() -> bool:
    name, version = platform.libc_ver()
    parts = tuple(int(x) for x in version.split(".")[:2]) if name == "glibc" and version else (0, 0)
    return parts >= (2, 35)


def _huge_kb(env: dict[str, str]) -> int:
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return int(out.strip())


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always") or not _glibc_has_hugetlb(),
                    reason="needs transparent huge pages (madvise or always) and glibc 2.35+")
def test_a_workers_heap_really_lands_on_huge_pages():
    plain = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    assert _huge_kb(worker_env()) >= 32 * 1024  # most of the 64 MiB
    if _thp_mode() == "madvise":  # without the tunable, nothing asks for them
        assert _huge_kb(plain) == 0
