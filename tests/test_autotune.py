"""Config spaces (real Inductor heuristics on real kernel files, no GPU), the verdict, the
Amdahl arithmetic, the kernel report and kernel matching for the CPU route."""

from __future__ import annotations

import dataclasses
import json

import pytest

from inductor_bench.core.autotune import (
    BASELINE,
    CACHES_OFF,
    MAX_AUTOTUNE,
    amdahl_bound,
    amdahl_rows,
    compare_modes,
    config_label,
    match_kernels,
    meta_patch,
    verdict,
    verdict_sentence,
)
from inductor_bench.core.errors import ResultError, UsageError
from inductor_bench.core.kernel_report import build_report
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.modes import kernel_patch
from inductor_bench.core.peaks import Peak
from inductor_bench.core.results import BreakdownResult, GraphResult, KernelStat, RetunedKernel

from .conftest import FIXTURES, skip_unless_kernel_files_load, torch_minor

KERNELS = FIXTURES / "triton_kernels"

# kernel -> (baseline configs, max-autotune configs), torch 2.13 heuristics with the patch of
# torch 2.13's mode="max-autotune" (max_autotune + coordinate descent).
SPACES = {
    "triton_poi_fused_add_sin_0": (2, 2),  # 1-D: both configs already (autotune_pointwise)
    "triton_poi_fused_clone_mul_t_0": (1, 6),  # 2-D, TileHint.SQUARE: one config by default
    "triton_poi_fused_add_t_0": (6, 6),  # 2-D, TileHint.DEFAULT: autotuned by default
    "triton_poi_fused_add_permute_0": (1, 7),  # 3-D: from torch 2.12 (THREE_D_BEFORE_2_12)
    "triton_red_fused_sum_0": (1, 5),
    "triton_per_fused__softmax_0": (3, 3),  # persistent reductions are not filtered
    "triton_spl_fused_cumsum_0": (1, 4),
    "triton_for_fused_0": (1, 4),
    "triton_tem_fused_mm_0": (1, 1),  # templates keep their compile-time config
}

# A 3-D pointwise kernel's spaces before torch 2.12, read in each wheel's
# triton_heuristics.pointwise: autotuned by default through 2.10 (its seven configs unless
# autotune_pointwise is off), widened at 2.11 only by max_autotune_pointwise, which no mode sets.
THREE_D_BEFORE_2_12 = {(2, 11): (1, 1), "older": (7, 7)}
# The seven, in the heuristic's order, capped by the kernel's sizes (16 x 16 x 16 first).
THREE_D_CONFIGS = [
    "XBLOCK=16, YBLOCK=16, ZBLOCK=16, num_warps=8, num_stages=1",
    "XBLOCK=32, YBLOCK=16, ZBLOCK=8, num_warps=8, num_stages=1",
    "XBLOCK=16, YBLOCK=32, ZBLOCK=8, num_warps=8, num_stages=1",
    "XBLOCK=16, YBLOCK=8, ZBLOCK=32, num_warps=8, num_stages=1",  # capped by the sizes
]


def expected_space(stem: str) -> tuple[int, int]:
    """SPACES' sizes of a kernel under the installed torch's heuristics."""
    minor = torch_minor()
    if stem != "triton_poi_fused_add_permute_0" or minor >= (2, 12):
        return SPACES[stem]
    return THREE_D_BEFORE_2_12.get(minor, THREE_D_BEFORE_2_12["older"])


# torch._inductor.list_mode_options("max-autotune"), copied from each version's source.
MODE_TABLES = {
    "2.5.0": {"max_autotune": True, "triton.cudagraphs": True},
    "2.11.0": {"max_autotune": True, "triton.cudagraphs": True, "coordinate_descent_tuning": True},
}
CD = {"coordinate_descent_search_radius": 1, "coordinate_descent_check_all_directions": False}


