"""Two runs' times of one kernel come from two processes: a kernel both compiled to one code
(``core/one_code.py``) is judged ``same code``, never faster or slower, however the two
processes' times differ, in ``breakdown --autotune-top N`` on CPU (max-autotune recompiled in
other processes) and in ``diff``; a kernel that changed is judged as before."""

from __future__ import annotations

import json
import statistics

import pytest

from inductor_bench.core.autotune import match_kernels, same_code_rows
from inductor_bench.core.one_code import RunKernels, one_code
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat, Recompile
from inductor_bench.core.vocab import Verdict
from inductor_bench.render.breakdown import render_breakdown

# synthetic: a compiled module's kernel definitions as Inductor writes them on CPU
MODULE = """
from torch._inductor.codecache import AsyncCompile
async_compile = AsyncCompile()

cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], r'''
extern "C"  void  kernel(float* in_out_ptr0)
{{
    for(int64_t x0=0L; x0<{relu}L; x0+=1L) {{ in_out_ptr0[x0] = std::max(in_out_ptr0[x0], 0.0f); }}
}}
''')

cpp_fused_sum_1 = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{{
    float acc = 0; for(int64_t x0=0L; x0<{total}L; x0+=1L) {{ acc += in_ptr0[x0]; }} out_ptr0[0] = acc;
}}
''')
"""


def _k(name: str, category: str, ms: float, **kw) -> KernelStat:
    return KernelStat(name=name, category=category, calls=kw.pop("calls", 1), ms=ms,
                      samples_ms=[ms * f for f in (1.0, 1.01, 0.99, 1.0, 1.0, 1.0, 0.995, 1.005)], **kw)


def _run(mode: str, slow: float) -> BreakdownResult:
    """One graph: an extern GEMM, a relu and a sum; ``slow`` times each (the other process)."""
    g = GraphResult(id="0-inference", role="inference", frame_id=0, iterations=8, kernels=[
        _k("aten::addmm", "extern_gemm", 0.050 * slow, calls=2, bytes=225576.0, flops=2260992.0),
        _k("cpp_fused_relu_0", "cpp_pointwise", 0.003 * slow, bytes=65536.0),
        _k("cpp_fused_sum_1", "cpp_reduction", 0.002 * slow, bytes=1024.0)])
    return BreakdownResult(model="m", mode=mode, graphs=[g])


def test_kernels_of_one_code_are_same_code_however_their_times_differ():
    base, tuned = _run("default", 1.0), _run("max-autotune", 1.25)  # the second process 25% slower
    rows = match_kernels(base, tuned)
    assert {r.base_name: r.verdict for r in rows}["aten::addmm"] == "slower"  # what two processes said
    same = {"0-inference": MODULE.format(relu=4096, total=256)}
    other = {"0-inference": MODULE.format(relu=4096, total=512)}  # max-autotune changed the sum
    judged = {r.base_name: r.verdict for r in same_code_rows(rows, base, tuned, same, other)}
    assert judged == {"aten::addmm": Verdict.SAME_CODE, "cpp_fused_relu_0": Verdict.SAME_CODE,
                      "cpp_fused_sum_1": "slower"}
    # an extern op on other bytes (another shape) is other work: judged as measured
    tuned.graphs[0].kernels[0].bytes = 1.0
    judged = {r.base_name: r.verdict for r in same_code_rows(rows, base, tuned, same, same)}
    assert judged["aten::addmm"] == "slower" and judged["cpp_fused_sum_1"] == Verdict.SAME_CODE
    # no module to read: nothing claimed
    assert [r.verdict for r in same_code_rows(rows, base, _run("max-autotune", 1.25), {}, {})][:1] == ["slower"]


def test_the_report_says_a_recompile_of_one_code_differs_by_its_processes():
    base, tuned = _run("default", 1.0), _run("max-autotune", 1.25)
    mods = {"0-inference": MODULE.format(relu=4096, total=256)}
    rows = same_code_rows(match_kernels(base, tuned), base, tuned, mods, mods)
    base.autotune = Recompile(n=3, tuned_run="runs/m/max-autotune", tuned_status="ok", base_step_ms=0.661,
                              tuned_step_ms=0.755, base_kernel_ms=0.055, tuned_kernel_ms=0.069, rows=rows,
                              step_note="the two runs' graph walls added up (no interleaved timing: a "
                                        "script is not timed step by step)")
    text = render_breakdown(base)
    assert ("max-autotune recompile (CPU): step 0.661 ms -> 0.755 ms (0.88x; the two runs' graph walls added "
            "up (no interleaved timing: a script is not timed step by step); every kernel the same code on "
            "both sides: the two processes differ, not the kernels)") in text
    assert "same code: the two kernels are one code (one source; an extern op called as often on the same " \
           "bytes and FLOPs), timed in two processes one after the other" in text
    assert "slower" not in text.split("Default vs max-autotune, kernel by kernel")[1].split("same code:")[0]


