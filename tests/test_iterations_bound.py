"""``--iterations`` has an upper bound: the profiler keeps every event of a window's iterations
in the worker's memory, so ``-n 99999999999999999999999`` grew a worker to 22 GB before its
timeout. It is refused in one line (exit 2) before any run directory is made. So is a
``--processes`` above 100: ``--windows 10**12 --processes 10**12`` built a list of 10**12
processes after the compile and died of memory (exit 70, internal error)."""

from __future__ import annotations

import pytest

from .conftest import MODELS
from .test_bad_values import cli, one_line
from .test_cli_help import GROUP, _flat, _help

WHY = ("the profiler keeps every event of a window's iterations in memory (about 1.3 GB for 10000 "
       "of a small CNN)")


@pytest.mark.parametrize("command", ["breakdown", "compare", "sweep"])
@pytest.mark.parametrize("value", ["10001", "99999999999999999999999"])
def test_more_iterations_than_the_bound_are_refused_before_any_work(tmp_path, command, value):
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "-n", value, cwd=tmp_path)
    assert one_line(p) == (f"inductor-bench: error: Invalid value for '--iterations' / '-n': at most 10000, "
                           f"not {value}: {WHY} (`inductor-bench {command} --help` shows the usage)")
    assert list(tmp_path.iterdir()) == []


def test_the_bound_itself_and_no_value_are_accepted():
    from inductor_bench.commands.options import MAX_ITERATIONS, at_most_max_iterations

    assert MAX_ITERATIONS == 10_000
    assert at_most_max_iterations(10_000) == 10_000
    assert at_most_max_iterations(None) is None


@pytest.mark.parametrize("command", ["breakdown", "compare", "sweep"])
def test_the_help_says_the_bound(command):
    cmd = GROUP.commands[command]
    assert "Profiled iterations per window, at most 10000 (default: auto" in _flat(_help(cmd, command))


@pytest.mark.parametrize("command", ["breakdown", "compare"])
def test_more_processes_than_the_bound_are_refused_before_any_work(tmp_path, command):
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "-w", "1000000000000", "--processes",
            "1000000000000", cwd=tmp_path)
    assert one_line(p) == ("inductor-bench: error: Invalid value for '--processes': at most 100, not 1000000000000: "
                           "each is a fresh worker started after the last, several seconds each "
                           f"(`inductor-bench {command} --help` shows the usage)")
    assert list(tmp_path.iterdir()) == []


def test_the_process_bound_itself_is_accepted():
    from inductor_bench.commands.options import MAX_PROCESSES, at_most_max_processes

    assert MAX_PROCESSES == 100 and at_most_max_processes(100) == 100
