"""`analyze`'s GEMMs by shape tell an operand's layout apart: a trace recorded with
``record_shapes=True`` writes each op's ``Input Strides``, and a product of a transposed view is a
row of its own (``64x128 @ 128x96 (strides 1x128)``) beside the contiguous one of the same shapes.
Checked on a CPU trace this test records of ``a @ b`` and ``a @ c.t()`` (b and c.t() both 128x96),
every figure of a row worked out from the raw JSON; a trace without strides keeps one row."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import pytest

from inductor_bench.core.analyze import analyze_file
from inductor_bench.core.recorded_shapes import describe
from inductor_bench.core.typical_step import steady_shaped_ops
from inductor_bench.render.analyze import render_analyze

torch = pytest.importorskip("torch")

PLAIN, TRANSPOSED = "64x128 @ 128x96", "64x128 @ 128x96 (strides 1x128)"
STEPS = 6


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A CPU trace: each step one ``a @ b`` and two ``a @ c.t()``, the same shapes."""
    from torch.profiler import ProfilerActivity, profile, schedule

    a, b, c = torch.randn(64, 128), torch.randn(128, 96), torch.randn(96, 128)
    path = tmp_path_factory.mktemp("strides") / "mm.json"
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                 schedule=schedule(wait=0, warmup=1, active=STEPS),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(STEPS + 1):
            a @ b
            a @ c.t()
            a @ c.t()
            prof.step()
    return path


def _raw_rows(path: Path, steady: list[str]) -> dict[tuple, dict]:
    """Each (Input Dims, Input Strides) of the aten::mm calls: calls, ms and FLOPs in the mean
    of the ``steady`` steps, from the raw events alone."""
    events = json.loads(path.read_text())["traceEvents"]
    steps = [e for e in events if e.get("ph") == "X" and e["name"] in steady]
    assert len(steps) == len(steady)
    rows: dict[tuple, dict] = defaultdict(lambda: {"calls": 0, "us": 0.0, "flops": 0})
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op" or e["name"] != "aten::mm":
            continue
        if not any(s["ts"] <= e["ts"] < s["ts"] + s["dur"] for s in steps):
            continue
        dims, strides = e["args"]["Input Dims"], e["args"]["Input Strides"]
        (m, k), (_, n) = dims[0], dims[1]
        row = rows[json.dumps(dims[:2]), json.dumps(strides[:2])]
        row["calls"] += 1
        row["us"] += e["dur"]
        row["flops"] = 2 * m * n * k
    return dict(rows)


def test_transposed_operand_is_a_row_of_its_own(recorded):
    r = analyze_file(recorded)
    steady = json.loads(r.to_json())["steady_steps"]
    raw = _raw_rows(recorded, steady)
    assert sorted(json.loads(s) for _, s in raw) == [[[128, 1], [1, 128]], [[128, 1], [96, 1]]]
    typical = {t.row.shapes: t for t in steady_shaped_ops(r) if t.row.op == "aten::mm"}
    assert set(typical) == {PLAIN, TRANSPOSED}
    for (dims, strides), want in raw.items():
        shapes = TRANSPOSED if json.loads(strides)[1] == [1, 128] else PLAIN
        t = typical[shapes]
        n = len(steady)
        assert t.row.strides == json.loads(strides)
        assert json.loads(dims) == [[64, 128], [128, 96]]
        assert t.calls == want["calls"] / n == (2 if shapes == TRANSPOSED else 1)
        assert t.ms == pytest.approx(want["us"] / 1e3 / n, abs=1e-9)
        assert t.row.flops == want["flops"] == 2 * 64 * 96 * 128
        assert t.tflops == pytest.approx(want["flops"] * want["calls"] / (want["us"] * 1e-6) / 1e12)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html"])
def test_every_format_shows_the_layout(recorded, fmt):
    out = render_analyze(analyze_file(recorded), fmt, top=10)
    assert "64x128 @ 128x96 (strides 1x128)" in out
    assert out.count("64x128 @ 128x96") == 2  # the contiguous row, and the transposed one
    assert "an operand whose recorded strides are not the contiguous ones shows them" in out  # the note


def test_json_holds_the_strides(recorded):
    rows = {r["shapes"]: r for r in json.loads(analyze_file(recorded).to_json())["shaped_ops"]}
    assert rows[PLAIN]["strides"] == [[128, 1], [96, 1]]
    assert rows[TRANSPOSED]["strides"] == [[128, 1], [1, 128]]


def test_a_trace_without_strides_keeps_one_row(recorded, tmp_path):
    trace = json.loads(recorded.read_text())
    for e in trace["traceEvents"]:
        e.get("args", {}).pop("Input Strides", None)
    path = tmp_path / "no-strides.json"
    path.write_text(json.dumps(trace))
    rows = [t for t in steady_shaped_ops(analyze_file(path)) if t.row.op == "aten::mm"]
    assert [(t.row.shapes, t.calls, t.row.strides) for t in rows] == [(PLAIN, 3, None)]
    assert "recorded strides" not in render_analyze(analyze_file(path), "text", top=10)


