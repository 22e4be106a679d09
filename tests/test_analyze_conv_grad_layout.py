"""`analyze`'s by-shape rows of a convolution's and attention's backward tell its output
gradient's layout apart, and every row shows its time a call. Checked on CPU traces this test
records: each step one backward of a contiguous gradient and two of a channels-last (attention:
transposed) one of the same shapes, every figure of a row worked out from the raw JSON; a
convolution's FLOPs against torch's ``flop_counter``."""

from __future__ import annotations

import html
import json
import re
from collections import defaultdict
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

from .conftest import HALF_NS
from .test_analyze_strides import shown

torch = pytest.importorskip("torch")

STEPS = 4
BACKWARD = "aten::convolution_backward"
X, W, G = (2, 4, 8, 8), (8, 4, 3, 3), (2, 8, 8, 8)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> tuple[Path, float]:
    """The trace, and the flop_counter's count of one convolution backward."""
    from torch.profiler import ProfilerActivity, profile, schedule
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    conv = torch.nn.Conv2d(4, 8, 3, padding=1)
    x = torch.randn(*X, requires_grad=True)
    g = torch.randn(*G)
    g_last = g.contiguous(memory_format=torch.channels_last)
    y = conv(x)
    with FlopCounterMode(display=False) as counter:
        y.backward(g)
    flops = float(counter.get_flop_counts()["Global"][torch.ops.aten.convolution_backward])
    path = tmp_path_factory.mktemp("conv-grad") / "conv.json"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=STEPS),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(STEPS + 1):
            conv(x).backward(g)
            conv(x).backward(g_last)
            conv(x).backward(g_last)
            prof.step()
    return path, flops


def _raw(path: Path, steady: list[str]) -> dict[str, dict]:
    """Each convolution backward's shapes text, worked out from its raw event: calls and µs in
    the ``steady`` steps, and its recorded strides."""
    events = json.loads(path.read_text())["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and e["name"] in steady]
    assert len(steps) == len(steady)
    rows: dict[str, dict] = defaultdict(lambda: {"calls": 0, "us": 0.0})
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op" or e["name"] != BACKWARD:
            continue
        if not any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps):
            continue
        dims, strides = e["args"]["Input Dims"], e["args"]["Input Strides"]
        assert [tuple(d) for d in dims[:3]] == [G, X, W]
        text = (f"{shown(dims[1], strides[1])} * {shown(dims[2], strides[2])} -> "
                f"{shown(dims[0], strides[0])}, grad of input, weight, bias")
        rows[text]["calls"] += 1
        rows[text]["us"] += e["dur"]
        rows[text]["strides"] = [strides[1], strides[2], strides[0]]
    return dict(rows)


def _ms(v: float) -> str:
    return f"{v:.3f}" if v >= 0.01 else f"{v:.4f}"


def test_a_channels_last_gradient_is_a_row_of_its_own(recorded):
    path, flops = recorded
    r = analyze_file(path)
    steady = json.loads(r.to_json())["steady_steps"]
    n = len(steady)
    raw = _raw(path, steady)
    contiguous = "2x4x8x8 * 8x4x3x3 -> 2x8x8x8, grad of input, weight, bias"
    last = "2x4x8x8 * 8x4x3x3 -> 2x8x8x8 (strides 512x1x64x8), grad of input, weight, bias"
    assert set(raw) == {contiguous, last}
    typical = {t.row.shapes: t for t in steady_shaped_ops(r) if t.row.op == BACKWARD}
    assert set(typical) == set(raw)
    for shapes, want in raw.items():
        t = typical[shapes]
        assert t.calls == want["calls"] / n == (2 if shapes == last else 1)
        assert t.ms == pytest.approx(want["us"] / 1e3 / n, rel=1e-9)
        assert t.ms_per_call == pytest.approx(want["us"] / 1e3 / want["calls"], rel=1e-9)
        assert t.row.strides == want["strides"]
        # 2 × output elements × weight elements per output channel, for each of the input's and
        # the weight's gradient (the bias's is a sum): as torch counts it
        assert t.row.flops == flops == 2 * (2 * 2 * 8 * 8 * 8 * 4 * 3 * 3)
    rows = {row["shapes"]: row for row in json.loads(r.to_json())["shaped_ops"]}
    for shapes, want in raw.items():
        assert rows[shapes]["strides"] == want["strides"]
        assert rows[shapes]["ms_per_call"] == pytest.approx(want["us"] / 1e3 / want["calls"], abs=HALF_NS)  # JSON: ns


