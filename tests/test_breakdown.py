"""breakdown.py: per-graph breakdowns from hand-built events and from the fixtures."""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.breakdown import (
    MARKER,
    analyze_graph,
    extern_origins,
    op_name,
    settle,
    summarize_categories,
)
from inductor_bench.core.errors import TraceError
from inductor_bench.core.modparse import ExternCall, KernelInfo, ModuleInfo, read_module
from inductor_bench.core.results import GraphResult, KernelStat
from inductor_bench.core.sources import CallSite
from inductor_bench.core.trace import Event, Trace, load_trace

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SYNTHETIC = FIXTURES / "synthetic_cuda_transformer"
CPU_TRAIN = FIXTURES / "cpu_mlp_train"
approx = pytest.approx


def ev(name: str, cat: str, ts: float, dur: float, pid=1, tid=1, **args) -> Event:
    return Event(name, cat, float(ts), float(dur), pid, tid, args)


def marker(ts: float, dur: float, pid=1, tid=1) -> Event:
    return ev(MARKER, "user_annotation", ts, dur, pid, tid)


def graph(device: str) -> GraphResult:
    return GraphResult(id="0-forward", role="forward", device=device)


def check_sums(g: GraphResult) -> None:
    assert sum(g.categories.values()) == g.kernel_ms
    assert sum(k.ms for k in g.kernels) == approx(g.kernel_ms, rel=1e-12)
    for k in g.kernels:
        assert len(k.samples_ms) == g.iterations
    assert [k.ms for k in g.kernels] == sorted((k.ms for k in g.kernels), reverse=True)


# -- CPU, hand-built ----------------------------------------------------------------------

CPU_MODULE = ModuleInfo(
    aot_id="0_forward",
    role="forward",
    kernels={"cpp_fused_gelu_0": KernelInfo(
        name="cpp_fused_gelu_0", kind="cpp", heuristic="pointwise", aten_ops=["aten.gelu"],
        source_nodes=["gelu"], record_names=["graph_0_cpp_fused_gelu_0"])},
    externs=[ExternCall("extern_kernels.addmm", ["aten.t", "aten.addmm"], ["linear"]),
             ExternCall("extern_kernels.addmm", ["aten.addmm"], ["linear_1"])],
    device="cpu",
)


def cpu_trace() -> Trace:
    return Trace(events=[
        marker(100, 100),
        ev("<built-in method call>", "python_function", 105, 90),
        ev("aten::addmm", "cpu_op", 110, 30),
        ev("aten::expand", "cpu_op", 112, 3),  # nested: part of aten::addmm's time
        ev("aten::copy_", "cpu_op", 116, 4),
        ev("aten::mm", "cpu_op", 120, 10, tid=2),  # another thread: not this graph's
        ev("graph_0_cpp_fused_gelu_0", "cpu_op", 150, 10),
        ev("aten::unknown_op", "cpu_op", 165, 5),
        marker(300, 100),
        ev("## Call CompiledFxGraph fabc123 ##", "cpu_op", 301, 98),  # a wrapper: see through
        ev("aten::addmm", "cpu_op", 310, 20),
        ev("aten::copy_", "cpu_op", 312, 6),
        ev("graph_0_cpp_fused_gelu_0", "cpu_op", 335, 10),
        marker(500, 50),  # an iteration with no kernel at all
        ev("aten::addmm", "cpu_op", 600, 100),  # after the last marker
    ], path="cpu.json")


