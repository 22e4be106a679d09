"""End to end on CPU: really compile the example models and break them down."""

from __future__ import annotations

import gzip
import json
import math
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core import compile_phases
from inductor_bench.core.categories import CPP_CATEGORIES
from inductor_bench.core.processes import share_windows
from inductor_bench.core.rundir import load_breakdown as load_result
from inductor_bench.core.steady import steady, steady_mean
from inductor_bench.core.step import set_aside, split_step
from inductor_bench.render import format as fmt
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.capture import measuring_env
from inductor_bench.runner.settings import DEFAULT_PROCESSES
from inductor_bench.runner.window_plan import AGREE_WINDOWS, DEFAULT_WINDOWS, windows_agree
from inductor_bench.runner.worker import worker_env

from .conftest import MODELS, run_breakdown_cached, torch_minor
from .steady_rule import kept_profiled, limit_of_repeats

pytestmark = pytest.mark.e2e
# How close the tool's kernel time must be to an independent profiler measurement (issue #2).
AGREEMENT = 0.10


def check_kept_window(run_dir: Path, g) -> None:
    """The trace kept is the window the worker chose, iteration by iteration: each iteration's
    marker in the trace encloses the worker's own clock readings of it (never shorter, and by
    the profiler's small cost in most iterations). Over the iterations the window's figure is
    the mean of, the two readings then differ only by those costs, and by the iterations a
    preemption hit between the marker and the clock (on a loaded machine a whole timeslice):
    allowed for at their full size. The comparison is over the same iterations, not the rule
    applied to each reading: on a set split between two speeds (this machine changes speed
    now and then) the rule's verdict turns on one iteration, and a CI run saw the clock keep
    the fast iterations (3.41 ms) and the trace, 0.1 ms slower in each, keep all (5.07)."""
    saved = json.loads((run_dir / "graphs" / g.id / "profile.json").read_text())["response"]
    clock = saved["window_samples_ms"][g.window]
    assert len(clock) == len(g.wall_samples_ms) == g.iterations
    # the window's figure: the clock's mean over the iterations the clock's rule and the parts'
    # kept (core/window_figure.py), so within those the clock alone keeps
    kept_by_clock = steady(clock).pick(clock)
    figure = g.windows_ms[g.window]
    assert figure == steady_mean(clock) or min(kept_by_clock) <= figure <= max(kept_by_clock)
    assert g.clock_samples_ms == clock
    # the figure is of iterations the clock kept too (unless fewer than five would be left)
    slow = set(steady(clock).left_out)
    assert slow <= set(g.left_out) or g.iterations - len(slow | set(g.left_out)) < 5
    extra = [t - c for t, c in zip(g.wall_samples_ms, clock, strict=True)]
    assert min(extra) >= -1e-3, extra
    typical = sorted(extra)[len(extra) // 2]
    assert typical < 1.0, extra  # the profiler's own cost per iteration, not another window
    same = steady(clock)
    preempted = sum(e for e in same.pick(extra) if e > 1.0)
    tolerance = 0.05 * g.windows_ms[g.window] + 0.02 + typical + preempted / len(same.kept)
    assert abs(same.mean(g.wall_samples_ms) - g.windows_ms[g.window]) <= tolerance


def check_windows(run_dir: Path, g) -> None:
    """The windows ran in the default number of fresh processes, each its share of them (or
    three that agreed, and no fewer), and the one kept is the fastest of all; only its trace
    files are left in the graph's directory."""
    n = len(g.windows_ms)
    shares = share_windows(DEFAULT_WINDOWS, DEFAULT_PROCESSES)
    assert len(shares) == 2 and len(g.window_faults) == len(g.window_process) == n
    assert sorted(set(g.window_process)) == list(range(len(shares)))
    assert g.window_process == sorted(g.window_process)  # one process after the other
    for p, share in enumerate(shares):
        times = [w for w, q in zip(g.windows_ms, g.window_process, strict=True) if q == p]
        assert len(times) == share or (len(times) >= AGREE_WINDOWS and windows_agree(times))
        assert not windows_agree(times[:-1])
    assert g.window == min(range(n), key=lambda i: g.windows_ms[i])
    saved = json.loads((run_dir / "graphs" / g.id / "profile.json").read_text())["response"]
    assert (saved["processes"], saved["window_process"]) == (len(shares), g.window_process)
    assert not list((run_dir / "graphs" / g.id).glob("p[0-9]*-*"))
    # every window has the machine's speed around it, against the fastest reading of both
    # processes (the merged answer's reference): none above full speed
    assert len(g.window_speed) == n and all(0 < s <= 1.0 for s in g.window_speed), g.window_speed
    assert saved["speed_reference_s"] == min(saved["window_probe_s"] + [saved["speed_reference_s"]])


def check_breakdown(result, run_dir: Path, err) -> None:
    """What every training breakdown on CPU must satisfy."""
    assert err is None, err
    assert result.status == "ok"
    roles = {g.role for g in result.graphs}
    assert {"forward", "backward"} <= roles
    for g in result.graphs:
        assert g.ok, g.error
        assert g.iterations >= 10
        assert 0.0 <= g.busy_pct <= 100.0
        assert g.busy_ms <= g.wall_ms
        assert math.isclose(sum(g.categories.values()), g.kernel_ms, rel_tol=1e-9)
        assert math.isclose(sum(k.ms for k in g.kernels), g.kernel_ms, rel_tol=1e-9)
        assert all(len(k.samples_ms) == g.iterations for k in g.kernels)
        # several profiler sessions ran, shared among fresh processes (each its share, or
        # three that agreed); the trace kept is the fastest one's of all
        check_windows(run_dir, g)
        check_kept_window(run_dir, g)
        idle = [w - b for w, b in zip(g.wall_samples_ms, g.busy_samples_ms, strict=True)]
        # the clock readings as saved with the result, which check_kept_window found to be the
        # worker's own record
        # the parts: each kernel, each call of a kernel called more than once (its call sites), the idle time
        calls = [s.samples_ms for s in g.sites]
        kept = kept_profiled(g.wall_samples_ms, [k.samples_ms for k in g.kernels] + calls + [idle],
                             g.clock_samples_ms)
        assert g.left_out == sorted(set(range(g.iterations)) - set(kept))
        assert g.wall_ms == pytest.approx(sum(g.wall_samples_ms[i] for i in kept) / len(kept), rel=1e-12)
        with gzip.open(run_dir / g.trace) as f:
            trace = json.load(f)
        assert trace["traceEvents"]
        assert (run_dir / g.module).read_text().startswith("# AOT ID")
    t = result.totals()
    assert any(t.categories.get(c, 0) > 0 for c in CPP_CATEGORIES)
    assert sum(v for c, v in t.categories.items() if c.startswith("extern_")) > 0
    assert 0.0 < t.busy_pct <= 100.0
    # the saved result is the same result
    assert load_result(run_dir).to_dict() == result.to_dict()
    assert json.loads((run_dir / "meta.json").read_text())["status"] == "ok"
    assert "Time by category" in (run_dir / "report.txt").read_text()


def test_mlp_train(mlp_train):
    result, run_dir, err = mlp_train
    check_breakdown(result, run_dir, err)
    fwd = next(g for g in result.graphs if g.role == "forward")
    names = {k.name for k in fwd.kernels}
    assert "aten::addmm" in names  # the three Linear layers
    addmm = next(k for k in fwd.kernels if k.name == "aten::addmm")
    assert addmm.calls == 3 and addmm.category == "extern_gemm"
    assert "aten.addmm" in addmm.aten_ops
    cpp = [k for k in fwd.kernels if k.name.startswith("cpp_fused")]
    assert cpp and all(k.category in CPP_CATEGORIES for k in cpp)
    # the training step called the forward and the backward once each, counted over the timed
    # steps (runner/call_inputs.py): the report's one-call-each-per-step holds, so it says nothing
    assert [g.calls for g in result.graphs] == [1.0, 1.0]
    assert "calls per step" not in render_breakdown(result)
    # torch's record of its one compile fits inside the first call, which the tool timed on its own
    # (the forward's frame and the backward's Inductor compile; Inductor's part of the forward's)
    (compiled,) = [x for x in result.compiles if x.get("seconds")]
    secs = compiled["seconds"]
    assert (compiled["frame_id"], compiled["frame_compile_id"]) == (0, 0)
    assert 0 < secs["frame"] + secs.get("backward", 0.0) <= result.compile_s
    assert secs.get("inductor", 0.0) <= secs["frame"]
    assert "compile times (torch's record of each compile" in render_breakdown(result)
    # torch's compile timers, by phase, cover the same compile as its record of it
    timers = [compiled["timers"]]
    total = compile_phases.timed_total(timers)
    assert sum(compile_phases.phase_seconds(timers).values()) == pytest.approx(total)
    assert total == pytest.approx(secs["frame"] + secs.get("backward", 0.0), rel=0.05, abs=0.05)
    assert "compile time by phase (torch's own compile timers, 1 compile" in render_breakdown(result)


@pytest.mark.slow
@pytest.mark.parametrize("model", ["transformer_block.py", "mixnet.py", "densenet.py"])
def test_other_models_train(tmp_path_factory, request, model):
    shared = {"densenet.py": "densenet_train", "transformer_block.py": "transformer_train"}
    if model in shared:  # compiled once per session, shared with tests/test_e2e_attribution.py
        result, run_dir, err = request.getfixturevalue(shared[model])
    else:
        result, run_dir, err = run_breakdown_cached(tmp_path_factory, model, train=True)
    check_breakdown(result, run_dir, err)


# Both sides run in ONE process, in rounds: the tool's profiling code (``runner.profile.handle``,
# the function its worker runs, writing its trace) and then the independent measurement below
# (a plain torch.profiler session over plain ``call()``s, its in-memory event tree; none of the
# tool's code but the first call's input values it copies in, the same on both sides). On this class of shared machine each process settles at a speed of its own, up
# to ~40% apart (docs/compare-and-diff.md), so two processes measured seconds apart disagree by
# that much whatever their method; within one process, alternating, drift falls on both alike.
AGREE_ROUNDS = 16
ROUNDS_CODE = """
import importlib.util, json, os, sys, time
from pathlib import Path
import torch
from torch.profiler import profile, ProfilerActivity
from inductor_bench.runner import profile as tool_profile
from inductor_bench.core.steady import steady, steady_mean

module, out_dir, rounds, calls, sessions = sys.argv[1], Path(sys.argv[2]), *map(int, sys.argv[3:6])
spec = importlib.util.spec_from_file_location("m", module)
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
# the values the model's first call gave the graph, as the tool's profile runs on (the harness's
# randn weights make this forward's GELU twice as slow): the same inputs on both sides
if hasattr(m, "get_args"):
    from inductor_bench.runner import call_inputs
    args = m.get_args()
    call_inputs.apply(args, Path(module), m)
    step = lambda: m.call(list(args))
else:  # torch < 2.11: the inputs its harness builds (inside benchmark_compiled_module)
    from inductor_bench.runner.harness_inputs import harness
    step = harness(m)
for _ in range(5): step()

# the same gate as the tool's windows (runner/speed.py): each session starts at the machine's full
# speed where it comes back in time; both sides then measure under the same condition
from inductor_bench.runner.speed import SpeedWatch
gate = SpeedWatch()

def independent():
    out = []
    gate.know(tool_profile._SPEED.reference)
    for _ in range(sessions):
        gate.before_window()
        for _ in range(5):  # after the gate's polls, the calls of a loop that never paused
            step()
        with profile(activities=[ProfilerActivity.CPU]) as p:
            for _ in range(calls):
                step()
        top = sorted((e for e in p.events() if e.cpu_parent is None), key=lambda e: e.time_range.start)
        per_call, rest = divmod(len(top), calls)
        assert rest == 0, (len(top), calls)
        out.append([sum(e.cpu_time_total for e in top[i * per_call:(i + 1) * per_call]) / 1e3
                    for i in range(calls)])
        # and stops where the tool's windows stop: the first sessions agreeing (runner/profile.py);
        # more sessions than the tool's would give this side more chances at a fast one
        if tool_profile.windows_agree([steady_mean(s) for s in out]):
            break
    return out

def tool(trace):
    tool_profile.handle({"module": module, "device": "cpu", "iterations": calls, "windows": sessions,
                         "trace": str(trace)})

# every other round the independent side goes first, so that a drift of the machine's speed
# within a round favours neither side
result = []
for r in range(rounds):
    trace = out_dir / f"trace-{r}.json.gz"
    if r % 2:
        independent_ms = independent()
        tool(trace)
    else:
        tool(trace)
        independent_ms = independent()
    result.append({"trace": str(trace), "independent": independent_ms})
print("ROUNDS " + json.dumps(result))
"""


def _rounds(module_path: Path, cache_dir: Path, tmp: Path, rounds: int = AGREE_ROUNDS,
            calls: int = 20, sessions: int = 5) -> list[tuple[float, float]]:
    """Per round: (the tool's per-iteration kernel time, the steady mean of the session it kept,
    as its analysis reads the trace its profiling code wrote; the independent side's same
    statistic)."""
    from inductor_bench.core.breakdown import analyze_graph
    from inductor_bench.core.modparse import read_module
    from inductor_bench.core.results import GraphResult
    from inductor_bench.core.trace import load_for_analysis

    tmp.mkdir(parents=True, exist_ok=True)
    # the profiling worker's own environment: its heap on huge pages above all. On 4 KiB pages
    # where each side's buffers land decides their cache conflicts for the process's life: a CI
    # run read the tool's side 11% below the other in every round it showed (0.68 against
    # 0.765 ms), and the same test right after agreed
    env = worker_env(measuring_env(cache_dir))
    out = subprocess.run([sys.executable, "-c", ROUNDS_CODE, str(module_path), str(tmp), str(rounds),
                          str(calls), str(sessions)], env=env, capture_output=True, text=True, check=True,
                         timeout=600)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("ROUNDS "))
    pairs = []
    for r in json.loads(line[len("ROUNDS "):]):
        g = GraphResult(id="g", role="forward", device="cpu")
        analyze_graph(load_for_analysis(Path(r["trace"])), read_module(module_path), g)
        pairs.append((g.kernel_ms, _fastest_session(r["independent"])))
    return pairs


