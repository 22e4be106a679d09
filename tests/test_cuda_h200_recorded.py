"""Real GPU records, read on any machine: a breakdown run of ``models/transformer_block.py``
training on an NVIDIA H200 (torch 2.11.0+cu130, triton 3.6.0, 2026-11-27), the trace of a
profiler session kept while later ones ran (its device events zeroed), and Inductor's Triton
kernel files of ``scripts/record_triton_kernels.py --device cuda --large`` from the same GPU
(tests/fixtures/README.md says where each came from).

Every figure is checked against a reading of the trace made here with ``json`` alone: each
device event given to the iteration marker that holds its launch (the runtime call with the
same ``args.correlation``), its durations summed.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from inductor_bench.core.analysis import reanalyze
from inductor_bench.core.breakdown import analyze_graph
from inductor_bench.core.errors import TraceError
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.modparse import read_module
from inductor_bench.core.pipelined import analyze_pipelined
from inductor_bench.core.results import GraphResult
from inductor_bench.core.trace import load_for_analysis

from .conftest import FIXTURES

RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"
ZEROED = FIXTURES / "cuda_h200_mlp_zeroed"
KERNELS = FIXTURES / "triton_kernels" / "cuda_h200"
DEVICE_CATS = {"kernel", "gpu_memcpy", "gpu_memset"}
LAUNCH_CATS = {"cuda_runtime", "cuda_driver"}


def _events(path: Path) -> list[dict]:
    with gzip.open(path) as f:
        return [e for e in json.loads(f.read())["traceEvents"] if e.get("ph") == "X"]


def _independent(gid: str) -> tuple[list[float], list[tuple[float, float, dict]]]:
    """Per iteration: the device time (µs) of the events it launched; and (marker start,
    marker end, event) of every device event with its launch's marker."""
    evs = _events(RUN / "graphs" / gid / "trace.json.gz")
    marks = sorted((e for e in evs if e["cat"] == "user_annotation"
                    and e["name"] == "inductor_bench::iteration"), key=lambda e: e["ts"])
    launch = {e["args"]["correlation"]: e["ts"] for e in evs
              if e["cat"] in LAUNCH_CATS and "correlation" in e["args"]}
    sums = [0.0] * len(marks)
    placed = []
    for e in evs:
        if e["cat"] not in DEVICE_CATS:
            continue
        ts = launch[e["args"]["correlation"]]
        i = next(i for i, m in enumerate(marks) if m["ts"] <= ts <= m["ts"] + m["dur"])
        sums[i] += e["dur"]
        placed.append((marks[i]["ts"], marks[i]["ts"] + marks[i]["dur"], e))
    return sums, placed


@pytest.fixture(scope="module")
def result():
    r, done = reanalyze(RUN)
    assert done == ["0-forward", "0-backward"]
    return r


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_kernel_time_is_the_device_time_each_iteration_launched(result, gid):
    g = result.graph(gid)
    sums, _ = _independent(gid)
    assert g.iterations == len(sums) == 100
    per_iter = [math.fsum(k.samples_ms[i] for k in g.kernels) for i in range(g.iterations)]
    assert per_iter == pytest.approx([s / 1000 for s in sums], rel=1e-9)
    kept = [s for i, s in enumerate(sums) if i not in set(g.left_out)]
    assert g.kernel_ms == pytest.approx(math.fsum(kept) / len(kept) / 1000, rel=1e-9)
    assert 0 < g.busy_ms <= g.kernel_ms + 1e-12 and 0 < g.busy_pct <= 100


def test_the_figures_are_those_the_tool_wrote_on_the_h200(result):
    saved = {g["id"]: g for g in json.loads((RUN / "breakdown.json").read_text())["graphs"]}
    for g in result.graphs:
        s = saved[g.id]
        assert (g.wall_ms, g.busy_ms, g.kernel_ms) == pytest.approx(
            (s["wall_ms"], s["busy_ms"], s["kernel_ms"]), rel=1e-12)
        assert g.left_out == s["left_out"]
    fwd = result.graph("0-forward")
    assert fwd.kernel_ms == pytest.approx(0.03797, abs=5e-6)  # 38.0 µs per forward on the H200


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_on_the_h200_every_kernel_ran_after_its_launch_and_inside_its_marker(gid):
    """The device clock, as the profiler converted it, agreed with the host's: counting by
    launch and counting by start would give the same kernels here."""
    _, placed = _independent(gid)
    assert placed
    for start, end, e in placed:
        assert start < e["ts"] and e["ts"] + e["dur"] <= end