def test_cpu_top_level_ops_per_iteration():
    g = analyze_graph(cpu_trace(), CPU_MODULE, graph("cpu"))
    assert (g.id, g.role, g.iterations) == ("0-forward", "forward", 3)
    assert g.wall_samples_ms == approx([0.1, 0.1, 0.05])
    assert g.wall_ms == approx(0.25 / 3)
    assert g.kernel_ms == approx(0.075 / 3)  # (45 + 30 + 0) µs over 3 iterations
    assert g.busy_ms == approx(0.075 / 3)
    assert [k.name for k in g.kernels] == ["aten::addmm", "cpp_fused_gelu_0", "aten::unknown_op"]
    addmm, gelu, unknown = g.kernels
    assert addmm == KernelStat(
        name="aten::addmm", category="extern_gemm", calls=approx(2 / 3), ms=approx(0.05 / 3),
        samples_ms=approx([0.03, 0.02, 0.0]), aten_ops=["aten.addmm"],
        source_nodes=["linear", "linear_1"], file=None, launched_by=None)
    assert gelu == KernelStat(
        name="cpp_fused_gelu_0", category="cpp_pointwise", calls=approx(2 / 3),
        ms=approx(0.02 / 3), samples_ms=approx([0.01, 0.01, 0.0]), aten_ops=["aten.gelu"],
        source_nodes=["gelu"])
    assert (unknown.category, unknown.calls, unknown.samples_ms) == (
        "extern_other", approx(1 / 3), approx([0.005, 0.0, 0.0]))
    assert g.categories == approx(
        {"cpp_pointwise": 0.02 / 3, "extern_gemm": 0.05 / 3, "extern_other": 0.005 / 3})
    assert list(g.categories) == ["cpp_pointwise", "extern_gemm", "extern_other"]  # report order
    check_sums(g)


def test_a_stall_in_one_call_of_an_op_called_many_times_leaves_its_iteration_out():
    # one op, two calls an iteration: the first 300-380 us (its spread hides 60 us in the op's
    # sum), the second 50 us but 110 in iteration 3, a stall far off that call's own 50 us;
    # the idle time is 500 us in every iteration, so only the second call's series can tell.
    # The calls are parts of their own once attribution has split them into call sites (here
    # made as it makes them, the k-th event onto the k-th call): the analysis settles again
    first = [300, 340, 380, 320, 360, 300, 340, 380, 320, 360]
    second = [50, 50, 50, 110, 50, 50, 50, 50, 50, 50]
    events = []
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        t0 = 2000 * i
        events += [marker(t0, a + b + 500), ev("aten::addmm", "cpu_op", t0 + 100, a),
                   ev("aten::addmm", "cpu_op", t0 + 100 + a, b)]
    g = analyze_graph(Trace(events=events, path="cpu.json"), None, graph("cpu"))
    assert g.left_out == []  # no call sites: the op's sum alone, which hides the stall
    g.sites = [CallSite(kernel="aten::addmm", index=j, callee="extern_kernels.addmm", calls=1.0, ms=0.0,
                        samples_ms=[x / 1000 for x in xs]) for j, xs in enumerate((first, second))]
    settle(g)
    assert g.left_out == [3]
    kept = [i for i in range(10) if i != 3]
    (addmm,) = g.kernels
    assert addmm.ms == approx(sum(first[i] + second[i] for i in kept) / 9 / 1000)  # 0.392222 ms
    assert g.wall_ms == approx(sum(first[i] + second[i] + 500 for i in kept) / 9 / 1000)
    assert [s.ms for s in g.sites] == approx([sum(xs[i] for i in kept) / 9 / 1000 for xs in (first, second)])
    check_sums(g)


def test_cpu_without_a_module_keeps_profiler_names():
    g = analyze_graph(cpu_trace(), None, graph("cpu"))
    names = {k.name: k.category for k in g.kernels}
    assert names == {"aten::addmm": "extern_gemm", "graph_0_cpp_fused_gelu_0": "cpp_kernel",
                     "aten::unknown_op": "extern_other"}
    assert all(k.aten_ops == [] for k in g.kernels)


def test_cpu_busy_is_clipped_to_the_marker():
    t = Trace(events=[marker(0, 50), ev("aten::mm", "cpu_op", 40, 20)])
    g = analyze_graph(t, None, graph("cpu"))
    assert g.kernel_ms == approx(0.020)  # its whole inclusive time
    assert g.busy_ms == approx(0.010)  # only [40, 50) lies in the window
    assert g.busy_pct == approx(20.0)


# -- CUDA, hand-built ---------------------------------------------------------------------


