"""A device kernel whose launch no CPU op encloses (apex's FusedAdam calls its
``multi_tensor_apply_kernel`` through its own bindings: a ``cudaLaunchKernel`` inside the
``Optimizer.step#FusedAdam.step`` range and no ``aten::`` op) is attributed to the range it was
launched in, not left with an empty ``launched by``. Checked on HTA's recorded A100 rank-0 trace
(tests/fixtures/hta/README.md: source and license) against the raw JSON: each launch found by
correlation, the ops and ``record_function`` ranges open around it on its thread."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.typical_step import steady_kernels
from inductor_bench.render.analyze import render_analyze

HTA = Path(__file__).parent / "fixtures" / "hta"
RANK0 = HTA / "negative_queue_length_values_check_rank0.json.gz"
ADAM = "multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>"


def _raw_launches(path: Path, part: str) -> list[tuple[tuple[str, ...], str | None, float]]:
    """(cpu ops around the launch, innermost range around it, kernel µs) of each kernel whose
    name holds ``part`` and whose launch is recorded."""
    with gzip.open(path) as f:
        events = json.load(f)["traceEvents"]
    launch = {e["args"]["correlation"]: e for e in events
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    host = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    out = []
    for k in (e for e in events if e.get("cat") == "kernel" and part in e["name"]):
        r = launch.get(k["args"]["correlation"])
        if r is None:
            continue
        around = [e for e in host if (e["pid"], e["tid"]) == (r["pid"], r["tid"])
                  and e["ts"] <= r["ts"] <= e["ts"] + e["dur"]]
        ops = tuple(e["name"] for e in around if e["cat"] == "cpu_op")
        ranges = [e for e in around if e["cat"] == "user_annotation" and not e["name"].startswith("ProfilerStep#")]
        inner = max(ranges, key=lambda e: e["ts"])["name"] if ranges else None
        out.append((ops, inner, k["dur"]))
    return out


def test_a_kernel_no_op_launched_names_the_range_it_was_launched_in():
    raw = _raw_launches(RANK0, ADAM)
    assert len(raw) == 90  # 5 steps of 18; 18 more ran from launches before the trace began
    assert {(ops, inner) for ops, inner, _ in raw} == {((), "Optimizer.step#FusedAdam.step")}
    r = analyze_file(RANK0)
    (row,) = [k for k in r.kernels if ADAM in k.name]
    assert row.launched_by == "no op, in Optimizer.step#FusedAdam.step"
    assert row.launchers == [row.launched_by]  # no op launched it: the range stands for one
    assert row.calls == len(raw)
    assert row.total_ms == pytest.approx(sum(us for *_, us in raw) / 1000, abs=1e-9)
    # no launching op decides: it stays in the fallback category, as torch's own foreach ops'
    # multi_tensor_apply_kernel launches are
    assert row.category == "extern_other"
    (typical,) = [k for k in steady_kernels(r) if ADAM in k.name]
    text = render_analyze(r, top=len(r.kernels))
    line = next(ln for ln in text.splitlines() if "AdamFunctor" in ln)
    assert line.rstrip().endswith("no op, in Optimizer.step#FusedAdam.step")
    assert typical.calls == 18


def test_a_kernel_with_a_launching_op_keeps_it():
    """Every other kernel of the trace with a launch has an op around it, and is named by it."""
    r = analyze_file(RANK0)
    bare = [k for k in r.kernels if k.launched_by and k.launched_by.startswith("no op, in ")]
    assert [k.name for k in bare] == [k.name for k in r.kernels if ADAM in k.name]
