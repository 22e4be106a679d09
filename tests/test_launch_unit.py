"""The latency verdict judges one launch of a row: its ideal and fastest times over its launches
per iteration. Where a row's launches could do unequal work, what the real modules hold:
a generated kernel called at several places in the H200 transformer's backward is called at
one size each time, so the mean launch is each launch; a ``while_loop`` body's kernel, launched
once per trip at the one size the body is compiled for, is counted as one trip's bytes times
its launches (one trip's bytes over all the trips' time would read 8 times too slow), and not
at all where the body names a size that could change between trips. A GEMM in the body counts
once a trip, the trips told by the body's own kernel; a loop in a ``cond``'s branch is read the
same way, and the loop's kernels name the lines of its condition and body."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.attribution import _host_origins, call_origins
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.callsites import parse_calls
from inductor_bench.core.ceilings import LATENCY, Ceilings, kernel_roof
from inductor_bench.core.graph_work import count_work
from inductor_bench.core.modparse import parse_module
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.trace import load_trace

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"
LOOP = FIXTURES / "subgraphs" / "while_loop_inference.py"
MM_LOOP = FIXTURES / "subgraphs" / "while_loop_mm_inference.py"  # an mm in call and in the body
NO_TRIPS = FIXTURES / "subgraphs" / "while_loop_mm_no_trips_inference.py"  # the same, a loop of no trips
REUSED = "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_8"
H200 = Ceilings("NVIDIA H200", 4240.0, {"fp32": 51.3})  # as measured there (docs/gpu-validation.md)


def test_a_kernel_called_at_four_places_is_judged_per_launch_at_its_one_size():
    text = (RUN / "graphs" / "0-backward" / "module.py").read_text()
    sizes = re.findall(REUSED + r"\.run\(\w+, \w+, (\d+), (\d+), stream", text)
    assert sizes == [("128", "4")] * 4  # xnumel 128 rows of r0_numel 4 floats, each call
    per_launch = 4 * (128 * 4) + 4 * 128  # reads 128 x 4 float32, writes 128
    r, _ = reanalyze(RUN)
    k = next(k for k in r.graph("0-backward").kernels if k.name == REUSED)
    assert (k.calls, k.bytes) == (4.0, 4 * per_launch)
    roof = kernel_roof(k, H200, "cuda")
    assert roof.pct == pytest.approx(100 * 4 * per_launch / (k.ms / 1e3) / 1e9 / 4240.0, rel=1e-12)
    fastest_launch_us = min(k.samples_ms) * 1e3 / 4
    ideal_launch_us = per_launch / 4240e9 * 1e6  # 0.6 ns
    assert fastest_launch_us < 2 * (5.0 + ideal_launch_us) and roof.bound == LATENCY


def _launch_bytes(text: str, fn: str, kernel: str) -> int:
    """One launch of ``kernel`` in subgraph function ``fn``: each buffer it is passed, at the
    shape the function asserts or allocates and the element type of the kernel's signature."""
    body = text.split(f"def {fn}(args):")[1].split("\n\n")[0]
    shapes = dict(re.findall(r"assert_size_stride\((\w+), (\([^)]*\))", body))
    shapes.update(re.findall(r"(\w+) = empty_strided_cpu\((\([^)]*\))", body))
    args = re.search(rf"\n\s+{kernel}\(([^)]*)\)", body).group(1).split(", ")
    types = re.search(rf"{kernel} = async_compile\.cpp_pybinding\(\[([^\]]*)\]", text).group(1)
    size = {"float": 4, "int64_t": 8, "bool": 1}
    return sum(math.prod(ast.literal_eval(shapes[a])) * size[t]
               for a, t in zip(args, re.findall(r"'(?:const )?(\w+)\*'", types), strict=True))


def _loop_graph(text: str) -> GraphResult:
    g = GraphResult(id="0-inference", role="inference", device="cpu")
    # launches per call of the graph as its profile had them: 8 trips, 9 conditions
    g.kernels = [KernelStat("cpp_fused_add_mul_sin_zeros_2", "cpp_pointwise", 8.0, 0.418),
                 KernelStat("cpp_fused_lt_zeros_1", "cpp_pointwise", 9.0, 0.001),
                 KernelStat("cpp_fused_zeros_0", "cpp_pointwise", 1.0, 0.0002)]
    return count_work(g, parse_module(text), text, Path("/nonexistent"))