def test_two_overlapping_streams_union_20_vs_sum_25_in_a_35_us_window():
    t = Trace(events=[
        marker(0, 35),
        ev(MARKER, "gpu_user_annotation", 0, 35, pid=0, tid=7),  # the GPU-timeline copy
        ev("triton_poi_fused_add_0", "kernel", 0, 10, pid=0, tid=7, correlation=1),
        ev("triton_poi_fused_add_0", "kernel", 20, 10, pid=0, tid=7, correlation=2),
        ev("Memcpy DtoD (Device -> Device)", "gpu_memcpy", 5, 5, pid=0, tid=13, correlation=3),
        ev("triton_poi_fused_add_0", "kernel", 40, 10, pid=0, tid=7),  # outside the window
    ])
    g = analyze_graph(t, None, graph("cuda"))
    assert (g.iterations, g.wall_ms, g.kernel_ms, g.busy_ms) == (
        1, approx(0.035), approx(0.025), approx(0.020))
    assert g.busy_pct == approx(100 * 20 / 35)
    assert g.categories == approx({"triton_pointwise": 0.020, "memcpy": 0.005})
    poi, memcpy = g.kernels
    assert (poi.name, poi.calls, poi.launched_by) == ("triton_poi_fused_add_0", 2.0, None)
    assert (memcpy.name, memcpy.calls) == ("Memcpy DtoD (Device -> Device)", 1.0)
    check_sums(g)


def test_device_events_belong_to_the_marker_that_launched_them_wherever_their_clock_puts_them():
    # Synthetic: a device clock converted 500 µs off the host's. Launches at 2 and 42 µs
    # inside the markers, their kernels at -500 and -460 µs; a third kernel starts inside
    # marker 0 but was launched outside every marker (at 90 µs): no kernel of the graph's.
    t = Trace(events=[
        marker(0, 35), marker(40, 35),
        ev("cudaLaunchKernel", "cuda_runtime", 2, 3, correlation=1),
        ev("cudaLaunchKernel", "cuda_runtime", 42, 3, correlation=2),
        ev("cudaLaunchKernel", "cuda_runtime", 90, 3, correlation=3),
        ev("triton_poi_fused_add_0", "kernel", -500, 8, pid=0, tid=7, correlation=1),
        ev("triton_poi_fused_add_0", "kernel", -460, 6, pid=0, tid=7, correlation=2),
        ev("triton_poi_fused_add_0", "kernel", 10, 50, pid=0, tid=7, correlation=3),
    ])
    g = analyze_graph(t, None, graph("cuda"))
    k, = g.kernels
    assert k.samples_ms == [approx(0.008), approx(0.006)]
    assert (g.kernel_ms, g.busy_ms) == (approx(0.007), approx(0.007))
    assert g.busy_samples_ms == [approx(0.008), approx(0.006)]


def test_device_events_without_times_are_an_error_not_an_idle_graph():
    # As exported by torch 2.11 on an H200 from a session kept while later ones ran: every
    # kernel and launch at ts 0 with dur 0 (tests/fixtures/cuda_h200 has the real trace).
    t = Trace(events=[
        marker(100, 35),
        ev("cudaLaunchKernel", "cuda_runtime", 0, 0, correlation=1),
        ev("triton_poi_fused_add_0", "kernel", 0, 0, pid=0, tid=7, correlation=1),
    ])
    with pytest.raises(TraceError, match="carry no times"):
        analyze_graph(t, None, graph("cuda"))


