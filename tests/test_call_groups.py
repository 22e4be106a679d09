"""On a device timeline an extern call that launched several kernels is judged on all of them:
the H200 transformer (tests/fixtures/runs/cuda_h200_transformer_train, a real run on an NVIDIA
H200) ran its forward ``mm`` as a split-K GEMM and cuBLASLt's ``splitKreduce_kernel``, and its
attention backward as ``fmha_cutlassB`` with three small kernels beside it. Each call's time is
the sum of the durations of every kernel launched inside its op, read here from the trace with
json alone; its FLOPs 2*M*N*K from the module's shapes."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
import math

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.ceilings import Ceilings, Roofline, kernel_roof
from inductor_bench.core.result_json import roofline_kernels
from inductor_bench.core.roofline import category_far_below_ms, judged, judged_sites

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"
MM, SDPA_BWD = "aten::mm", "aten::_scaled_dot_product_efficient_attention_backward"
H200 = Ceilings("NVIDIA H200", 4240.0, {"fp32": 51.3})  # as measured there (docs/gpu-validation.md)


def _calls(graph: str, op: str) -> list[list[dict[str, tuple[float, int]]]]:
    """Per iteration (its marker), per call of ``op`` in time order: kernel name -> (µs, launches)
    of the device kernels launched on the op's thread while it was open."""
    with gzip.open(RUN / "graphs" / graph / "trace.json.gz") as f:
        evs = [e for e in json.loads(f.read())["traceEvents"] if e.get("ph") == "X"]
    marks = sorted((e for e in evs if e["cat"] == "user_annotation" and e["name"] == "inductor_bench::iteration"),
                   key=lambda e: e["ts"])
    kernels = {e["args"]["correlation"]: e for e in evs if e["cat"] == "kernel"}
    launches = [e for e in evs if e["cat"] in ("cuda_runtime", "cuda_driver")
                and e.get("args", {}).get("correlation") in kernels]
    ops = sorted((e for e in evs if e["cat"] == "cpu_op" and e["name"] == op), key=lambda e: e["ts"])
    out = []
    for m in marks:
        calls = []
        for o in (o for o in ops if m["ts"] <= o["ts"] <= m["ts"] + m["dur"]):
            mine: dict[str, tuple[float, int]] = {}
            for la in launches:
                if la["tid"] == o["tid"] and o["ts"] <= la["ts"] <= o["ts"] + o["dur"]:
                    k = kernels[la["args"]["correlation"]]
                    us, n = mine.get(k["name"], (0.0, 0))
                    mine[k["name"]] = (us + k["dur"], n + 1)
            calls.append(mine)
        out.append(calls)
    return out


def _steady_ms(per_iter_us: list[float], left_out: list[int]) -> float:
    kept = [x for i, x in enumerate(per_iter_us) if i not in set(left_out)]
    return math.fsum(kept) / len(kept) / 1e3


@pytest.fixture(scope="module")
def result():
    r, _ = reanalyze(RUN)  # reads the run, writes nothing
    r.roofline = Roofline(H200)
    return r


def _row(r, graph: str, start: str):
    g = r.graph(graph)
    rows = [k for k in judged(g) if k.name.startswith(start)]
    assert len(rows) == 1
    return g, rows[0]


def test_a_split_k_gemm_call_is_judged_on_its_gemm_and_reduction_together(result):
    calls = _calls("0-forward", MM)
    assert {len(c) for c in calls} == {1}  # the forward's one mm (512x512 @ 512x128)
    names = set(calls[0][0])
    assert len(names) == 2 and any("splitKreduce" in n for n in names)
    g, row = _row(result, "0-forward", "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn")
    ms = _steady_ms([math.fsum(us for us, _ in c[0].values()) for c in calls], g.left_out)
    own = next(k for k in g.kernels if k.name == row.name)
    assert row.ms == pytest.approx(ms, rel=1e-12) and own.ms < row.ms  # 7.93 µs, its GEMM alone 6.12
    flops = 2 * 512 * 512 * 128
    assert row.flops == flops and row.calls == 1.0
    assert row.beside is not None and [launches for launches, _ in row.beside.values()] == [1.0]
    roof = kernel_roof(row, H200, "cuda")
    assert roof.tflops == pytest.approx(flops / (ms / 1e3) / 1e12, rel=1e-12)
    assert roof.pct == pytest.approx(100 * flops / (ms / 1e3) / 51.3e12, rel=1e-12)  # 16.5%; its GEMM alone 21.4%
    # the reduction has no row of its own: its time is the call's
    assert not [k for k in judged(g) if "splitKreduce" in k.name]


