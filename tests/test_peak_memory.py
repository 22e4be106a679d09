"""The host's peak memory is the steady state's: the resident high-water mark is reset after the
first (compiling) call, so what the compiler held and gave back does not count. Measured on
this process: a 256 MiB buffer touched and freed before the reset is not in the peak after it;
one touched after it is."""

from __future__ import annotations

import sys

import pytest

from inductor_bench.runner import device as dev

MIB = 1 << 20
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc only")


def _touch(n: int) -> None:
    buf = bytearray(n)  # zero-filled: every page resident
    buf[::4096] = b"\x01" * len(range(0, n, 4096))
    del buf  # a buffer this large is unmapped when freed


def test_the_host_peak_after_a_reset_leaves_out_what_came_before():
    _touch(256 * MIB)
    since_start, kind = dev.peak_memory("cpu", reset=False)
    assert kind == dev.HOST_PEAK_SINCE_START
    if not dev.reset_peak_memory("cpu"):
        pytest.skip("this kernel cannot reset the resident high-water mark")
    steady, kind = dev.peak_memory("cpu")
    assert kind == dev.HOST_PEAK_STEADY
    assert steady <= since_start - 200 * MIB  # the freed 256 MiB left the peak
    _touch(64 * MIB)
    after, _ = dev.peak_memory("cpu")
    assert after >= steady + 48 * MIB  # ... and a later one enters it


def test_without_a_reset_the_host_peak_says_it_counts_compilation():
    peak, kind = dev.peak_memory("cpu", reset=False)
    assert kind == "process peak RSS, compilation included" and peak > 0