def test_device_events_that_write_no_dur_are_counted_as_analyze_counts_them_not_read_as_0(tmp_path):
    # Two iterations; iteration 1's second kernel and its memset wrote no dur (NO_DUR, -0.0).
    # Read as 0 ms, the graph's kernel time would have been (8 + 6 + 0 + 0) / 2 = 7 µs without
    # a word; analyze's columns leave the two out and count them by name: the graph is refused
    # in one line that names them as analyze does.
    no_dur = -0.0
    events = [
        marker(0, 35), marker(40, 35),
        ev("cudaLaunchKernel", "cuda_runtime", 2, 3, correlation=1),
        ev("cudaLaunchKernel", "cuda_runtime", 42, 3, correlation=2),
        ev("cudaLaunchKernel", "cuda_runtime", 50, 3, correlation=3),
        ev("cudaMemsetAsync", "cuda_runtime", 55, 3, correlation=4),
        ev("triton_poi_fused_add_0", "kernel", 5, 8, pid=0, tid=7, correlation=1),
        ev("triton_poi_fused_add_0", "kernel", 45, 6, pid=0, tid=7, correlation=2),
        ev("triton_poi_fused_add_0", "kernel", 55, no_dur, pid=0, tid=7, correlation=3),
        ev("Memset (Device)", "gpu_memset", 60, no_dur, pid=0, tid=7, correlation=4),
    ]
    with pytest.raises(TraceError) as e:
        analyze_graph(Trace(events=events, path="g.json"), None, graph("cuda"))
    assert str(e.value) == (
        "g.json: 2 device events (kernel, memcpy, memset) write no dur: their times are not known, and "
        "the graph's kernel and busy times would be short of them: triton_poi_fused_add_0, Memset (Device)")
    from inductor_bench.core.analyze import analyze_trace
    assert analyze_trace(Trace(events=events)).no_dur == {"triton_poi_fused_add_0": 1, "Memset (Device)": 1}
    # a dur of 0 that is written is a time: kept, as analyze keeps it
    events[-2:] = [ev("triton_poi_fused_add_0", "kernel", 55, 0, pid=0, tid=7, correlation=3)]
    g = analyze_graph(Trace(events=events), None, graph("cuda"))
    assert g.kernels[0].samples_ms == [approx(0.008), approx(0.006)]
    assert g.kernels[0].calls == 1.5
    # the same events written to a file without the dur key read as NO_DUR and are refused too
    raw = [{"ph": "X", "name": e.name, "cat": e.cat, "ts": e.ts, "pid": e.pid, "tid": e.tid, "args": e.args}
           | ({} if i == len(events) - 1 else {"dur": e.dur}) for i, e in enumerate(events)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": raw}))
    with pytest.raises(TraceError, match="1 device event .* writes no dur: its time is.*: triton_poi_fused_add_0$"):
        analyze_graph(load_trace(path), None, graph("cuda"))


def test_pipelined_device_events_that_write_no_dur_are_refused():
    from inductor_bench.core.pipelined import PIPELINED_ITERATION, PIPELINED_RUN, analyze_pipelined
    t = Trace(events=[
        ev(PIPELINED_RUN, "user_annotation", 0, 100), ev(PIPELINED_ITERATION, "user_annotation", 0, 10),
        ev("cudaLaunchKernel", "cuda_runtime", 2, 3, correlation=1),
        ev("k", "kernel", 20, -0.0, pid=0, tid=7, correlation=1),
    ], path="p.json")
    with pytest.raises(TraceError, match="^p.json: 1 device event .* writes no dur.*: k$"):
        analyze_pipelined(t)


def test_device_busy_is_at_most_the_marker_span():
    # Without a launch to go by (hand-built: no runtime events), a device event is the
    # marker's where it starts in it; its busy time is its union, capped by the span.
    t = Trace(events=[marker(0, 35), ev("k", "kernel", 30, 40, pid=0, tid=7)])
    g = analyze_graph(t, None, graph("cuda"))
    assert (g.kernel_ms, g.busy_ms) == (approx(0.040), approx(0.035))


def test_busy_is_the_busiest_device():
    t = Trace(events=[
        marker(0, 100),
        ev("a", "kernel", 0, 10, pid=0, tid=7), ev("b", "kernel", 5, 10, pid=0, tid=8),
        ev("c", "kernel", 0, 30, pid=1, tid=7),
    ])
    g = analyze_graph(t, None, graph("cuda"))
    assert (g.kernel_ms, g.busy_ms) == (approx(0.050), approx(0.030))


def test_extern_kernel_origin_from_the_op_stack():
    module = ModuleInfo("0_forward", "forward", {}, [
        ExternCall("extern_kernels.convolution", ["aten.convolution"], ["conv1d"])], "cuda")
    t = Trace(events=[
        marker(0, 100),
        ev("aten::convolution", "cpu_op", 1, 20),
        ev("aten::_convolution", "cpu_op", 2, 18),
        ev("aten::cudnn_convolution", "cpu_op", 3, 16),
        ev("cudaLaunchKernel", "cuda_runtime", 5, 2, correlation=9),
        ev("sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32", "kernel", 30, 6, pid=0, tid=7,
           correlation=9),
    ])
    (k,) = analyze_graph(t, module, graph("cuda")).kernels
    assert (k.category, k.launched_by, k.aten_ops, k.source_nodes) == (
        "extern_conv", "aten::cudnn_convolution", ["aten.convolution"], ["conv1d"])


def test_extern_kernel_category_from_the_launching_op():
    """cuBLAS runs cuDNN's convolutions as volta_sgemm_*: the launching op decides, launch by
    launch, and the op with the most time names a kernel launched by two (stacks as in
    tests/fixtures/hta/ns_resolution_*)."""
    conv = ("aten::convolution", "aten::_convolution", "aten::cudnn_convolution")
    t = Trace(events=[
        marker(0, 200),
        *[ev(op, "cpu_op", 1 + i, 40 - 2 * i) for i, op in enumerate(conv)],
        ev("cudaLaunchKernel", "cuda_runtime", 5, 2, correlation=1),
        ev("cudaLaunchKernel", "cuda_runtime", 8, 2, correlation=2),
        ev("cudaMemsetAsync", "cuda_runtime", 11, 2, correlation=3),
        ev("aten::mm", "cpu_op", 50, 10),
        ev("cudaLaunchKernel", "cuda_runtime", 52, 2, correlation=4),
        ev("aten::cudnn_batch_norm", "cpu_op", 70, 10),
        ev("cudaLaunchKernel", "cuda_runtime", 72, 2, correlation=5),
        ev("volta_sgemm_64x64_nn", "kernel", 100, 10, pid=0, tid=7, correlation=1),
        ev("volta_sgemm_64x64_nn", "kernel", 110, 10, pid=0, tid=7, correlation=2),
        ev("Memset (Device)", "gpu_memset", 120, 1, pid=0, tid=7, correlation=3),
        ev("volta_sgemm_64x64_nn", "kernel", 130, 5, pid=0, tid=7, correlation=4),
        ev("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>(...)",
           "kernel", 140, 3, pid=0, tid=7, correlation=5),
        ev("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
           "kernel", 150, 4, pid=0, tid=8),  # no launch recorded: its name decides
    ])
    g = analyze_graph(t, None, graph("cuda"))
    assert {k.name[:20]: (k.category, k.launched_by) for k in g.kernels} == {
        "volta_sgemm_64x64_nn": ("extern_conv", "aten::cudnn_convolution, aten::mm"),
        "Memset (Device)": ("memset", "aten::cudnn_convolution"),
        "void cudnn::bn_fw_tr": ("extern_other", "aten::cudnn_batch_norm"),
        "ncclKernel_AllReduce": ("communication", None),
    }
    assert g.categories == approx({"extern_conv": 0.025, "communication": 0.004,
                                   "memset": 0.001, "extern_other": 0.003})
    check_sums(g)


# -- errors -------------------------------------------------------------------------------


def test_no_markers_is_a_trace_error():
    t = Trace(events=[ev(MARKER, "gpu_user_annotation", 0, 10, pid=0, tid=7),
                      ev("aten::mm", "cpu_op", 0, 5)], path="/runs/x/trace.json.gz")
    with pytest.raises(TraceError, match=r"/runs/x/trace.json.gz: no inductor_bench::iteration "
                                         r"markers"):
        analyze_graph(t, None, graph("cpu"))


def test_cuda_graph_without_gpu_activity_is_a_trace_error():
    t = Trace(events=[marker(0, 10), ev("aten::mm", "cpu_op", 1, 5)], path="t.json")
    with pytest.raises(TraceError, match="no GPU activity"):
        analyze_graph(t, None, graph("cuda"))
    # a module that launches nothing legitimately has no device events
    empty = ModuleInfo("0_inference", "inference", {}, [], "cuda")
    g = analyze_graph(t, empty, graph("cuda"))
    assert (g.iterations, g.kernels, g.kernel_ms, g.busy_ms) == (1, [], 0.0, 0.0)


# -- helpers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("callee", "op"), [
    ("extern_kernels.mm", "aten::mm"),
    ("extern_kernels.addmm", "aten::addmm"),
    ("extern_kernels.convolution", "aten::convolution"),
    ("aten.convolution_backward.default", "aten::convolution_backward"),
    ("aten._scaled_dot_product_flash_attention_for_cpu",
     "aten::_scaled_dot_product_flash_attention_for_cpu"),
    ("torch.ops.aten._scaled_dot_product_flash_attention.default",
     "aten::_scaled_dot_product_flash_attention"),
    ("torch.ops.mkldnn._linear_pointwise.default", "mkldnn::_linear_pointwise"),
    ("torch.ops.mkl._mkl_linear", "mkl::_mkl_linear"),
    ("print", None),
])
def test_op_name(callee, op):
    assert op_name(callee) == op


