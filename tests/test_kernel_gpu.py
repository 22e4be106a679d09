"""On a GPU: real CUDA kernel files, benchmarked by the worker and checked against an
independent ``triton.testing.do_bench`` of the same launcher.

The kernel files are recorded for real on the GPU at the start of the session
(``scripts/record_triton_kernels.py --device cuda --large``: no stubs, shapes that run for
tens of microseconds so that 5 % is well above the timing noise). Skipped without CUDA.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.cli import main
from inductor_bench.core import peaks
from inductor_bench.core.autotune import BASELINE, MAX_AUTOTUNE, meta_patch
from inductor_bench.core.kernel_report import ModeRun
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.runner.kernelbench import (
    autotune_top_kernels,
    installed_patch,
    load_kernel,
    run_kernel_bench,
)

from .conftest import MODELS, ROOT
from .mode_spaces import expected_space_size, switch_sizes

pytestmark = pytest.mark.gpu

AGREEMENT = 0.05  # the tool's median and do_bench's median agree within 5 %
# One candidate config in the baseline, so both sides time the very same launcher.
SINGLE_CONFIG = ["triton_red_fused_sum_0", "triton_poi_fused_add_permute_0",
                 "triton_poi_fused_clone_mul_t_0"]


@pytest.fixture(scope="session")
def cuda_kernels(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cuda_kernels")
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHINDUCTOR_")}
    env["TORCHINDUCTOR_CACHE_DIR"] = str(out.parent / "record-cache")
    p = subprocess.run([sys.executable, str(ROOT / "scripts" / "record_triton_kernels.py"),
                        "--device", "cuda", "--large", "--out", str(out)],
                       env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-4000:]
    return out


def _import(path: Path, tag: str):
    spec = importlib.util.spec_from_file_location(f"gpu_test_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def do_bench_ms(call, args) -> float:
    import torch
    import triton

    call(args)
    torch.cuda.synchronize()
    return triton.testing.do_bench(lambda: call(args), warmup=25, rep=200, return_mode="median")


def do_bench_config(kf, config: dict, work: Path) -> float:
    """do_bench of the file's own harness with its autotuner held to ``config``."""
    import triton

    module, tuner = load_kernel(kf, meta_patch(BASELINE, coordinate_descent=False), work,
                                "independent")
    kwargs = {k: v for k, v in config.items() if k not in ("num_warps", "num_stages")}
    tuner.configs = [triton.Config(kwargs, num_warps=config["num_warps"],
                                   num_stages=config["num_stages"])]
    return do_bench_ms(module.call, module.get_args())


@pytest.mark.parametrize("name", SINGLE_CONFIG)
def test_baseline_ms_matches_do_bench(cuda_kernels, name):
    kf = read_kernel_file(cuda_kernels / f"{name}.py")
    resp = run_kernel_bench(kf, reps=200, warmup=20, timeout=600)
    ours = statistics.median(resp["runs"][0]["samples_ms"])
    mod = _import(cuda_kernels / f"{name}.py", name)  # the file exactly as Inductor wrote it
    theirs = do_bench_ms(mod.call, mod.get_args())
    assert abs(ours / theirs - 1) < AGREEMENT, (ours, theirs)
    assert resp["runs"][0]["regs"] and resp["runs"][0]["spills"] is not None


@pytest.mark.parametrize("name", SINGLE_CONFIG)
def test_max_autotune_tries_more_configs_and_matches_do_bench(cuda_kernels, name, tmp_path):
    kf = read_kernel_file(cuda_kernels / f"{name}.py")
    resp = run_kernel_bench(kf, max_autotune=True, reps=200, warmup=20, timeout=900)
    base, tuned = (ModeRun.from_dict(r) for r in resp["runs"])
    assert (base.mode, tuned.mode) == (BASELINE, MAX_AUTOTUNE)
    # the space the installed torch's max-autotune builds: wider only where the mode sets a
    # switch that widens this kernel (a 3-D pointwise kernel at torch 2.11 stays at one config)
    patch = installed_patch()
    n_base, by_switch = switch_sizes(cuda_kernels / f"{name}.py", tmp_path / "switches")
    assert len(base.space) == n_base == 1
    assert len(tuned.space) == expected_space_size(n_base, by_switch, patch.meta)
    if len(tuned.space) > 1 or patch.meta.get("coordinate_descent_tuning"):
        assert tuned.tried > base.tried
    theirs = do_bench_config(kf, tuned.timing.config, tmp_path)
    assert abs(tuned.timing.ms / theirs - 1) < AGREEMENT, (tuned.timing.ms, theirs)


