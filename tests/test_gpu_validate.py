"""scripts/gpu_validate.sh: the refusal without a GPU, the parts that need no compile (checks on
saved results, pytest output, the report and the bundles), and a dry run on CPU (e2e)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from .conftest import FIXTURES, ROOT, _cuda

sys.path.insert(0, str(ROOT / "scripts"))
import gpu_validate as gv  # noqa: E402
import gpu_validate_checks as ck  # noqa: E402
import gpu_validate_parts as parts  # noqa: E402
import gpu_validate_report as rep  # noqa: E402

SCRIPT = ROOT / "scripts" / "gpu_validate.sh"
CHECK_LINE = re.compile(r"^(PASS|FAIL|SKIPPED) [^:]+: .+$")
OUT_FILES = {"report.md", "results.json", "fixtures.tar.gz", "logs.tar.gz", "console.log"}


@pytest.mark.skipif(_cuda(), reason="this machine has a GPU")
def test_refuses_without_a_gpu_in_one_line_and_does_nothing(tmp_path):
    out = tmp_path / "out"
    p = subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU" in lines[0] and "--dry-run" in lines[0], p.stderr
    assert not out.exists()


def test_tolerances_are_relative_plus_absolute():
    t = ck.Tolerance(0.10, 0.005)
    assert t.allows(1.09, 1.0) and t.allows(0.91, 1.0)
    assert not t.allows(1.2, 1.0)
    assert t.allows(0.008, 0.004)  # microsecond kernels: the absolute term
    assert str(ck.STEP_TIME) == "±15% + 50 µs"


def _run(bd: dict, label: str = "mlp-train-default", rc: int = 0) -> ck.Run:
    return ck.Run(label, ROOT / "models" / "mlp.py", True, "default", Path("/nonexistent"), rc=rc, bd=bd)


def test_busy_check_reads_what_breakdown_json_has():
    bd = {
        "status": "ok",
        "graphs": [
            {
                "id": "0-forward",
                "wall_ms": 2.0,
                "busy_ms": 1.5,
                "kernel_ms": 1.6,
                "pipelined": {"wall_ms": 1.0, "busy_ms": 0.9},
                "a_new_field": {"x": 1},
            },
            {"id": "0-backward", "wall_ms": 3.0, "busy_ms": 2.0, "kernel_ms": 2.5},
        ],
        "a_new_top_level_field": 1,
    }
    [c] = ck.check_busy(None, _run(bd))
    assert c.status == "PASS" and "0-forward 75% (pipelined 90%)" in c.numbers, c.numbers
    bd["graphs"][1]["busy_ms"] = 3.5  # above wall: over 100%
    [c] = ck.check_busy(None, _run(bd))
    assert c.status == "FAIL" and "0-backward" in c.numbers.split("over the limit")[1]
    bd["graphs"][1].pop("busy_ms")  # a field that went away is a failure to check, not a crash
    [c] = ck.check_busy(None, _run(bd))
    assert c.status == "FAIL" and "no busy_ms" in c.numbers
    assert ck.check_busy(None, _run({}))[0].status == "SKIPPED"


def test_the_python_check_reads_the_profiled_steps_split():
    """Synthetic results: the layers must add up to the time in no op, and a GPU run must have
    the harness's synchronize among them."""
    layers = [{"name": "Dynamo (frame entry, guards, its wrappers)", "ms": 0.3, "top": "f", "top_ms": 0.3},
              {"name": "torch.cuda (its synchronize waits for the device)", "ms": 0.2, "top": "g", "top_ms": 0.2}]
    outside = {"uncovered_ms": 0.5, "python": layers, "python_error": "", "error": ""}
    bd = {"device": "cuda", "extras": {"outside": outside}}
    [c] = ck.check_outside_python(None, _run(bd))
    assert c.status == "PASS" and "Dynamo" in c.numbers, c.numbers
    outside["uncovered_ms"] = 0.6
    [c] = ck.check_outside_python(None, _run(bd))
    assert c.status == "FAIL" and "the layers sum to 0.5 ms, not 0.6" in c.numbers
    outside["uncovered_ms"], outside["python"] = 0.3, layers[:1]
    [c] = ck.check_outside_python(None, _run(bd))
    assert c.status == "FAIL" and "no torch.cuda layer" in c.numbers
    bd["device"] = "cpu"
    assert ck.check_outside_python(None, _run(bd))[0].status == "PASS"
    outside["python_error"] = "RuntimeError: tracer"
    assert ck.check_outside_python(None, _run(bd))[0].status == "FAIL"
    assert ck.check_outside_python(None, _run({}))[0].status == "SKIPPED"