def test_extern_origins_merge_repeated_calls():
    assert extern_origins(CPU_MODULE) == {
        "aten::addmm": (["aten.addmm"], ["linear", "linear_1"])}  # its own op; the transpose's nodes kept
    assert extern_origins(None) == {}


def test_summarize_categories_in_report_order():
    ks = [KernelStat("a", "extern_other", 1, 0.5), KernelStat("b", "triton_pointwise", 1, 0.25),
          KernelStat("c", "extern_other", 1, 0.125)]
    assert summarize_categories(ks) == {"triton_pointwise": 0.25, "extern_other": 0.625}
    assert list(summarize_categories(ks)) == ["triton_pointwise", "extern_other"]


# -- synthetic CUDA fixture -----------------------------------------------------------------


@pytest.fixture(scope="module")
def cuda_graph() -> GraphResult:
    files = {"triton_red_fused_sum_3": "graphs/0-forward/kernels/triton_red_fused_sum_3.py"}
    return analyze_graph(load_trace(SYNTHETIC / "trace.json"), read_module(SYNTHETIC / "module.py"),
                         graph("cuda"), kernel_files=files)


def test_synthetic_cuda_totals(cuda_graph):
    g = cuda_graph
    assert g.iterations == 3
    assert g.wall_samples_ms == approx([0.100, 0.110, 0.120])
    assert g.wall_ms == approx(0.110)
    assert g.kernel_ms == approx(0.075)
    assert g.busy_ms == approx(0.070)  # the memcpy on stream 13 overlaps the reduction
    assert g.busy_pct == approx(700 / 11)
    assert g.categories == approx({
        "triton_pointwise": 0.006, "triton_reduction": 0.022,
        "triton_persistent_reduction": 0.004, "triton_template": 0.008, "extern_gemm": 0.012,
        "extern_conv": 0.006, "extern_attention": 0.010, "memcpy": 0.005, "memset": 0.002})
    check_sums(g)