def test_all_configs_times_every_candidate(cuda_kernels):
    kf = read_kernel_file(cuda_kernels / "triton_poi_fused_clone_mul_t_0.py")
    resp = run_kernel_bench(kf, max_autotune=True, all_configs=True, reps=50, timeout=900)
    space = resp["runs"][-1]["space"]
    timed = resp["all_configs"]
    assert resp["all_configs_mode"] == MAX_AUTOTUNE
    assert [t["config"] for t in timed] == space  # all six compile on any CUDA GPU
    assert all(t["regs"] and min(t["samples_ms"]) > 0 for t in timed)


def test_cli_end_to_end(cuda_kernels, capsys):
    path = cuda_kernels / "triton_red_fused_sum_0.py"
    try:
        main(["kernel", str(path), "--max-autotune", "--json", "-"])
    except SystemExit as e:
        assert e.code in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert [r["mode"] for r in d["runs"]] == [BASELINE, MAX_AUTOTUNE]
    assert d["runs"][1]["tried"] > d["runs"][0]["tried"]
    same = d["runs"][0]["config"] == d["runs"][1]["config"]  # the baseline's config kept: same code
    assert d["comparison"]["verdict"] in (("same code",) if same else ("faster", "slower", "within noise"))
    assert d["runs"][0]["gbps"] > 0 and d["peak"]["gbps"] > 0
    assert d["runs"][0]["pct_of_peak_bw"] < 100


def test_template_reports_its_flops(cuda_kernels, capsys):
    path = cuda_kernels / "triton_tem_fused_mm_0.py"
    try:
        main(["kernel", str(path), "--max-autotune", "--json", "-"])
    except SystemExit as e:
        assert e.code in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert [r["mode"] for r in d["runs"]] == [BASELINE]
    assert d["runs"][0]["tflops"] > 0
    assert "template kernel" in d["notes"][0]


def test_measured_copy_bandwidth_is_plausible():
    import torch

    from inductor_bench.runner.peaks_measure import device_bandwidth

    measured = device_bandwidth("cuda", 5)
    known = peaks.lookup(torch.cuda.get_device_name())
    assert measured > 50
    if known is not None and known.gbps:
        assert 0.5 < measured / known.gbps < 1.05, (measured, known)


def test_run_directory_and_autotune_top(tmp_path_factory, capsys):
    from inductor_bench.core.workload import WorkloadOptions
    from inductor_bench.runner.pipeline import run_breakdown
    from inductor_bench.runner.settings import RunSettings

    opts = WorkloadOptions(path=str(MODELS / "mlp.py"), device="cuda", train=True)
    result, run_dir, err = run_breakdown(opts, RunSettings(timeout=900),
                                         root=tmp_path_factory.mktemp("mlp-cuda"))
    assert err is None
    triton = [(g.id, k) for g in result.measured() for k in g.kernels
              if k.file and k.category.startswith("triton_")]
    assert triton, "the CUDA breakdown found no Triton kernel with a file"
    gid, k = max(triton, key=lambda gk: gk[1].ms)
    try:
        main(["kernel", str(run_dir), f"{gid}/{k.name}", "--json", "-"])
    except SystemExit as e:
        assert e.code in (0, None)
    assert json.loads(capsys.readouterr().out)["kernel"]["name"] == k.name
    rows = autotune_top_kernels(result, Path(run_dir), 2, timeout=900)
    assert rows and all(r.error is None for r in rows)
    assert all(r.base_ms > 0 and r.tuned_ms > 0 and 0 <= r.bound <= r.share for r in rows)