def test_the_unprofiled_pipelined_run_is_never_slower_than_the_profiled_one():
    def bd(plain_wall: float, plain_launch: float) -> dict:
        pipe = {"wall_ms": 0.10, "busy_ms": 0.058, "launch_ms": 0.010,
                "plain_wall_ms": plain_wall, "plain_launch_ms": plain_launch}
        return {"status": "ok", "graphs": [{"id": "0-forward", "pipelined": pipe}]}

    [c] = ck.check_pipelined_plain(_Ctx("cuda"), _run(bd(0.065, 0.004)))
    assert c.status == "PASS" and c.numbers == (
        "0-forward: wall 0.1 ms profiled, 0.065 plain (launch-bound -> device-bound), launch 0.01 -> 0.004 ms")
    assert ck.check_pipelined_plain(_Ctx("cuda"), _run(bd(0.114, 0.004)))[0].status == "PASS"  # 0.1 * 1.1 + 0.005
    [c] = ck.check_pipelined_plain(_Ctx("cuda"), _run(bd(0.116, 0.004)))
    assert c.status == "FAIL" and c.numbers.endswith("slower without the profiler than with it: 0-forward")
    assert ck.check_pipelined_plain(_Ctx("cuda"), _run(bd(0.065, 0.0161)))[0].status == "FAIL"  # launch
    assert ck.check_pipelined_plain(_Ctx("cpu"), _run({"graphs": [{"id": "0-forward"}]}))[0].status == "SKIPPED"
    assert ck.check_pipelined_plain(_Ctx("cuda"), _run({"graphs": [{"id": "0-forward"}]}))[0].status == "FAIL"


def test_the_saved_synthetic_cuda_result_through_the_pure_checks():
    bd = json.loads((FIXTURES / "results" / "synthetic_cuda_breakdown" / "breakdown.json").read_text())
    run = _run(bd, rc=4)
    [ok] = ck.check_run_ok(None, run)
    assert ok.status == "FAIL" and "0-backward" in ok.numbers  # the timed-out graph is named
    assert ck.check_busy(None, run)[0].status == "PASS"
    picks = ck.triton_kernels(bd)
    assert [k["name"] for _, k in picks][:2] == ["triton_red_fused_sum_3", "triton_poi_fused_gelu_2"]
    assert all(k.get("file") for _, k in picks)  # the template without a file is left out
    assert ck.step_samples(bd) and ck.step_samples({"step_samples_ms": [1.0, "x"]}) == [1.0]


def test_kernel_config_counts_and_the_patch_against_torchs_mode_table():
    d = json.loads((FIXTURES / "golden" / "kernel-red-max-autotune.json").read_text())
    c = ck.check_kernel_configs("0-forward/k", d)
    assert c.status == "PASS"
    assert (
        "baseline 1 candidate(s), 1 tried" in c.numbers
        and "max-autotune 5 candidate(s), 12 tried" in c.numbers
    )
    table = {"max_autotune": "True", "triton.cudagraphs": "True", "coordinate_descent_tuning": "True"}
    assert ck.check_autotune_patch("k", d, table).status == "PASS"
    assert ck.check_autotune_patch("k", d, {**table, "max_autotune_pointwise": "True"}).status == "FAIL"
    assert ck.check_autotune_patch("k", d, None).status == "SKIPPED"
    template = {
        "runs": [{"mode": "baseline", "space_size": 1, "tried": 1, "ms": 0.1}],
        "notes": ["a template kernel keeps the config chosen at compile time"],
    }
    assert ck.check_kernel_configs("t", template).status == "PASS"
    assert ck.check_kernel_configs("t", {"runs": []}).status == "FAIL"


