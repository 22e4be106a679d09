"""compare.py, render/compare.py and the `compare` command.

The unit tests build results by hand; the e2e tests really compile models/mlp.py on CPU in
eager, default and max-autotune (one shared run)."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench import cli
from inductor_bench.core import compile_phases
from inductor_bench.core.compare import (
    COMPARE_SCHEMA,
    CompareResult,
    ModeResult,
)
from inductor_bench.core.compare_modes import parse_modes, skip_reason
from inductor_bench.core.compare_summary import fastest, quiet_moments, reference, timed, unranked
from inductor_bench.core.diff import diff_results
from inductor_bench.core.errors import DeviceError, ResultError, UsageError
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat
from inductor_bench.core.rundir import load_compare
from inductor_bench.core.summaries import t_quantile
from inductor_bench.core.vocab import Outcome, Status
from inductor_bench.core.workload import WorkloadOptions
from inductor_bench.render.compare import render_compare, verdict_line
from inductor_bench.render.doc import TextDoc, new_doc
from inductor_bench.runner.compare import run_compare
from inductor_bench.runner.compare_columns import execution_order

from .conftest import MODELS

# Seven samples with a robust sigma of 1.5% of the median (see test_diff.JITTER).
JITTER = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01]
CLI = [sys.executable, "-c", "from inductor_bench.cli import main; main()"]
# a real run on a shared machine may find its modes apart beyond noise or not
def headlines(r: CompareResult) -> tuple[str, str]:
    """The headline's openings: the fastest column, or none faster than the reference beyond noise
    (eager; default where eager's rounds were too disturbed to rank it, as beside other work)."""
    ref = reference(r)
    words = "fastest ranked steady state" if read_faster_unranked(r) else "fastest steady state"
    return (f"{words.capitalize()}: ",
            f"No mode is faster than {ref.label if ref else None} beyond noise: {words} ")


def read_faster_unranked(r: CompareResult) -> bool:
    """Whether a column too disturbed to rank read a lower step time than the fastest ranked one
    (the headline then names the fastest *ranked* steady state)."""
    best = fastest(r)
    return best is not None and any(
        timed(m) and m is not best and r.step(m).ms < r.step(best).ms and unranked(r, m)
        for m in r.modes)


def samples(ms: float) -> list[float]:
    return [ms * j for j in JITTER]


def breakdown(cats: dict[str, float], busy_ms: float) -> BreakdownResult:
    kernels = [KernelStat(name=f"k_{c}", category=c, calls=1, ms=ms) for c, ms in cats.items()]
    g = GraphResult(
        id="0-inference",
        role="inference",
        wall_ms=10.0,
        busy_ms=busy_ms,
        kernel_ms=sum(cats.values()),
        categories=dict(cats),
        kernels=kernels,
    )
    return BreakdownResult(model="mlp", graphs=[g])


def hand_built() -> CompareResult:
    return CompareResult(
        model="mlp",
        device="cpu",
        device_name="Test CPU",
        modes=[
            ModeResult(mode="eager", compile_s=0.0, step_samples_ms=samples(20.0)),
            ModeResult(
                mode="default",
                compile_s=10.0,
                step_samples_ms=samples(11.0),
                peak_memory_bytes=300 * 2**20,
                peak_memory_kind="process peak RSS",
                breakdown=breakdown({"cpp_pointwise": 2.0, "extern_gemm": 6.0}, busy_ms=8.0),
            ),
            ModeResult(
                mode="max-autotune",
                compile_s=30.0,
                step_samples_ms=samples(8.0),
                breakdown=breakdown({"cpp_template": 5.0, "cpp_pointwise": 1.0}, busy_ms=6.0),
            ),
            ModeResult(mode="reduce-overhead", status=Status.SKIPPED, reason="CUDA graphs need CUDA"),
        ],
    )


# ---- modes ----------------------------------------------------------------------------------


def test_parse_modes_adds_eager_first_and_drops_repeats():
    assert parse_modes("default,max-autotune") == ["eager", "default", "max-autotune"]
    assert parse_modes(" default , default ,", eager=False) == ["default"]
    assert parse_modes("eager,default") == ["eager", "default"]
    # modes beyond the common ones (torch 2.11's lite) pass; the compile worker checks them
    assert parse_modes("lite", eager=False) == ["lite"]


@pytest.mark.parametrize(
    ("text", "eager", "message"),
    [
        ("default,Turbo!", True, "--modes: 'Turbo!' is not a torch.compile mode name"),
        ("eager,default", False, "--no-eager"),
        ("eager", True, "at least one torch.compile mode"),
        ("", False, "at least one torch.compile mode"),
    ],
)
def test_parse_modes_rejects_bad_lists(text, eager, message):
    with pytest.raises(UsageError, match=message):
        parse_modes(text, eager=eager)


def test_cuda_graph_only_modes_run_last_and_skip_off_cuda():
    order = execution_order(["reduce-overhead", "max-autotune", "eager", "default"])
    assert order == ["eager", "max-autotune", "default", "reduce-overhead"]
    assert "CUDA graphs need a CUDA device" in skip_reason("reduce-overhead", "cpu")
    assert skip_reason("reduce-overhead", "cuda") is None
    assert skip_reason("reduce-overhead", None) is None  # not known yet: run it
    assert skip_reason("max-autotune", "cpu") is None


# ---- the result schema ----------------------------------------------------------------------


def test_compare_result_round_trips_through_json(tmp_path):
    r = hand_built()
    (tmp_path / "compare.json").write_text(r.to_json())
    back = load_compare(tmp_path)
    assert back.to_dict() == r.to_dict()
    assert back.mode("default").breakdown.totals().kernel_count == 2
    assert back.mode("eager").breakdown is None
    assert back.schema == COMPARE_SCHEMA


def test_compare_result_rejects_other_files(tmp_path):
    (tmp_path / "x.json").write_text(BreakdownResult(model="m").to_json())
    with pytest.raises(ResultError, match="not an inductor-bench compare result"):
        load_compare(tmp_path / "x.json")
    d = hand_built().to_dict()
    d["schema_version"] = 99
    (tmp_path / "y.json").write_text(json.dumps(d))
    with pytest.raises(ResultError, match="schema version 99"):
        load_compare(tmp_path / "y.json")


def test_speedups_are_ratios_of_the_step_figures():
    r = hand_built()
    assert r.speedup("default", over="eager") == pytest.approx(20.0 / 11.0)
    assert r.speedup("max-autotune", over="default") == pytest.approx(11.0 / 8.0)
    assert r.speedup("reduce-overhead", over="eager") is None


# ---- rendering ------------------------------------------------------------------------------


def t_interval(ms: float) -> tuple[float, float]:
    """The 97.5% t interval of the mean of ``samples(ms)`` (no sample is far enough out to
    be left out), from the definition: mean -/+ t(0.9875, n-1) sd / sqrt(n)."""
    xs = samples(ms)
    n, m = len(xs), statistics.fmean(xs)
    h = t_quantile(0.9875, n - 1) * statistics.stdev(xs) / math.sqrt(n)
    return m - h, m + h


def speedup_interval(base_ms: float, head_ms: float) -> str:
    """base/head lies in [base low / head high, base high / head low]."""
    (b_lo, b_hi), (h_lo, h_hi) = t_interval(base_ms), t_interval(head_ms)
    return f"[{b_lo / h_hi:.2f}x-{b_hi / h_lo:.2f}x]"


def payback(compile_s: float, ref_compile_s: float, ref_ms: float, ms: float) -> str:
    """Steps until the extra compile time is saved: ceil(extra ms / saved ms per step)."""
    saved = statistics.fmean(samples(ref_ms)) - statistics.fmean(samples(ms))
    return f"{math.ceil(1e3 * (compile_s - ref_compile_s) / saved):,}"


def figure(ms: float) -> str:
    return f"{statistics.fmean(samples(ms)):.3f}"


def test_verdict_names_the_fastest_mode_with_significance_and_payback():
    line = verdict_line(hand_built(), TextDoc())
    assert line == (
        f"Fastest steady state: max-autotune {figure(8)} ms (2.50x {speedup_interval(20, 8)} over eager "
        f"(significant), its extra compile time pays back after {payback(30, 0, 20, 8)} steps; "
        f"1.38x {speedup_interval(11, 8)} over default "
        f"(significant), its extra compile time pays back after {payback(30, 10, 11, 8)} steps)"
    )
    assert figure(8) == "8.011"  # the mean of JITTER is 1.00143


def test_text_table_has_a_column_per_mode_and_the_skip_reason():
    text = render_compare(hand_built())
    lines = text.splitlines()
    assert lines[0].startswith("Fastest steady state: max-autotune")
    header = next(ln for ln in lines if "eager" in ln and "reduce-overhead" in ln)
    assert header.split() == ["eager", "default", "max-autotune", "reduce-overhead"]

    def row(name: str) -> list[str]:
        ln = next(ln for ln in lines if ln.startswith(name))
        return [c for c in ln[len(name) :].split("  ") if c.strip()]

    assert [c.strip() for c in row("compile (first call)")] == ["0.00 s", "10.00 s", "30.00 s", "-"]
    assert [c.strip() for c in row("speedup vs eager")] == [
        "1.00x",
        f"1.82x {speedup_interval(20, 11)} (significant)",
        f"2.50x {speedup_interval(20, 8)} (significant)",
        "-",
    ]
    assert [c.strip() for c in row("% C++ template (GEMM)")] == ["-", "0.0%", "83.3%", "-"]
    assert [c.strip() for c in row("busy %")] == ["-", "80.0%", "60.0%", "-"]
    assert "reduce-overhead: skipped: CUDA graphs need CUDA" in text
    assert "peak memory (process peak RSS)" in text


def test_markdown_is_a_github_table_after_a_bold_verdict():
    md = render_compare(hand_built(), "markdown")
    assert md.startswith(f"**Fastest steady state: max-autotune** {figure(8)} ms")
    lines = md.splitlines()
    assert [c.strip() for c in lines[4].split("|")] == [
        "",
        "",
        "eager",
        "default",
        "max-autotune",
        "reduce-overhead",
        "",
    ]
    assert lines[5].startswith("|:---")
    assert "| busy %" in md


def test_no_mode_completed():
    r = CompareResult(model="m", modes=[ModeResult(mode="default", status="failed")])
    r.errors = ["default: the model raised"]
    assert verdict_line(r, TextDoc()) == "NO MODE COMPLETED: default: the model raised"


def test_columns_killed_after_their_compile_show_what_was_measured():
    # synthetic, after compare models/mlp.py --repeat 10000 --timeout 60 on a loaded 2-core machine: both
    # columns ran past the timeout while timing their steps, default compiled (6.17 s) and was profiled; the
    # report had said "NO MODE RAN" and shown no table, its compile time and breakdown in the JSON alone
    killed = "capture worker killed: compiled in 6.2 s, then timing its steps ran past --timeout 60s"
    r = CompareResult(model="mlp", device="cpu", modes=[
        ModeResult(mode="eager", status="timeout", reason="capture worker killed: its first call took 0.1 s, "
                   "then timing its steps ran past --timeout 60s"),
        ModeResult(mode="default", status="timeout", compile_s=6.17, reason=killed,
                   breakdown=breakdown({"gemm_extern": 3.0, "cpp_pointwise": 1.0}, busy_ms=8.0))])
    text = render_compare(r)
    assert text.startswith("NO MODE COMPLETED")
    row = {ln.split("  ")[0]: ln.split()[-2:] for ln in text.splitlines() if "  " in ln}
    assert row["status"] == ["timeout", "timeout"] and row["compile (first call)"] == ["6.17", "s"]
    assert row["kernels"] == ["-", "2"] and row["busy %"] == ["-", "80.0%"]


def test_two_compares_diff_mode_by_mode():
    d = diff_results(hand_built(), hand_built())
    assert d.status() == Outcome.NO_CHANGE
    assert [s.mode for s in d.sections] == ["eager", "default", "max-autotune"]
    assert d.skipped == [
        "reduce-overhead: both skipped (CUDA graphs need CUDA)"
    ]


# ---- the gate of several model files, with a column not measured -------------------------------

RECORDED = Path(__file__).resolve().parent / "fixtures" / "results" / "cpu_mlp_compare" / "compare.json"
KILLED = "profiling worker was killed by SIGKILL (out of memory? the OOM killer sends SIGKILL)"
GATE_FAILS = "**NOT COMPARABLE, so the 10% gate fails**: "


def two_files(head_default: dict | None, errors: tuple[str, ...] = ()) -> CompareResult:
    """The recorded compare's eager and default columns as `compare mlp.py mlp.py --names
    base,head` saves them, each column under both names; ``head_default`` updates head's
    default column (None: it never ran)."""
    cmp = json.loads(RECORDED.read_text())
    cols = [m for m in cmp["modes"] if m["mode"] in ("eager", "default")]
    base, head = [dict(m, model="base") for m in cols], [json.loads(json.dumps(dict(m, model="head"))) for m in cols]
    if head_default is None:
        head = head[:1]
    else:
        head[1].update(head_default)
    cmp.update(models=["base", "head"], model="base vs head", modes=base + head, errors=list(errors))
    return CompareResult.from_dict(cmp)


def lost_backward(breakdown: dict, status: str) -> dict:
    """``breakdown`` as the pipeline leaves it when the backward graph was not measured:
    interrupted (the graph never appended) or its profiling worker killed (kept as failed)."""
    if status == "interrupted":
        graphs = [g for g in breakdown["graphs"] if g["id"] != "0-backward"]
    else:
        graphs = [dict(g, status="failed", error=KILLED, kernels=[], wall_samples_ms=[]) if g["id"] == "0-backward"
                  else g for g in breakdown["graphs"]]
    return dict(breakdown, graphs=graphs, status=status if status == "interrupted" else "partial")


def recorded_default() -> dict:
    return next(m for m in json.loads(RECORDED.read_text())["modes"] if m["mode"] == "default")


def _gate_md(r, gate_line) -> str:
    """The gate's line as a markdown document renders it (its bold written out)."""
    doc = new_doc("markdown")
    doc.paragraph(gate_line(r, 10, doc))
    return doc.render().strip()


@pytest.mark.parametrize(
    "head_default, errors, why",
    [
        (  # the pipeline's own shape: the column failed, its breakdown partial
            {"status": "failed", "reason": f"graph 0-backward: {KILLED}",
             "breakdown": lost_backward(recorded_default()["breakdown"], "failed")},
            (f"head:default: graph 0-backward: {KILLED}",),
            f"graph 0-backward not measured in head (failed: {KILLED})",
        ),
        (  # a column that says ok over a breakdown cut short
            {"breakdown": lost_backward(recorded_default()["breakdown"], "interrupted")},
            (),
            "graph 0-backward not measured in head (missing from the interrupted run)",
        ),
        (None, ("interrupted",), "the step not measured in head (not run)"),  # Ctrl-C before it
    ],
    ids=["failed-graph", "interrupted-breakdown", "column-missing"],
)
def test_the_gate_gives_no_verdict_on_a_column_not_measured(head_default, errors, why):
    from inductor_bench.commands.compare import exit_error
    from inductor_bench.core.compare_gate import not_measured, regressions
    from inductor_bench.core.errors import Interrupted, NotComparable, WorkerError
    from inductor_bench.render.compare import gate_line, model_verdicts

    r = two_files(head_default, errors)
    line = f"head:default: {why}"
    assert [u.describe() for u in not_measured(r)] == [line]
    assert regressions(r, 0.0) == []
    assert _gate_md(r, gate_line) == f"{GATE_FAILS}{line} - no verdict without them"
    verdicts = model_verdicts(r)
    assert verdicts[-1] == f"not comparable: {line}"
    assert [v.split(":")[0] for v in verdicts] == ["head against base, eager", "not comparable"]
    assert render_compare(r, "markdown", threshold_pct=10).startswith(GATE_FAILS + line)
    # the command's exit: with the gate, 5 and one line naming the graph; without it, the
    # run's own error (a dead worker: 4); Ctrl-C stays Ctrl-C
    worker = WorkerError(f"graph 0-backward: {KILLED}")
    gate = exit_error(r, worker, 10.0)
    assert isinstance(gate, NotComparable) and gate.exit_code == 5
    assert str(gate) == f"not comparable, no verdict: {line}"
    assert isinstance(exit_error(r, None, 10.0), NotComparable)
    assert exit_error(r, worker, None) is worker and worker.exit_code == 4
    ctrl_c = Interrupted("interrupted")
    assert exit_error(r, ctrl_c, 10.0) is ctrl_c


def test_the_gate_judges_columns_measured_on_both_sides():
    from inductor_bench.commands.compare import exit_error
    from inductor_bench.core.compare_gate import not_measured
    from inductor_bench.render.compare import gate_line

    r = two_files({})
    assert not_measured(r) == []
    assert _gate_md(r, gate_line) == "**NO REGRESSION above the 10% gate**"
    assert exit_error(r, None, 10.0) is None


# ---- bad input (no worker starts) -----------------------------------------------------------


def test_compare_needs_a_factory(tmp_path):
    script = tmp_path / "script.py"
    script.write_text("print('hello')\n")
    with pytest.raises(UsageError, match="compare needs a make_workload"):
        run_compare(WorkloadOptions(path=str(script), device="cpu"), ["default"], root=tmp_path)
    assert not (tmp_path / "runs").exists()


def run_cli(args: list[str]) -> int:
    try:
        cli.main(["compare", *args])
    except SystemExit as e:
        return int(e.code or 0)
    return 0


def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert run_cli([str(tmp_path / "missing.py")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"inductor-bench: error: {tmp_path / 'missing.py'}: no such file"
    )
    assert run_cli([str(MODELS / "mlp.py"), "--modes", "default,max_autotune"]) == 2
    assert "'max_autotune' is not a torch.compile mode name" in capsys.readouterr().err
    mlp = str(MODELS / "mlp.py")
    runs = tmp_path / "runs"
    assert run_cli([mlp, "--fail-on-regression", "10", "--runs-dir", str(runs)]) == 2
    assert capsys.readouterr().err.strip() == (
        "inductor-bench: error: --fail-on-regression needs two or more model files: the first is the base"
    )
    for names, wrong in (("base", "1 name for 2 model files"), ("a,a", "a given twice"), ("a,", "an empty name")):
        assert run_cli([mlp, mlp, "--names", names, "--runs-dir", str(runs)]) == 2
        assert capsys.readouterr().err.strip() == (
            f"inductor-bench: error: --names: {wrong}: give 2 different names, one per model file"
        )
    # one file: it had said "give 1 different names"
    assert run_cli([mlp, "--names", "a,b", "--runs-dir", str(runs)]) == 2
    assert capsys.readouterr().err.strip() == (
        "inductor-bench: error: --names: 2 names for 1 model file: give 1 name")
    assert not runs.exists()  # refused before any run directory


# ---- end to end on CPU ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def mlp_compare(tmp_path_factory):
    """`compare models/mlp.py --train` with eager, default, max-autotune, reduce-overhead."""
    tmp = tmp_path_factory.mktemp("compare")
    cmd = CLI + [
        "compare",
        str(MODELS / "mlp.py"),
        "--device",
        "cpu",
        "--train",
        "--modes",
        "default,max-autotune,reduce-overhead",
        "--repeat",
        "20",
        "--processes",
        "1",  # the step times are compare's own; its breakdowns' windows are tested elsewhere
        "--out",
        str(tmp / "run"),
        "--json",
        str(tmp / "compare.json"),
    ]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=900)
    return proc, tmp


def _code_text(path: Path) -> str:
    return "\n".join(ln for ln in path.read_text().splitlines() if not ln.lstrip().startswith("# kernel path:"))


def test_columns_that_compiled_the_same_code_are_grouped_and_said_so():
    """Two cold caches write the same code under other kernel paths: the same digest. The
    note tells a reader that their breakdown rows differ by process, not by mode."""
    from inductor_bench.core.compare import same_code_groups
    from inductor_bench.core.compiled_from import code_digest

    a = "def call(args):\n    # kernel path: /tmp/cache-a/ab/cabc.py\n    k(buf0)\n"
    b = a.replace("/tmp/cache-a/ab/cabc.py", "/tmp/cache-b/ab/cabc.py")
    assert code_digest(a) == code_digest(b) != code_digest(a.replace("k(buf0)", "k(buf1)"))
    codes = {"default": {"0-forward": "x", "0-backward": "y"}, "max-autotune": {"0-backward": "y", "0-forward": "x"},
             "reduce-overhead": {"0-forward": "x", "0-backward": "z"}, "eager": {},
             "other": {"0-forward": "x"}}  # a graph fewer: not the same
    assert same_code_groups(codes) == [["default", "max-autotune"]]
    assert same_code_groups({"eager": {}, "default": {}}) == []
    r = CompareResult(model="m", modes=[ModeResult(mode="default"), ModeResult(mode="max-autotune")],
                      same_code=[["default", "max-autotune"]])
    text = " ".join(render_compare(r).split())
    assert ("default and max-autotune compiled the same code for every graph: the kernels are the same, so where "
            "their rows from the breakdowns (busy %, % of peak, the % rows) differ, the processes that profiled "
            "them differ, not the modes; the step row, both timed in one process, compares them") in text
    assert CompareResult.from_dict(json.loads(r.to_json())).same_code == [["default", "max-autotune"]]


def test_a_columns_code_is_read_from_its_modules_only_when_every_graph_was_measured(tmp_path):
    from inductor_bench.core.compiled_from import code_digest
    from inductor_bench.runner.compare_columns import codes

    (tmp_path / "graphs").mkdir()
    (tmp_path / "graphs" / "f.py").write_text("def call(args):\n    pass\n")
    graphs = [GraphResult("0-forward", "forward", module="graphs/f.py"),
              GraphResult("0-backward", "backward", module="graphs/b.py")]
    m = ModeResult(mode="default", run_dir=str(tmp_path), breakdown=BreakdownResult("m", graphs=graphs[:1]))
    assert codes(m) == {"0-forward": code_digest("def call(args):\n    pass\n")}
    m.breakdown.graphs = graphs  # a module missing on disk: nothing said
    assert codes(m) == {}
    m.breakdown.graphs = [GraphResult("0-forward", "forward", module="graphs/f.py", status="failed")]
    assert codes(m) == {}
    assert codes(ModeResult(mode="eager")) == {}


@pytest.mark.e2e
def test_compare_mlp_prints_the_table_and_keeps_the_samples(mlp_compare):
    proc, tmp = mlp_compare
    assert proc.returncode == 0, proc.stderr[-2000:]
    r = CompareResult.from_dict(json.loads((tmp / "compare.json").read_text()))
    assert proc.stdout.startswith(headlines(r))
    assert "inductor-bench compare: mlp: train step (forward + backward), float32" in proc.stdout
    assert [m.mode for m in r.modes] == ["eager", "default", "max-autotune", "reduce-overhead"]
    assert r.device == "cpu" and r.train and r.repeat == 20
    eager, default, autotune, ro = r.modes
    assert (eager.status, eager.compile_s, eager.breakdown) == ("ok", 0.0, None)
    assert len(eager.step_samples_ms) == 20
    for m in (default, autotune):
        assert m.status == "ok", m.reason
        assert m.compile_s > 0
        assert len(m.step_samples_ms) == 20 and all(x > 0 for x in m.step_samples_ms)
        assert m.peak_memory_bytes > 0
        assert {g.role for g in m.breakdown.graphs} == {"forward", "backward"}
        assert m.kernel_count() > 0
        assert 0 < m.breakdown.totals().busy_pct <= 100
        assert m.breakdown.mode == m.mode
        assert (Path(m.run_dir) / "breakdown.json").exists()
        # torch's compile timers by phase: within the first call, which the tool timed on its own
        phases = compile_phases.of_compiles(m.breakdown.compiles)
        assert phases and 0 < sum(phases.values()) <= m.compile_s * 1.02 + 0.05
    assert "\ncompile: " in proc.stdout  # a row per phase (the table strips the indent)
    assert ro.status == Status.SKIPPED and "CUDA graphs need a CUDA device" in ro.reason
    # --repeat 20: exactly 20 interleaved calls per column that ran, in the same rounds
    for m in (eager, default, autotune):
        assert sum(len(b) for b in m.paired_ms) == 20 and m.samples == [x for b in m.paired_ms for x in b]
    assert len(eager.paired_ms) == len(default.paired_ms) == r.interleaved["rounds"]
    assert ro.paired_ms == [] and (tmp / "run" / "logs" / "timer.log").exists()
    # the same code: every graph's module text, kernel-path comments aside, equal in both columns
    texts = [{g.id: _code_text(Path(m.run_dir) / g.module) for g in m.breakdown.graphs} for m in (default, autotune)]
    assert r.same_code == ([["default", "max-autotune"]] if texts[0] == texts[1] else [])
    assert ("default and max-autotune compiled the same code for every graph" in " ".join(proc.stdout.split())) == (
        texts[0] == texts[1])
    saved = load_compare(tmp / "run")
    assert saved.to_dict() == r.to_dict()
    assert (tmp / "run" / "report.txt").read_text().startswith(headlines(r))


@pytest.mark.e2e
def test_a_compare_diffed_with_itself_is_within_noise(mlp_compare, capsys):
    _, tmp = mlp_compare
    try:
        cli.main(["diff", str(tmp / "run"), str(tmp / "compare.json"), "--fail-on-regression", "0"])
        code = 0
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr().out
    assert "not compared: reduce-overhead: both skipped (CUDA graphs need" in out
    saved = load_compare(tmp / "run")
    disturbed = [m.label for m in saved.modes if timed(m) and quiet_moments(saved, m)]
    if not disturbed:
        assert code == 0
        assert out.startswith("NO SIGNIFICANT CHANGE: ")
        return
    # a machine so busy that most of a column's rounds were disturbed: that column's step is
    # not comparable, even against itself (docs/compare-and-diff.md), and each such one is named
    assert code == 5
    assert out.startswith("NOT COMPARABLE, so the 0% gate fails: ")
    for label in disturbed:
        assert f"{label}: a steady step not measured in base (" in out


@pytest.mark.e2e
def test_a_failing_model_fails_every_mode_and_still_writes_the_result(tmp_path):
    model = tmp_path / "broken.py"
    model.write_text("def make_workload(device):\n    raise RuntimeError('no weights here')\n")
    cmd = CLI + ["compare", str(model), "--device", "cpu", "--out", str(tmp_path / "run")]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "no weights here" in proc.stderr.strip().splitlines()[-1]
    r = load_compare(tmp_path / "run")
    assert [(m.mode, m.status) for m in r.modes] == [
        ("eager", "failed"),
        ("default", "failed"),
        ("max-autotune", "failed"),
    ]
    assert all("no weights here" in m.reason for m in r.modes)
    assert proc.stdout.startswith("NO MODE COMPLETED: ")


def _has_cuda() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.e2e
def test_device_errors_stop_the_remaining_modes(tmp_path, monkeypatch):
    """A device error that only the worker's torch can see (here: the check made before any
    worker, tests/test_presence.py, is bypassed) stops the modes after it."""
    if _has_cuda():
        pytest.skip("needs a machine without CUDA")
    monkeypatch.setattr("inductor_bench.runner.compare.check_requested", lambda device: None)
    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cuda")
    _, _, err = run_compare(opts, parse_modes("default,max-autotune"), out=tmp_path)
    assert isinstance(err, DeviceError) and err.exit_code == 2
    assert str(err).startswith("--device cuda: CUDA is not available here (torch "), err
    r = load_compare(tmp_path)
    assert [(m.mode, m.status) for m in r.modes] == [
        ("eager", "failed"),
        ("default", "skipped"),
        ("max-autotune", "skipped"),
    ]
    assert r.modes[1].reason.startswith("not run: --device cuda: CUDA is not available")