@pytest.mark.parametrize("gid", ["0-forward", "0-backward"])
def test_the_pipelined_run_has_the_same_kernels_and_is_launch_bound(result, gid):
    g = result.graph(gid)
    p = g.pipelined
    assert p is not None and p.iterations == g.iterations and p.unattributed == 0
    assert p.busy_ms == pytest.approx(g.kernel_ms, rel=0.05)  # the same kernels, run again
    # 38 and 96 µs of kernels in 0.31 and 0.44 ms of unprofiled launching: the GPU waits
    assert p.plain_wall_ms is not None and p.idle_share > 0.5 and p.launch_bound


def test_a_session_exported_after_later_ones_ran_is_an_error_not_an_idle_graph():
    """torch 2.11 on the H200 ("Profiler clears events at the end of each cycle"): the first
    of three windows, exported after the third, kept its markers and CPU ops but every
    kernel and launch lost its times. Its pipelined session, exported at once, is whole."""
    trace = load_for_analysis(ZEROED / "trace.json.gz")
    kernels = [e for e in trace.events if e.cat == "kernel"]
    assert len(kernels) == 160 and all(e.ts == 0 and e.dur == 0 for e in kernels)
    module = read_module(ZEROED / "module.py")
    with pytest.raises(TraceError, match="160 GPU events carry no times"):
        analyze_graph(trace, module, GraphResult(id="0-forward", role="forward", device="cuda"))
    evs = _events(ZEROED / "pipelined.json.gz")
    p = analyze_pipelined(load_for_analysis(ZEROED / "pipelined.json.gz"), None)
    device = [e for e in evs if e["cat"] in DEVICE_CATS]
    assert len(device) == sum(p.events_per_iteration) == 160 and p.unattributed == 0
    assert p.busy_ms > 0


EXPECTED_KINDS = {
    "triton_poi_fused_add_sin_0": ("pointwise", {"x": 16777216}),
    "triton_poi_fused_clone_mul_t_0": ("pointwise", {"y": 4096, "x": 4096}),
    "triton_poi_fused_add_t_0": ("pointwise", {"y": 4096, "x": 2048}),
    "triton_poi_fused_add_permute_0": ("pointwise", {"z": 256, "y": 256, "x": 256}),
    "triton_red_fused_sum_0": ("reduction", {"x": 4096, "r0_": 8192}),
    "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0": (
        "persistent_reduction", {"x": 65536, "r0_": 256}),
    "triton_spl_fused_cumsum_0": ("split_scan", {"x": 1, "r0_": 4194304}),
    "triton_for_fused_0": ("foreach", None),
    "triton_tem_fused_mm_0": ("template", None),
}


@pytest.mark.parametrize("stem", sorted(EXPECTED_KINDS))
def test_h200_kernel_files_read_as_cuda_kernels_of_their_kind(stem):
    kf = read_kernel_file(KERNELS / f"{stem}.py")
    heuristic, hints = EXPECTED_KINDS[stem]
    assert (kf.name, kf.device, kf.heuristic, kf.size_hints) == (stem, "cuda", heuristic, hints)
    assert {"get_args", "call"} <= set(kf.functions)


def test_the_h200_gemm_template_counts_its_flops_and_carries_its_config():
    kf = read_kernel_file(KERNELS / "triton_tem_fused_mm_0.py")
    assert kf.flop == 2 * 2048**3  # 2048 x 2048 @ 2048 x 2048: 2 n^3 FLOPs
    assert kf.decorator_args == {"num_stages": 4, "num_warps": 8}


# Bytes each kernel moves per launch, counted here from what the case computes (float32):
# every input read once and every output written once.
F32 = 4
MOVED = {
    "triton_poi_fused_add_sin_0": 2 * 2**24 * F32,  # x in, sin(x) + 1 out
    "triton_poi_fused_clone_mul_t_0": 2 * 4096 * 4096 * F32,  # x in, x.t() * 2 out
    "triton_poi_fused_add_t_0": 3 * 4096 * 2048 * F32,  # x, y in, x.t() + y out
    "triton_poi_fused_add_permute_0": 2 * 256**3 * F32,  # x in (read through three views), out
    "triton_red_fused_sum_0": (4096 * 8192 + 4096) * F32,  # x in, one sum per row out
    "triton_per_fused__softmax_exp_prepare_softmax_online_sub_0": 2 * 65536 * 256 * F32,
    "triton_spl_fused_cumsum_0": 2 * 2**22 * F32,
    "triton_tem_fused_mm_0": 3 * 2048 * 2048 * F32,  # a, b in, a @ b out
}