class _Ctx:
    def __init__(self, device: str, smi: str = "NVIDIA H100, 570.1, 1980, 1980, 40, 120 W") -> None:
        self.device, self.info = device, {"nvidia_smi": smi}


def _loaded(*loads: dict) -> dict:
    """A breakdown.json whose graphs report window 1 of two (the other window's load differs)."""
    other = {"others_cores": 9.0, "steal_pct": 50.0, "cores": 16, "gpu_others": 7, "gpu_slowdown": "x"}
    return {"status": "ok", "graphs": [
        {"id": f"0-g{i}", "window": 1, "window_load": [other, x]} for i, x in enumerate(loads)]}


QUIET_GPU = {"others_cores": 0.1, "steal_pct": 0.0, "cores": 16, "gpu_others": 0, "gpu_slowdown": ""}
BUSY_GPU = {**QUIET_GPU, "gpu_others": 1}


def test_the_quiet_check_reads_the_reported_windows_load():
    gpu = _Ctx("cuda")
    [c] = ck.check_quiet(gpu, _run(_loaded(QUIET_GPU, QUIET_GPU)))
    assert c.status == "PASS" and "0-g0: others 0.1 cores, steal 0%, gpu_others 0" in c.numbers, c.numbers
    [c] = ck.check_quiet(gpu, _run(_loaded(QUIET_GPU, BUSY_GPU)))  # the tool's own worker counted?
    assert c.status == "FAIL" and "counted for 0-g1 while this run ran alone" in c.numbers
    host = {"others_cores": 0.1, "steal_pct": 0.0, "cores": 2}  # the GPU never read
    assert ck.check_quiet(gpu, _run(_loaded(host)))[0].status == "FAIL"
    assert ck.check_quiet(_Ctx("cuda", "not available (FileNotFoundError)"), _run(_loaded(host)))[0].status == "SKIPPED"
    assert ck.check_quiet(_Ctx("cpu"), _run(_loaded(host)))[0].status == "SKIPPED"
    assert ck.check_quiet(gpu, _run({"status": "ok", "graphs": [{"id": "0-g0"}]}))[0].status == "FAIL"


def test_the_disturbed_check_needs_the_reading_and_the_report_line():
    gpu, said = _Ctx("cuda"), "0-g0 was measured while 1 other process used the GPU: its times may be inflated"
    assert ck.check_disturbed(gpu, _run(_loaded(BUSY_GPU)), said)[0].status == "PASS"
    [c] = ck.check_disturbed(gpu, _run(_loaded(BUSY_GPU, QUIET_GPU)), said)
    assert c.status == "FAIL" and "not seen for 0-g1" in c.numbers
    [c] = ck.check_disturbed(gpu, _run(_loaded(BUSY_GPU)), "no warning printed")
    assert c.status == "FAIL" and "does not say 'used the GPU'" in c.numbers
    spun = {"others_cores": 0.97, "steal_pct": 0.0, "cores": 2}  # the host: one core spinning
    text = "0-g0 was measured while other processes kept 1.0 of 2 cores busy: ..."
    assert ck.check_disturbed(_Ctx("cpu"), _run(_loaded(spun)), text)[0].status == "PASS"
    assert ck.check_disturbed(_Ctx("cpu"), _run(_loaded({**spun, "others_cores": 0.2})), text)[0].status == "FAIL"