def _saved(tmp_path, name: str, result: BreakdownResult, module: str) -> BreakdownResult:
    d = tmp_path / name
    (d / "graphs" / "0-inference").mkdir(parents=True)
    (d / "graphs" / "0-inference" / "module.py").write_text(module)
    result.run_dir, result.graphs[0].module = str(d), "graphs/0-inference/module.py"
    g = result.graphs[0]
    g.wall_ms, g.wall_samples_ms = 0.1, [0.1] * 8
    g.categories = {k.category: k.ms for k in g.kernels}
    g.kernel_ms = sum(k.ms for k in g.kernels)
    return result


def test_diff_judges_kernels_of_one_code_same_code_and_a_changed_kernel_as_measured(tmp_path):
    """default against reduce-overhead on the host (its wrapper differs, its kernels do not),
    the head's process 25% slower: the GEMM and the relu are the same code, the sum (changed)
    is slower; a category all of one code says so, and the kernel time too where every kernel is."""
    from inductor_bench.core.diff import diff_results
    from inductor_bench.render.diff import render_diff

    base = _saved(tmp_path, "base", _run("default", 1.0), MODULE.format(relu=4096, total=256))
    head = _saved(tmp_path, "head", _run("reduce-overhead", 1.25), MODULE.format(relu=4096, total=512))
    (s,) = diff_results(base, head, allow_mismatch=True).sections
    assert {k.name: k.status for k in s.kernels} == {
        "aten::addmm": Verdict.SAME_CODE, "cpp_fused_relu_0": Verdict.SAME_CODE, "cpp_fused_sum_1": "slower"}
    assert {c.category: c.change.verdict for c in s.categories} == {
        "extern_gemm": Verdict.SAME_CODE, "cpp_pointwise": Verdict.SAME_CODE, "cpp_reduction": "significant"}
    assert s.kernel_time.verdict == "significant" and not s.same_code
    text = render_diff(diff_results(base, head, allow_mismatch=True))
    assert "2 the same code on both sides (their times differ by the processes alone)" in text
    head = _saved(tmp_path, "head2", _run("reduce-overhead", 1.25), MODULE.format(relu=4096, total=256))
    (s,) = diff_results(base, head, allow_mismatch=True).sections
    assert all(k.status == Verdict.SAME_CODE for k in s.kernels) and s.kernel_time.verdict == Verdict.SAME_CODE
    # the modules not there to read: judged as measured
    head.run_dir = str(tmp_path / "gone")
    (s,) = diff_results(base, head, allow_mismatch=True).sections
    assert {k.name: k.status for k in s.kernels}["aten::addmm"] == "slower"


def test_the_recompile_headline_says_its_means_pool_the_rounds_and_its_speedup_is_their_median():
    """Synthetic, as seen on a drifting machine: the tuned side's rounds ran slow in a stretch
    that stalled it and not the base (a call at 0.7 ms in two rounds), so the pooled means read
    0.550 -> 0.558 ms while eight of ten rounds' ratios are 1.0: the speedup, their median,
    reads 1.00x, and the line says which figure is which."""
    base, tuned = _run("default", 1.0), _run("max-autotune", 1.25)
    rows = same_code_rows(match_kernels(base, tuned), base, tuned, {}, {})
    b = [[0.55] * 4] * 10
    t = [[0.55] * 4] * 8 + [[0.55, 0.55, 0.55, 0.7]] * 2
    pooled = statistics.fmean(x for blk in t for x in blk)  # every call kept: 0.5575 ms
    base.autotune = Recompile(n=3, tuned_run="runs/m/max-autotune", tuned_status="ok", base_step_ms=0.55,
                              tuned_step_ms=pooled, base_kernel_ms=0.055,
                              tuned_kernel_ms=0.069, rows=rows, base_paired_ms=b, tuned_paired_ms=t)
    text = " ".join(render_breakdown(base).split())
    assert f"step 0.550 ms -> {pooled:.3f} ms (each side's steady mean over all its calls); 1.00x [" in text
    assert "round by round (within noise: the median of 10 rounds' ratios, both timed interleaved in one process)" in text


# as torch 2.13 writes a C++ kernel on CPU: its profiler range names the kernel
NAMED = """
{name} = async_compile.cpp_pybinding(['const float*', 'float*'], r'''
extern "C"  void  kernel(const float* in_ptr0, float* out_ptr0)
{{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_{name}_("graph_0_{name}", nullptr);
    float acc = 0; for(int64_t x0=0L; x0<{total}L; x0+=1L) {{ acc += in_ptr0[x0]; }} out_ptr0[0] = acc;
}}
''')
"""