@pytest.mark.parametrize("stem", sorted(MOVED))
def test_inductors_byte_count_of_each_h200_kernel_is_what_it_moves(stem):
    assert read_kernel_file(KERNELS / f"{stem}.py").num_gb * 1e9 == pytest.approx(MOVED[stem], rel=1e-12)


def test_a_zero_byte_count_is_no_count():
    """The foreach kernel adds two lists of two 4M-float tensors (100 MB moved); its harness on
    the H200 says ``num_gb = 0``: the tool takes that as no count, not as a kernel moving nothing."""
    source = (KERNELS / "triton_for_fused_0.py").read_text()
    assert "    num_gb = 0\n" in source and "kernel_num_gb" not in source
    assert read_kernel_file(KERNELS / "triton_for_fused_0.py").num_gb is None


@pytest.mark.parametrize("replayed", [True, False])
def test_reanalysis_keeps_how_the_mode_ran_each_graph(tmp_path, replayed):
    """How a graph ran is saved with the worker's answer and said again by ``--reanalyze``; a
    graph the mode put under CUDA graphs that the worker could not capture says so."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    how = "replayed: 1 CUDA-graph partition(s), 0 eager step(s); 2 input(s) copied per replay"
    prof = run / "graphs" / "0-forward" / "profile.json"
    saved = json.loads(prof.read_text())
    saved["graph"].update(cuda_graphs=True, how_it_ran=how)
    saved["response"]["replayed"] = replayed
    prof.write_text(json.dumps(saved))
    g = reanalyze(run)[0].graph("0-forward")
    assert g.how_it_ran == (how if replayed else f"kernel by kernel, the capture failed (the mode: {how})")


def test_tables_show_the_h200_kernels_by_names_that_fit_and_json_keeps_them_whole(result):
    """The demangled names of the H200 run's extern kernels run to 814 characters; the tables
    show each in at most 80, keeping what tells kernels apart, and breakdown.json the whole."""
    from inductor_bench.render.breakdown import render_breakdown
    from inductor_bench.render.format import KERNEL_CHARS, kernel_label

    names = {k.name for g in result.graphs for k in g.kernels}
    longest = max(names, key=len)
    assert len(longest) == 814 and longest.startswith("void at::native::elementwise_kernel<128, 2, ")
    labels = {n: kernel_label(n) for n in names}
    assert all(len(x) <= KERNEL_CHARS for x in labels.values())
    assert len(set(labels.values())) == len(names)  # no two kernels look alike
    assert labels[next(n for n in names if n.startswith("fmha_cutlassF"))] == "fmha_cutlassF_f32_aligned_64x64_rf_sm80"
    reduce = next(n for n in names if n.startswith("void at::native::reduce_kernel<512"))
    assert labels[reduce] == "reduce_kernel<…sum_functor<…>::{lambda}>, unsigned int, float, 4, 4> >"
    sgemm = next(n for n in names if "sgemm_64x64_8x5_tn" in n)
    assert labels[sgemm] == "cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"
    for fmt_name in ("text", "markdown"):
        out = render_breakdown(result, fmt_name)
        rows = [line for line in out.splitlines() if any(x in line for x in labels.values())]
        assert rows and max(len(line) for line in rows) < 300, fmt_name  # table rows, not prose
        assert longest not in out
    saved = json.loads((RUN / "breakdown.json").read_text())
    assert longest in {k["name"] for g in saved["graphs"] for k in g["kernels"]}


def test_the_html_page_gives_each_shortened_name_whole_on_hover(result):
    """The page shows the same 80-character names as the text, and each shortened one carries
    the whole name as its hover text, in the tables (a ``title``) and in the charts (an SVG
    ``<title>``: the top kernels' chart drawn alone); a name that fits has no hover of its own."""
    import html as html_mod

    from inductor_bench.render.breakdown import render_breakdown
    from inductor_bench.render.format import kernel_label

    page = render_breakdown(result, "html").replace("<wbr>", "")  # where a long name may break
    names = {k.name for g in result.graphs for k in g.kernels}
    top = max((k for g in result.graphs for k in g.kernels), key=lambda k: k.ms)
    shortened = [n for n in names if kernel_label(n) != n]
    assert shortened
    for name in shortened:
        whole, label = html_mod.escape(name), html_mod.escape(kernel_label(name), quote=False)
        assert f'<span title="{whole}"><code>{label}</code></span>' in page, name[:60]
    from inductor_bench.render.charts import breakdown_top
    from inductor_bench.render.html_svg import figure

    assert kernel_label(top.name) != top.name
    svg = figure(breakdown_top(result, 10))  # the top kernels' chart
    assert f"<title>{html_mod.escape(top.name)}\n" in svg
    fits = next(n for n in names if kernel_label(n) == n)
    assert f'title="{html_mod.escape(fits)}"' not in page


def _model_line(text: str) -> int:
    lines = (Path(__file__).parent.parent / "models" / "transformer_block.py").read_text().splitlines()
    (n,) = [i for i, ln in enumerate(lines, 1) if text in ln]
    return n


def test_each_call_of_a_reused_triton_kernel_gets_its_own_time_and_line():
    """The H200 backward calls three Triton kernels at several places (the bias-gradient sums
    of fc2 and proj share one code): each call gets the j-th of its kernel's device events in
    every iteration (read here by start time from the trace) and its own line."""
    from inductor_bench.core.attribution import attribute
    from inductor_bench.core.source_store import load_record

    gdir = RUN / "graphs" / "0-backward"
    module = read_module(gdir / "module.py")
    trace = load_for_analysis(gdir / "trace.json.gz")
    g = analyze_graph(trace, module, GraphResult(id="0-backward", role="backward", device="cuda"))
    attribute(g, trace, module, (gdir / "module.py").read_text(), load_record(gdir / "sources.json"))
    evs = _events(gdir / "trace.json.gz")
    marks = sorted((e for e in evs if e["cat"] == "user_annotation"
                    and e["name"] == "inductor_bench::iteration"), key=lambda e: e["ts"])
    launch = {e["args"]["correlation"]: e["ts"] for e in evs
              if e["cat"] in LAUNCH_CATS and "correlation" in e["args"]}
    calls = {"triton_red_fused_sum_view_0": 2, "triton_per_fused_sum_view_1": 2}
    for name, n in calls.items():
        per_iter = []
        for m in marks:
            mine = sorted((e for e in evs if e["cat"] == "kernel" and e["name"] == name
                           and m["ts"] <= launch[e["args"]["correlation"]] <= m["ts"] + m["dur"]),
                          key=lambda e: e["ts"])
            per_iter.append([e["dur"] / 1000 for e in mine])
        assert {len(d) for d in per_iter} == {n}
        sites = [s for s in g.sites if s.kernel == name]
        assert [s.occurrence for s in sites] == list(range(n))
        for j, s in enumerate(sites):
            assert s.samples_ms == pytest.approx([d[j] for d in per_iter], rel=1e-9)
        row = next(k for k in g.kernels if k.name == name)
        assert math.fsum(s.ms for s in sites) == pytest.approx(row.ms, rel=1e-9)
        # the backward runs fc2's bias gradient first, then proj's
        assert [[ln.line for ln in s.origin.lines] for s in sites] == [
            [_model_line("self.fc2(")], [_model_line("self.proj(")]]
        assert [s.origin.modules for s in sites] == [["fc2"], ["proj"]]


def test_an_extern_kernel_names_its_own_aten_op_not_those_lowered_beside_it(result):
    """The H200 backward's module writes ``Original ATen: [aten.view, aten.gelu,
    aten.gelu_backward, aten.t, aten.mm]`` above one of its extern ``mm`` calls: the GELU's
    backward is a Triton kernel of its own. cuBLAS's kernels of every ``mm`` read as ``aten.mm``
    (the saved record had them all as the ops of every ``mm`` call merged); the attention's
    kernels as its own op."""
    module = (RUN / "graphs" / "0-backward" / "module.py").read_text()
    assert "Original ATen: [aten.view, aten.gelu, aten.gelu_backward, aten.t, aten.mm]" in module
    by_op: dict[tuple[str, ...], int] = {}
    for k in result.graph("0-backward").kernels:
        if k.category.startswith("extern"):
            by_op[tuple(k.aten_ops)] = by_op.get(tuple(k.aten_ops), 0) + 1
    assert by_op == {("aten.mm",): 5, ("aten._scaled_dot_product_efficient_attention_backward",): 4}


def test_an_extern_op_that_fuses_its_neighbours_keeps_all_of_them():
    from inductor_bench.core.breakdown import own_aten_ops

    listed = ["aten.native_layer_norm", "aten.t", "aten.addmm", "aten.gelu"]
    assert own_aten_ops("aten::addmm", listed) == ["aten.addmm"]
    assert own_aten_ops("aten::convolution_backward", ["aten.convolution_backward.default"]) == [
        "aten.convolution_backward.default"]
    assert own_aten_ops("mkldnn::_linear_pointwise", listed) == listed  # oneDNN's fused linear + GELU
