"""`analyze` of a chrome trace another tool wrote: its events are of categories torch.profiler does
not write, and the one refusing line says so, where it blamed a profiler cycle that stopped early."""

from __future__ import annotations

import json

from tests.test_analyze import run_cli


def _trace(tmp_path, events):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events, "displayTimeUnit": "ns"}))
    return path


def test_a_trace_of_other_categories_is_refused_naming_them(capsys, tmp_path):
    """Synthetic, in the layout of an XLA profile: five ops of category "XLA Ops", a step with no
    category, a process name (metadata). Nothing in it is torch.profiler's: exit 2, one line naming
    the categories met (the uncategorised ones and the metadata name none)."""
    ops = [{"ph": "X", "cat": "XLA Ops", "name": f"fusion.{i}", "ts": 10 * i, "dur": 5, "pid": 1, "tid": 2}
           for i in range(5)]
    others = [{"ph": "X", "name": "step", "ts": 0, "dur": 60, "pid": 1, "tid": 3},
              {"ph": "X", "cat": "v8", "name": "gc", "ts": 70, "dur": 1, "pid": 1, "tid": 3},
              {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/device:GPU:0"}}]
    code, out, err = run_cli(capsys, str(_trace(tmp_path, ops + others)))
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"inductor-bench: error: {tmp_path / 't.json'}: no GPU activity (kernel / gpu_memcpy / gpu_memset events) "
        "and no CPU ops (cpu_op events): nothing to analyse (its events are of categories torch.profiler does "
        "not write: XLA Ops, v8; not a torch.profiler trace?)"]


def test_a_profiler_cycle_with_nothing_in_it_is_still_said_to_have_stopped_early(capsys, tmp_path):
    """Synthetic, as torch.profiler exports a cycle that stopped before its active steps: the
    profiler's own span and metadata alone; and an empty traceEvents. Both keep the old reason."""
    span = {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "ts": 0, "dur": 10,
            "pid": "Spans", "tid": "PyTorch Profiler"}
    meta = {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "python"}}
    for events in ([span, meta], []):
        code, _, err = run_cli(capsys, str(_trace(tmp_path, events)))
        assert code == 2 and err.strip().endswith(
            "nothing to analyse (a profiler cycle that stopped before its active steps holds none)"), err
