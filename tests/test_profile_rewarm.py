"""The profiling worker starts every window warm: after its waits (the machine's speed, the load
reading's idle), the graph is called untimed before the profiler session starts. Runs the real
worker (``runner/profile.py``) on a synthetic module that logs each call and whether a profiler
session was on."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from inductor_bench.core.pipelined import PLAIN_ROUNDS  # noqa: E402
from inductor_bench.runner import profile  # noqa: E402

SYNTHETIC_MODULE = '''"""Synthetic: a compiled module's harness and call, logging each call."""
import torch

LOG = []


def get_args():
    return [torch.ones(4)]


def call(args):
    (x,) = args
    args.clear()
    LOG.append("profiled" if torch._C._autograd._profiler_enabled() else "untimed")
    return (x * 2,)
'''


def _run(tmp_path, monkeypatch, iterations: int, windows: int, **request) -> tuple[dict, list[int], list[str]]:
    """(the worker's response, the number of calls made before each speed wait, the calls' log)."""
    module = tmp_path / "module.py"
    module.write_text(SYNTHETIC_MODULE)
    loaded = []
    real_load = profile.load_module
    monkeypatch.setattr(profile, "load_module", lambda path: loaded.append(real_load(path)) or loaded[-1])
    waits = []
    real_wait = profile._SPEED.before_window
    monkeypatch.setattr(profile._SPEED, "before_window", lambda: (waits.append(len(loaded[0].LOG)), real_wait())[1])
    response = profile.handle({"module": str(module), "device": "cpu", "iterations": iterations,
                               "windows": windows, "trace": str(tmp_path / "trace.json.gz"), **request})
    return response, waits, loaded[0].LOG


def _warm(response: dict) -> int:
    """The untimed calls the worker makes for the module's timed calls: REWARM_CALLS for this
    module's microseconds (a stall in its per-call estimate on a busy machine would give fewer)."""
    return profile.rewarm_calls(response["warmup_per_call_ms"] / 1e3)


def test_each_window_starts_after_its_wait_with_untimed_calls(tmp_path, monkeypatch):
    iterations, windows = 7, 4
    response, waits, log = _run(tmp_path, monkeypatch, iterations, windows)
    ran = len(response["windows_ms"])
    assert ran >= 1 and len(waits) == ran
    first = waits[0]  # the warm-up and the per-call estimate come before the first window
    assert log[:first] == ["untimed"] * first
    window = ["untimed"] * _warm(response) + ["profiled"] * iterations
    assert log[first:] == window * ran
    # each wait comes right before its window's untimed calls
    assert waits == [first + i * len(window) for i in range(ran)]


def test_the_back_to_back_sessions_after_the_windows_start_warm_too(tmp_path, monkeypatch):
    """The pipelined session (profiled) and the same launches unprofiled that follow the windows
    on an accelerator: each after the untimed calls, as a window."""
    iterations = 6
    response, waits, log = _run(tmp_path, monkeypatch, iterations, 2,
                                pipelined_trace=str(tmp_path / "pipelined.json.gz"))
    window = ["untimed"] * _warm(response) + ["profiled"] * iterations
    after = log[waits[0] + len(window) * len(response["windows_ms"]):]
    rounds = PLAIN_ROUNDS  # the unprofiled launches: rounds back to back
    assert after == window + ["untimed"] * (_warm(response) + rounds * iterations)
    assert (tmp_path / "pipelined.json.gz").exists() and response["pipelined_plain"] is not None


def test_untimed_calls_are_not_in_the_windows_samples(tmp_path, monkeypatch):
    response, _, _ = _run(tmp_path, monkeypatch, 6, 2)
    assert [len(s) for s in response["window_samples_ms"]] == [6] * len(response["windows_ms"])
    assert response["iterations"] == 6


@pytest.mark.parametrize(("per_call_s", "calls"), [
    (0.0013, 5),   # models/mlp.py's forward here: all five
    (0.005, 4),    # 20 ms of calls
    (0.010, 2),
    (0.5, 1),      # a slow graph: one call, not 2.5 s of them
    (0.0, 5),      # not timed: all five
])
def test_a_slow_graph_is_warmed_by_fewer_calls(per_call_s, calls):
    assert profile.rewarm_calls(per_call_s) == calls