def _fastest_session(sessions: list[list[float]]) -> float:
    """The tool's figure, made the same way on the independent side: of several sessions the
    one with the lowest figure is kept; a figure is the mean over the iterations the rule
    written out in tests/steady_rule.py keeps for one call repeated (a stalled one left out, and
    where most of a session stalled, as on a loaded machine, those over the faster half's limit)."""
    return min(statistics.fmean([x for x in s if x <= limit_of_repeats(s)]) for s in sessions)


@pytest.mark.slow
def test_kernel_time_agrees_with_independent_profile(mlp_train, tmp_path):
    """Per-iteration kernel time, the tool's profiling and analysis against an independent
    profiler session, both as up to 5 sessions of 20 calls (fewer where the first agree, the tool's
    rule), each started warm, in rounds in one process. Compared at the
    figure of the session kept (the steady mean, the one statistics policy; a single iteration's
    minimum once read 10% below the rest of its round), round by round, and judged by the median
    of the rounds' ratios: on a shared 2-core VM one round's ratio ranged 0.73 to 1.58, and each
    side's lowest figure over six rounds missed the other's by up to 16% in 3 runs of 6, while the
    median ratio of 12 to 16 rounds read 0.967 to 1.085 in 18 runs (a graph each), a busy core
    beside it or not (the slow stretches come and go for both sides within a round). One CI run
    read 1.243, the tool's side slower in every round shown; its windows then began after the
    worker's idle between windows and the independent side's sessions back to back, and now both
    start warm. A tool that misread kernel time by more than the bound (``agreement_bound``)
    never agrees."""
    result, run_dir, _ = mlp_train
    for g in result.graphs:
        pairs = _rounds(run_dir / g.module, run_dir / "cache", tmp_path / g.id)
        ratios = [tool / independent for tool, independent in pairs]
        ratio, bound = statistics.median(ratios), agreement_bound(ratios)
        assert ratio == pytest.approx(1.0, rel=bound), (g.id, ratio, bound, pairs)