def test_a_while_loop_bodys_kernel_is_counted_at_one_trip_times_its_launches():
    text = LOOP.read_text()
    assert "while should_loop:" in text and "cpp_fused_add_mul_sin_zeros_2(while_loop_body_graph_0" in text
    trip = _launch_bytes(text, "while_loop_body_graph_0", "cpp_fused_add_mul_sin_zeros_2")
    cond = _launch_bytes(text, "while_loop_cond_graph_0", "cpp_fused_lt_zeros_1")
    assert (trip, cond) == (2 * 4 * 512 * 1024 + 2 * 8, 8 + 1)  # h in and out, the counter; i < 8
    body_k, cond_k, zeros = _loop_graph(text).kernels
    assert (body_k.bytes, cond_k.bytes) == (8 * trip, 9 * cond)
    assert body_k.compute == "fp32" and body_k.flops is None
    roof = kernel_roof(body_k, H200, "cpu")
    assert roof.pct == pytest.approx(100 * 8 * trip / 0.418e-3 / 1e9 / 4240.0, rel=1e-12)
    assert zeros.bytes == 8.0  # the counter's int64, written once at the top level


def test_a_while_loop_body_that_names_a_size_symbol_gets_no_count():
    text = LOOP.read_text()
    head, body = text.split("def while_loop_body_graph_0(args):")
    text = head + "def while_loop_body_graph_0(args):" + body.replace("(512, 1024)", "(s0, 1024)", 2)
    body_k, cond_k, _ = _loop_graph(text).kernels
    assert body_k.bytes is None and kernel_roof(body_k, H200, "cpu").pct is None
    cond = _launch_bytes(text, "while_loop_cond_graph_0", "cpp_fused_lt_zeros_1")
    assert cond_k.bytes == 9 * cond  # the condition names none: still counted


def _line_of(code: str) -> int:
    """The line of the model (``while_loop_mm_model.py``) that holds ``code``."""
    return next(n for n, ln in enumerate(_model_text().splitlines(), 1) if code in ln)


def test_a_while_loops_condition_and_body_kernels_name_their_lines():
    text = MM_LOOP.read_text()
    record = json.loads(MM_LOOP.with_name("while_loop_mm_inference.sources.json").read_text())
    module = parse_module(text)
    calls = parse_calls(text, module)
    origins, _ = call_origins(calls, record)
    g = GraphResult(id="0-inference", role="inference", device="cpu")
    g.kernels = [KernelStat("cpp_fused_add_sin_zeros_2", "cpp_pointwise", 5.0, 0.005),
                 KernelStat("cpp_fused_lt_zeros_1", "cpp_pointwise", 6.0, 0.0002),
                 KernelStat("aten::mm", "gemm", 6.0, 0.023)]
    per_kernel: dict[str, list] = {}
    for i, c in enumerate(calls):
        if not c.extern:
            per_kernel.setdefault(c.name, []).append(origins.get(i))
    _host_origins(g, per_kernel, [(i, c) for i, c in enumerate(calls) if c.extern], origins, [])
    body, cond, mm = (sorted(ln.line for ln in k.origin.lines) for k in g.kernels)
    assert body == [_line_of("(h @ self.w).sin()")]  # the body's i + 1 and sin, fused
    assert cond == [_line_of("return i < 5")]
    assert mm == sorted([_line_of("h = x @ self.w"), _line_of("(h @ self.w).sin()")])
    assert all(k.origin.missing is None for k in g.kernels)
    # the condition, called before the loop and in it, and the body are read once each
    assert [c.name for c in calls] == ["extern_kernels.mm", "cpp_fused_zeros_0", "cpp_fused_lt_zeros_1",
                                       "extern_kernels.mm", "cpp_fused_add_sin_zeros_2"]


def _mm_loop(mm_calls: float, body_calls: float | None = 5.0) -> GraphResult:
    text = MM_LOOP.read_text()
    g = GraphResult(id="0-inference", role="inference", device="cpu")
    # per call of the graph as profiled: the mm in call and one each trip; the body's kernel each trip
    g.kernels = [KernelStat("aten::mm", "gemm", mm_calls, 0.023),
                 KernelStat("cpp_fused_lt_zeros_1", "cpp_pointwise", 6.0, 0.0002)]
    if body_calls is not None:
        g.kernels.append(KernelStat("cpp_fused_add_sin_zeros_2", "cpp_pointwise", body_calls, 0.005))
    return count_work(g, parse_module(text), text, Path("/nonexistent"))


def test_a_gemm_in_a_while_loops_body_is_counted_once_a_trip():
    text = MM_LOOP.read_text()
    trips = int(re.search(r"return i < (\d+)", _model_text()).group(1))
    body = text.split("def while_loop_body_graph_0(args):")[1].split("\n\n")[0]
    a, b = re.search(r"extern_kernels\.mm\((\w+), (\w+), out=", body).groups()
    shapes = dict(re.findall(r"assert_size_stride\((\w+), (\([^)]*\))", body))
    (m, k), (k2, n) = ast.literal_eval(shapes[a]), ast.literal_eval(shapes[b])
    assert (m, k, n, k2, trips) == (32, 64, 64, 64, 5)
    assert len(re.findall(r"^\s+extern_kernels\.mm\(", text, re.M)) == 2  # one in call, one in the body
    one = (4 * (m * k + k * n + m * n), 2 * m * n * k)  # float32 a, b and the product; a GEMM's FLOPs
    mm = _mm_loop(1 + trips).kernels[0]
    assert (mm.bytes, mm.flops) == ((1 + trips) * one[0], (1 + trips) * one[1])
    # the op's row ran other than 1 + the trips, or no kernel tells the trips: no count at all
    for g in (_mm_loop(2 + trips), _mm_loop(1 + trips, None)):
        assert (g.kernels[0].bytes, g.kernels[0].flops) == (None, None)
        assert kernel_roof(g.kernels[0], H200, "cpu").pct is None


