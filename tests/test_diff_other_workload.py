"""`diff` of two results that ran other workloads (another batch size, dtype, autocast): the
figures are shown side by side as before, none is judged faster or slower (no regression), every
judged row reads `not comparable: batch size 64 -> 128`, and `--fail-on-regression` fails in one
line, exit 5. The results are the recorded CPU breakdowns of models/mlp.py and mlp_slow.py and
the recorded compare of mlp.py, their batch size set here; no torch runs."""

from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from inductor_bench import cli
from inductor_bench.core.compare import CompareResult
from inductor_bench.core.other_workload import other_workload

from .steady_rule import limit

RESULTS = Path(__file__).parent / "fixtures" / "results"
COMPARE = RESULTS / "cpu_mlp_compare" / "compare.json"


def _diff(capsys, *args: str) -> tuple[int, str, str]:
    try:
        cli.main(["diff", *map(str, args)])
        code = 0
    except SystemExit as e:
        code = int(e.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _copy(src: Path, dst: Path, **fields) -> Path:
    data = json.loads(src.read_text())
    data.update(fields)
    dst.write_text(json.dumps(data))
    return dst


def _steady_ms(xs: list[float]) -> float:
    """A step figure by docs/statistics.md: the mean of the samples within the limit."""
    return statistics.fmean([x for x in xs if x <= limit(xs)])


def test_two_compares_of_other_batch_sizes_are_shown_unjudged_and_fail_the_gate(tmp_path, capsys):
    """max-autotune 1.5x slower in head, at batch 128 against base's 64: it read `REGRESSION
    +50.0%` and the gate exited 1. Now each mode's step times are the compares' own, side by side,
    judged by none, and the gate is not comparable."""
    raw = json.loads(COMPARE.read_text())
    base = _copy(COMPARE, tmp_path / "base.json", batch_size=64)
    raw["modes"][2]["step_samples_ms"] = [1.5 * x for x in raw["modes"][2]["step_samples_ms"]]
    head = tmp_path / "head.json"
    head.write_text(json.dumps({**raw, "batch_size": 128}))

    code, out, err = _diff(capsys, base, head, "--fail-on-regression", "10")
    assert (code, err) == (5, "inductor-bench: error: not comparable, no verdict: the baseline ran another "
                               "workload: batch size 64 -> 128\n")
    ms = [(_steady_ms(m["step_samples_ms"]), _steady_ms(h["step_samples_ms"]))
          for m, h in zip(json.loads(COMPARE.read_text())["modes"][:3], raw["modes"][:3], strict=True)]
    phrases = [f"{mode}: step time {b:.4g} -> {h:.4g} ms ({100 * (h / b - 1):+.1f}%, not comparable: batch "
               "size 64 -> 128)" for mode, (b, h) in zip(("eager", "default", "max-autotune"), ms, strict=True)]
    assert out.splitlines()[0] == (
        "NOT COMPARABLE, so the 10% gate fails: the baseline ran another workload: batch size 64 -> 128: the "
        "figures are shown side by side, none judged faster or slower | " + " | ".join(phrases))
    # each step row: the change without an interval (nothing judged), the verdict cell says why
    steps = [re.split(r"\s{2,}", ln)[-2:] for ln in out.splitlines() if ln.startswith("step time, ms")]
    assert steps == [["+0.0%", "not comparable: batch size 64 -> 128"]] * 2 + [
        [f"{100 * (ms[2][1] / ms[2][0] - 1):+.1f}%", "not comparable: batch size 64 -> 128"]]
    # below the verdict line, above the rule's fine print (which says what significant means)
    body = out.split("times = means")[0].split("\n", 1)[1]
    assert "significant" not in body and "within noise" not in body and "slower" not in body

    code, out, _ = _diff(capsys, base, head, "--format", "json")
    d = json.loads(out)
    assert code == 0  # no gate asked for
    assert (d["status"], d["other_workload"]) == ("not comparable", ["batch size 64 -> 128"])
    for s, (b, h) in zip(d["sections"], ms, strict=True):
        assert (s["step"]["base"]["ms"], s["step"]["head"]["ms"]) == pytest.approx((b, h), rel=1e-12)
        assert s["step"]["verdict"] == "other workload"
        assert s["other_workload"] == ["batch size 64 -> 128"]
        assert {c["verdict"] for c in s["categories"]} <= {"other workload"}
        assert {k["status"] for k in s["kernels"]} <= {"other workload", "added", "removed"}


def test_two_breakdowns_of_other_batch_sizes_keep_their_figures_and_judge_none(tmp_path, capsys):
    """mlp against mlp_slow, recorded at one batch size, read `REGRESSION +289.5%` (exit 1 at a
    10% gate); the same runs marked batch 64 and 32 keep every figure, judge none."""
    base = RESULTS / "cpu_mlp_train_autotune" / "breakdown.json"
    head = RESULTS / "cpu_mlp_slow_train" / "breakdown.json"
    _, same, _ = _diff(capsys, base, head, "--format", "json")
    other_base = _copy(base, tmp_path / "base.json", batch_size=64)
    other_head = _copy(head, tmp_path / "head.json", batch_size=32)
    code, out, err = _diff(capsys, other_base, other_head, "--fail-on-regression", "10")
    assert (code, err.splitlines()) == (5, ["inductor-bench: error: not comparable, no verdict: the baseline "
                                            "ran another workload: batch size 64 -> 32"])
    assert out.startswith("NOT COMPARABLE, so the 10% gate fails: the baseline ran another workload: batch size "
                          "64 -> 32: the figures are shown side by side, none judged faster or slower | default: "
                          "all graphs 2.689 -> 10.474 ms (+289.5%, not comparable: batch size 64 -> 32)\n")
    assert "C++ reduction           0.5653      2.208      +1.6427  +290.6%   not comparable: batch size 64 -> 32" \
        in out
    matched = out.split("Matched kernels, another workload on each side: not judged (5)\n")[1].split("\n\n")[0]
    assert [ln.split()[1] for ln in matched.splitlines()[2:]] == [  # the biggest change first
        "aten::mm", "aten::addmm", "cpp_fused_gelu_native_layer_norm_0",
        "cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_2",  # whole: a pipe
        "cpp_fused_sum_3"]
    assert "Added kernels (6)" in out and "Removed kernels (2)" in out  # what they are, on any workload
    _, page, _ = _diff(capsys, other_base, other_head, "--format", "html")
    assert ".k-other-workload{fill:#b4b8bd" in page  # the kernel chart's bars of them: grey, not black
    _, data, _ = _diff(capsys, other_base, other_head, "--format", "json")
    was, now = json.loads(same)["sections"][0], json.loads(data)["sections"][0]
    for key in ("step", "kernel_time"):
        assert {k: v for k, v in now[key].items() if k != "verdict"} == \
            {k: v for k, v in was[key].items() if k != "verdict"}
    assert [(k["name"], k["base_ms"], k["head_ms"]) for k in now["kernels"]] == \
        [(k["name"], k["base_ms"], k["head_ms"]) for k in was["kernels"]]


def test_the_workload_options_that_make_another_workload():
    base = CompareResult(model="mlp", dtype="float32", batch_size=64)
    assert other_workload(base, CompareResult(model="mlp", dtype="bfloat16", autocast=True, batch_size=8)) == [
        "dtype float32 -> bfloat16", "autocast off -> on", "batch size 64 -> 8"]
    assert other_workload(base, CompareResult(model="mlp_slow", dtype="float32", batch_size=64)) == []
    # a batch size not recorded on one side (a script's, an older run's) is not known to differ
    assert other_workload(base, CompareResult(model="mlp", batch_size=None)) == []
