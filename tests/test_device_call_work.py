"""On a device timeline each extern call's work goes to the kernel that did that call, not all
of an op's calls to one kernel: the H200 transformer's backward ran its eight ``aten::mm``
calls on three GEMM kernels (tests/fixtures/runs/cuda_h200_transformer_train, recorded on an
NVIDIA H200), and the scaled-dot-product attention launched its kernels from inside an op of
another name. Checked against the trace read here with json alone."""

from __future__ import annotations

import copy
import gzip
import json
import math

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.ceilings import LATENCY, Ceilings, kernel_roof
from inductor_bench.core.device_calls import call_kernels
from inductor_bench.core.graph_work import count_work
from inductor_bench.core.modparse import read_module
from inductor_bench.core.trace import Trace, load_for_analysis

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"
ZEROED = FIXTURES / "cuda_h200_mlp_zeroed"
MM, SDPA_BWD = "aten::mm", "aten::_scaled_dot_product_efficient_attention_backward"
# the backward module's extern calls in call() order, read off its text (0-backward/module.py):
# (op, M, K, N) of each mm, its float32 operands and result; the attention call between them
BACKWARD = [(MM, 512, 128, 512), (MM, 128, 512, 512), (MM, 512, 512, 128), (MM, 512, 512, 128),
            (MM, 512, 128, 128), (SDPA_BWD, 0, 0, 0), (MM, 512, 384, 128), (MM, 128, 512, 128),
            (MM, 384, 512, 128)]
H200 = Ceilings("NVIDIA H200", 4240.0, {"fp32": 51.3})  # as measured there (docs/gpu-validation.md)


def _mm_work(m: int, k: int, n: int) -> tuple[float, float]:
    return 4.0 * (m * k + k * n + m * n), 2.0 * m * n * k


def _longest_kernel_of_each_call() -> dict[int, str]:
    """Independently: in the first iteration, each mm / attention op event in time order (the
    n-th the module's n-th call of it) and the longest device kernel its launches started."""
    with gzip.open(RUN / "graphs" / "0-backward" / "trace.json.gz") as f:
        evs = [e for e in json.loads(f.read())["traceEvents"] if e.get("ph") == "X"]
    mark = min((e for e in evs if e["cat"] == "user_annotation"
                and e["name"] == "inductor_bench::iteration"), key=lambda e: e["ts"])
    inside = [e for e in evs if mark["ts"] <= e["ts"] <= mark["ts"] + mark["dur"]]
    ops = {name: sorted((e for e in inside if e["cat"] == "cpu_op" and e["name"] == name),
                        key=lambda e: e["ts"]) for name in (MM, SDPA_BWD)}
    launches = [e for e in inside if e["cat"] in ("cuda_runtime", "cuda_driver") and "correlation" in e["args"]]
    kernels = {e["args"]["correlation"]: e for e in evs if e["cat"] == "kernel"}
    seen = {name: 0 for name in ops}
    out = {}
    for index, (name, *_) in enumerate(BACKWARD):
        op = ops[name][seen[name]]
        seen[name] += 1
        mine = [kernels[la["args"]["correlation"]] for la in launches
                if la["tid"] == op["tid"] and op["ts"] <= la["ts"] <= op["ts"] + op["dur"]
                and la["args"]["correlation"] in kernels]
        out[index] = max(mine, key=lambda e: e["dur"])["name"]
    return out


@pytest.fixture(scope="module")
def result():
    r, _ = reanalyze(RUN)
    return r


@pytest.fixture(scope="module")
def backward(result):
    return result.graph("0-backward")


def test_each_mm_call_is_counted_on_the_gemm_kernel_that_ran_it(backward):
    owner = _longest_kernel_of_each_call()
    assert len(set(owner.values())) == 4  # three GEMM kernels and the attention's
    by_kernel: dict[str, list[tuple[float, float]]] = {}
    for index, (op, m, k, n) in enumerate(BACKWARD):
        if op == MM:
            by_kernel.setdefault(owner[index], []).append(_mm_work(m, k, n))
    kernels = {k.name: k for k in backward.kernels}
    for name, works in by_kernel.items():
        k = kernels[name]
        assert (k.bytes, k.flops) == (math.fsum(b for b, _ in works), math.fsum(f for _, f in works))
    nt = kernels[next(n for n in by_kernel if "nt_align1" in n)]
    # calls #1, #3, #7, #8 (128x512 @ 512x512, 512x512 @ 512x128, 128x512 @ 512x128, 384x512 @ 512x128)
    assert (nt.calls, nt.bytes, nt.flops) == (4.0, 4_980_736.0, 201_326_592.0)  # all eight: 9.96 MB, 403 MFLOP
    sdpa = kernels[owner[5]]
    assert sdpa.name.startswith("fmha_cutlassB") and [sdpa.bytes, sdpa.flops] == backward.site_counts[5]