def test_meta_patches():
    assert meta_patch(BASELINE) == {"force_disable_caches": True, "autotune_local_cache": False,
                                    "autotune_remote_cache": False}
    at_2_11 = kernel_patch(MAX_AUTOTUNE, MODE_TABLES["2.11.0"], torch_version="2.11.0+cu128")
    assert meta_patch(MAX_AUTOTUNE, at_2_11) == {**CACHES_OFF, "max_autotune": True,
                                                 "coordinate_descent_tuning": True, **CD}
    at_2_5 = kernel_patch(MAX_AUTOTUNE, MODE_TABLES["2.5.0"], torch_version="2.5.0")
    assert meta_patch(MAX_AUTOTUNE, at_2_5) == {**CACHES_OFF, "max_autotune": True}
    off = meta_patch(MAX_AUTOTUNE, at_2_11, coordinate_descent=False)
    assert off["coordinate_descent_tuning"] is False
    assert meta_patch(BASELINE, coordinate_descent=False)["coordinate_descent_tuning"] is False
    with pytest.raises(UsageError, match="max-autotune needs the installed torch's mode options"):
        meta_patch(MAX_AUTOTUNE)
    with pytest.raises(UsageError, match="unknown autotune mode 'fast'"):
        meta_patch("fast")


def test_the_worker_reads_the_installed_torchs_mode_table():
    torch = pytest.importorskip("torch")
    from torch._inductor import list_mode_options

    from inductor_bench.runner.kernelbench import installed_patch, patch_for

    table = list_mode_options("max-autotune")
    patch = installed_patch()
    assert patch.torch_version == torch.__version__
    assert patch.applied == [k for k in table if k != "triton.cudagraphs"]
    assert patch.ignored == ["triton.cudagraphs"]
    assert patch_for(MAX_AUTOTUNE) == {**CACHES_OFF, **{k: table[k] for k in patch.applied},
                                       **(CD if table.get("coordinate_descent_tuning") else {})}
    if torch.__version__.startswith("2.13."):  # the table this checkout's tests pin
        assert patch.describe() == ("max-autotune as torch 2.13 defines it: max_autotune, "
                                    "coordinate_descent_tuning")


def test_config_label():
    assert config_label({"num_stages": 1, "XBLOCK": 64, "num_warps": 4, "YBLOCK": 32}) == (
        "XBLOCK=64, YBLOCK=32, num_warps=4, num_stages=1")
    assert config_label({}) == "-"


@pytest.fixture(scope="module")
def spaces(tmp_path_factory):
    """(baseline, max-autotune) config lists of every fixture, CPU and synthetic CUDA."""
    skip_unless_kernel_files_load()
    from inductor_bench.runner.kernelbench import config_space

    work = tmp_path_factory.mktemp("spaces")
    out = {}
    for folder in ("cpu", "synthetic_cuda"):
        for stem in SPACES:
            kf = read_kernel_file(KERNELS / folder / f"{stem}.py")
            out[folder, stem] = (config_space(kf, BASELINE, work / folder),
                                 config_space(kf, MAX_AUTOTUNE, work / folder))
    return out


@pytest.mark.parametrize("folder", ["cpu", "synthetic_cuda"])
@pytest.mark.parametrize("stem", sorted(SPACES))
def test_config_space_sizes(spaces, folder, stem):
    base, tuned = spaces[folder, stem]
    assert (len(base), len(tuned)) == expected_space(stem)