def test_what_nvml_showed_the_probe_decides_whether_a_count_proves_anything():
    hidden = _Ctx("cuda")
    hidden.info["nvml"] = {"version": "13.615", "pids": [], "own_pid": 77, "own_listed": False}
    [c] = ck.check_quiet(hidden, _run(_loaded(QUIET_GPU)))
    assert c.status == "SKIPPED" and "not even the probe's own" in c.numbers
    assert ck.check_disturbed(hidden, _run(_loaded(QUIET_GPU)), "")[0].status == "SKIPPED"
    shown = _Ctx("cuda", "not available (FileNotFoundError)")  # NVML answers where nvidia-smi does not
    shown.info["nvml"] = {"version": "13.615", "pids": [77, 901], "own_pid": 77, "own_listed": True}
    assert ck.check_quiet(shown, _run(_loaded(QUIET_GPU)))[0].status == "PASS"
    host = {"others_cores": 0.1, "steal_pct": 0.0, "cores": 2}
    assert ck.check_quiet(shown, _run(_loaded(host)))[0].status == "FAIL"  # readable, yet not read
    assert rep.nvml_seen(shown.info["nvml"]) == (
        "NVML 13.615: the probe (pid 77) saw 2 compute process(es) on the GPU (77, 901), its own pid "
        "among them")
    assert rep.nvml_seen(hidden.info["nvml"]).endswith("saw 0 compute process(es) on the GPU (none), "
                                                       "its own pid NOT among them")


def test_the_compare_quiet_check_covers_the_timer_and_every_column():
    cmp = {"interleaved": {"load": QUIET_GPU},
           "modes": [{"mode": "default", "label": "default", "step_load": QUIET_GPU},
                     {"mode": "reduce-overhead", "label": "reduce-overhead", "step_load": BUSY_GPU}]}
    [c] = ck.check_compare_quiet(_Ctx("cuda"), cmp)
    assert c.status == "FAIL" and c.numbers.endswith("others counted for reduce-overhead"), c.numbers
    cmp["modes"][1]["step_load"] = QUIET_GPU
    assert ck.check_compare_quiet(_Ctx("cuda"), cmp)[0].status == "PASS"
    assert ck.check_compare_quiet(_Ctx("cpu"), cmp)[0].status == "SKIPPED"
    assert ck.check_compare_quiet(_Ctx("cuda"), {"modes": []})[0].status == "FAIL"


PYTEST_OUTPUT = """\
============================= test session starts ==============================
collected 14 items / 2 deselected / 12 selected

tests/test_gpu_breakdown.py::test_cuda_transformer_train PASSED          [  8%]
tests/test_gpu_breakdown.py::test_cuda_kernel_time_agrees_with_independent_profile FAILED [ 16%]
tests/test_kernel_gpu.py::test_baseline_ms_matches_do_bench[triton_red_fused_sum_0] PASSED [ 25%]
"""


def test_pytest_outcomes_survive_a_stop():
    res = gv.parse_pytest(PYTEST_OUTPUT)
    assert res["selected"] == 12 and res["counts"] == {"PASSED": 2, "FAILED": 1}
    c = gv.check_pytest(res, None, True, 180.0)
    assert c.status == "FAIL" and "9 not reached (budget ran out)" in c.numbers
    assert "test_cuda_kernel_time_agrees_with_independent_profile" in c.numbers
    skipped = gv.parse_pytest("collected 3 items\ntests/a.py::t SKIPPED (needs CUDA)\n")
    assert gv.check_pytest(skipped, 0, False, 3.0).status == "SKIPPED"


