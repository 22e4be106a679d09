"""The words a refused kernel file ends with: the candidate configs each mode would tune over
(core/tuning_spaces.py), on kernel files Inductor wrote on real GPUs (an H200, an A100)."""

from __future__ import annotations

from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.modes import kernel_patch
from inductor_bench.core.tuning_spaces import would_tune

from .conftest import FIXTURES

H200 = FIXTURES / "triton_kernels" / "cuda_h200"
TLPARSE = FIXTURES / "triton_kernels" / "gpu_tlparse"
AT_2_5 = kernel_patch("max-autotune", {"max_autotune": True, "triton.cudagraphs": True}, torch_version="2.5.1")
AT_2_11 = kernel_patch("max-autotune", {"max_autotune": True, "triton.cudagraphs": True,
                                        "coordinate_descent_tuning": True}, torch_version="2.11.0")
ONE = {"XBLOCK": 1024, "num_warps": 4, "num_stages": 1}
TWO = {"XBLOCK": 512, "num_warps": 8, "num_stages": 1}


def test_each_mode_its_configs_and_coordinate_descent_where_the_mode_sets_it():
    kf = read_kernel_file(H200 / "triton_poi_fused_add_sin_0.py")
    spaces = {"baseline": [ONE], "max-autotune": [ONE, TWO]}
    assert would_tune(kf, spaces, AT_2_11) == (
        "it would tune over: 1 config (XBLOCK=1024, num_warps=4, num_stages=1) as the file stands; with "
        "--max-autotune (max-autotune as torch 2.11 defines it: max_autotune, coordinate_descent_tuning) "
        "2 configs (XBLOCK=1024, num_warps=4, num_stages=1; XBLOCK=512, num_warps=8, num_stages=1), then "
        "coordinate descent from the best (radius 1)")
    assert would_tune(kf, spaces, AT_2_5).endswith(
        "with --max-autotune (max-autotune as torch 2.5 defines it: max_autotune) 2 configs "
        "(XBLOCK=1024, num_warps=4, num_stages=1; XBLOCK=512, num_warps=8, num_stages=1)")


def test_a_file_compiled_with_coordinate_descent_descends_as_it_stands():
    """A100, max-autotune with coordinate descent baked in: the baseline keeps the file's switches."""
    (f,) = TLPARSE.glob("*triton_poi_fused_mul_0*.py")
    kf = read_kernel_file(f)
    assert "'coordinate_descent_tuning': True" in f.read_text()
    assert "'coordinate_descent_search_radius': 1" in f.read_text()
    said = would_tune(kf, {"baseline": [ONE]}, None)
    assert said == ("it would tune over: 1 config (XBLOCK=1024, num_warps=4, num_stages=1) as the file "
                    "stands, then coordinate descent from the best (radius 1)")


def test_a_template_says_nothing_more():
    """Its one config was fixed when the model compiled; file_says already gives it."""
    kf = read_kernel_file(H200 / "triton_tem_fused_mm_0.py")
    assert would_tune(kf, {"baseline": [ONE], "max-autotune": [ONE]}, AT_2_11) == ""