def test_synthetic_cuda_kernels(cuda_graph):
    rows = [(k.name[:32], k.category, k.calls, round(k.ms, 9), k.launched_by)
            for k in cuda_graph.kernels]
    assert rows == [
        ("triton_red_fused_sum_3", "triton_reduction", 1.0, 0.022, None),
        ("sm90_xmma_gemm_bf16bf16_bf16f32_", "extern_gemm", 1.0, 0.012, "aten::mm"),
        ("void pytorch_flash::flash_fwd_ke", "extern_attention", 1.0, 0.010,
         "aten::_flash_attention_forward"),
        ("triton_tem_fused_addmm_1", "triton_template", 1.0, 0.008, None),
        ("sm90_xmma_fprop_implicit_gemm_bf", "extern_conv", 1.0, 0.006,
         "aten::cudnn_convolution"),
        ("triton_poi_fused_gelu_2", "triton_pointwise", 2.0, 0.006, None),
        ("Memcpy HtoD (Pageable -> Device)", "memcpy", 1.0, 0.005, "aten::copy_"),
        ("triton_per_fused_native_layer_no", "triton_persistent_reduction", 1.0, 0.004, None),
        ("Memset (Device)", "memset", 1.0, 0.002, "aten::zero_"),
    ]
    by_name = {k.name[:24]: k for k in cuda_graph.kernels}
    red = by_name["triton_red_fused_sum_3"]
    assert red.samples_ms == approx([0.020, 0.022, 0.024])
    assert (red.aten_ops, red.source_nodes) == (["aten.sum"], ["sum_1"])
    assert red.file == "graphs/0-forward/kernels/triton_red_fused_sum_3.py"
    assert by_name["sm90_xmma_gemm_bf16bf16_"].aten_ops == ["aten.mm"]  # the module: view, t, mm
    flash = by_name["void pytorch_flash::flas"]
    assert flash.aten_ops == ["aten._scaled_dot_product_flash_attention"]  # the module: view, permute, it
    assert flash.source_nodes == ["q", "k", "v", "scaled_dot_product_attention"]
    assert by_name["sm90_xmma_fprop_implicit"].source_nodes == ["transpose", "conv1d"]
    assert by_name["Memcpy HtoD (Pageable ->"].aten_ops == []
    assert all(k.file is None for k in cuda_graph.kernels if k is not red)


