"""``compare --repeat`` has an upper bound, as ``--iterations`` and ``--processes`` have: each
column's calls run twice (its compile worker, then the timing worker), so ``--repeat 10**12``
ran until ``--timeout`` killed its compile worker. It is refused in one line (exit 2) before
any run directory is made, by ``sweep`` (which passes it to each compare) too."""

from __future__ import annotations

import pytest

from .conftest import MODELS
from .test_bad_values import cli, one_line
from .test_cli_help import GROUP, _flat, _help

WHY = ("each column's calls run twice and are kept twice (at 10000, a 1 ms step's compile worker ran "
       "to the default --timeout beside other work)")


@pytest.mark.parametrize("command", ["compare", "sweep"])
@pytest.mark.parametrize("value", ["10001", "99999999999999999999999"])
def test_a_repeat_above_the_bound_is_refused_before_any_work(tmp_path, command, value):
    out = ["--out", str(tmp_path / "sweep")] if command == "sweep" else []
    p = cli(command, str(MODELS / "mlp.py"), "--device", "cpu", "--repeat", value, *out, cwd=tmp_path)
    assert one_line(p) == (f"inductor-bench: error: Invalid value for '--repeat' / '-r': at most 10000, "
                           f"not {value}: {WHY} (`inductor-bench {command} --help` shows the usage)")
    assert list(tmp_path.iterdir()) == []


def test_the_bound_itself_and_no_value_are_accepted():
    from inductor_bench.commands.compare import MAX_REPEAT, Repeat

    check = Repeat.__metadata__[0].callback
    assert MAX_REPEAT == 10_000 and check(10_000) == 10_000 and check(None) is None


@pytest.mark.parametrize("command", ["compare", "sweep"])
def test_the_help_says_the_bound(command):
    assert "Time exactly this many steady-state calls per mode, at most 10000 (default:" in _flat(
        _help(GROUP.commands[command], command))

