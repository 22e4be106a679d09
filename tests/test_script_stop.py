"""``breakdown SCRIPT --script-seconds S``: a script that would run long (a training loop) is
stopped after S seconds; what it compiled by then is profiled, its calls counted up to then,
and the report, JSON and diff say so."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inductor_bench.core import graph_breaks
from inductor_bench.core.diff import diff_results
from inductor_bench.core.errors import UsageError
from inductor_bench.core.results import BreakdownResult, GraphResult
from inductor_bench.core.vocab import Outcome
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.script_stop import ScriptStopped, after_graph_call, stopped_after

MODELS = Path(__file__).parent.parent / "models"


def test_the_stop_comes_as_a_graph_call_returns_or_when_as_long_again_has_passed():
    """A loop that calls a compiled graph stops as a call returns once the time is up (the
    call counted); one that calls none is stopped wherever it is after twice the time."""
    calls, at_call = [], []
    with stopped_after(0.2) as stop:
        while True:
            time.sleep(0.01)
            calls.append(time.perf_counter())
            try:
                after_graph_call()  # as the wrapper of every compiled module's call() does
            except ScriptStopped:
                at_call.append(len(calls))
                raise
    assert at_call == [len(calls)] and stop["stopped_s"] >= 0.2 and calls[-1] - calls[0] >= 0.15
    with stopped_after(0.2) as eager:
        while True:
            time.sleep(0.01)
    assert eager["stopped_s"] >= 0.4
    after_graph_call()  # outside a stopped script: nothing
    with stopped_after(5.0) as done:
        pass
    assert done["stopped_s"] is None
    with stopped_after(None) as unlimited:
        time.sleep(0.01)
    assert unlimited["stopped_s"] is None


def test_a_script_that_catches_the_stop_is_stopped_again():
    """Its own ``except BaseException`` (a checkpoint on the way out) goes on looping: the stop
    (at twice the time: this loop calls no graph) comes again a second later, and the script's
    ``except Exception`` never sees it."""
    caught = []
    with stopped_after(0.1) as stop:
        while True:
            try:
                while True:
                    try:
                        time.sleep(0.01)
                    except Exception:  # a script's own handler: not for the stop
                        caught.append("exception")
            except BaseException as e:  # noqa: BLE001 - the script's, not ours
                caught.append(type(e).__name__)
                if len(caught) == 2:
                    raise
    assert caught == ["ScriptStopped", "ScriptStopped"] and stop["stopped_s"] >= 1.2


def test_no_stop_comes_after_the_body():
    with stopped_after(0.05):
        pass
    time.sleep(0.2)  # were the timer left running, ScriptStopped would be raised here
    assert not issubclass(ScriptStopped, Exception)


def test_the_option_is_checked():
    with pytest.raises(UsageError, match=r"whose model runs one step: --script-seconds stops a script"):
        WorkloadOptions(path=str(MODELS / "mlp.py"), script_seconds=3.0).validate()
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(UsageError, match="--script-seconds must be a number of seconds above 0"):
            WorkloadOptions(path=str(MODELS / "graph_break_script.py"), script_seconds=bad).validate()
    ok = WorkloadOptions(path=str(MODELS / "graph_break_script.py"), script_seconds=2.5).validate()
    assert WorkloadOptions(**json.loads(json.dumps(ok.to_dict()))).script_seconds == 2.5


def _result(stopped: float | None, calls: float = 24.0) -> BreakdownResult:
    g = GraphResult(id="0-forward", role="forward", iterations=4, wall_ms=0.5, wall_samples_ms=[0.5] * 4,
                    calls=calls)
    return BreakdownResult(model="train", model_path="/x/train.py", script=True, script_stopped_s=stopped,
                           graphs=[g])


def test_the_report_says_the_script_was_stopped_and_the_json_keeps_it():
    text = render_breakdown(_result(5.04))
    assert ("ran as a script, stopped after 5.0 s (--script-seconds): every graph it compiled by then, "
            "its calls counted up to then") in text
    assert "calls in the script (in the 5.0 s before it was stopped): 0-forward 24 x 0.500 ms = 12.000 ms" in text
    d = _result(5.04).to_dict()
    assert d["extras"]["script_stopped_s"] == 5.04 and BreakdownResult.from_dict(d).script_stopped_s == 5.04
    plain = _result(None)
    assert "script_stopped_s" not in plain.to_dict()["extras"] and "stopped" not in render_breakdown(plain)


def test_diff_does_not_judge_sums_whose_calls_count_the_time_it_ran():
    """Head: the graph 10% faster, but called 200 times (it ran to its end) against the base's
    24 (stopped): its sums weigh the calls, and are not judged; the graph's own table is."""
    base, head = _result(5.0), _result(None, 200.0)
    head.graphs[0].wall_samples_ms = [0.45] * 4
    head.graphs[0].wall_ms = 0.45
    d = diff_results(base, head)
    assert ("the script was stopped (--script-seconds): base stopped after 5.0 s, head ran to its end; its "
            "graphs' calls count how long it ran, not what it does, so the sums over its graphs (step, kernel "
            "time, categories) are not judged") in d.warnings
    (s,) = d.sections
    assert s.step.verdict == Outcome.NOT_COMPARABLE and s.calls_changed == [("0-forward", 24.0, 200.0)]
    # stopped on both sides after as many calls: the sums are judged as ever
    same = diff_results(_result(5.0), _result(6.0))
    assert same.sections[0].step.verdict != Outcome.NOT_COMPARABLE
    assert not [w for w in same.warnings if "stopped" in w]