def test_synthetic_trace_matches_its_generator():
    spec = importlib.util.spec_from_file_location("make_trace", SYNTHETIC / "make_trace.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert json.loads((SYNTHETIC / "trace.json").read_text()) == mod.build()


# -- recorded CPU fixture -------------------------------------------------------------------


def _analyze_recorded(gdir: Path) -> GraphResult:
    module = read_module(gdir / "module.py")
    g = GraphResult(id=gdir.name, role=module.role, device="cpu")
    return analyze_graph(load_trace(gdir / "trace.json.gz"), module, g)


def _independent_kernel_us(trace_path: Path) -> list[float]:
    """Per marker, the summed duration of cpu_ops inside it that no other cpu_op encloses,
    computed straight from the JSON without the package's code."""
    events = json.loads(gzip.decompress(trace_path.read_bytes()))["traceEvents"]
    ops = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    out = []
    for m in sorted((e for e in events if e.get("name") == MARKER), key=lambda e: e["ts"]):
        inside = [o for o in ops if m["ts"] <= o["ts"] < m["ts"] + m["dur"]]
        top = [o for o in inside if not any(
            p is not o and p["ts"] <= o["ts"] and o["ts"] + o["dur"] <= p["ts"] + p["dur"]
            and (p["ts"], -p["dur"]) < (o["ts"], -o["dur"]) for p in inside)]
        out.append(sum(o["dur"] for o in top))
    return out


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_recorded_cpu_graph(gid):
    gdir = CPU_TRAIN / gid
    g = _analyze_recorded(gdir)
    assert g.role == gid.split("-")[1]
    assert g.iterations == 5 and len(g.wall_samples_ms) == 5
    assert g.categories["extern_gemm"] > 0
    assert g.categories["cpp_reduction"] > 0
    check_sums(g)
    assert 0.0 < g.busy_pct <= 100.0
    assert g.busy_ms <= g.wall_ms
    per_iter = [sum(k.samples_ms[i] for k in g.kernels) for i in range(5)]
    assert per_iter == approx([us / 1000 for us in _independent_kernel_us(gdir / "trace.json.gz")])


def test_recorded_cpu_kernels():
    fwd = _analyze_recorded(CPU_TRAIN / "0-forward")
    assert {k.name: (k.category, k.calls) for k in fwd.kernels} == {
        "aten::addmm": ("extern_gemm", 2.0),
        "cpp_fused_gelu_native_layer_norm_0": ("cpp_reduction", 1.0),
    }
    addmm = next(k for k in fwd.kernels if k.name == "aten::addmm")
    assert addmm.aten_ops == ["aten.addmm"]  # the module lists aten.t with it
    assert addmm.source_nodes == ["input_1", "input_4"]
    bwd = _analyze_recorded(CPU_TRAIN / "0-backward")
    assert {k.name: (k.category, k.calls) for k in bwd.kernels} == {
        "aten::mm": ("extern_gemm", 3.0),
        "cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_0":
            ("cpp_reduction", 1.0),
        "cpp_fused_sum_1": ("cpp_reduction", 1.0),
    }
    mm = next(k for k in bwd.kernels if k.name == "aten::mm")
    assert mm.aten_ops == ["aten.mm"]


@pytest.mark.slow
@pytest.mark.e2e
def test_record_cpu_fixture_script(tmp_path):
    """The recording script still produces analysable forward and backward graphs."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "record_cpu_fixture.py"),
                        "--out", str(tmp_path)], capture_output=True, text=True, check=False,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0-backward", "0-forward"]
    for gdir in tmp_path.iterdir():
        g = _analyze_recorded(gdir)
        assert g.iterations == 5
        assert g.categories["extern_gemm"] > 0 and g.categories["cpp_reduction"] > 0
        assert 0.0 < g.busy_pct <= 100.0
        check_sums(g)