def test_a_gemm_beside_a_while_loop_of_no_trips_is_counted_at_its_call_outside_the_loop():
    """Recorded: the loop's condition false at once (``i < 0``): the condition's kernel ran once
    an iteration, the body's never, and the ``aten::mm`` row is the call outside the loop alone;
    its count was none."""
    text = NO_TRIPS.read_text()
    assert "static_cast<int64_t>(0);" in text.split("cpp_fused_lt_zeros_1 = ")[1].split("\n\n")[0]
    outside = text.split("def call(self, args):")[1]  # call's own lines: the mm outside the loop
    a, b = re.search(r"extern_kernels\.mm\((\w+), (\w+), out=", outside).groups()
    shapes = dict(re.findall(r"assert_size_stride\((\w+), (\([^)]*\))", outside))
    (m, k), (k2, n) = ast.literal_eval(shapes[a]), ast.literal_eval(shapes[b])
    assert (m, k, k2, n) == (32, 64, 64, 64)
    module = parse_module(text)
    trace = load_trace(NO_TRIPS.with_name("while_loop_mm_no_trips_inference.trace.json.gz"))
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    calls = {k.name: k.calls for k in g.kernels}
    assert (calls["aten::mm"], calls["cpp_fused_lt_zeros_1"]) == (1.0, 1.0)
    assert "cpp_fused_add_sin_zeros_2" not in calls  # the body's kernel
    mm = next(k for k in count_work(g, module, text, Path("/nonexistent")).kernels if k.name == "aten::mm")
    assert (mm.bytes, mm.flops) == (4 * (m * k + k * n + m * n), 2 * m * n * k)
    # the row ran more calls than the one outside the loop (synthetic): still no count
    g = analyze_graph(trace, module, GraphResult(id="0-inference", role="inference", device="cpu"))
    next(k for k in g.kernels if k.name == "aten::mm").calls = 2.0
    assert next(k for k in count_work(g, module, text, Path("/nonexistent")).kernels
                if k.name == "aten::mm").bytes is None


def _model_text() -> str:
    return (FIXTURES / "subgraphs" / "while_loop_mm_model.py").read_text()


def test_a_while_loop_inside_a_cond_branch_is_counted_once_a_trip():
    text = (FIXTURES / "subgraphs" / "cond_while_loop_inference.py").read_text()
    branch = text.split("def true_graph_0(args):")[1]
    assert "    while should_loop:" in branch and "= true_graph_0_while_loop_body_graph_0(" in branch
    g = GraphResult(id="0-inference", role="inference", device="cpu")
    g.kernels = [KernelStat("aten::mm", "gemm", 5.0, 0.021),  # as profiled: the branch taken, 5 trips
                 KernelStat("cpp_fused_add_gt_sin_zeros_3", "cpp_pointwise", 5.0, 0.0058)]
    mm, body = count_work(g, parse_module(text), text, Path("/nonexistent")).kernels
    one = (4 * (32 * 64 + 64 * 64 + 32 * 64), 2 * 32 * 64 * 64)  # 32 x 64 by 64 x 64, float32
    assert (mm.bytes, mm.flops) == (5 * one[0], 5 * one[1])
    assert "kernel(float* in_out_ptr0,\n                       const int64_t* in_ptr0,\n" in text
    assert body.bytes == 5 * (2 * 4 * 32 * 64 + 8 + 8)  # h read and written in place, i read, i + 1 written


def test_a_kernel_a_cond_branch_makes_from_a_constant_names_its_line():
    """The counter a branch's while_loop starts from (``torch.zeros``) is an operation of the
    branch whose record names the parent's ``cond`` and ``gt`` as the branch's own nodes."""
    cond_loop = FIXTURES / "subgraphs" / "cond_while_loop_inference.py"
    text = cond_loop.read_text()
    record = json.loads(cond_loop.with_name("cond_while_loop_inference.sources.json").read_text())
    calls = parse_calls(text, parse_module(text))
    origins, _ = call_origins(calls, record)
    i = next(i for i, c in enumerate(calls) if c.name == "cpp_fused_gt_zeros_1")
    model = (FIXTURES / "subgraphs" / "cond_while_loop_model.py").read_text().splitlines()
    line = next(n for n, ln in enumerate(model, 1) if "torch.zeros((), dtype=torch.int64" in ln)
    assert [ln.line for ln in origins[i].lines] == [line] and origins[i].missing is None