def test_a_kernel_renamed_by_its_counter_alone_is_same_code():
    """max-autotune of models/mlp.py --train on CPU split a backward kernel in two, so the sum
    after it became cpp_fused_sum_3 where the default had cpp_fused_sum_2: one code but for the
    name in its profiler range, 1.9 us against 1.7 us in two processes, which read 'faster'."""
    base, tuned = _run("default", 1.0), _run("max-autotune", 0.85)
    tuned.graphs[0].kernels[2].name = "cpp_fused_sum_2"
    rows = match_kernels(base, tuned)
    row = next(r for r in rows if r.base_name == "cpp_fused_sum_1")
    assert (row.tuned_name, row.change, row.verdict) == ("cpp_fused_sum_2", "renamed from cpp_fused_sum_1", "faster")

    def mods(name: str, total: int = 256) -> dict[str, str]:
        return {"0-inference": MODULE.format(relu=4096, total=1).split("cpp_fused_sum_1")[0]
                + NAMED.format(name=name, total=total)}

    judged = {r.base_name: (r.change, r.verdict)
              for r in same_code_rows(rows, base, tuned, mods("cpp_fused_sum_1"), mods("cpp_fused_sum_2"))}
    assert judged["cpp_fused_sum_1"] == ("renamed from cpp_fused_sum_1", Verdict.SAME_CODE)
    # renamed and changed: judged as measured
    judged = {r.base_name: r.verdict for r in
              same_code_rows(rows, base, tuned, mods("cpp_fused_sum_1"), mods("cpp_fused_sum_2", 512))}
    assert judged["cpp_fused_sum_1"] == "faster"
    # a longer name that begins with the kernel's is not its name
    b = RunKernels(base, mods("cpp_fused_sum_1"))
    t = RunKernels(tuned, {"0-inference": mods("cpp_fused_sum_2")["0-inference"].replace(
        '"graph_0_cpp_fused_sum_2"', '"graph_0_cpp_fused_sum_21"')})
    assert not one_code(b, ("0-inference", "cpp_fused_sum_1"), t, ("0-inference", "cpp_fused_sum_2"))


def test_the_top_rows_of_a_recompile_are_its_changes_not_its_processes():
    """`--autotune-top 1`: the GEMM's 12.5 us between the two processes (one code) ranked above
    the sum max-autotune changed (0.5 us), so the one row shown was the processes'."""
    from inductor_bench.render.doc import TextDoc
    from inductor_bench.render.kernel import render_matches

    base, tuned = _run("default", 1.0), _run("max-autotune", 1.25)
    rows = same_code_rows(match_kernels(base, tuned), base, tuned, {"0-inference": MODULE.format(relu=4096, total=256)},
                          {"0-inference": MODULE.format(relu=4096, total=512)})
    assert [(r.base_name, round(r.delta_ms * 1e3, 3), r.verdict) for r in rows] == [
        ("aten::addmm", 12.5, Verdict.SAME_CODE), ("cpp_fused_relu_0", 0.75, Verdict.SAME_CODE),
        ("cpp_fused_sum_1", 0.5, "slower")]
    doc = TextDoc()
    render_matches(doc, rows, top=1)
    text = doc.render()
    table = text.split("verdict")[1].split("(2 more")[0]
    assert "cpp_fused_sum_1" in table and "aten::addmm" not in table
    assert "(2 more not shown: 2 the same code on both sides)" in text
    doc = TextDoc()
    render_matches(doc, rows, top=2)
    assert "(1 more not shown: 1 the same code on both sides)" in doc.render()


# the load of a real --autotune-top on models/mlp.py beside other work on a 2-core CPU
# (torch 2.13, 2026-12-07): its headline read 141.047 ms -> 1.058 ms, 168.98x, significant, with
# nothing to say the default's calls had stalled at 36-228 ms (alone: 1.178 -> 1.119 ms, 1.04x)
LOADED = {"others_cores": 1.8, "steal_pct": 0.0, "cores": 2, "parallel_x": 47.8}


@pytest.mark.parametrize("load,warned", [(LOADED, True), ({**LOADED, "others_cores": 0.1, "parallel_x": 0.9}, False),
                                         (None, False)])
def test_the_recompile_headline_warns_where_its_steps_were_timed_beside_other_work(load, warned):
    base, tuned = _run("default", 1.0), _run("max-autotune", 1.25)
    rows = same_code_rows(match_kernels(base, tuned), base, tuned, {}, {})
    rec = Recompile(n=3, tuned_run="runs/m/max-autotune", tuned_status="ok", base_step_ms=0.55,
                    tuned_step_ms=0.55, base_kernel_ms=0.055, tuned_kernel_ms=0.069, rows=rows,
                    base_paired_ms=[[0.55] * 4] * 10, tuned_paired_ms=[[0.55] * 4] * 10, step_load=load)
    base.autotune = rec
    text = " ".join(render_breakdown(base).split())
    warning = ("both timed interleaved in one process; WARNING: timed while other processes kept 1.8 of 2 "
               "cores busy and parallel work took 47.8x as long on all the threads as on one (each parallel "
               "region waits for a thread whose core is taken): both steps may be inflated, each its own way)")
    assert (warning in text) is warned
    assert ("WARNING: timed while" in text) is warned
    again = BreakdownResult.from_dict(json.loads(base.to_json())).autotune
    assert again == rec and ("step_load" in rec.to_dict()) is (load is not None)
