"""Two compares whose columns compiled the same code: each column's kernels and categories are
judged as a breakdown diff judges them (``same code``), from the modules in each column's
directory; the column's step, the real model call, stays judged. A side whose step timing was
disturbed is named as such. Hand-built results."""

from __future__ import annotations

from pathlib import Path

from inductor_bench.core.compare import CompareResult, ModeResult
from inductor_bench.core.diff import FASTER, diff_results
from inductor_bench.core.load import Load
from inductor_bench.core.vocab import Outcome, Verdict

from .test_diff import base_result, bwd_kernels, fwd_kernels, graph, result
from .test_diff_same_code import MODULE

STEP = [4.0, 4.1, 3.9, 4.0, 4.05, 3.95, 4.0, 4.1, 3.9, 4.0, 4.0, 4.02]


def _compare(root: Path, name: str, bd, step_ms: list[float], module: str = MODULE) -> tuple[CompareResult, Path]:
    """A compare run directory ``root/name`` with one column, default, whose breakdown's modules
    are written under its own directory ``root/name/default``."""
    run = root / name
    column = run / "default"
    for g in bd.graphs:
        g.module = f"graphs/{g.id}/module.py"
        (column / g.module).parent.mkdir(parents=True, exist_ok=True)
        (column / g.module).write_text(module.format(cache=name))
    bd.run_dir = str(column)
    m = ModeResult(mode="default", compile_s=1.0, step_samples_ms=step_ms, breakdown=bd, run_dir=str(column))
    return CompareResult(model="mlp", device="cpu", device_name="Test CPU (2 cores)",
                         versions={"torch": "2.13.0"}, run_dir=str(run), modes=[m]), run


def _faster_gelu():
    """The base's forward GELU 0.5 ms faster per call: a kernel clearly faster by its times."""
    return result([graph("0-forward", fwd_kernels(gelu_ms=0.5)), graph("0-backward", bwd_kernels())])


def test_a_column_of_the_same_code_is_same_code_like_its_breakdowns(tmp_path):
    b, bdir = _compare(tmp_path, "a", base_result(), STEP)
    h, hdir = _compare(tmp_path, "b", _faster_gelu(), STEP)
    d = diff_results(b, h, code_dirs=(bdir, hdir))
    (s,) = d.sections
    assert s.same_code and d.status() == Outcome.SAME_CODE
    assert {k.status for k in s.kernels if k.change is not None} == {Verdict.SAME_CODE}
    assert {c.change.verdict for c in s.categories} == {Verdict.SAME_CODE}
    assert s.step.verdict == Verdict.WITHIN_NOISE
    # the breakdowns alone, diffed from the columns' directories, say the same
    alone = diff_results(b.modes[0].breakdown, h.modes[0].breakdown, code_dirs=(bdir / "default", hdir / "default"))
    assert alone.sections[0].same_code and alone.status() == Outcome.SAME_CODE


def test_a_slower_model_call_of_the_same_code_is_still_a_regression(tmp_path):
    b, bdir = _compare(tmp_path, "a", base_result(), STEP)
    h, hdir = _compare(tmp_path, "b", _faster_gelu(), [x * 1.5 for x in STEP])
    d = diff_results(b, h, code_dirs=(bdir, hdir))
    (s,) = d.sections
    assert not s.same_code and s.step.slower and d.status() == Outcome.REGRESSION
    assert {k.status for k in s.kernels if k.change is not None} == {Verdict.SAME_CODE}


def test_other_code_in_a_column_is_judged_as_usual(tmp_path):
    b, bdir = _compare(tmp_path, "a", base_result(), STEP)
    h, hdir = _compare(tmp_path, "b", _faster_gelu(), STEP, module=MODULE.replace("buf1)", "buf2)"))
    (s,) = diff_results(b, h, code_dirs=(bdir, hdir)).sections
    assert not s.same_code
    assert [k.name for k in s.kernels if k.status == FASTER] == ["cpp_fused_gelu_0"]


# ---- the compare's step timing load in each side's disturbed judgement -------------------------

BUSY = {"others_cores": 1.5, "steal_pct": 0.0, "cores": 2}  # another process on 1.5 of 2 cores
QUIET = {"others_cores": 0.0, "steal_pct": 0.0, "cores": 2}


def _timed_under(tmp_path: Path, name: str, load: dict) -> CompareResult:
    r, _ = _compare(tmp_path, name, base_result(), STEP)
    r.modes[0].paired_ms = [STEP[:4], STEP[4:8], STEP[8:]]
    r.interleaved = {"rounds": 3, "block_steps": [4], "load": load}
    return r


def test_a_busy_step_timing_marks_its_side_disturbed(tmp_path):
    d = diff_results(_timed_under(tmp_path, "a", BUSY), _timed_under(tmp_path, "b", QUIET))
    assert d.disturbed == ["base"]
    assert "base: steps timed while other processes kept 1.5 of 2 cores busy: the step times may be inflated" \
        in d.warnings
    d = diff_results(_timed_under(tmp_path, "c", QUIET), _timed_under(tmp_path, "d", BUSY))
    assert d.disturbed == ["head"]
    assert diff_results(_timed_under(tmp_path, "e", QUIET), _timed_under(tmp_path, "f", QUIET)).disturbed == []


def test_a_column_timed_on_its_own_under_load_marks_its_side_disturbed(tmp_path):
    base, _ = _compare(tmp_path, "a", base_result(), STEP)
    head, _ = _compare(tmp_path, "b", base_result(), STEP)
    head.modes[0].step_load = Load.from_dict(BUSY)
    d = diff_results(base, head)
    assert d.disturbed == ["head"]
    assert ("head: default: steps timed while other processes kept 1.5 of 2 cores busy: its step time may be "
            "inflated") in d.warnings
