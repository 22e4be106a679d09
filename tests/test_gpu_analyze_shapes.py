"""`analyze`'s GEMMs, convolutions and attention by shape on a CUDA trace profiled here: a bf16
loop of a convolution, a linear layer and attention, forward and backward. Every op's FLOPs
against torch's ``flop_counter``; a convolution's time against CUDA events around the same call;
each row's % of the datasheet peak below 100. Marked ``gpu``: skipped without CUDA."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.typical_step import steady_shaped_ops

pytestmark = [pytest.mark.gpu]
STEPS = 5  # active steps, after a warmup step
CONV_AGREEMENT = 0.25  # the conv's time under the profiler against CUDA events around it alone


def _workload(torch):
    torch.manual_seed(0)
    dev, bf16 = "cuda", torch.bfloat16
    conv = torch.nn.Conv2d(64, 128, 3, padding=1).to(dev, bf16)
    linear = torch.nn.Linear(1024, 1024).to(dev, bf16)
    x = torch.randn(32, 64, 56, 56, device=dev, dtype=bf16, requires_grad=True)
    t = torch.randn(4096, 1024, device=dev, dtype=bf16, requires_grad=True)
    q = torch.randn(8, 16, 1024, 64, device=dev, dtype=bf16, requires_grad=True)

    def step() -> None:
        attention = torch.nn.functional.scaled_dot_product_attention(q, q, q)  # not causal: as flop_counter
        (conv(x).float().mean() + linear(t).float().mean() + attention.float().mean()).backward()

    return step, conv, x


def _profiled(torch, step, path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile, schedule

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=STEPS),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(STEPS + 1):
            step()
            torch.cuda.synchronize()
            prof.step()


def _conv_ms(torch, conv, x, calls: int = 50) -> float:
    """The median of CUDA-event timings of the forward convolution alone."""
    times = []
    with torch.no_grad():
        for _ in range(calls):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            conv(x)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    torch = pytest.importorskip("torch")
    from torch.utils.flop_counter import FlopCounterMode

    step, conv, x = _workload(torch)
    path = tmp_path_factory.mktemp("cuda_shapes") / "trace.json"
    _profiled(torch, step, path)
    with FlopCounterMode(display=False) as counter:
        step()
    counts = {str(op).replace("aten.", "aten::"): float(n) for op, n in counter.get_flop_counts()["Global"].items()}
    return analyze_file(path), counts, _conv_ms(torch, conv, x)


def test_every_ops_flops_against_the_flop_counter(recorded):
    r, counts, _ = recorded
    per_op: dict[str, float] = {}
    for row in r.shaped_ops:
        per_op[row.op] = per_op.get(row.op, 0.0) + row.flops * row.calls[-1]
    assert {"aten::convolution", "aten::convolution_backward", "aten::addmm", "aten::mm"} <= set(per_op)
    assert any("attention" in op and not op.endswith("_backward") for op in per_op)
    assert any("attention" in op and op.endswith("_backward") for op in per_op)
    for op, flops in per_op.items():
        assert flops == pytest.approx(counts[op], rel=1e-9), op


def test_the_convolution_time_and_each_rows_peak(recorded):
    r, _, event_ms = recorded
    typical = steady_shaped_ops(r)
    conv = next(t for t in typical if t.row.op == "aten::convolution")
    assert conv.ms == pytest.approx(event_ms, rel=CONV_AGREEMENT), (conv.ms, event_ms)
    for t in typical:
        assert t.row.dtype == "bf16" and t.compute is not None, t.row
        if t.peak_tflops is not None:  # a GPU the datasheet table has
            assert 0 < t.pct < 100, (t.row.op, t.row.shapes, t.tflops, t.peak_tflops)
