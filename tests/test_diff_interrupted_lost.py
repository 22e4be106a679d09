"""A breakdown stopped (Ctrl-C) while its second profiling process was measuring its graphs
again: every graph measured, but one's figures of the first process's windows alone. Its run
keeps a line saying so (``core.processes.lost_windows``), and diff's warning says what the stop
cost (``interrupted: stopped before every process measured: 0-backward (windows of 1 of 2
processes) ...``); it had read ``head: interrupted`` alone. A run saved without that line
says nothing of it was recorded; a run stopped in its second process records the line (the
profiling a stand-in). Hand-built from the recorded CPU breakdown of models/mlp.py
--train (cpu_mlp_train_quiet: both graphs in 2 processes, windows [0, 0, 0, 1, 1]; head's
second process's windows of 0-backward dropped, synthetic)."""

from __future__ import annotations

import copy
from dataclasses import replace

import pytest

from inductor_bench.core.diff import diff_results
from inductor_bench.core.processes import lost_windows
from inductor_bench.core.rundir import load_breakdown

from .test_output_paths_first import RESULTS

LOST = ("stopped before every process measured: 0-backward (windows of 1 of 2 processes): the later "
        "processes' windows lost to the stop, its figures of those it has")


def _stopped(errors: list[str] | None = None):
    base = load_breakdown(RESULTS / "cpu_mlp_train_quiet")
    head = copy.deepcopy(base)
    head.graphs = [replace(g, window_process=[0, 0, 0], windows_ms=g.windows_ms[:3], window=0)
                   if g.id == "0-backward" else g for g in head.graphs]
    head.status = "interrupted"
    head.errors = [lost_windows(head.graphs, 2), "interrupted"] if errors is None else errors
    return base, head


def test_a_graph_measured_in_fewer_processes_than_planned_is_named():
    base, head = _stopped()
    assert [g.window_process for g in base.graphs] == [[0, 0, 0, 1, 1]] * 2
    assert lost_windows(base.graphs, 2) is None  # every graph in both processes
    assert lost_windows(head.graphs, 2) == LOST
    assert lost_windows(head.graphs, 1) is None  # one process planned: nothing lost


def test_diff_warns_what_the_stop_lost():
    base, head = _stopped()
    warnings = diff_results(base, head).warnings
    assert f"head: interrupted: {LOST}" in warnings
    assert "head: interrupted" not in warnings and f"head: {LOST}" not in warnings  # one line, not two


def test_a_stopped_run_that_recorded_nothing_lost_says_so():
    base, head = _stopped(["interrupted"])
    warnings = diff_results(base, head).warnings
    assert "head: interrupted (every graph was measured; nothing it lost is recorded)" in warnings


def test_a_run_stopped_in_its_second_process_records_the_line(monkeypatch, tmp_path):
    """The profiling (a stand-in, synthetic) answers both graphs from its first process, then
    0-forward again from the second, and is stopped there: the run's errors name 0-backward."""
    from types import SimpleNamespace

    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner import pipeline
    from inductor_bench.runner.settings import RunSettings

    recorded = load_breakdown(RESULTS / "cpu_mlp_train_quiet")
    sources = [SimpleNamespace(graph=g) for g in recorded.graphs]

    def profile(sources, run_dir, settings, *, on_start, on_done, **kw):
        for p, ids in ((0, ["0-forward", "0-backward"]), (1, ["0-forward"])):
            for s in sources:
                if s.graph.id in ids:
                    on_start(s, p)
                    on_done(s, replace(s.graph, window_process=[0, 0, 0] + [1, 1] * p))
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "profile_graphs", profile)
    result = copy.deepcopy(recorded)
    result.graphs, result.errors = [], []
    comp = SimpleNamespace(script=True, cache_dir=None, standbys=())
    opts = WorkloadOptions(path="mlp.py", device="cpu")
    with pytest.raises(KeyboardInterrupt):
        pipeline._profile_all(opts, tmp_path, comp, sources, result, RunSettings(processes=2, windows=5))
    assert result.errors == [LOST]
