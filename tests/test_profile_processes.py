"""A graph's windows shared among fresh profiling processes: how they are shared, how the
answers become one (the fastest window of all), which trace files stay, and how the report
says it. The worker is replaced by synthetic answers; no torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core import errors
from inductor_bench.core.processes import merge_responses, share_windows
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner import graphs as graphs_mod
from inductor_bench.runner.graph_sources import GraphSource
from inductor_bench.runner.settings import RunSettings


@pytest.mark.parametrize(
    "windows,processes,shares",
    [(5, 2, [3, 2]), (5, 1, [5]), (1, 2, [1]), (2, 2, [1, 1]), (7, 3, [3, 2, 2]), (4, 9, [1, 1, 1, 1])],
)
def test_windows_are_shared_the_first_processes_taking_the_remainder(windows, processes, shares):
    assert share_windows(windows, processes) == shares
    assert sum(shares) == windows


def _answer(times, window, iterations=100, **extra):
    """A synthetic worker answer: one entry per window in every per-window field."""
    return {
        "windows_ms": times,
        "window_samples_ms": [[t] * 3 for t in times],
        "window_faults": [0.0] * len(times),
        "window_load": [None] * len(times),
        "window": window,
        "iterations": iterations,
        **extra,
    }


def test_the_merged_answer_keeps_the_fastest_window_of_all_and_its_process_fields():
    slow = _answer([1.25, 1.22, 1.24], 1, replayed=False, pipelined_plain=None, load_s=0.5)
    fast = _answer([1.02, 1.01], 1, replayed=False, pipelined_plain=None, load_s=0.7)
    merged, kept = merge_responses([slow, fast])
    assert kept == 1
    # the windows joined in process order; the kept one is the second process's second (1.01)
    assert merged["windows_ms"] == [1.25, 1.22, 1.24, 1.02, 1.01]
    assert merged["window"] == 4 and merged["windows_ms"][merged["window"]] == 1.01
    assert merged["window_process"] == [0, 0, 0, 1, 1]
    assert merged["window_samples_ms"][4] == [1.01] * 3
    assert merged["load_s"] == 0.7 and merged["processes"] == 2  # the kept process's own


def test_a_tie_keeps_the_first_process_and_a_slower_second_changes_nothing():
    first = _answer([1.00, 1.10], 0, load_s=1)
    merged, kept = merge_responses([first, _answer([1.00], 0, load_s=2)])
    assert (kept, merged["window"], merged["load_s"]) == (0, 0, 1)
    merged, kept = merge_responses([first, _answer([1.30, 1.20], 1)])
    assert (kept, merged["window"], merged["window_process"]) == (0, 0, [0, 0, 1, 1])


def test_one_answer_merges_to_itself_with_its_process():
    one = _answer([1.5, 1.4], 1)
    merged, kept = merge_responses([one])
    assert kept == 0 and merged["window"] == 1 and merged["window_process"] == [0, 0]
    assert {k: merged[k] for k in one} == one


def test_no_answers_is_an_error():
    with pytest.raises(ValueError):
        merge_responses([])


# -- the runner's passes, with the worker and the analysis replaced --------------------------


def _source(tmp_path: Path, gid: str) -> GraphSource:
    gdir = tmp_path / "graphs" / gid
    gdir.mkdir(parents=True)
    (gdir / "module.py").write_text("# synthetic\n")
    g = GraphResult(id=gid, role="forward", module=f"graphs/{gid}/module.py", device="cpu")
    return GraphSource(g, gdir / "module.py", info=None, kernel_files={})  # type: ignore[arg-type]


@pytest.fixture
def passes(tmp_path, monkeypatch):
    """profile_graphs with a fake worker: each pass answers from ``plan[p][graph]`` (an
    answer, or an error), writing the trace its request names; records every request."""
    seen: list[tuple[int, str, dict]] = []
    plan: list[dict] = []
    monkeypatch.setattr(graphs_mod, "profile_request", lambda s, settings, **kw: {
        "trace": str(s.module_path.parent / "trace.json.gz"), "iterations": None, "windows": settings.windows,
    })

    def fake_batch(module, items, *, on_start, on_done, standby, **kw):
        for it in items:
            name = Path(it.request["trace"]).name  # the first process's, or p<N>-trace.json.gz
            p = int(name[1:].split("-")[0]) if name.startswith("p") else 0
            seen.append((p, it.key, it.request))
            on_start(it.key)
            answer = plan[p][it.key]
            if not isinstance(answer, errors.BenchError):
                Path(it.request["trace"]).write_text(f"pass {p}")
            on_done(it.key, answer)

    def fake_take(src, run_dir, data):
        g = GraphResult(**{**src.graph.__dict__})
        if isinstance(data, errors.BenchError):
            g.status, g.error = "failed", str(data)
            return g
        g.windows_ms, g.window, g.window_process = data["windows_ms"], data["window"], data.get("window_process", [])
        g.iterations = data["iterations"]
        return g

    monkeypatch.setattr(graphs_mod, "run_batch", fake_batch)
    monkeypatch.setattr(graphs_mod, "take_response", fake_take)
    monkeypatch.setattr(graphs_mod, "measuring_env", lambda cache: {})
    return tmp_path, plan, seen


def test_the_second_process_measures_again_and_its_faster_window_and_trace_are_kept(passes):
    tmp_path, plan, seen = passes
    a, b = _source(tmp_path, "0-forward"), _source(tmp_path, "0-backward")
    plan += [
        {"0-forward": _answer([1.3, 1.2, 1.3], 1, iterations=40), "0-backward": _answer([2.0, 2.1, 2.2], 0)},
        {"0-forward": _answer([1.0, 1.1], 0), "0-backward": _answer([2.5, 2.4], 1)},
    ]
    done: list[tuple[str, list[float]]] = []
    started: list[tuple[str, int]] = []
    out = graphs_mod.profile_graphs(
        [a, b], tmp_path, RunSettings(windows=5, processes=2), cache_dir=tmp_path,
        on_start=lambda s, p: started.append((s.graph.id, p)),
        on_done=lambda s, g: done.append((g.id, g.windows_ms)),
    )
    assert started == [("0-forward", 0), ("0-backward", 0), ("0-forward", 1), ("0-backward", 1)]
    # each process its share of 5 windows and of the time they may take; the second runs as many
    # iterations as the first did, into trace files of its own
    assert [(p, r["windows"]) for p, _, r in seen] == [(0, 3), (0, 3), (1, 2), (1, 2)]
    assert [r["windows_budget_s"] for _, _, r in seen] == [18.0, 18.0, 12.0, 12.0]
    assert seen[2][2]["iterations"] == 40
    assert Path(seen[2][2]["trace"]).name == "p1-trace.json.gz"
    fwd, bwd = out
    assert (fwd.window, fwd.window_process, fwd.windows_ms[fwd.window]) == (3, [0, 0, 0, 1, 1], 1.0)
    assert (bwd.window, bwd.windows_ms[bwd.window]) == (0, 2.0)
    # the forward's kept trace is the second process's, the backward's stays the first's; no
    # second-process file is left
    assert (a.module_path.parent / "trace.json.gz").read_text() == "pass 1"
    assert (b.module_path.parent / "trace.json.gz").read_text() == "pass 0"
    assert not list(tmp_path.glob("graphs/*/p1-*"))
    assert [gid for gid, _ in done] == ["0-forward", "0-backward", "0-forward", "0-backward"]


def test_a_graph_the_second_process_fails_keeps_the_first_ones_figures(passes):
    tmp_path, plan, seen = passes
    a, b = _source(tmp_path, "0-forward"), _source(tmp_path, "0-backward")
    plan += [
        {"0-forward": _answer([1.3, 1.2, 1.3], 1), "0-backward": errors.WorkerError("crashed")},
        {"0-forward": errors.WorkerTimeout("hung")},
    ]
    fwd, bwd = graphs_mod.profile_graphs([a, b], tmp_path, RunSettings(windows=5, processes=2), cache_dir=tmp_path)
    assert [(p, key) for p, key, _ in seen] == [(0, "0-forward"), (0, "0-backward"), (1, "0-forward")]
    assert (fwd.ok, fwd.windows_ms, fwd.window) == (True, [1.3, 1.2, 1.3], 1)
    assert bwd.status == "failed"  # never measured: not profiled again
    assert (a.module_path.parent / "trace.json.gz").read_text() == "pass 0"


def test_one_process_or_one_window_starts_no_second_worker(passes):
    tmp_path, plan, seen = passes
    a = _source(tmp_path, "0-forward")
    plan += [{"0-forward": _answer([1.3], 0)}]
    graphs_mod.profile_graphs([a], tmp_path, RunSettings(windows=1, processes=2), cache_dir=tmp_path)
    graphs_mod.profile_graphs([a], tmp_path, RunSettings(windows=3, processes=1), cache_dir=tmp_path)
    assert [(p, r["windows"]) for p, _, r in seen] == [(0, 1), (0, 3)]


# -- the report ------------------------------------------------------------------------------


def _result(windows_ms, window, processes):
    k = KernelStat(name="aten::mm", category="extern_gemm", calls=1, ms=1.0, samples_ms=[1.0] * 10)
    g = GraphResult(
        id="0-backward", role="backward", iterations=10, wall_ms=1.1, wall_samples_ms=[1.1] * 10,
        busy_ms=1.0, kernel_ms=1.0, categories={"extern_gemm": 1.0}, kernels=[k],
        windows_ms=windows_ms, window_faults=[None] * len(windows_ms), window=window,
        window_process=processes,
    )
    return BreakdownResult(model="m", graphs=[g])


def test_the_report_says_which_process_each_window_ran_in():
    text = render_breakdown(_result([1.25, 1.22, 1.24, 1.00, 1.01], 3, [0, 0, 0, 1, 1]))
    assert "profiled in 5 profiler sessions in 2 fresh processes, one after the other, and the fastest" in text
    # 1.25 / 1.00, 1.22 / 1.00, ... relative to the kept window, grouped by process
    assert ("(0-backward 1.100 ms in process 2, on the worker's clock 1.000 ms and the others +25%, +22%, "
            "+24% in process 1, +1% in process 2)") in text


def test_the_processes_round_trip_through_json_and_are_left_out_when_one():
    back = BreakdownResult.from_dict(_result([1.2, 1.0], 1, [0, 1]).to_dict())
    assert back.graphs[0].window_process == [0, 1]
    assert "window_process" not in _result([1.2, 1.0], 1, []).to_dict()["graphs"][0]
