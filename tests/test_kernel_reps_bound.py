"""``kernel --reps`` and ``--warmup`` have an upper bound, as ``--iterations`` has: on a GPU every
repetition zeroes a 256 MB flush buffer and keeps its pair of timing events until the one
synchronize at the end, so ``--reps 99999999999999999999`` would build event pairs until the
memory ran out; the report then summarizes every repetition (2.7 s of a 2-core CPU for 10000 of
each of two modes, 9.4 s for 30000). Both are refused in one line (exit 2) before any worker.
A kernel file saved under another extension (``k.txt``) is imported as the Python it is."""

from __future__ import annotations

import shutil

import pytest

from inductor_bench.core.errors import DeviceError
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.runner import kernelbench

from .test_bad_values import cli, one_line
from .test_cli_help import GROUP, _flat, _help
from .test_kernel_cli import RED, RED_SAYS, RED_WOULD_TUNE, _torch_2_13_lists_the_spaces

REPS_WHY = ("each repetition zeroes a 256 MB flush buffer and holds two timing events until the end, "
            "and the report summarizes every one (2.7 s for 10000 of each of two modes)")
WARMUP_WHY = "untimed calls before the timed ones, run inside the worker's --timeout"


@pytest.mark.parametrize("option,value,why", [
    ("--reps", "10001", REPS_WHY), ("--reps", "99999999999999999999", REPS_WHY),
    ("--warmup", "10001", WARMUP_WHY), ("--warmup", "99999999999999999999", WARMUP_WHY)])
def test_more_than_the_bound_is_refused_before_any_worker(option, value, why):
    p = cli("kernel", str(RED), option, value)
    assert one_line(p) == (f"inductor-bench: error: Invalid value for '{option}': at most 10000, not {value}: "
                           f"{why} (`inductor-bench kernel --help` shows the usage)")


def test_the_bound_itself_reaches_the_worker(monkeypatch):
    from inductor_bench.commands import kernel as kernel_cmd

    asked = {}

    def fake(kf, **kw):
        asked.update(kw)
        raise DeviceError("stop here")

    monkeypatch.setattr(kernel_cmd, "run_kernel_bench", fake)
    with pytest.raises(SystemExit) as e:
        from inductor_bench.cli import main
        main(["kernel", str(RED), "--reps", "10000", "--warmup", "10000"])
    assert e.value.code == 2
    assert (asked["reps"], asked["warmup"]) == (10_000, 10_000)


def test_the_help_says_the_bounds():
    said = _flat(_help(GROUP.commands["kernel"], "kernel"))
    assert "Timed repetitions, at most 10000." in said
    assert "Untimed calls before timing, at most 10000." in said


def test_a_kernel_file_under_another_extension_is_imported(tmp_path):
    """``k.txt`` holding a kernel file was copied under its own name for the import, which
    Python's import machinery refuses without a ``.py``: the worker said ``cannot be imported``."""
    _torch_2_13_lists_the_spaces()
    txt = tmp_path / "k.txt"
    shutil.copyfile(RED, txt)
    with pytest.raises(DeviceError) as e:
        kernelbench.run_kernel_bench(read_kernel_file(txt))
    assert str(e.value).endswith(f"{RED_SAYS}; {RED_WOULD_TUNE}")
