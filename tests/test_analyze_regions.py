"""`analyze`'s named ranges (``record_function``: a loop's "forward", torch's
"Optimizer.step#SGD.step"): per step, their calls, the union of their wall time and the work
launched while they were open. Checked on a hand-built trace worked out by hand (synthetic), on
a real V100 DDP training trace and a recorded CPU loop against an independent reading of the
raw JSON, and on a real profiled loop end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.analyze_ranks import analyze_ranks
from inductor_bench.core.analyze_result import steady_indices
from inductor_bench.core.steady import steady
from inductor_bench.core.typical_step import steady_regions
from inductor_bench.render.analyze import render_analyze
from inductor_bench.render.ranks_typical import typical_regions

from .conftest import FIXTURES
from .test_analyze import merged_length, raw_events, run_cli

STEP = re.compile(r"ProfilerStep#\d+")
DDP_TRACE = FIXTURES / "hta" / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
CPU_LOOP = FIXTURES / "cpu_loop" / "torch-2.13.0.json.gz"
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}


def _x(cat: str, name: str, ts: float, dur: float, tid: int = 1, pid: int = 9, **args) -> dict:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid, "args": args}


def _kernel(name: str, ts: float, dur: float, corr: int) -> dict:
    return _x("kernel", name, ts, dur, tid=7, pid=0, correlation=corr)


def _launch(ts: float, corr: int, tid: int = 1) -> dict:
    return _x("cuda_runtime", "cudaLaunchKernel", ts, 1, tid=tid, correlation=corr)


def synthetic_trace(tmp_path: Path) -> Path:
    """Synthetic: two steps; "forward" twice, overlapping, in step 1; "backward" in both,
    its kernels launched from another thread (autograd's); a kernel with no launch record
    (issued at its own start); a compiled graph's call record and a range outside every step,
    neither of them a range of the report."""
    events = [
        _x("user_annotation", "ProfilerStep#1", 0, 100),
        _x("user_annotation", "forward", 10, 30),  # 10-40
        _x("user_annotation", "forward", 20, 30),  # 20-50: the union is 10-50, 40 µs
        _x("user_annotation", "backward", 50, 40),  # 50-90
        _launch(15, 1), _kernel("k1", 60, 5, 1),  # in forward
        _kernel("k4", 30, 2, 99),  # no launch: issued at 30, in forward
        _launch(60, 2, tid=2), _kernel("k2", 70, 8, 2),  # in backward, from autograd's thread
        _launch(95, 3), _kernel("k3", 120, 4, 3),  # in step 1, in no range
        _x("user_annotation", "ProfilerStep#2", 200, 100),
        _x("user_annotation", "## Call CompiledFxGraph abc ##", 205, 5),
        _x("user_annotation", "backward", 210, 20),
        _launch(215, 4, tid=2), _kernel("k5", 230, 10, 4),
        _x("user_annotation", "forward", 400, 10),  # after every step
        _launch(405, 5), _kernel("k6", 410, 3, 5),
    ]
    path = tmp_path / "synthetic.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return path


def test_ranges_worked_out_by_hand(tmp_path):
    r = analyze_file(synthetic_trace(tmp_path))
    got = {g.name: (g.calls, g.wall_ms, g.work_ms) for g in r.regions}
    assert got.keys() == {"forward", "backward"}
    assert got["forward"][0] == [2, 0]
    assert got["forward"][1] == pytest.approx([0.040, 0.0])
    assert got["forward"][2] == pytest.approx([0.007, 0.0])  # k1 5 µs + k4 2 µs
    assert got["backward"][0] == [1, 1]
    assert got["backward"][1] == pytest.approx([0.040, 0.020])
    assert got["backward"][2] == pytest.approx([0.008, 0.010])  # k2, k5
    assert list(steady_indices(r)) == [0, 1]
    typical = [(g.name, g.calls, g.wall_ms, g.work_ms) for g in steady_regions(r)]
    assert typical == [("backward", 1.0, pytest.approx(0.030), pytest.approx(0.009)),
                       ("forward", 1.0, pytest.approx(0.020), pytest.approx(0.0035))]


def test_the_report_lists_them_longest_first(tmp_path):
    out = render_analyze(analyze_file(synthetic_trace(tmp_path)))
    section = out.split("Named ranges: record_function (steady mean step)")[1]
    rows = [line.split() for line in section.splitlines() if line.startswith(("backward", "forward"))]
    # % step: of the steady wall, (124 + 100) / 2 µs (step 1 runs to k3's end): 30 / 112, 20 / 112
    assert rows == [["backward", "1", "0.030", "26.8%", "0.0090"], ["forward", "1", "0.020", "17.9%", "0.0035"]]
    assert "launched ms" in section and "## Call" not in section
    markdown = render_analyze(analyze_file(synthetic_trace(tmp_path)), "markdown")
    assert "| `backward` |" in markdown.replace("  ", "")


def test_a_trace_without_ranges_has_no_section(tmp_path):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"traceEvents": [
        _x("user_annotation", "ProfilerStep#1", 0, 100), _launch(10, 1), _kernel("k", 20, 5, 1)]}))
    r = analyze_file(path)
    assert r.regions == [] and "Named ranges" not in render_analyze(r)


def _independent(path: Path, host: bool) -> dict[str, list[tuple[int, float, float]]]:
    """name -> per step (calls, wall µs, work µs), from the raw events: a range belongs to
    the step it starts in; its work is the device events (host: top-level cpu_ops) of that
    step issued (launched; host: started) inside the union of its calls."""
    evs = [e for e in raw_events(path) if e.get("ph") == "X"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in evs if STEP.fullmatch(e["name"]))
    launch = {e["args"]["correlation"]: e["ts"] for e in evs if e["cat"] in ("cuda_runtime", "cuda_driver")}
    if host:
        ops = [e for e in evs if e["cat"] == "cpu_op"]
        work = [(e["ts"], e["dur"]) for e in ops if not any(  # top level on its thread
            o is not e and o["tid"] == e["tid"] and o["ts"] <= e["ts"] and e["ts"] + e["dur"] <= o["ts"] + o["dur"]
            and (o["dur"], -o["ts"]) > (e["dur"], -e["ts"]) for o in ops)]
    else:
        work = [(launch.get(e["args"].get("correlation"), e["ts"]), e["dur"]) for e in evs if e["cat"] in DEVICE_CATS]

    def step_of(t: float) -> int | None:
        return next((k for k, (s, f) in enumerate(steps) if s <= t <= f), None)

    out: dict[str, list[tuple[int, float, float]]] = {}
    for name in {e["name"] for e in evs if e["cat"] == "user_annotation" and not STEP.fullmatch(e["name"])}:
        rows = []
        for k in range(len(steps)):
            calls = [(e["ts"], e["ts"] + e["dur"]) for e in evs
                     if e["cat"] == "user_annotation" and e["name"] == name and step_of(e["ts"]) == k]
            inside = sum(d for t, d in work if step_of(t) is not None and any(s <= t <= f for s, f in calls))
            rows.append((len(calls), merged_length(calls), inside))
        out[name] = rows
    return out


@pytest.mark.parametrize("path,host", [(DDP_TRACE, False), (CPU_LOOP, True)], ids=["v100-ddp", "cpu-loop"])
def test_recorded_traces_against_an_independent_reading(path, host):
    r = analyze_file(path)
    expected = _independent(path, host)
    assert {g.name for g in r.regions} == set(expected)
    for g in r.regions:
        calls = [c for c, _, _ in expected[g.name]]
        assert g.calls == calls, g.name
        assert g.wall_ms == pytest.approx([w / 1000 for _, w, _ in expected[g.name]], rel=1e-9), g.name
        assert g.work_ms == pytest.approx([x / 1000 for _, _, x in expected[g.name]], rel=1e-9, abs=1e-12), g.name
    if not host:  # the loop's own phases: backward's kernels come from autograd's thread
        backward = next(g for g in r.regions if g.name == "## backward ##")
        assert min(backward.work_ms) > 60


@pytest.mark.filterwarnings("ignore:Warning. Profiler clears events")
def test_a_real_profiled_loop(capsys, tmp_path):
    """torch.profiler on a real CPU loop with its own ranges: each range once per step, "data"
    holding the one op it ran."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(16, 64)
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=3)) as prof:
        for _ in range(5):
            with record_function("data"):
                batch = x * 2.0
            with record_function("train_step"):
                model(batch).sum().backward()
                opt.step()
            prof.step()
    path = tmp_path / "loop.json"
    prof.export_chrome_trace(str(path))
    code, out, err = run_cli(capsys, str(path), "--format", "json")
    assert code == 0, err
    regions = {g["name"]: g for g in json.loads(out)["regions"]}
    assert {"data", "train_step", "Optimizer.step#SGD.step"} <= regions.keys()
    assert regions["data"]["calls"] == regions["train_step"]["calls"] == [1, 1, 1]
    muls = [e["dur"] / 1000 for e in raw_events(path) if e["name"] == "aten::mul"]
    assert regions["data"]["work_ms"] == pytest.approx(muls, rel=1e-9)
    code, out, err = run_cli(capsys, str(path))
    assert code == 0 and "Named ranges: record_function (steady mean step)" in out