def test_no_call_is_lost_or_counted_twice(backward):
    counted = [k for k in backward.kernels if k.launched_by]
    assert math.fsum(k.flops or 0.0 for k in counted) == math.fsum(f for _, f in backward.site_counts)
    assert math.fsum(k.bytes or 0.0 for k in counted) == math.fsum(b for b, _ in backward.site_counts)


def test_the_gemm_kernels_figures_are_their_own_calls_against_the_h200(backward):
    nt = next(k for k in backward.kernels if "nt_align1" in k.name)
    roof = kernel_roof(nt, H200, "cuda")
    tflops = 201_326_592 / (nt.ms / 1e3) / 1e12  # 11.0 TFLOP/s; all eight calls' work read 22.1
    assert roof.tflops == pytest.approx(tflops, rel=1e-12)
    assert roof.pct == pytest.approx(100 * tflops / 51.3, rel=1e-12)  # 21.5%, where it read 43.1%
    # per launch: one call of 50 MFLOP at most ideally takes 1.3 µs, far under a launch's cost
    assert roof.bound == LATENCY and 201_326_592 / 4 / 51.3e12 * 1e6 < 5.0


def test_a_trace_whose_calls_cannot_be_told_apart_leaves_the_op_to_its_longest_kernel():
    # its markers stand, its kernels and launches were zeroed (ts 0): no call has an order
    trace = load_for_analysis(ZEROED / "trace.json.gz")
    assert call_kernels(trace, ["aten::addmm"] * 3) == {}


def test_a_split_k_gemm_is_judged_per_call_on_its_own_kernel_not_per_launch_of_the_op(result):
    # the forward's one mm (512x512 @ 512x128) launched a GEMM and cuBLASLt's split-K reduction:
    # the GEMM's row has its one launch and the call's count; the reduction's, neither
    mm = [k for k in result.graph("0-forward").kernels if k.launched_by == MM]
    gemm, = (k for k in mm if "sgemm" in k.name)
    reduce, = (k for k in mm if "splitKreduce" in k.name)
    assert (gemm.calls, gemm.bytes, gemm.flops) == (1.0, *_mm_work(512, 512, 128))
    assert (reduce.calls, reduce.bytes, reduce.flops) == (1.0, None, None)
    roof = kernel_roof(gemm, H200, "cuda")
    assert roof.pct == pytest.approx(100 * 2 * 512 * 512 * 128 / (gemm.ms / 1e3) / 51.3e12, rel=1e-12)
    assert roof.bound == LATENCY  # 1.3 µs of ideal work in a 6.1 µs launch


def _one_call_without_markers(trace: Trace) -> Trace:
    """The trace's first iteration alone, its marker dropped: what the run launched kernel by
    kernel beside a graph's CUDA-graph replays records (one call, no marker)."""
    mark = min((e for e in trace.events if e.name == "inductor_bench::iteration" and e.cat == "user_annotation"),
               key=lambda e: e.ts)
    host = [e for e in trace.events if e.cat != "kernel" and e is not mark and mark.ts <= e.ts <= mark.end]
    corrs = {e.args["correlation"] for e in host if "correlation" in e.args}
    device = [e for e in trace.events if e.cat == "kernel" and e.args.get("correlation") in corrs]
    return Trace(host + device)


def test_a_replayed_graphs_calls_are_followed_in_its_one_call_launched_kernel_by_kernel():
    full = load_for_analysis(RUN / "graphs" / "0-backward" / "trace.json.gz")
    ops = [op for op, *_ in BACKWARD]
    assert call_kernels(full, ops) == _longest_kernel_of_each_call()
    one = _one_call_without_markers(full)
    assert call_kernels(one, ops) == {}  # no marker: not as iterations
    assert call_kernels(one, ops, one_call=True) == _longest_kernel_of_each_call()


def test_an_op_whose_calls_ran_a_kernel_not_measured_stays_one_count_on_its_longest_kernel(backward):
    # a kernel the followed calls name but the graph's rows lack (a replay that ran another):
    # its op's calls are not followed, all of them go to the op's longest kernel, as before
    owner = _longest_kernel_of_each_call()
    g = copy.deepcopy(backward)
    g.kernels = [k for k in g.kernels if k.name != owner[2]]  # the nn GEMM of call #2
    for k in g.kernels:  # as measured, before any count
        k.bytes = k.flops = None
    text = (RUN / "graphs" / "0-backward" / "module.py").read_text()
    full = load_for_analysis(RUN / "graphs" / "0-backward" / "trace.json.gz")
    count_work(g, read_module(RUN / "graphs" / "0-backward" / "module.py"), text, RUN, trace=full)
    mm = sum(f for op, *mkn in BACKWARD if op == MM for f in [_mm_work(*mkn)[1]])
    longest = max((k for k in g.kernels if k.launched_by == MM), key=lambda k: k.ms)
    assert longest.flops == mm == 402_653_184
    assert [k.name for k in g.kernels if k.flops and k.launched_by == MM] == [longest.name]
    sdpa = next(k for k in g.kernels if k.name == owner[5])
    assert [sdpa.bytes, sdpa.flops] == backward.site_counts[5]  # still followed
