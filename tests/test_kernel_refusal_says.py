"""A kernel file or compiled module that `kernel` refuses still says what it holds, read from its
source without running it: a kernel file's category, size hints, Inductor's bytes (and FLOPs) a
launch, a template's fixed config and its tuning switches; a compiled module's Triton kernels, each
with its category. Checked on kernel files and modules Inductor wrote on real GPUs (an H200, an
A100: tests/fixtures/triton_kernels/README.md, tests/fixtures/gpu_modules/README.md), against the
sources read here with re alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from inductor_bench.core.errors import UsageError
from inductor_bench.core.kernelfile import file_says, read_kernel_file, require_benchmarkable

from .conftest import FIXTURES

H200 = FIXTURES / "triton_kernels" / "cuda_h200"
TLPARSE = FIXTURES / "triton_kernels" / "gpu_tlparse"
MODULES = sorted((FIXTURES / "gpu_modules").glob("*.py")) + sorted(
    p for p in (FIXTURES / "codegen_2.14.1").glob("*.py") if "# kernel path:" in p.read_text())
HEURISTIC_LABEL = {"pointwise": "Triton pointwise", "reduction": "Triton reduction",
                   "persistent_reduction": "Triton persistent reduction", "template": "Triton template"}


def _meta(path: Path, key: str) -> float:
    return float(re.search(rf"'{key}': ([0-9.e+-]+)", path.read_text()).group(1))


def test_a_reduction_file_says_its_size_hints_bytes_and_switches():
    f = H200 / "triton_red_fused_sum_0.py"
    text = f.read_text()
    assert "size_hints={'x': 4096, 'r0_': 8192}" in text
    assert _meta(f, "kernel_num_gb") == 0.134234112  # 4096 x 8192 fp32 read, 4096 written
    assert "'max_autotune': False" in text and "'max_autotune_pointwise': False" in text
    assert "coordinate_descent_tuning" not in text  # absent: off
    assert file_says(read_kernel_file(f)) == (
        "the file says: Triton reduction, size hints x=4096 r0_=8192, 134.2 MB a launch (Inductor's "
        "estimate), generated with no autotuning switch on")


def test_a_template_file_says_its_fixed_config_and_flops():
    f = H200 / "triton_tem_fused_mm_0.py"
    assert _meta(f, "kernel_num_gb") == 0.050331648  # three 2048 x 2048 fp32 matrices
    assert _meta(f, "kernel_flop") == 2 * 2048**3
    says = file_says(read_kernel_file(f))
    assert says.startswith("the file says: Triton template, 50.33 MB a launch (Inductor's estimate), "
                           "17.18 GFLOP a launch, its config fixed at compile time: ")
    assert "BLOCK_M=128 BLOCK_N=64 BLOCK_K=32" in says and "num_warps=8 num_stages=4" in says
    assert says.endswith(", generated with max_autotune on")


def test_a_file_without_harness_says_its_switches():
    """A100, max-autotune with coordinate descent: no harness, refused, and says so."""
    (f,) = TLPARSE.glob("*triton_poi_fused_mul_0*.py")
    text = f.read_text()
    assert "'max_autotune': True" in text and "'coordinate_descent_tuning': True" in text
    with pytest.raises(UsageError) as e:
        require_benchmarkable(read_kernel_file(f))
    assert str(e.value).endswith(
        "has no benchmark harness (get_args, call missing); Inductor writes one when compiling with "
        "TORCHINDUCTOR_BENCHMARK_KERNEL=1; the file says: Triton pointwise, size hints x=8, generated "
        "with max_autotune and coordinate_descent_tuning on")


@pytest.mark.parametrize("module", MODULES, ids=lambda p: p.name[:40])
def test_a_compiled_module_names_its_triton_kernels(module):
    text = module.read_text()
    defs = re.findall(r"^(\w+) = async_compile\.triton\('(\w+)'", text, re.M)
    heuristics = re.findall(r"^@triton_heuristics\.(\w+)\(", text, re.M)
    assert defs and len(defs) == len(heuristics)
    listed = ", ".join(f"{name} ({HEURISTIC_LABEL[h]})" for (name, _), h in zip(defs, heuristics, strict=True))
    with pytest.raises(UsageError) as e:
        read_kernel_file(module)
    n = len(defs)
    assert str(e.value) == (f"{module}: this is a compiled module, not a kernel file; its {n} Triton "
                            f"kernel{'s' if n > 1 else ''}: {listed}; pass one of the files its '# kernel "
                            "path:' comments name, or a run directory and a kernel name")


def test_the_no_device_refusal_is_one_line_with_what_the_file_says():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    f = H200 / "triton_poi_fused_add_permute_0.py"
    assert _meta(f, "kernel_num_gb") == 0.134217728  # 256^3 fp32 read and written
    p = subprocess.run([sys.executable, "-m", "inductor_bench.cli", "kernel", str(f)],
                       capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 2 and p.stdout == ""
    (line,) = p.stderr.splitlines()
    assert line.startswith("inductor-bench: error: no CUDA device is available here (")
    said, _, spaces = line.partition("; it would tune over: ")
    assert said.endswith("benchmarking triton_poi_fused_add_permute_0 needs an NVIDIA GPU; the file says: "
                         "Triton pointwise, size hints z=256 y=256 x=256, 134.2 MB a launch (Inductor's "
                         "estimate), generated with no autotuning switch on")
    # then each mode's configs, listed without a device (their counts move between torch
    # versions: docs/kernel.md); the 3-D tile Inductor starts from, capped by 256^3
    assert spaces.startswith("1 config (XBLOCK=16, YBLOCK=16, ZBLOCK=16, num_warps=8, num_stages=1) as "
                             "the file stands; with --max-autotune (max-autotune as torch ")