def test_the_attention_backward_is_judged_on_its_four_kernels(result):
    calls = _calls("0-backward", SDPA_BWD)
    assert {len(c) for c in calls} == {1} and {len(c[0]) for c in calls} == {4}
    g, row = _row(result, "0-backward", "fmha_cutlassB")
    ms = _steady_ms([math.fsum(us for us, _ in c[0].values()) for c in calls], g.left_out)
    assert row.ms == pytest.approx(ms, rel=1e-12)
    assert sorted(row.beside) == sorted(n for n in calls[0][0] if not n.startswith("fmha_cutlassB"))
    [fig] = [x for x in roofline_kernels(result) if x["graph"] == "0-backward" and x["kernel"] == row.name]
    assert fig["kernels_a_call"] == 4.0 and fig["ms"] == pytest.approx(ms, rel=1e-12)
    assert fig["gbps"] == pytest.approx(row.bytes / (ms / 1e3) / 1e9, rel=1e-12)


def test_each_kernel_is_in_one_judged_row_and_they_add_up_to_the_kernel_time(result):
    for g in result.measured():
        rows = judged(g)
        assert math.fsum(k.ms for k in rows) == pytest.approx(g.kernel_ms, rel=1e-12)
        assert math.fsum(g.categories.values()) == pytest.approx(g.kernel_ms, rel=1e-12)
        grouped = {n for k in rows for n in (k.beside or {})}
        assert {k.name for k in rows} | grouped == {k.name for k in g.kernels}
        assert not grouped & {k.name for k in rows}
    # backward: the nt GEMM's four calls each with their reduction (all eight kernels' time)
    calls = _calls("0-backward", MM)
    g, row = _row(result, "0-backward", "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_nt")
    nt = [[c for c in it if any(n == row.name for n in c)] for it in calls]
    assert {len(x) for x in nt} == {4}
    ms = _steady_ms([math.fsum(us for c in it for us, _ in c.values()) for it in nt], g.left_out)
    assert row.ms == pytest.approx(ms, rel=1e-12) and row.flops == 201_326_592


def test_the_far_below_share_keeps_each_kernels_time_in_its_own_category(result):
    far = category_far_below_ms(result)
    cats: dict[str, float] = {}
    for g in result.measured():
        for c, ms in g.categories.items():
            cats[c] = cats.get(c, 0.0) + ms
    assert all(far[c] <= cats[c] * (1 + 1e-12) for c in far)
    _, row = _row(result, "0-backward", "fmha_cutlassB")  # 2.3% of the bandwidth: far below
    assert far["extern_attention"] == pytest.approx(row.ms, rel=1e-12)


def test_the_roofline_table_says_how_many_kernels_a_call_ran(result):
    from inductor_bench.render.breakdown import render_breakdown
    text = render_breakdown(result)
    assert "kernels a call" in text and "splitKreduce_kernel" in text
    g = result.graph("0-forward")
    gemm = next(k for k, mark in judged_sites(g) if "sgemm_64x64_8x5_tn" in k.name)
    assert f"{kernel_roof(gemm, H200, 'cuda').pct:.1f}%" in text
    # the kernel tables' % peak of a main kernel is its calls' (16%, its GEMM alone 21%), and says so
    top = text[text.index("Top 15"):text.index("How far from the limit")]
    line = next(x for x in top.splitlines() if "sgemm_64x64_8x5_tn" in x)
    assert f"~{kernel_roof(gemm, H200, 'cuda').pct:.0f}%" in line
    assert "% peak of an extern call's main kernel: its calls' work over the time of every kernel" in top


def test_a_replayed_graphs_calls_take_each_kernels_share_of_the_one_call_launched_beside_them(result):
    # the one call launched kernel by kernel beside CUDA-graph replays (no markers): a kernel
    # beside a main kernel takes its row's time times the share of it those calls took there
    from inductor_bench.core.graph_work import count_work
    from inductor_bench.core.modparse import read_module
    from inductor_bench.core.trace import Trace, load_for_analysis
    full = load_for_analysis(RUN / "graphs" / "0-backward" / "trace.json.gz")
    mark = min((e for e in full.events if e.name == "inductor_bench::iteration" and e.cat == "user_annotation"),
               key=lambda e: e.ts)
    host = [e for e in full.events if e.cat != "kernel" and e is not mark and mark.ts <= e.ts <= mark.end]
    corrs = {e.args["correlation"] for e in host if "correlation" in e.args}
    one = Trace(host + [e for e in full.events if e.cat == "kernel" and e.args.get("correlation") in corrs])
    g = copy.deepcopy(result.graph("0-backward"))
    module = RUN / "graphs" / "0-backward" / "module.py"
    count_work(g, read_module(module), module.read_text(), RUN, trace=one, one_call=True)
    rows = {k.name: k for k in g.kernels}
    nt = next(k for k in g.kernels if "sgemm_64x64_8x5_nt" in k.name)
    reduce = next(k for k in g.kernels if "splitKreduce" in k.name)
    first = _calls("0-backward", MM)[0]
    mine = math.fsum(c[reduce.name][0] for c in first if nt.name in c)
    every = math.fsum(c[reduce.name][0] for c in first if reduce.name in c)
    assert nt.beside == {reduce.name: [4.0, pytest.approx(reduce.ms * mine / every, rel=1e-12)]}
    fmha = next(k for k in g.kernels if k.name.startswith("fmha_cutlassB"))
    assert {n: ms for n, (_, ms) in fmha.beside.items()} == {n: rows[n].ms for n in fmha.beside}