def agreement_bound(ratios: list[float]) -> float:
    """AGREEMENT, or where the rounds' own ratios spread wider, three standard errors of their
    median (1.2533·σ/√n): a CI run whose rounds read as far apart as 0.81 and 1.40 had a median
    of 1.164, and the same test alone right after agreed. Either side's misreading of kernel
    time by more than the bound still fails; on a quiet machine the bound is AGREEMENT."""
    if len(ratios) < 2:
        return AGREEMENT
    return max(AGREEMENT, 3 * 1.2533 * statistics.stdev(ratios) / math.sqrt(len(ratios)))


def _top_level_op_ms(trace_path: Path) -> list[float]:
    """Per iteration marker of a saved trace, the summed duration of the CPU ops directly inside
    it (on its thread; record functions named like ``## Call CompiledFxGraph ... ##`` only wrap
    a call and are seen through), read with the standard library alone."""
    with gzip.open(trace_path) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    marks = sorted((e for e in events if e["name"] == "inductor_bench::iteration"
                    and e.get("cat") == "user_annotation"), key=lambda e: e["ts"])
    ops = [e for e in events if e.get("cat") == "cpu_op"
           and not (e["name"].startswith("## ") and e["name"].endswith(" ##"))]
    out = []
    for m in marks:
        inside = [e for e in ops if (e["pid"], e["tid"]) == (m["pid"], m["tid"])
                  and m["ts"] <= e["ts"] < m["ts"] + m["dur"]]
        top = [e for e in inside if not any(
            f is not e and f["ts"] <= e["ts"] and f["ts"] + f["dur"] >= e["ts"] + e["dur"]
            and (f["ts"], -f["dur"]) < (e["ts"], -e["dur"]) for f in inside)]
        out.append(sum(e["dur"] for e in top) / 1e3)
    return out