def _cells(line: str, fmt: str) -> list[str]:
    if fmt == "markdown":
        return [c.strip().replace("\\*", "*") for c in line.strip().strip("|").split("|")]
    if fmt == "html":
        return [html.unescape(c) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", line)]
    return re.split(r"\s{2,}", line.strip())


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_the_time_a_call(recorded, fmt):
    path, _ = recorded
    r = analyze_file(path)
    steady = json.loads(r.to_json())["steady_steps"]
    raw = _raw(path, steady)
    out = render_analyze(r, fmt, top=10)
    section = out[out.index("by shape"):]
    if fmt == "html":  # one row a line
        section = section.replace("<tr>", "\n<tr>")
    lines = section.splitlines()
    headers = _cells(next(ln for ln in lines if "ms a call" in ln), fmt)
    rows = {c[2]: dict(zip(headers, c, strict=True)) for ln in lines
            if len(c := _cells(ln, fmt)) == len(headers) and BACKWARD in c[1]}
    assert set(rows) == set(raw)
    for shapes, want in raw.items():
        row = rows[shapes]
        assert row["calls"] == f"{want['calls'] // len(steady)}"
        assert row["ms"] == _ms(want["us"] / 1e3 / len(steady))
        assert row["ms a call"] == _ms(want["us"] / 1e3 / want["calls"])


ATTENTION_BACKWARD = "aten::_scaled_dot_product_flash_attention_for_cpu_backward"
B, H, L, E = 2, 4, 32, 8


def test_attention_backward_rows_by_the_gradients_layout(tmp_path):
    """CPU attention, each step once backward of a contiguous gradient and twice of one viewed
    with heads and tokens transposed (as ``out.transpose(1, 2)`` of a B, L, H, E tensor is):
    two rows, each one's calls, ms and ms a call worked out from the raw events, its FLOPs
    the five products of the backward, 2·B·H·L·L·E each (torch's ``flop_counter`` has no
    formula for the CPU flash ops)."""
    from torch.profiler import ProfilerActivity, profile, schedule

    torch.manual_seed(0)
    q = torch.randn(B, H, L, E, requires_grad=True)
    g = torch.randn(B, H, L, E)
    g_view = torch.randn(B, L, H, E).transpose(1, 2)
    path = tmp_path / "attention.json"

    def attention():
        return torch.nn.functional.scaled_dot_product_attention(q, q, q)

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=STEPS),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(STEPS + 1):
            attention().backward(g)
            attention().backward(g_view)
            attention().backward(g_view)
            prof.step()
    r = analyze_file(path)
    steady = json.loads(r.to_json())["steady_steps"]
    events = json.loads(path.read_text())["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and e["name"] in steady]
    raw: dict[str, dict] = defaultdict(lambda: {"calls": 0, "us": 0.0})
    for e in events:
        if e.get("cat") != "cpu_op" or e["name"] != ATTENTION_BACKWARD:
            continue
        if not any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps):
            continue
        dims, strides = e["args"]["Input Dims"], e["args"]["Input Strides"]
        text = f"q {shown(dims[1], strides[1])}, kv {shown(dims[2], strides[2])}, grad {shown(dims[0], strides[0])}"
        raw[text]["calls"] += 1
        raw[text]["us"] += e["dur"]
    plain = f"q {B}x{H}x{L}x{E}, kv {B}x{H}x{L}x{E}"
    assert set(raw) == {f"{plain}, grad {B}x{H}x{L}x{E}",
                        f"{plain}, grad {B}x{H}x{L}x{E} (strides {L * H * E}x{E}x{H * E}x1)"}
    typical = {t.row.shapes: t for t in steady_shaped_ops(r) if t.row.op == ATTENTION_BACKWARD}
    assert set(typical) == set(raw)
    n = len(steady)
    for shapes, want in raw.items():
        t = typical[shapes]
        assert t.calls == want["calls"] / n == (2 if "strides" in shapes else 1)
        assert t.ms == pytest.approx(want["us"] / 1e3 / n, rel=1e-9)
        assert t.ms_per_call == pytest.approx(want["us"] / 1e3 / want["calls"], rel=1e-9)
        assert t.row.flops == 5 * 2 * B * H * L * L * E