def test_a_main_kernel_also_launched_by_calls_not_followed_counts_only_the_followed_calls():
    """Hand-built: each of two iterations runs one ``aten::mm`` call (a split-K GEMM, ``gemm``,
    and its ``reduce``) and one ``aten::addmm`` op event that launched ``gemm`` twice, where the
    module has two addmm calls: addmm cannot be followed call by call. The mm call ran two
    kernels (gemm once, reduce once), not (3 + 1) / 3 as gemm's launches of every op read."""
    from inductor_bench.core.call_groups import kernels_a_call, set_beside
    from inductor_bench.core.device_calls import call_launches
    from inductor_bench.core.graph_result import GraphResult, KernelStat, graph_from_dict
    from inductor_bench.core.trace import Event, Trace

    evs, corr = [], iter(range(1, 100))

    def ev(name, cat, ts, dur, **args):
        evs.append(Event(name, cat, ts, dur, 1, 1 if cat != "kernel" else 7, args))

    kernels = []  # (iteration, name, µs) as launched
    for it, t0 in enumerate((0.0, 1000.0)):
        ev("inductor_bench::iteration", "user_annotation", t0, 500.0)
        ev(MM, "cpu_op", t0 + 10, 50.0)
        ev("aten::addmm", "cpu_op", t0 + 100, 50.0)
        for ts, _op, name, us in ((20, MM, "gemm", 10.0 + it), (30, MM, "reduce", 2.0),
                                 (110, "aten::addmm", "gemm", 8.0), (120, "aten::addmm", "gemm", 9.0)):
            c = next(corr)
            ev("cudaLaunchKernel", "cuda_runtime", t0 + ts, 1.0, correlation=c)
            ev(name, "kernel", t0 + ts + 200, us, correlation=c)
            kernels.append((it, name, us))
    ops = [MM, "aten::addmm", "aten::addmm"]
    followed = call_launches(Trace(evs), ops)
    assert list(followed) == [0]  # the mm call alone
    per_iter = {n: sum(1 for _, x, _ in kernels if x == n) / 2 for n in ("gemm", "reduce")}
    assert per_iter == {"gemm": 3.0, "reduce": 1.0}
    g = GraphResult(id="0-forward", role="forward", wall_samples_ms=[1.0, 1.0])
    g.kernels = [KernelStat(n, "extern_mm", per_iter[n],
                            math.fsum(us for _, x, us in kernels if x == n) / 2 / 1e3) for n in per_iter]
    set_beside(g, followed, Trace(evs))
    gemm = g.kernels[0]
    assert gemm.beside == {"reduce": [1.0, pytest.approx(2.0 / 1e3, rel=1e-12)]}
    assert gemm.own_calls == 1.0  # one launch of gemm an iteration under the mm call
    assert kernels_a_call(gemm) == 2.0
    # saved and read back the same; a result saved before they were recorded reads all launches
    back = graph_from_dict(json.loads(json.dumps(g.to_dict()))).kernels[0]
    assert back.own_calls == 1.0 and kernels_a_call(back) == 2.0
    assert kernels_a_call(dataclasses.replace(gemm, own_calls=None)) == (3.0 + 1.0) / 3.0


@pytest.mark.parametrize(("walls", "left_out", "want_us"), [
    ([1.0, 1.0, 9.0], [2], (2.0 + 4.0) / 2),  # the iteration the policy left out is not in it
    ([], [], (2.0 + 4.0 + 30.0) / 3),  # a result saved before the policy: every iteration
])
def test_the_time_beside_a_main_kernel_is_the_policys_figure_over_the_graphs_kept_iterations(
        walls, left_out, want_us):
    """Hand-built: one followed call ran ``gemm`` and ``reduce`` in each of three iterations, the
    third stalled (``reduce`` took 30 µs there). The time beside ``gemm`` is the mean of
    ``reduce``'s per-iteration time over the iterations the graph's figures are the mean of."""
    from inductor_bench.core.call_groups import set_beside
    from inductor_bench.core.device_calls import CallLaunches
    from inductor_bench.core.results import GraphResult, KernelStat

    call = CallLaunches(us={"gemm": [50.0, 50.0, 50.0], "reduce": [2.0, 4.0, 30.0]},
                        launches={"gemm": 3, "reduce": 3})
    g = GraphResult(id="0-forward", role="forward", wall_samples_ms=walls, left_out=left_out)
    g.kernels = [KernelStat("gemm", "extern_mm", 1.0, 0.05), KernelStat("reduce", "reduction", 1.0, 1.0)]
    set_beside(g, {0: call}, None)
    assert g.kernels[0].beside == {"reduce": [1.0, pytest.approx(want_us / 1e3, rel=1e-12)]}