def test_a_script_stopped_before_it_compiled_is_told_to_give_it_more_time():
    assert graph_breaks.nothing_compiled("s.py", True, [], 0, [], {}, 2.04) == (
        "s.py: nothing was compiled — the script was stopped after 2.0 s (--script-seconds), before it had "
        "compiled a graph: give it more seconds")


FOREVER = '''
import torch

model = torch.compile(torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU()))
x = torch.randn(4, 32)
while True:  # a training loop with no end
    try:
        model(x)
    except Exception:  # the script's own handler: the stop is not an Exception
        pass
'''


@pytest.mark.slow
@pytest.mark.e2e
def test_a_script_that_never_ends_is_stopped_and_its_graph_profiled(tmp_path):
    script = tmp_path / "forever.py"
    script.write_text(FOREVER)
    p = subprocess.run(
        [sys.executable, "-m", "inductor_bench.cli", "breakdown", str(script), "--device", "cpu",
         "--script-seconds", "8", "--iterations", "5", "--windows", "1", "--processes", "1",
         "--out", str(tmp_path / "run"), "--json", str(tmp_path / "r.json")],
        capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    r = json.loads((tmp_path / "r.json").read_text())
    stopped = r["extras"]["script_stopped_s"]
    assert 8.0 <= stopped < 60.0
    (g,) = r["graphs"]
    assert g["status"] == "ok" and g["calls"] >= 1  # called in the loop, counted up to the stop
    report = (tmp_path / "run" / "report.txt").read_text()
    assert f"ran as a script, stopped after {stopped:.1f} s (--script-seconds)" in report
    assert f"calls in the script (in the {stopped:.1f} s before it was stopped): {g['id']} " in report
    assert "compiling forever.py (a script, device cpu, mode default, stopped after 8 s) ..." in p.stderr


def test_the_compile_workers_wrapper_stops_a_script_whose_time_is_up_after_the_call(tmp_path):
    """The wrapper every compiled module's ``call`` gets in the compile worker: the call runs and
    is counted, then the stop comes; outside a stopped script it never does."""
    pytest.importorskip("torch")
    from inductor_bench.runner import call_inputs

    ran = []
    mod = type(sys)("compiled_module")
    mod.__file__ = str(tmp_path / "cstop.py")
    (tmp_path / "cstop.py").write_text("def call(args):\n    return args\n")
    mod.call = lambda args: ran.append(len(args)) or args
    call_inputs._wrap_call(mod, tmp_path / "record" / "cstop.pt")
    mod.call([1])
    with stopped_after(0.05) as stop:
        time.sleep(0.1)  # the time is up: the next call to return stops the script
        mod.call([1, 2])
        ran.append("after")  # never reached
    assert ran == [1, 2] and stop["stopped_s"] is not None
    assert call_inputs.call_counts()["cstop"] == 2
    mod.call([1, 2, 3])  # after the script: no stop
    assert ran == [1, 2, 3]