def test_config_space_contents(spaces):
    base, tuned = spaces["synthetic_cuda", "triton_poi_fused_add_permute_0"]
    n_base, n_tuned = expected_space("triton_poi_fused_add_permute_0")
    assert [config_label(c) for c in base[:4]] == THREE_D_CONFIGS[:n_base]
    assert tuned[0] == base[0]  # the default config stays the first candidate
    assert [config_label(c) for c in tuned[:4]] == THREE_D_CONFIGS[:n_tuned]
    red_base, red_tuned = spaces["synthetic_cuda", "triton_red_fused_sum_0"]
    assert red_base == [{"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16, "num_stages": 1}]
    assert red_base[0] in red_tuned


def test_a_best_config_file_cannot_pin_the_space(tmp_path):
    """Inductor reads ``<hash>.best_config`` beside the kernel file and then offers only that
    config. The loader's cache switches make the full space come back on the same path."""
    skip_unless_kernel_files_load()
    from torch._inductor.runtime.autotune_cache import AutotuneCache
    from torch._inductor.runtime.triton_heuristics import hash_configs

    from inductor_bench.runner.kernelbench import installed_patch, load_kernel

    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py")
    naive = dict(installed_patch().meta)  # max-autotune, but the file's cache switches left on
    _, tuner = load_kernel(kf, naive, tmp_path, "k", listing_only=True)
    assert len(tuner.configs) == 5
    cache = AutotuneCache.create(tuner.inductor_meta, tuner.filename, hash_configs(tuner.configs))
    assert cache is not None
    cache.save(tuner.configs[2], 1000)
    _, pinned = load_kernel(kf, naive, tmp_path, "k", listing_only=True)
    assert len(pinned.configs) == 1
    _, ours = load_kernel(kf, meta_patch(MAX_AUTOTUNE, installed_patch()), tmp_path, "k",
                          listing_only=True)
    assert len(ours.configs) == 5


def test_a_kernel_file_this_torch_cannot_import_is_one_line(tmp_path, monkeypatch):
    """A file another torch wrote calls what the installed one lacks at its top level (torch
    2.5 has no ``set_driver_to_cpu``): a usage error naming both, not the worker's traceback."""
    import re

    torch = pytest.importorskip("torch")
    from torch._inductor.runtime import triton_helpers

    from inductor_bench.runner.kernelbench import config_space

    monkeypatch.delattr(triton_helpers, "set_driver_to_cpu", raising=False)
    kf = read_kernel_file(KERNELS / "cpu" / "triton_red_fused_sum_0.py")
    with pytest.raises(UsageError) as caught:
        config_space(kf, BASELINE, tmp_path)
    installed = rf"torch {re.escape(torch.__version__)} and (triton [\w.+]+|no triton)"
    assert re.fullmatch(
        rf"{re.escape(str(kf.path))}: {installed} cannot import it \(AttributeError: module "
        r"'torch._inductor.runtime.triton_helpers' has no attribute 'set_driver_to_cpu'\); a kernel file "
        r"another torch version wrote needs that version and its Triton", str(caught.value)), str(caught.value)


# --- verdict ---------------------------------------------------------------------------------

BASE = [1.00, 1.01, 0.99, 1.00, 1.02, 0.98, 1.00]


def test_verdicts():
    assert verdict(compare_modes(BASE, [x * 0.80 for x in BASE])) == "faster"
    assert verdict(compare_modes(BASE, [x * 1.20 for x in BASE])) == "slower"
    assert verdict(compare_modes(BASE, [x * 1.02 for x in BASE])) == "within noise"
    assert verdict(compare_modes(BASE[:4], [0.5] * 4)) == "too few samples"
    # 4 % is above the 3 % threshold but inside 3 sigma of these spreads
    noisy = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.08]
    assert verdict(compare_modes(noisy, [x * 0.96 for x in noisy])) == "within noise"


def _x(change) -> str:
    """The speedup and its interval as the sentence prints them, from the change's figures."""
    lo, hi = change.speedup_ci
    return f"{change.speedup:.2f}x [{lo:.2f}x-{hi:.2f}x]"


def test_verdict_sentences():
    faster = compare_modes(BASE, [x * 0.8 for x in BASE])
    assert verdict_sentence(faster) == f"max-autotune is faster: {_x(faster)} (20.0% less time)"
    assert _x(faster).startswith("1.25x [")
    slower = compare_modes(BASE, [x * 1.25 for x in BASE])
    assert verdict_sentence(slower) == (
        f"max-autotune is SLOWER: {_x(slower)} (25.0% more time); the baseline config wins "
        "(autotuning picks by a short benchmark, which can mislead)")
    same = compare_modes(BASE, [x * 1.02 for x in BASE])
    lo, hi = same.speedup_ci
    assert lo <= 1 / 1.02 <= hi
    assert verdict_sentence(same) == (
        f"no difference: {_x(same)}, 2.0% is within noise (needs 3% and the two times' confidence "
        "intervals apart)")
    assert verdict_sentence(compare_modes([1.0], [1.0])) == (
        "too few samples to judge (use more --reps)")


# --- Amdahl ----------------------------------------------------------------------------------


def test_amdahl_bound():
    # A kernel at 2 % of model time made 2x faster saves at most 1 % of model time.
    assert amdahl_bound(0.02, 2.0, 1.0) == pytest.approx(0.01)
    assert amdahl_bound(0.5, 1.0, 0.25) == pytest.approx(0.375)
    assert amdahl_bound(0.3, 1.0, 1.2) == 0.0  # slower: nothing to gain
    assert amdahl_bound(0.3, 1.0, 1.0) == 0.0
    assert amdahl_bound(0.3, 0.0, 1.0) == 0.0


def test_amdahl_rows_and_total():
    def row(kernel, share, base_ms, tuned_ms, verdict="faster"):
        return RetunedKernel(graph="0-forward", kernel=kernel, category="triton_pointwise",
                             share=share, model_ms=base_ms, base_ms=base_ms, tuned_ms=tuned_ms,
                             verdict=verdict)

    # d: 2% less time, judged within noise: no gain, where it added 0.30 x 0.02 = 0.6% of
    # model time to the total that the table says counts only kernels max-autotune made faster
    rows, total = amdahl_rows([row("a", 0.40, 4.0, 2.0), row("b", 0.10, 1.0, 1.25, "slower"),
                               row("c", 0.05, 0.5, None, None),
                               row("d", 0.30, 1.0, 0.98, "within noise")])
    assert [r.speedup for r in rows] == [2.0, 0.8, None, pytest.approx(1 / 0.98)]
    assert [r.bound for r in rows] == [pytest.approx(0.2), 0.0, 0.0, 0.0]
    assert total == pytest.approx(0.2)
    assert rows[0].kernel == "a" and rows[0].share == 0.40


# --- the kernel report ------------------------------------------------------------------------


def _response(tuned_samples=None, all_configs=None):
    base = {"mode": BASELINE, "space": [{"XBLOCK": 1, "R0_BLOCK": 2048, "num_warps": 16,
                                         "num_stages": 1}],
            "tried": 1, "tune_s": 0.5, "config": {"XBLOCK": 1, "R0_BLOCK": 2048,
                                                   "num_warps": 16, "num_stages": 1},
            "samples_ms": [0.0020, 0.0021, 0.0019, 0.0020, 0.0020], "regs": 32, "spills": 0,
            "shared": 128}
    runs = [base]
    if tuned_samples is not None:
        runs.append({**base, "mode": MAX_AUTOTUNE, "space": base["space"] * 5, "tried": 14,
                     "config": {"XBLOCK": 8, "R0_BLOCK": 256, "num_warps": 8, "num_stages": 1},
                     "samples_ms": tuned_samples, "regs": 40})
    return {"device": {"name": "NVIDIA H100 80GB HBM3", "index": 0, "capability": [9, 0]},
            "versions": {"torch": "2.11.0", "triton": "3.5.0"}, "runs": runs,
            "all_configs": all_configs or [], "all_configs_mode": BASELINE if all_configs else None,
            "measured_copy_gbps": None}


def test_report_derives_bandwidth_and_verdict():
    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py")
    peak = Peak(3350.0, 989.0, "datasheet: H100 SXM")
    r = build_report(kf, _response([0.0010] * 5), peak, max_autotune=True)
    base, tuned = r.run(BASELINE), r.run(MAX_AUTOTUNE)
    assert base.timing.ms == 0.0020
    assert r.gbps(base.timing) == pytest.approx(0.002097184 / 2e-6)  # 1048.6 GB/s
    assert r.pct_of_peak_bw(base.timing) == pytest.approx(100 * 1048.592 / 3350)
    assert r.tflops(base.timing) is None  # a reduction declares no FLOPs
    assert tuned.tried == 14 and len(tuned.space) == 5
    ch = r.comparison()
    assert verdict(ch) == "faster" and ch.speedup == pytest.approx(2.0)
    assert r.notes == []
    d = json.loads(json.dumps(r.to_dict()))
    assert d["schema"] == "inductor-bench/kernel"
    assert d["comparison"]["verdict"] == "faster"
    assert d["runs"][1]["label"] == "XBLOCK=8, R0_BLOCK=256, num_warps=8, num_stages=1"
    assert d["runs"][0]["gbps"] == pytest.approx(1048.592)
    assert d["kernel"]["name"] == "triton_red_fused_sum_0"


def test_report_of_a_template_says_to_recompile():
    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_tem_fused_mm_0.py")
    r = build_report(kf, _response(), Peak(None, None, "unknown"), max_autotune=True)
    assert r.comparison() is None
    assert r.tflops(r.runs[0].timing) == pytest.approx(33554432 / 2e-6 / 1e12)
    assert r.pct_of_peak_flops(r.runs[0].timing) is None
    assert r.notes[0].startswith(
        "triton_tem_fused_mm_0 is a template kernel: its launch config (EVEN_K=True, "
        "USE_FAST_ACCUM=False, ACC_TYPE=tl.float32, BLOCK_M=16, BLOCK_N=16, BLOCK_K=16, "
        "GROUP_M=8, ALLOW_TF32=False, num_warps=1, num_stages=1) was chosen when the model "
        "compiled")
    assert "inductor-bench compare MODEL.py --modes default,max-autotune" in r.notes[0]
    assert r.notes[1] == ("no peak bandwidth known for this device: pass --peak-gbps or "
                          "--peaks-file")


H100 = Peak(3350.0, 989.0, "datasheet: H100 SXM", 67.0, 495.0, 1979.0)


@pytest.mark.parametrize("in_type,allow_tf32,compute,peak", [
    ("fp32", "False", "fp32", 67.0),  # the recorded file: fp32 inputs, TF32 off
    ("fp32", "True", "tf32", 495.0),
    ("bf16", "False", "fp16/bf16", 989.0),
    ("fp16", "True", "fp16/bf16", 989.0),
    ("fp8e4nv", "False", "fp8", 1979.0),
])
def test_flops_are_measured_against_the_peak_of_the_kernels_compute_type(
        tmp_path, in_type, allow_tf32, compute, peak):
    from inductor_bench.render.kernel import render_kernel

    src = (KERNELS / "synthetic_cuda" / "triton_tem_fused_mm_0.py").read_text()
    src = src.replace("'arg_A': '*fp32', 'arg_B': '*fp32'",
                      f"'arg_A': '*{in_type}', 'arg_B': '*{in_type}'")
    src = src.replace("'ALLOW_TF32': False}", f"'ALLOW_TF32': {allow_tf32}}}")
    f = tmp_path / "triton_tem_fused_mm_0.py"
    f.write_text(src)
    kf = read_kernel_file(f)
    assert kf.compute_type == compute
    r = build_report(kf, _response(), H100)
    tflops = 33554432 / 2e-6 / 1e12  # FLOP per launch over the 0.002 ms median
    assert r.tflops(r.runs[0].timing) == pytest.approx(tflops)
    assert r.pct_of_peak_flops(r.runs[0].timing) == pytest.approx(100 * tflops / peak)
    assert r.to_dict()["peak_flops"] == {"compute_type": compute, "tflops": peak}
    assert (f"peak: 3350 GB/s, {peak:.1f} TFLOP/s dense {compute} (the kernel's compute type) "
            "(datasheet: H100 SXM)") in render_kernel(r)


def test_no_flop_peak_for_the_compute_type_is_said():
    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_tem_fused_mm_0.py")
    a100_like = Peak(2039.0, 312.0, "peaks file (x)")  # no fp32 figure given
    r = build_report(kf, _response(), a100_like)
    assert r.pct_of_peak_flops(r.runs[0].timing) is None
    assert r.notes == [
        "no fp32 TFLOP/s peak known for this device: no % of peak FLOP/s (a --peaks-file entry "
        "can give tflops, tflops_fp32, tflops_tf32, tflops_fp8)"]


def test_the_report_says_which_max_autotune_ran():
    from inductor_bench.render.kernel import render_kernel

    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py")
    patch = kernel_patch(MAX_AUTOTUNE, MODE_TABLES["2.11.0"], torch_version="2.11.0+cu128")
    resp = {**_response([0.0010] * 5), "max_autotune_patch": patch.to_dict()}
    r = build_report(kf, resp, H100, max_autotune=True)
    assert r.tuning == patch
    assert r.to_dict()["max_autotune_patch"]["applied"] == ["max_autotune",
                                                            "coordinate_descent_tuning"]
    text = render_kernel(r)
    assert ("max-autotune as torch 2.11 defines it: max_autotune, coordinate_descent_tuning "
            "(not for one kernel: triton.cudagraphs)") in text.splitlines()
    assert "peak: 3350 GB/s (datasheet: H100 SXM)" in text.splitlines()  # no FLOP count


def test_a_file_already_tuned_says_what_max_autotune_adds(tmp_path):
    src = (KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py").read_text()
    f = tmp_path / "triton_red_fused_sum_0.py"
    f.write_text(src.replace("'max_autotune': False", "'max_autotune': True"))
    kf = read_kernel_file(f)
    at_2_11 = kernel_patch(MAX_AUTOTUNE, MODE_TABLES["2.11.0"], torch_version="2.11.0")
    at_2_5 = kernel_patch(MAX_AUTOTUNE, MODE_TABLES["2.5.0"], torch_version="2.5.0")
    assert build_report(kf, _response(), H100, max_autotune=True).notes == [
        "this kernel was generated with max_autotune on: its baseline already searches the "
        "max-autotune configs (max-autotune adds nothing to its switches)"]
    resp = {**_response(), "max_autotune_patch": at_2_11.to_dict()}
    assert build_report(kf, resp, H100, max_autotune=True).notes == [
        "this kernel was generated with max_autotune on: its baseline already searches the "
        "max-autotune configs (max-autotune adds coordinate_descent_tuning)"]
    resp = {**_response(), "max_autotune_patch": at_2_5.to_dict()}
    assert "adds nothing to its switches" in build_report(kf, resp, H100, max_autotune=True).notes[0]


def test_report_needs_a_run():
    kf = read_kernel_file(KERNELS / "synthetic_cuda" / "triton_red_fused_sum_0.py")
    with pytest.raises(ResultError, match="returned no timed run"):
        build_report(kf, {"runs": []}, Peak(None, None, "unknown"))


# --- CPU route: kernel matching ---------------------------------------------------------------


def _k(name, category, ms, ops):
    return KernelStat(name=name, category=category, calls=1, ms=ms,
                      samples_ms=[ms * f for f in (1.0, 1.01, 0.99, 1.0, 1.0)], aten_ops=ops)


def _result(mode, kernels):
    g = GraphResult(id="0-forward", role="forward", frame_id=0, kernels=kernels)
    return BreakdownResult(model="mlp", mode=mode, graphs=[g])


def test_match_kernels_default_vs_max_autotune():
    base = _result("default", [
        _k("aten::addmm", "extern_gemm", 3.0, ["aten.addmm"]),
        _k("cpp_fused_gelu_0", "cpp_pointwise", 1.0, ["aten.gelu"]),
        _k("cpp_fused_sum_1", "cpp_reduction", 0.5, ["aten.sum"]),
        _k("cpp_fused_add_2", "cpp_pointwise", 0.2, ["aten.add"]),
    ])
    tuned = _result("max-autotune", [
        _k("cpp_fused_addmm_0", "cpp_template", 2.0, ["aten.addmm"]),
        _k("cpp_fused_gelu_0", "cpp_pointwise", 1.0, ["aten.gelu"]),
        _k("cpp_fused_sum_2", "cpp_reduction", 0.5, ["aten.sum"]),
        _k("cpp_fused_mul_3", "cpp_pointwise", 0.1, ["aten.mul"]),
    ])
    rows = match_kernels(base, tuned)
    got = [(r.base_name, r.tuned_name, r.matched_by, r.change, r.delta_ms,
            r.verdict) for r in rows]
    assert got == [
        ("aten::addmm", "cpp_fused_addmm_0", "origin",
         "category GEMM (extern) -> C++ template (GEMM); renamed from aten::addmm", -1.0, "faster"),
        ("cpp_fused_add_2", None, None, "removed", -0.2, "removed"),
        (None, "cpp_fused_mul_3", None, "added", 0.1, "added"),
        ("cpp_fused_gelu_0", "cpp_fused_gelu_0", "name", "same kernel", 0.0, "within noise"),
        ("cpp_fused_sum_1", "cpp_fused_sum_2", "origin", "renamed from cpp_fused_sum_1", 0.0,
         "within noise"),
    ]
    first = rows[0]
    assert (first.graph, first.base_ms, first.tuned_ms) == ("0-forward", 3.0, 2.0)
    assert (first.base_category, first.tuned_category) == ("extern_gemm", "cpp_template")
    assert first.aten_ops == ["aten.addmm"]


def _result_on(device, mode, kernels):
    return dataclasses.replace(_result(mode, kernels), device=device)


@pytest.mark.parametrize("device,verdict", [("cpu", "within noise"), ("cuda", "faster")])
def test_a_kernel_match_is_judged_with_the_devices_floor(device, verdict):
    """A C++ kernel 7% faster under max-autotune, its five iterations each 1% apart: the two
    97.5% t intervals, 1.0 +- 0.011 and 0.93 +- 0.010 ms, are apart, and 1/0.93 = 1.075x is
    above the GPU's 5% floor and below the CPU's 10%, by which `diff` of the same two runs judges
    the kernel: within noise on the CPU, where it read faster by the 5% of no device."""
    base = _result_on(device, "default", [_k("cpp_fused_gelu_0", "cpp_pointwise", 1.0, ["aten.gelu"])])
    tuned = _result_on(device, "max-autotune", [_k("cpp_fused_gelu_0", "cpp_pointwise", 0.93, ["aten.gelu"])])
    (row,) = match_kernels(base, tuned)
    assert (row.base_ms, row.tuned_ms, row.verdict) == (1.0, 0.93, verdict)


def test_render_matches():
    from inductor_bench.render.doc import TextDoc
    from inductor_bench.render.kernel import render_matches

    def render(rows, **kw):
        doc = TextDoc()
        render_matches(doc, rows, **kw)
        return doc.render()

    base = _result("default", [_k("aten::addmm", "extern_gemm", 3.0, ["aten.addmm"]),
                               _k("cpp_fused_add_2", "cpp_pointwise", 0.2, ["aten.add"])])
    tuned = _result("max-autotune", [_k("cpp_fused_addmm_0", "cpp_template", 2.0,
                                        ["aten.addmm"])])
    text = render(match_kernels(base, tuned), top=1)
    rows = [ln.split("  ") for ln in text.splitlines() if ln.startswith("0-forward")]
    assert [[c.strip() for c in row if c.strip()] for row in rows] == [
        ["0-forward", "aten::addmm", "cpp_fused_addmm_0",
         "category GEMM (extern) -> C++ template (GEMM); renamed from aten::addmm", "3.000", "2.000",
         "-1.000", "faster"]]  # ms, as every table of a breakdown
    assert text.rstrip().endswith("(1 more not shown: smaller changes)")
    removed = render(match_kernels(base, tuned))
    line = next(ln for ln in removed.splitlines() if "cpp_fused_add_2" in ln)
    assert [c for c in line.split() if c] == ["0-forward", "cpp_fused_add_2", "-", "removed",
                                               "0.2000", "-", "-0.2000", "removed"]
    assert "default ms    max-autotune ms    delta ms" in removed and "µs" not in removed


def test_autotune_top_recompile_keeps_the_users_profiling_settings(monkeypatch, tmp_path):
    """`breakdown --iterations 12 --windows 2 --autotune-top N` on CPU: the recompiled
    max-autotune run is profiled with the same iterations, windows and timeout."""
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner import autotune_top
    from inductor_bench.runner.settings import RunSettings

    seen = {}

    def fake_run_breakdown(opts, settings, *, out):
        seen.update(mode=opts.mode, iterations=settings.iterations, windows=settings.windows,
                    timeout=settings.timeout, out=out)
        return _result("max-autotune", [_k("cpp_fused_addmm_0", "cpp_template", 2.0, ["aten.addmm"])]), out, None

    monkeypatch.setattr(autotune_top, "run_breakdown", fake_run_breakdown)
    model = tmp_path / "m.py"
    model.write_text("def make_workload():\n    pass\n")
    base = _result("default", [_k("aten::addmm", "extern_gemm", 3.0, ["aten.addmm"])])
    settings = RunSettings(iterations=12, windows=2, timeout=77.0)
    err = autotune_top.add_autotune_top(base, tmp_path, WorkloadOptions(path=str(model), device="cpu"), 3, settings)
    assert err is None
    assert seen == {"mode": "max-autotune", "iterations": 12, "windows": 2, "timeout": 77.0,
                    "out": tmp_path / "max-autotune"}
    assert base.autotune.rows[0].tuned_name == "cpp_fused_addmm_0"
    assert (tmp_path / "breakdown.json").exists()  # the result was saved again, with the block


def test_autotune_top_recompile_keeps_the_load_its_steps_were_timed_under(monkeypatch, tmp_path):
    """The interleaved timing's load (compare's timing worker reads it) is kept with the
    headline's rounds, so that the report can say the steps met other work."""
    from inductor_bench.core.run_extras import CompileCache
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner import autotune_top
    from inductor_bench.runner.settings import RunSettings

    load = {"others_cores": 1.8, "steal_pct": 0.0, "cores": 2, "parallel_x": 47.8}
    monkeypatch.setattr(autotune_top.CompareRun, "time_sides", lambda self, sides, device, run_dir, what: {
        "blocks": [[[1.0, 1.1]] * 10, [[0.9, 1.0]] * 10], "load": load})
    sides = []
    for mode, name in (("default", "aten::addmm"), ("max-autotune", "cpp_fused_addmm_0")):
        r = _result_on("cpu", mode, [_k(name, "extern_gemm", 1.0, ["aten.addmm"])])
        r.graphs[0].wall_ms = 1.0
        r.compile_cache = CompileCache(dir=str(tmp_path / mode), shared=False)
        sides.append(r)
    rec = autotune_top.Recompile(n=1, tuned_run="t", tuned_status="ok", base_step_ms=1.0, tuned_step_ms=1.0,
                                 base_kernel_ms=1.0, tuned_kernel_ms=1.0, rows=[])
    model = tmp_path / "m.py"
    model.write_text("def make_workload():\n    pass\n")
    autotune_top._time_both(rec, *sides, WorkloadOptions(path=str(model), device="cpu"), tmp_path, RunSettings())
    assert rec.step_load == load and rec.step_note is None
    assert rec.base_paired_ms == [[1.0, 1.1]] * 10