def test_reported_kernel_time_is_the_saved_traces_own(mlp_train):
    """What the run reports per iteration is exactly what its saved trace holds."""
    result, run_dir, _ = mlp_train
    for g in result.graphs:
        tool = [sum(k.samples_ms[i] for k in g.kernels) for i in range(g.iterations)]
        assert g.steady().mean(tool) == pytest.approx(g.kernel_ms, rel=1e-9)
        assert tool == pytest.approx(_top_level_op_ms(run_dir / g.trace), rel=1e-9, abs=1e-9)


def test_report_rerenders_without_torch(mlp_train):
    _, run_dir, _ = mlp_train
    code = (
        "import sys; sys.modules['torch'] = None\n"
        "from inductor_bench.cli import main\n"
        f"main(['report', {str(run_dir)!r}])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "Time by category (all graphs)" in out.stdout
    assert "0-forward" in out.stdout and "0-backward" in out.stdout


def test_the_harness_step_is_the_graphs_walls_added(mlp_train):
    result, _, _ = mlp_train
    t, s = result.totals(), result.step_summary()
    assert s.ms == pytest.approx(sum(g.wall_ms for g in result.graphs), rel=1e-12) == t.wall_ms
    assert s.low < s.ms < s.high and s.n == min(len(g.wall_samples_ms) - len(g.left_out) for g in result.graphs)


def test_the_step_and_every_graph_are_timed_in_turns(mlp_train):
    """On the CPU the compile worker times the real step and each graph's own call in rounds:
    one block per side each round, every graph of the result among the sides, and the report's
    line on the time outside the graphs says it comes from them. Which of its two lines depends
    on how busy the machine was, not on the mechanism: the time outside the graphs, where the
    graphs' own calls took longer than the step they are part of (a busy machine's noise
    against the fraction of a millisecond outside the mlp's graphs), is not measurable."""
    result, run_dir, _ = mlp_train
    turns = result.step_turns
    assert turns is not None and turns.error is None, turns
    assert sorted(turns.graphs) == sorted(g.id for g in result.graphs)
    rounds = {len(side) for side in turns.blocks}
    assert len(turns.blocks) == len(result.graphs) + 1 and len(rounds) == 1 and rounds.pop() >= 5
    assert all(ms > 0 for side in turns.blocks for block in side for ms in block)
    s = split_step(result)
    assert s is not None and s.rounds + s.left_out >= 5 and s.rounds >= 3
    report = " ".join((run_dir / "report.txt").read_text().split())
    rounds = (f"{s.rounds} steady rounds of {s.rounds + s.left_out}, {s.left_out} left out as disturbed"
              if s.left_out else f"{s.rounds} rounds")
    if s.outside_ms >= 0 and set_aside(result, s) is not None:
        # a check found the turns at another speed than the profile (the machine busier while
        # they ran): the line says their figure, of these rounds, is set aside
        assert f"step, {rounds}) is set aside" in report
    elif s.outside_ms >= 0:
        assert f"timed in turns in one process, {rounds})" in report
    else:
        assert f"more than the {fmt.ms(s.step_ms)} ms step timed in turns with them" in report, s


@pytest.mark.slow
def test_autotune_top_cpu_recompile(tmp_path):
    """`--autotune-top` on CPU recompiles with mode max-autotune and matches kernels."""
    out = tmp_path / "r.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "inductor_bench.cli",
            "breakdown",
            str(MODELS / "mlp.py"),
            "--device",
            "cpu",
            "--iterations",
            "20",
            "--windows",
            "2",
            "--autotune-top",
            "3",
            "--runs-dir",
            str(tmp_path / "runs"),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    a = r["extras"]["autotune"]
    assert a["route"] == "cpu-recompile" and a["tuned_status"] == "ok"
    assert Path(a["tuned_run"]).parent == Path(r["run_dir"])  # inside this run, never elsewhere
    tuned = load_result(a["tuned_run"])
    assert tuned.mode == "max-autotune"
    # the recompiled run is profiled as the user asked, like the run itself
    base_profiled = [(g["iterations"], len(g["windows_ms"])) for g in r["graphs"]]
    tuned_profiled = [(g.iterations, len(g.windows_ms)) for g in tuned.graphs]
    assert base_profiled == tuned_profiled == [(20, 2)] * len(r["graphs"])
    # every kernel of both runs appears exactly once in the matching
    base_names = sorted((g["id"], k["name"]) for g in r["graphs"] for k in g["kernels"])
    tuned_names = sorted((g.id, k.name) for g in tuned.graphs for k in g.kernels)
    assert sorted((x["graph"], x["base_name"]) for x in a["rows"] if x["base_name"]) == base_names
    assert sorted((x["graph"], x["tuned_name"]) for x in a["rows"] if x["tuned_name"]) == tuned_names
    # the headline's steps: both models timed interleaved in one process, round by round
    assert a["step_note"] is None and len(a["base_paired_ms"]) == len(a["tuned_paired_ms"]) >= 5
    assert a["base_step_ms"] == pytest.approx(steady_mean([x for b in a["base_paired_ms"] for x in b]))
    assert a["tuned_step_ms"] == pytest.approx(steady_mean([x for b in a["tuned_paired_ms"] for x in b]))
    assert "both timed interleaved in one process" in p.stdout
    assert "Default vs max-autotune, kernel by kernel" in p.stdout
    # a generated kernel both modules define with one source is "same code" (its two times come
    # from two processes), one whose source changed is judged by its times
    from inductor_bench.core.modparse import parse_module

    def sources(run_dir: str, graphs: list) -> dict:
        return {g["id"]: {n: k.source for n, k in parse_module((Path(run_dir) / g["module"]).read_text()).kernels.items()}
                for g in graphs}

    base_src = sources(r["run_dir"], r["graphs"])
    tuned_src = sources(a["tuned_run"], [g.to_dict() for g in tuned.graphs])
    checked = 0
    for x in a["rows"]:
        b = base_src[x["graph"]].get(x["base_name"] or "")
        t = tuned_src[x["graph"]].get(x["tuned_name"] or "")
        if x["change"] == "same kernel" and b is not None:
            assert (x["verdict"] == "same code") == (b == t), x
            checked += 1
    assert checked >= 1  # mlp.py's C++ kernels keep their names under max-autotune


@pytest.mark.slow
def test_modules_are_found_on_a_warm_cache(tmp_path):
    """A second compile into the same cache is an FX-graph / AOTAutograd cache hit, where
    Inductor prints no "Compiled module path": the structured trace still names the modules."""
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.compile_run import compile_workload
    from inductor_bench.runner.settings import RunSettings

    model = tmp_path / "tiny.py"
    model.write_text(
        "import torch\n"
        "def make_workload(device):\n"
        "    return torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.GELU()).to(device), "
        "(torch.randn(8, 32, device=device),)\n"
    )
    opts = WorkloadOptions(path=str(model), device="cpu", train=True).validate()
    cold = compile_workload(opts, tmp_path, RunSettings(steps=1))
    (tmp_path / "modules.jsonl").rename(tmp_path / "cold.jsonl")
    warm = compile_workload(opts, tmp_path, RunSettings(steps=1))
    assert cold.error is None and warm.error is None
    assert len(cold.modules) == len(warm.modules) == 2
    assert sorted(m["path"] for m in warm.modules) == sorted(m["path"] for m in cold.modules)
    log = (tmp_path / "logs" / "compile-default.log").read_text()
    assert log.count("Compiled module path") == 2  # printed by the cold compile only
    # torch's own modules, no line of the model: each module's record names the factory's line
    # that built it, on the hits too (read in each compile, never from the store)
    records = [json.loads(line) for line in (tmp_path / "sources.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all(r.get("error") is None for r in records)
    assert [{p: site[:2] for p, site in r["built"].items()} for r in records] == [
        {"0": [str(model), 3], "1": [str(model), 3]}] * 4


CUSTOM_OP_MODEL = '''
import torch


@torch.library.custom_op("inductor_bench_test::twice", mutates_args=())
def twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@twice.register_fake
def _(x):
    return torch.empty_like(x)


class M(torch.nn.Module):
    def forward(self, x):
        return torch.ops.inductor_bench_test.twice(torch.sin(x)) + 1


def make_workload(device):
    return M(), (torch.randn(256, 256, device=device),)
'''


@pytest.mark.slow
def test_custom_op_registered_by_the_model_file(tmp_path):
    """The compiled module calls an op the model file registers: the profiling worker
    imports the model file first, so the op exists there too. It is a custom op, not ATen."""
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    model = tmp_path / "custom.py"
    model.write_text(CUSTOM_OP_MODEL)
    opts = WorkloadOptions(path=str(model), device="cpu")
    result, run_dir, err = run_breakdown(opts, RunSettings(iterations=10), root=tmp_path / "runs")
    assert err is None, err
    (g,) = result.graphs
    op = next(k for k in g.kernels if k.name == "inductor_bench_test::twice")
    assert op.calls == 1 and op.category == "extern_custom"
    # its input and what it returns, where the module asserts the result's size (torch 2.5 does
    # not; 2.7 asserts it on an alias, `buf2 = buf1`, without naming the op)
    stated = _result_size_stated((run_dir / "graphs" / g.id / "module.py").read_text(),
                                 "torch.ops.inductor_bench_test.twice.default", "(256, 256)")
    assert op.bytes == (2 * 256 * 256 * 4 if stated else None) and op.flops is None


def _result_size_stated(module: str, op: str, shape: str) -> bool:
    """Whether the module asserts the size of what ``op`` returns: on its buffer, or on a name
    the module binds to that buffer (read here from the text, independently of the tool)."""
    out = re.search(rf"^\s*(buf\d+) = {re.escape(op)}\(", module, re.M)[1]
    names = {out, *re.findall(rf"^\s*(buf\d+) = {out}\s*$", module, re.M)}
    return any(f"assert_size_stride({n}, {shape}" in module for n in names)


# A harness whose call() writes a buffer too large for the heap (glibc serves anything over
# 32 MiB with its own mmap and unmaps it on free), so every call faults in every page of it.
_FAULTING_MODULE = '''
import torch

NBYTES = {nbytes}


def get_args():
    return []


def call(args):
    torch.empty(NBYTES // 4, dtype=torch.float32).fill_(1.0)
'''


def _thp_always() -> bool:
    try:
        return "[always]" in Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux") or _thp_always(), reason="Linux 4 KiB pages")
def test_page_faults_per_iteration_match_the_pages_written(tmp_path):
    """The page faults per iteration the report shows for each profiler session, against the
    arithmetic: a call that writes 64 MiB of fresh memory faults once per page."""

    from inductor_bench.runner.worker import run_worker

    nbytes = 64 << 20
    module = tmp_path / "faulting.py"
    module.write_text(_FAULTING_MODULE.format(nbytes=nbytes))
    request = {
        "module": str(module),
        "device": "cpu",
        "iterations": 10,
        "windows": 2,
        "trace": str(tmp_path / "trace.json.gz"),
    }
    # The heap on 4 KiB pages, as a user's own GLIBC_TUNABLES may ask (kept by every worker):
    # by default it is on huge pages, 2 MiB a fault (tests/test_host_heap.py).
    data = run_worker("inductor_bench.runner.profile", request, timeout=300, log_path=tmp_path / "log",
                      env={"GLIBC_TUNABLES": "glibc.malloc.hugetlb=0"})
    pages = nbytes / os.sysconf("SC_PAGE_SIZE")
    assert len(data["window_faults"]) == 2
    for faults in data["window_faults"]:
        assert pages <= faults <= 1.1 * pages, (faults, pages)


_STALLED_START_MODULE = '''
import time

CALLS = [0]


def get_args():
    return []


def call(args):
    CALLS[0] += 1
    time.sleep(0.06 if CALLS[0] <= 6 else 0.001)  # its 3 eager warm-up and 3 sizing calls stall
'''


def test_windows_planned_on_stalled_warm_up_calls_are_planned_again(tmp_path):
    """A harness whose six warm-up and sizing calls stall at 60 ms, and then run 1 ms: planned
    on them, 20 iterations (0.25 s / 60 ms, at least 20); the first window's fastest iteration
    (about 1 ms) asks for 100 (at most), so that window is left out and both windows run 100."""
    from inductor_bench.runner.worker import run_worker

    module = tmp_path / "stalled_start.py"
    module.write_text(_STALLED_START_MODULE)
    request = {"module": str(module), "device": "cpu", "windows": 2, "trace": str(tmp_path / "trace.json.gz")}
    data = run_worker("inductor_bench.runner.profile", request, timeout=300, log_path=tmp_path / "log")
    assert data["warmup_per_call_ms"] < 30  # the first window's fastest, not the stalled 60 ms
    assert (data["planned_iterations"], data["iterations"]) == (20, 100)
    assert [len(w) for w in data["window_samples_ms"]] == [100, 100]


@pytest.mark.slow
def test_the_models_precision_settings_are_recorded_and_reported(tmp_path):
    """A factory that sets TF32-level matmul precision and cuDNN's autotuner: the result
    keeps both as set by the model, and the report prints them (the profiling worker applying
    them is tested in tests/test_gpu_truth.py)."""
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.render.breakdown import render_breakdown
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    model = tmp_path / "mlp_tf32.py"
    model.write_text(
        "import sys, torch\n"
        f"sys.path.insert(0, {str(MODELS)!r})\n"
        "import mlp\n"
        "def make_workload(device='cpu', dtype=torch.float32, batch_size=8):\n"
        "    torch.set_float32_matmul_precision('medium')\n"
        "    torch.backends.cudnn.benchmark = True\n"
        "    return mlp.make_workload(device, dtype, batch_size)\n"
    )
    opts = WorkloadOptions(path=str(model), device="cpu")
    result, run_dir, err = run_breakdown(opts, RunSettings(timeout=600, iterations=10, windows=1), root=tmp_path)
    assert err is None, err
    ts = result.torch_settings
    # what the model's steps ran with: up to torch 2.8 Dynamo sets cuBLAS's allow_tf32 back after
    # compiling a frame, which turns "medium" into "high" (a plain torch.compile of it does);
    # from 2.9 it restores the fp32 precision setting itself
    precision = "high" if torch_minor() < (2, 9) else "medium"
    assert ts.values["float32_matmul_precision"] == precision
    assert {"float32_matmul_precision", "backends.cudnn.benchmark"} <= set(ts.changed)
    # as the factory left them (setting the precision also sets the backends' own switches)
    assert ts.model_set["float32_matmul_precision"] == "medium"
    assert ts.model_set["backends.cudnn.benchmark"] is True
    text = render_breakdown(result)
    said = "set by the model" if precision == "medium" else "the model set medium, changed while it ran"
    assert f"float32_matmul_precision {precision} ({said})" in text
    assert "backends.cudnn.benchmark True (set by the model)" in text
    assert load_result(run_dir).torch_settings == ts