def test_budget_selection_and_the_matrix_order(tmp_path):
    b = gv.Budget(100.0, reserve_s=20.0)
    assert b.grant(30, 10) == 30 and b.grant(500, 10) == pytest.approx(80, abs=1) and b.grant(30, 90) is None
    assert gv.selected("check:graph-time", ["check"], []) and not gv.selected("kernel", ["check"], [])
    assert not gv.selected("check:step-time", [], ["check:step-time"])
    a = gv.parse_args([str(tmp_path / "o"), "--work", str(tmp_path / "w")])
    assert (a.parts, a.jobs, a.models) == ([1, 2, 3, 4, 5], 3, "all")
    assert a.budget == 460 + 460 + 280 + 280 + 460  # every part in turn: the sum of their budgets
    ctx = gv.Ctx(a, {"cuda": True}, {})
    entries = gv.matrix_entries(ctx)
    assert entries[0] == ("densenet", True, "default")  # models in MODEL_ORDER
    assert ("mlp", False, "reduce-overhead") in entries
    # part 1 runs mlp and transformer_block training in both modes: the matrix does not repeat them
    assert not {(m, mode) for m, train, mode in entries if train} & {(m, mode) for _, m, mode in gv.MAIN_RUNS}
    kinds = [(train, mode) for _, train, mode in entries]
    assert kinds == sorted(
        kinds, key=lambda k: gv.MATRIX_GPU.split(",").index(f"{'train' if k[0] else 'inference'}:{k[1]}")
    )  # breadth first: every model once per kind
    assert gv.is_script(ROOT / "models" / "graph_break_script.py") and not gv.is_script(
        ROOT / "models" / "mlp.py"
    )
    with pytest.raises(SystemExit):
        gv.parse_args([str(tmp_path / "o"), "--only", "nonsense"])
    with pytest.raises(SystemExit):  # a step of another part
        gv.parse_args([str(tmp_path / "o"), "--part", "1", "--only", "matrix"])
    ctx.finish()


def test_a_step_may_use_what_the_steps_before_it_left_and_no_more(tmp_path):
    a = gv.parse_args([str(tmp_path / "o"), "--part", "1", "--work", str(tmp_path / "w")])
    ctx = gv.Ctx(a, {"cuda": True}, {})
    granted = []

    def step(key: str, cap: float, takes: float) -> gv.Step:
        def fn(c, rec, dl):
            granted.append(dl.left())
            time.sleep(takes)
        return gv.Step(key, key, fn, cap, 0.0, cap)

    ctx.budget = gv.Budget(20.0, reserve_s=0.0)  # this test's own budget: its three caps add up to it
    for s in (step("a", 6.0, 0.2), step("b", 6.0, 0.3), step("c", 8.0, 0.0)):
        ctx.run_step(s)
    # a used 0.2 of its 6 s; b was granted its 6 plus those 5.8; c its 8 plus what a and b left,
    # as far as the budget goes (20 s less what a and b and the reports took)
    assert granted[0] == pytest.approx(6.0, abs=0.1) and granted[1] == pytest.approx(11.8, abs=0.1)
    assert 8.0 < granted[2] <= 20.0 - 0.5
    assert ctx.banked_s == pytest.approx(6 - 0.2 + 6 - 0.3 + 8, abs=0.2)
    ctx.finish()


def test_every_parts_caps_fit_its_budget_and_every_step_runs_in_one_part():
    """The caps of a part add up to at most its budget less the start and the reserve, so no step
    is left out by design; each part ends within 8 minutes; the parts go into GPU sessions whose
    calls and machine start fit a session's 15 minutes of device time, part 1 first and alone."""
    for p in parts.PARTS:
        assert p.steps_s + parts.START_S + parts.RESERVE_S <= p.budget_s, p.number
        assert p.budget_s + parts.WATCHDOG_S + parts.KILL_AFTER_S == p.limit_s <= 480
        assert p.device_timeout_s() <= 600
    assert sum(p.device_timeout_s() for p in parts.PARTS) == 500 + 500 + 320 + 320 + 500
    groups = parts.sessions()
    assert [[p.number for p in g] for g in groups] == [[1], [2], [3, 4], [5]]
    for g in groups:
        assert parts.SESSION_START_S + sum(p.device_timeout_s() for p in g) <= 15 * 60
    keys = [s.key for p in parts.PARTS for s in p.steps]
    assert sorted(keys) == sorted(gv.STEPS) and len(set(keys)) == len(keys)
    assert [s.key for s in gv.plan([1, 2])][:2] == ["breakdown:mlp", "breakdown:transformer"]
    assert [s.key for s in gv.plan([2])][:2] == ["breakdown:mlp-ro", "breakdown:transformer-ro"]
    assert {"kernel", "check:do-bench", "check:graph-time", "check:step-time", "check:peaks"} <= {
        s.key for s in gv.plan([1])}
    assert {"check:graph-time-ro", "check:step-time-ro", "compare"} <= {s.key for s in gv.plan([2])}
    assert "disturbance" in {s.key for s in gv.plan([3])} and [s.key for s in gv.plan([5])] == ["pytest"]