@pytest.mark.parametrize(("dims", "strides", "shown"), [
    ([[1, 128], [128, 96]], [[7, 1], [96, 1]], "1x128 @ 128x96"),  # a size-1 dimension's stride: any
    ([[64, 128], [128, 96]], [[256, 1], [96, 1]], "64x128 (strides 256x1) @ 128x96"),  # a padded row
    ([[4, 64, 128], [4, 128, 96]], [[0, 128, 1], [12288, 1, 128]],
     "4x64x128 (strides 0x128x1) @ 4x128x96 (strides 12288x1x128)"),  # broadcast; transposed
    ([[64, 128], [128, 96]], [[128, 1]], "64x128 @ 128x96"),  # strides cut short: shapes alone
])
def test_strides_shown_where_not_contiguous(dims, strides, shown):
    op = "aten::bmm" if len(dims[0]) == 3 else "aten::mm"
    d = describe(op, _tuples(dims), ("float", "float"), None, _tuples(strides))
    assert d is not None and d.shapes == shown


def shown(dims: list[int], strides: list[int]) -> str:
    """An operand as a row shows it, worked out apart from the tool: its strides where a
    dimension larger than 1 has not the row-major one (the product of the sizes after it)."""
    row_major = [math.prod(dims[i + 1:]) for i in range(len(dims))]
    plain = all(n == 1 or s == want for n, s, want in zip(dims, strides, row_major, strict=True))
    text = "x".join(map(str, dims))
    return text if plain else f"{text} (strides {'x'.join(map(str, strides))})"


def _tuples(value):
    return tuple(map(_tuples, value)) if isinstance(value, list) else value


def test_device_trace_rows_by_layout(tmp_path):
    """Synthetic, H100, two steps: ``a @ b`` (an sgemm of 10 µs) and ``a @ c.t()`` of the same
    shapes (a copy of 5 µs, then an sgemm of 30 µs), each kernel launched inside its op."""
    from .test_analyze_regions import _x
    from .test_analyze_shaped_ops import _launched

    def mm(ts: float, strides: list) -> dict:
        return _x("cpu_op", "aten::mm", ts, 20, **{"Input Dims": [[64, 128], [128, 96]],
                                                     "Input type": ["float", "float"], "Input Strides": strides})

    events = []
    for k, t in enumerate((0, 1000)):
        events += [_x("user_annotation", f"ProfilerStep#{k}", t, 200),
                   mm(t + 10, [[128, 1], [96, 1]]),
                   *_launched("ampere_sgemm_64x64_nn", t + 12, t + 50, 10, 10 * k + 1),
                   mm(t + 40, [[128, 1], [1, 128]]),
                   *_launched("elementwise_kernel<direct_copy_kernel_cuda>", t + 42, t + 70, 5, 10 * k + 2),
                   *_launched("ampere_sgemm_64x64_nn", t + 44, t + 80, 30, 10 * k + 3)]
    path = tmp_path / "mm.json"
    path.write_text(json.dumps({"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}]}))
    typical = {t.row.shapes: t for t in steady_shaped_ops(analyze_file(path))}
    flops = 2 * 64 * 96 * 128
    plain, transposed = typical[PLAIN], typical[TRANSPOSED]
    assert (plain.calls, plain.ms, transposed.calls, transposed.ms) == (1, pytest.approx(0.010), 1, pytest.approx(0.035))
    assert plain.tflops == pytest.approx(flops / 10e-6 / 1e12)
    assert transposed.tflops == pytest.approx(flops / 35e-6 / 1e12)
    assert (plain.other_pct, transposed.other_pct) == (0.0, pytest.approx(100 * 5 / 35))


def test_onednn_ops_show_shapes_alone():
    """The frozen net's oneDNN and MKL ops (``tests/fixtures/cpu_shapes``): the trace records
    strides, of a packed weight among them; the rows show shapes alone, ``strides`` null."""
    from .conftest import FIXTURES

    rows = analyze_file(FIXTURES / "cpu_shapes" / "frozen-fp32-torch-2.13.0.json.gz").shaped_ops
    assert {r.op for r in rows} == {"mkl::_mkl_linear", "mkldnn::_convolution_pointwise",
                                    "mkldnn::_convolution_pointwise_"}
    assert [(r.strides, "strides" in r.shapes) for r in rows] == [(None, False)] * len(rows)


def test_kernels_of_two_layouts_read_apart():
    """HTA's A100 trace: the 64x4096 @ 4096x2798 mm ran cutlass's ``..._32x6_nn_align1`` kernel,
    the 4096x2798 @ 2798x64 addmm its ``..._32x6_tn_align1``, names alike to their last 10
    characters: the kernel column read the same cut label in both rows."""
    from .conftest import FIXTURES

    r = analyze_file(FIXTURES / "hta" / "negative_queue_length_values_check_rank0.json.gz")
    out = render_analyze(r, "markdown", top=10)
    section = out[out.index("GEMMs by shape"):]
    cells = [line.split("|")[-2].strip() for line in section.splitlines()[4:]
             if line.startswith("| 0 ")]
    kernels = [t.row.kernel for t in steady_shaped_ops(r)]
    assert len(cells) == len(kernels) == 5 and len(set(kernels)) == 5
    assert len(set(cells)) == 5, cells
    assert cells[0].endswith("nn_align1>`") and cells[2].endswith("tn_align1>`")
