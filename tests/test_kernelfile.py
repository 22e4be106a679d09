"""Reading and validating Inductor Triton kernel files (real CPU-generated fixtures and their
synthetic CUDA variants); no torch needed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from inductor_bench.core.errors import DeviceError, UsageError
from inductor_bench.core.kernelfile import (
    check_name,
    parse_kernel_source,
    read_kernel_file,
    require_benchmarkable,
    require_timeable,
)

from .conftest import FIXTURES, ROOT

KERNELS = FIXTURES / "triton_kernels"
CPU = KERNELS / "cpu"
CUDA = KERNELS / "synthetic_cuda"

# file stem -> (heuristic, category, size hints, kernel_num_gb, kernel_flop)
EXPECTED = {
    "triton_poi_fused_add_sin_0": ("pointwise", "triton_pointwise", {"x": 4096}, 3.2768e-05, None),
    "triton_poi_fused_clone_mul_t_0": ("pointwise", "triton_pointwise", {"y": 128, "x": 256},
                                       0.000262144, None),
    "triton_poi_fused_add_t_0": ("pointwise", "triton_pointwise", {"y": 256, "x": 128},
                                 0.000393216, None),
    "triton_poi_fused_add_permute_0": ("pointwise", "triton_pointwise",
                                       {"z": 32, "y": 32, "x": 32}, 0.000262144, None),
    "triton_red_fused_sum_0": ("reduction", "triton_reduction", {"x": 8, "r0_": 65536},
                               0.002097184, None),
    "triton_per_fused__softmax_0": ("persistent_reduction", "triton_persistent_reduction",
                                    {"x": 64, "r0_": 128}, 9.8304e-05, None),
    "triton_spl_fused_cumsum_0": ("split_scan", "triton_split_scan", {"x": 1, "r0_": 65536},
                                  0.000524288, None),
    "triton_for_fused_0": ("foreach", "triton_foreach", None, 2.4e-05, None),
    "triton_tem_fused_mm_0": ("template", "triton_template", None, 0.000786432, 33554432),
}


@pytest.mark.parametrize("stem", sorted(EXPECTED))
@pytest.mark.parametrize("folder,device", [(CPU, "cpu"), (CUDA, "cuda")])
def test_real_and_synthetic_files(stem, folder, device):
    kf = read_kernel_file(folder / f"{stem}.py")
    heuristic, category, size_hints, num_gb, flop = EXPECTED[stem]
    assert kf.name == stem
    assert (kf.heuristic, kf.category, kf.size_hints) == (heuristic, category, size_hints)
    assert kf.num_gb == num_gb
    assert kf.flop == flop
    assert kf.device == device
    assert kf.has_harness
    assert {stem, "get_args", "call", "benchmark_all_configs"} <= set(kf.functions)
    require_benchmarkable(kf)
    json.dumps(kf.to_dict())  # the report embeds it


def test_decorator_arguments_are_evaluated_without_running_the_file():
    kf = read_kernel_file(CUDA / "triton_poi_fused_clone_mul_t_0.py")
    assert kf.decorator_args == {"tile_hint": "TileHint.SQUARE", "min_elem_per_thread": 0}
    dev = kf.triton_meta["device"]
    assert dev == {"_type": "DeviceProperties", "type": "cuda", "index": 0,
                   "multi_processor_count": 132, "cc": 90, "major": 9,
                   "regs_per_multiprocessor": 65536, "max_threads_per_multi_processor": 2048,
                   "max_threads_per_block": 1024, "warp_size": 32}
    assert kf.triton_meta["configs"] == [{(n,): [["tt.divisibility", 16]] for n in (1, 2, 3)}]
    assert kf.inductor_meta["autotune_hints"] == set()
    assert kf.inductor_meta["kernel_name"] == "triton_poi_fused_clone_mul_t_0"
    assert kf.tuning_flags == {"max_autotune": False, "max_autotune_pointwise": False,
                               "coordinate_descent_tuning": False}


def test_template_keeps_its_compile_time_config():
    kf = read_kernel_file(CUDA / "triton_tem_fused_mm_0.py")
    assert kf.is_template
    assert kf.tuning_flags["max_autotune"] is True
    assert kf.compile_config == {"EVEN_K": True, "USE_FAST_ACCUM": False,
                                 "ACC_TYPE": "tl.float32", "BLOCK_M": 16, "BLOCK_N": 16,
                                 "BLOCK_K": 16, "GROUP_M": 8, "ALLOW_TF32": False,
                                 "num_warps": 1, "num_stages": 1}


def test_file_without_harness_is_rejected_with_the_fix():
    kf = read_kernel_file(CPU / "no_harness" / "triton_poi_fused_cos_mul_0.py")
    assert kf.name == "triton_poi_fused_cos_mul_0"
    assert kf.num_gb is None  # kernel_num_gb is only written with benchmark_kernel on
    with pytest.raises(UsageError, match=r"triton_poi_fused_cos_mul_0 has no benchmark harness "
                       r"\(get_args, call missing\); Inductor writes one when compiling with "
                       r"TORCHINDUCTOR_BENCHMARK_KERNEL=1"):
        require_benchmarkable(kf)


def test_foreach_without_harness_names_the_combo_switch():
    text = (CPU / "triton_for_fused_0.py").read_text().split("\ndef get_args")[0]
    kf = parse_kernel_source(text, "for.py")
    with pytest.raises(UsageError, match="benchmark_combo_kernel = True"):
        require_benchmarkable(kf)


def test_num_gb_falls_back_to_the_main_block():
    text = (CUDA / "triton_poi_fused_add_sin_0.py").read_text()
    text = text.replace("'kernel_num_gb': 3.2768e-05, ", "")
    assert parse_kernel_source(text).num_gb == 3.2768e-05


def test_cpu_kernel_is_refused_for_benchmarking():
    kf = read_kernel_file(CPU / "triton_poi_fused_add_sin_0.py")
    with pytest.raises(DeviceError, match=r"was generated for the CPU \(Inductor's Triton CPU "
                       r"backend\); inductor-bench kernel benchmarks CUDA kernels"):
        require_timeable(kf)
    require_timeable(read_kernel_file(CUDA / "triton_poi_fused_add_sin_0.py"))


def test_kernel_name_must_match():
    kf = read_kernel_file(CUDA / "triton_red_fused_sum_0.py")
    check_name(kf, None)
    check_name(kf, "triton_red_fused_sum_0")
    with pytest.raises(UsageError, match="holds kernel triton_red_fused_sum_0, not triton_red_x"):
        check_name(kf, "triton_red_x")


@pytest.mark.parametrize("text,message", [
    ("x = = 1\n", r"x\.py: not a Python file \(line 1: invalid syntax\)"),
    ("import os\n\ndef f():\n    pass\n",
     r"x\.py: not an Inductor Triton kernel file \(no @triton_heuristics"),
    ("import triton\n\n@triton.jit\ndef k(x):\n    pass\n",
     r"x\.py: k is a Triton kernel but not one Inductor generated"),
    ("# AOT ID: ['0_inference']\nimport torch\n# kernel path: /tmp/k.py\n\ndef call(args):\n    pass\n",
     r"x\.py: this is a compiled module, not a kernel file; pass one of the files its '# kernel path:'"),
    # a CPU module: its kernels are C++ inside it, no comment names a kernel file to pass
    ("# AOT ID: ['0_inference']\nimport torch\n\ndef call(args):\n    pass\n",
     r"x\.py: this is a compiled module without Triton kernels \(its kernels are C\+\+, compiled into it\)"),
])
def test_not_a_kernel_file(text, message):
    with pytest.raises(UsageError, match=message):
        parse_kernel_source(text, "x.py")


def test_two_kernels_in_one_file():
    one = textwrap.dedent("""
        @triton_heuristics.pointwise(size_hints={{'x': 8}}, triton_meta={{}}, inductor_meta={{}})
        @triton.jit
        def {name}(x):
            pass
    """)
    text = one.format(name="k0") + one.format(name="k1")
    with pytest.raises(UsageError, match=r"holds 2 Inductor kernels \(k0, k1\)"):
        parse_kernel_source(text, "x.py")


def test_missing_and_directory_paths(tmp_path):
    with pytest.raises(UsageError, match="no such file"):
        read_kernel_file(tmp_path / "nope.py")
    with pytest.raises(UsageError, match="is a directory without a breakdown.json"):
        read_kernel_file(tmp_path)


def test_analysis_side_imports_without_torch():
    """The kernel command's pure modules load with torch and triton unavailable."""
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split('.')[0] in ('torch', 'triton'):
                    raise ImportError('blocked: ' + name)
        sys.meta_path.insert(0, Block())
        import inductor_bench.core.kernelfile, inductor_bench.core.kernel_report, inductor_bench.core.peaks
        import inductor_bench.runner.kernelbench, inductor_bench.render.kernel
        import inductor_bench.commands.kernel
        from inductor_bench.core.kernelfile import read_kernel_file
        print(read_kernel_file(sys.argv[1]).category)
    """)
    out = subprocess.run([sys.executable, "-c", code, str(CUDA / "triton_red_fused_sum_0.py")],
                         capture_output=True, text=True, cwd=ROOT, timeout=120,
                         check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "triton_reduction"


def test_older_decorator_forms():
    """torch 2.5 wrote size hints as a list and AttrsDescriptor(...) configs; older files gave
    the device as an index plus device_type. Text in those forms, written here by hand."""
    text = textwrap.dedent("""
        @triton_heuristics.reduction(
            size_hints=[8, 65536],
            reduction_hint=ReductionHint.INNER,
            filename=__file__,
            triton_meta={'signature': {0: '*fp32', 1: '*fp32', 2: 'i32'}, 'device': 0,
                         'device_type': 'cuda', 'constants': {},
                         'configs': [AttrsDescriptor(divisible_by_16=(0, 1, 2), equal_to_1=())]},
            inductor_meta={'kernel_name': 'triton_red_fused_sum_0', 'max_autotune': True,
                           'mutated_arg_names': [], 'no_x_dim': False, 'num_load': -1}
        )
        @triton.jit
        def triton_red_fused_sum_0(in_ptr0, out_ptr0, xnumel, rnumel, XBLOCK, RBLOCK):
            pass

        def get_args():
            pass

        def call(args):
            pass

        if __name__ == '__main__':
            num_gb = 0.002097184
    """)
    kf = parse_kernel_source(text, "old.py")
    assert (kf.size_hints, kf.device, kf.num_gb, kf.category) == (
        [8, 65536], "cuda", 0.002097184, "triton_reduction")
    assert kf.triton_meta["configs"] == [{"_type": "AttrsDescriptor",
                                          "divisible_by_16": (0, 1, 2), "equal_to_1": ()}]
    assert kf.inductor_meta["num_load"] == -1
    assert kf.tuning_flags == {"max_autotune": True, "max_autotune_pointwise": False,
                               "coordinate_descent_tuning": False}
    assert kf.has_harness and kf.decorator_args == {"reduction_hint": "ReductionHint.INNER"}
    json.dumps(kf.to_dict())
