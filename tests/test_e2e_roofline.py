"""End to end on CPU: the breakdown of models/mlp.py --train (the shared session run, copied so
that adding the ceilings changes no other test's run) reports % of peak for every C++ kernel
and GEMM, the GEMMs' FLOPs are 2·M·N·K of the model's own layer sizes, and ``report
--reanalyze`` counts the same again without torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from inductor_bench.core.ceilings import PEAKS_FILE
from inductor_bench.core.result_json import result_json
from inductor_bench.core.rundir import load_breakdown
from inductor_bench.render.breakdown import render_breakdown
from inductor_bench.runner.roofline import add_roofline, recorded_machine_key
from inductor_bench.runner.settings import RunSettings

from .no_torch import CLI_WITHOUT_TORCH

BATCH, D_IN, HIDDEN, D_OUT = 64, 256, 512, 64  # models/mlp.py's defaults


@pytest.fixture(scope="module")
def mlp_with_roofline(mlp_train, tmp_path_factory):
    _, run_dir, _ = mlp_train
    copy = tmp_path_factory.mktemp("roofline") / "run"
    shutil.copytree(run_dir, copy, symlinks=True)
    result = load_breakdown(copy)
    add_roofline(result, copy, RunSettings())
    return result, copy


@pytest.mark.e2e
def test_every_cpp_kernel_and_gemm_has_its_percent_of_peak(mlp_with_roofline):
    result, run_dir = mlp_with_roofline
    assert result.roofline is not None and result.roofline.measured is not None
    assert result.roofline.measured.gbps > 0 and result.roofline.measured.tflops["fp32"] > 0
    assert (run_dir / PEAKS_FILE).exists()
    figures = json.loads(result_json(result))["extras"]["roofline"]["kernels"]
    wanted = [(g.id, k) for g in result.measured() for k in g.kernels
              if k.category.startswith("cpp_") or k.category == "extern_gemm"]
    assert wanted
    for gid, k in wanted:  # an extern op as each of its calls, 'aten::addmm #1', as the tables
        mine = [f for f in figures if f["graph"] == gid and f["kernel"].split(" #")[0] == k.name]
        assert mine and all(f["pct"] is not None for f in mine), (gid, k.name)
    text = render_breakdown(result, "text", width=250)
    assert "% peak" in text and "How far from the limit (roofline)" in text


@pytest.mark.e2e
def test_the_profiling_worker_records_the_key_the_ceilings_are_cached_under(mlp_with_roofline):
    """The key each graph's saved answer records (the profiling worker's, with the run's threads)
    is the one the ceilings worker measured or read them under: the next run reads the machine's
    cache itself instead of starting a worker (``runner/roofline.py`` ``cached_ceilings``)."""
    result, run_dir = mlp_with_roofline
    key = recorded_machine_key(run_dir)
    assert key is not None and key == result.roofline.measured.key
    assert key["threads"] == result.roofline.measured.threads


@pytest.mark.e2e
def test_the_gemms_flops_are_two_m_n_k_of_the_model(mlp_with_roofline):
    result, _ = mlp_with_roofline
    fwd = next(g for g in result.measured() if g.role == "forward")
    addmm = next(k for k in fwd.kernels if k.name == "aten::addmm")
    # fc1: 64x256 @ 256x512, fc2: 64x512 @ 512x512, fc3: 64x512 @ 512x64
    expected = 2 * BATCH * (D_IN * HIDDEN + HIDDEN * HIDDEN + HIDDEN * D_OUT)
    assert addmm.flops == expected


@pytest.mark.e2e
def test_report_reanalyze_counts_them_again_without_torch(mlp_with_roofline, tmp_path):
    result, run_dir = mlp_with_roofline
    copy = tmp_path / "again"
    shutil.copytree(run_dir, copy, symlinks=True)
    argv = ["report", str(copy), "--reanalyze", "--format", "json"]
    proc = subprocess.run([sys.executable, "-c", CLI_WITHOUT_TORCH, *argv], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    again = json.loads(proc.stdout)
    counts = {(g["id"], k["name"]): (k.get("bytes"), k.get("flops"))
              for g in again["graphs"] for k in g["kernels"]}
    for g in result.measured():
        for k in g.kernels:
            assert counts[(g.id, k.name)] == (k.bytes, k.flops)
    assert again["extras"]["roofline"]["measured"]["gbps"] == result.roofline.measured.gbps


@pytest.mark.slow
@pytest.mark.e2e
def test_every_gemm_and_attention_call_of_the_transformer_counts_bytes_and_flops(transformer_train):
    """models/transformer_block.py's training step on torch's own CPU modules: the GEMMs after
    attention read its tuple output (``buf[0]``), and the backward's q, k and v are views of one
    shared storage in the harness; every GEMM and attention call counts both."""
    result, _, error = transformer_train
    assert error is None, error
    counted = 0
    for g in result.measured():
        category = {k.name: k.category for k in g.kernels}
        externs = [s for s in g.sites if s.extern]  # a kernel's calls are counted with their kernel
        for site, (nbytes, flops) in zip(externs, g.site_counts, strict=True):
            if category.get(site.kernel) in ("extern_gemm", "extern_attention"):
                assert nbytes and flops, (g.id, site.kernel, site.index)
                counted += 1
    assert counted >= 5 + 9  # the forward's 4 GEMMs and attention, the backward's 8 and its attention