def test_ranks_each_range_on_its_fastest_and_slowest_rank(capsys):
    """Two real gloo DDP ranks on the CPU (tests/fixtures/ranks/cpu_gloo): each range's wall
    in each rank's typical step, read independently from the raw JSON (the union of its calls
    that start in each step, their mean over the rank's steady steps), and the report's row of
    DistributedDataParallel.forward from those figures."""
    paths = sorted((FIXTURES / "ranks" / "cpu_gloo").glob("rank-*.json.gz"))
    result = analyze_ranks(paths, workers=1)
    walls: dict[str, dict[int, float]] = {}
    for rank, path in zip(result.ranks, paths, strict=True):
        evs = raw_events(path)
        steps = {e["name"]: (e["ts"], e["ts"] + e["dur"]) for e in evs if STEP.fullmatch(e["name"])}
        kept = [rank.steps[i].step for i in steady([s.wall_ms for s in rank.steps]).kept]
        names = {e["name"] for e in evs if e.get("cat") == "user_annotation" and not STEP.fullmatch(e["name"])}
        for name in names:
            per_step = [merged_length([(e["ts"], e["ts"] + e["dur"]) for e in evs if e["name"] == name
                                       and e.get("cat") == "user_annotation"
                                       and steps[s][0] <= e["ts"] <= steps[s][1]]) / 1000 for s in kept]
            walls.setdefault(name, {})[rank.rank] = sum(per_step) / len(per_step)
        assert typical_regions(rank).keys() == names
        for name, (_, wall) in typical_regions(rank).items():
            assert wall == pytest.approx(walls[name][rank.rank], abs=1e-6), name  # µs near 1.8e15
    ddp = walls["DistributedDataParallel.forward"]
    fast, slow = min(ddp, key=ddp.get), max(ddp, key=ddp.get)
    code, out, err = run_cli(capsys, *map(str, paths))
    assert code == 0, err
    section = out.split("Named ranges per rank: record_function (steady mean step, wall ms)")[1]
    row = next(line for line in section.splitlines() if line.startswith("DistributedDataParallel.forward"))
    assert row.split()[1:] == ["2", "rank", f"{fast}:", f"{ddp[fast]:.3f}", f"{ddp[fast]:.3f}",
                               "rank", f"{slow}:", f"{ddp[slow]:.3f}", f"+{round(ddp[slow], 3) - round(ddp[fast], 3):.3f}"]
    # the spread: the difference of the two walls as printed, to their 3 decimals


