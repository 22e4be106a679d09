"""A loop profiled without a schedule that calls ``prof.step()`` each step: torch.profiler
writes no ``ProfilerStep#`` markers then (it records them only under a schedule; torch 2.13),
so `analyze` reads the whole trace as one window, and its header says why the markers are
missing rather than leave the user to think the loop never stepped. Recorded here, on the CPU."""

from __future__ import annotations

import json

from .test_analyze import run_cli


def _profile_without_schedule(path) -> None:
    import torch
    from torch.profiler import ProfilerActivity, profile

    x = torch.randn(16, 16)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            (x @ x).sum()
            prof.step()
    prof.export_chrome_trace(str(path))


def test_steps_called_without_a_schedule_read_as_one_window_and_say_why(tmp_path, capsys):
    path = tmp_path / "loop.pt.trace.json"
    _profile_without_schedule(path)
    names = {e.get("name", "") for e in json.loads(path.read_text())["traceEvents"]}
    assert "aten::mm" in names and not any(n.startswith("ProfilerStep#") for n in names)
    code, out, err = run_cli(capsys, str(path))
    assert code == 0, err
    assert ("no ProfilerStep# markers: the whole trace is one window (torch.profiler writes them at "
            "prof.step() only under a schedule: profile(schedule=torch.profiler.schedule(...)))") in out
    assert "\nwhole trace " in out