def test_the_script_lists_the_parts_and_the_exact_device_calls():
    listing = subprocess.run(["bash", str(SCRIPT), "--list-parts"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    header = SCRIPT.read_text()
    for p in parts.PARTS:
        call = parts.device_call(p)
        assert call in listing and f"#   {call}" in header, call
    assert "run(command=\"scripts/gpu_validate.sh --part 1 $OUT/p1\", carry=[\".whl\"], timeout_s=500)" in listing
    assert "session 1: part 1, at most 500 s" in listing and "session 3: parts 3, 4, at most 640 s" in listing


@pytest.mark.skipif(_cuda(), reason="this machine has a GPU")
@pytest.mark.parametrize("part", [p.number for p in parts.PARTS])
def test_each_part_refuses_without_a_gpu_in_one_line(tmp_path, part):
    out = tmp_path / "out"
    p = subprocess.run(["bash", str(SCRIPT), "--part", str(part), str(out)], capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 2 and p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "no CUDA GPU" in lines[0], p.stderr
    assert not out.exists()


def test_a_part_that_does_not_exist_is_one_line_and_exit_2(tmp_path):
    p = subprocess.run(["bash", str(SCRIPT), "--part", "9", str(tmp_path / "o")], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode == 2 and p.stderr.strip() == "gpu_validate: no part '9'; parts: 1, 2, 3, 4, 5"


def _fake_run_dir(root: Path) -> Path:
    """A run directory built from saved results: the synthetic CUDA breakdown.json with real
    CPU modules and traces standing in at the paths it names."""
    run = root / "mlp-train-default"
    src = FIXTURES / "results" / "synthetic_cuda_breakdown" / "breakdown.json"
    bd = json.loads(src.read_text())
    (run / "graphs" / "0-forward" / "kernels").mkdir(parents=True)
    shutil.copyfile(src, run / "breakdown.json")
    shutil.copyfile(
        FIXTURES / "cpu_mlp_train" / "0-forward" / "module.py", run / "graphs/0-forward/module.py"
    )
    shutil.copyfile(
        FIXTURES / "cpu_mlp_train" / "0-forward" / "trace.json.gz", run / "graphs/0-forward/trace.json.gz"
    )
    for g in bd["graphs"]:
        for k in g["kernels"]:
            if k.get("file"):
                (run / k["file"]).write_text("# a kernel file\n")
    (run / "graphs" / "0-forward" / "pipelined.json.gz").write_bytes(b"x" * (rep.FIXTURE_FILE_MAX + 1))
    return run


def test_report_and_bundles_from_saved_results(tmp_path):
    a = gv.parse_args([str(tmp_path / "out"), "--dry-run", "--work", str(tmp_path / "w")])
    a.argv = ["--dry-run", "OUT"]
    ctx = gv.Ctx(a, {"python": "3.x", "torch": "t", "modules": {"triton": "3"}}, {})
    run_dir = _fake_run_dir(ctx.runs_dir)
    run = _run(json.loads((run_dir / "breakdown.json").read_text()))
    run.dir, run.seconds = run_dir, 12.0
    ctx.runs[run.label] = run
    rec = gv.StepRecord("breakdown:main", "breakdown MAIN --train (default)", status="ok")
    rec.figures.append(rep.breakdown_figures(ctx, run))
    kd = json.loads((FIXTURES / "golden" / "kernel-red-max-autotune.json").read_text())
    rec.figures.append(rep.kernel_figures("0-forward/triton_red_fused_sum_3", kd, 3.0, ["--max-autotune"]))
    cmp = json.loads((FIXTURES / "results" / "cpu_mlp_compare" / "compare.json").read_text())
    rec.figures.append(rep.compare_figures(cmp, 60.0))
    ctx.steps.append(rec)
    (ctx.cli / "breakdown-mlp-train-default.txt").write_text("the report text\n")
    for c in ck.check_busy(ctx, run) + [ck.Check("x", "SKIPPED", "needs CUDA")]:
        ctx.record(c)
    ctx.finish()
    assert {p.name for p in ctx.out.iterdir()} == OUT_FILES
    md = (ctx.out / "report.md").read_text()
    assert "DRY RUN" in md and "| PASS | busy<=100% mlp-train-default |" in md
    assert "| 0-forward | forward |" in md and "triton_red_fused_sum_3" in md
    assert "max-autotune" in md and "| reduce-overhead | skipped |" in md
    assert "autotune" in md.split("Also in breakdown.json:")[1]  # a field the tables do not show
    with tarfile.open(ctx.out / "fixtures.tar.gz") as tar:
        names = set(tar.getnames())
    base = "cpu_validate_dryrun/mlp-train-default"
    assert {
        f"{base}/breakdown.json",
        f"{base}/graphs/0-forward/module.py",
        f"{base}/graphs/0-forward/trace.json.gz",
        f"{base}/graphs/0-forward/kernels/triton_red_fused_sum_3.py",
        "cpu_validate_dryrun/README.md",
        "cpu_validate_dryrun/cli/breakdown-mlp-train-default.txt",
    } <= names
    assert f"{base}/graphs/0-forward/pipelined.json.gz" not in names  # over the size cap: listed instead
    assert any("pipelined.json.gz" in s for s in ctx.fixture_left_out)
    data = json.loads((ctx.out / "results.json").read_text())
    assert data["counts"] == {"PASS": 1, "FAIL": 0, "SKIPPED": 1}
    assert [s["key"] for s in data["steps"]] == ["breakdown:main"]


@pytest.mark.slow
@pytest.mark.e2e
def test_dry_run_of_part_1_on_cpu(tmp_path):
    """Part 1's plumbing on CPU with models/mlp.py alone: the breakdown, the independent
    measurements (their verdicts SKIPPED), kernel and do_bench SKIPPED, pytest -m gpu (skipped
    here), the report and the fixtures. The other main runs add compiles, not plumbing: left out."""
    out = tmp_path / "out"
    p = subprocess.run(
        [
            "bash",
            str(SCRIPT),
            "--part",
            "1",
            "--dry-run",
            str(out),
            "--skip",
            "breakdown:transformer",
            "--work",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert {q.name for q in out.iterdir()} == OUT_FILES
    body = p.stdout.split("\n\n== gpu_validate summary")[0].strip().splitlines()
    assert body and all(CHECK_LINE.match(line) for line in body), body
    md = (out / "report.md").read_text()
    assert md.startswith("# GPU validation of inductor-bench, part 1 — DRY RUN (CPU)")
    for line in (
        "| PASS | run mlp-train-default |",
        "| PASS | busy<=100% mlp-train-default |",
        "| PASS | python between ops mlp-train-default |",
        "| SKIPPED | kernel vs do_bench mlp-train-default |",
        "| SKIPPED | step time mlp-train-default | needs CUDA events",
        "| SKIPPED | graph kernel time mlp-train-default/0-forward | needs CUDA for a verdict",
        "| SKIPPED | quiet load mlp-train-default | needs a GPU",
    ):
        assert line in md, line
    with tarfile.open(out / "fixtures.tar.gz") as tar:
        names = set(tar.getnames())
    base = "cpu_validate_dryrun/mlp-train-default"
    assert {
        f"{base}/breakdown.json",
        f"{base}/graphs/0-forward/module.py",
        f"{base}/graphs/0-backward/trace.json.gz",
    } <= names


def test_dry_run_of_part_5_runs_the_gpu_tests_which_skip_without_cuda(tmp_path):
    """Part 5 is ``pytest -m gpu`` alone: on CPU every GPU test is collected and skipped, and
    what pytest printed comes back in the fixtures."""
    out = tmp_path / "out"
    p = subprocess.run(["bash", str(SCRIPT), "--part", "5", "--dry-run", str(out), "--work", str(tmp_path / "w")],
                       capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert {q.name for q in out.iterdir()} == OUT_FILES
    md = (out / "report.md").read_text()
    assert md.startswith("# GPU validation of inductor-bench, part 5 — DRY RUN (CPU)")
    assert re.search(r"\| SKIPPED \| pytest -m gpu \| \d+ skipped of \d+ selected", md), md[-2000:]
    with tarfile.open(out / "fixtures.tar.gz") as tar:
        assert "cpu_validate_dryrun/cli/pytest-gpu.txt" in set(tar.getnames())


def test_the_independent_graph_timing_runs_on_the_recorded_values(tmp_path):
    """``graph-time`` sets, with torch alone, the harness's inputs and the module's constants to
    the ``inputs.pt`` the tool recorded (synthetic module and record), as the tool profiles on
    them; a float past the budget is brought to its mean and deviation."""
    torch = pytest.importorskip("torch")
    import gpu_validate_measure as gm

    (tmp_path / "module.py").write_text(
        "import torch\n_frozen_param0 = None\n"
        "def get_args():\n"
        "    global _frozen_param0\n"
        "    _frozen_param0 = torch.zeros(3)\n"
        "    return [torch.zeros(2, dtype=torch.int64), torch.randn(1000), torch.zeros(4)]\n")
    torch.save({"inputs": {0: torch.tensor([5, 7]), 2: torch.zeros(5)},  # 2: another shape, kept
                "scales": {1: torch.tensor([3.0, 0.5], dtype=torch.float64)},
                "constants": {"names": ["_frozen_param0"], "values": {"_frozen_param0": torch.ones(3)}}},
               tmp_path / "inputs.pt")
    m = gm._load(str(tmp_path / "module.py"), "graph_time_values")
    args = m.get_args()
    gm._first_call_values(m, tmp_path / "module.py", args)
    assert args[0].tolist() == [5, 7] and args[2].tolist() == [0.0] * 4
    assert args[1].mean().item() == pytest.approx(3.0, abs=0.1) and args[1].std().item() == pytest.approx(0.5, rel=0.1)
    assert m._frozen_param0.tolist() == [1.0, 1.0, 1.0]


def test_the_traces_the_gpu_tests_keep_are_bundled(tmp_path):
    """What ``pytest -m gpu`` left in the traces directory (``INDUCTOR_BENCH_GPU_TRACES``) goes
    into the fixtures under ``gpu_tests/``, after the commands' output."""
    import types

    import gpu_validate_bundles as bundles

    cli, kept = tmp_path / "cli", tmp_path / "gpu-test-traces"
    for d in (cli, kept):
        d.mkdir()
    (cli / "pytest-gpu.txt").write_text("1 passed")
    (kept / "stack-loop.pt.trace.json.gz").write_bytes(b"\x1f\x8b")
    (kept / "stack-loop.analyze.txt").write_text("ranges restored: none")
    ctx = types.SimpleNamespace(runs={}, main_labels=[], runs_dir=tmp_path / "runs", cli=cli, gpu_test_traces=kept)
    assert [a for _, a in bundles.fixture_items(ctx, "cuda_validate")] == [
        "cuda_validate/cli/pytest-gpu.txt",
        "cuda_validate/gpu_tests/stack-loop.analyze.txt",
        "cuda_validate/gpu_tests/stack-loop.pt.trace.json.gz",
    ]