def test_a_range_only_in_left_out_steps_is_named_not_dropped(tmp_path):
    """Synthetic: six 100 µs steps with an op each, the fourth 500 µs long with an `eval` range
    in it: the slow step is left out of the steady mean, and the range with it; the section
    says so rather than vanish."""
    evs, t = [], 0
    for k in range(1, 7):
        wall = 500 if k == 4 else 100
        evs += [{"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{k}", "ts": t, "dur": wall,
                 "pid": 1, "tid": 1},
                {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": t + 10, "dur": 50, "pid": 1, "tid": 1}]
        if k == 4:
            evs.append({"ph": "X", "cat": "user_annotation", "name": "eval", "ts": t + 70, "dur": 400,
                        "pid": 1, "tid": 1})
        t += wall
    f = tmp_path / "eval.json"
    f.write_text(json.dumps({"traceEvents": evs}))
    r = analyze_file(f)
    assert 3 not in steady_indices(r) and steady_regions(r) == []
    out = render_analyze(r)
    assert "Named ranges: record_function (steady mean step)" in out
    assert ("ranges that ran only in steps left out of the steady mean, so not in its figures: "
            "eval (ProfilerStep#4)") in out


def spanning_trace(tmp_path: Path) -> Path:
    """Synthetic CPU loop, three steps of 100, 800 and 100 µs, an op of 30 µs in each at +10 and
    a slow one of 600 µs in the second: an `epoch` range opened in step 1 and closed in step 3,
    a `prefetch` opened 20 µs before each step's end and closed 20 µs into the next one (its op,
    5 µs, inside it)."""
    def x(cat, name, ts, dur):
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 1, "tid": 1}
    evs = [x("user_annotation", "epoch", 5, 2950)]
    for k, t in enumerate([0, 100, 1000], 1):
        wall = 800 if k == 2 else 100
        evs += [x("user_annotation", f"ProfilerStep#{k}", t, wall), x("cpu_op", "aten::mm", t + 10, 30),
                x("user_annotation", "prefetch", t + wall - 20, 40), x("cpu_op", "aten::randn", t + wall - 15, 5)]
        if k == 2:
            evs.append(x("cpu_op", "aten::mm", t + 50, 600))
    path = tmp_path / "spanning.json"
    path.write_text(json.dumps({"traceEvents": evs}))
    return path


def test_a_range_open_past_its_step_counts_that_steps_work_alone(tmp_path):
    """Each range belongs to the step it starts in, and so does the work it counts: `epoch` in
    step 1 holds step 1's ops alone (its op and that step's prefetch op), not the 600 µs of
    step 2, which would have entered the steady mean with it; a prefetch holds its own step's
    op, not the next step's op that began before it closed."""
    got = {g.name: (g.calls, g.wall_ms, g.work_ms) for g in analyze_file(spanning_trace(tmp_path)).regions}
    # step 1's ops: aten::mm 30 µs, aten::randn 5 µs (prefetch at 80-120, its op at 85)
    assert got["epoch"] == ([1, 0, 0], [2.950, 0.0, 0.0], [pytest.approx(0.035), 0.0, 0.0])
    # each prefetch: its own op, 5 µs; the next step's aten::mm at +10 began while it was open
    assert got["prefetch"][0] == [1, 1, 1]
    assert got["prefetch"][1] == pytest.approx([0.040, 0.040, 0.040])
    assert got["prefetch"][2] == pytest.approx([0.005, 0.005, 0.005])


def test_a_range_longer_than_its_step_is_explained_under_the_table(tmp_path):
    """`epoch` reads 2.950 / 3 = 0.983 ms a step against the steps' mean wall, (100 + 800 + 100)
    / 3 = 333 µs: 295.0% of the step, which the line under the table explains with its call;
    `prefetch` (40 µs) stays below its step's and is not named."""
    r = analyze_file(spanning_trace(tmp_path))
    out = render_analyze(r)
    row = next(line for line in out.splitlines() if line.startswith("epoch "))
    assert row.split() == ["epoch", "0.33", "0.983", "295.0%", "0.012"]  # 1 call in 3 steps; 35 µs / 3
    assert ("% step above 100%: a range open past the end of the step it starts in counts its wall to "
            "its end (epoch 2.950 ms in ProfilerStep#1 of 0.100 ms); its ops ms are that step's own") in out
    assert "% step above 100%" not in render_analyze(analyze_file(synthetic_trace(tmp_path)))
