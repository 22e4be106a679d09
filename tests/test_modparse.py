"""modparse on module text in the shapes Inductor writes (CPU C++ and Triton)."""

from __future__ import annotations

from inductor_bench.core import modparse
from inductor_bench.core.modparse import (
    cpp_heuristic,
    function_body,
    fused_ops_from_name,
    is_compiled_module,
    parse_module,
    string_lines,
)

CPP_MODULE = """# AOT ID: ['0_forward']
from torch._inductor.select_algorithm import extern_kernels
async_compile = AsyncCompile()


cpp_fused_gelu_native_layer_norm_0 = async_compile.cpp_pybinding(['float*', 'const float*'], r\'\'\'
#include <torch/csrc/inductor/cpp_prefix.h>
extern "C"  void  kernel(float* in_out_ptr0, const float* in_ptr0)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_cpp_fused_gelu_native_layer_norm_0_("graph_0_cpp_fused_gelu_native_layer_norm_0", nullptr);
    {
        Welford<float> tmp_acc0 = Welford<float>();
    }
}
\'\'\')


cpp_fused_mm_1 = async_compile.cpp_pybinding(['const float*'], r\'\'\'
extern "C"  void  kernel(const float* X)
{
    torch::aot_inductor::RAIIAtenRecordFunctionHandle record_graph_0_gemm_m64n128k256_kernel_("graph_0_gemm_m64n128k256_kernel", nullptr);
    cpp_fused_mm_1_micro_gemm<false>(X);
}
\'\'\')


class Runner:
    def call(self, args):
        primals_1, primals_2 = args
        args.clear()
        buf0 = empty_strided_cpu((32, 128), (128, 1), torch.float32)
        # Topologically Sorted Source Nodes: [input_1], Original ATen: [aten.t, aten.addmm]
        extern_kernels.addmm(primals_2, primals_3, reinterpret_tensor(primals_1, (64, 128), (1, 64), 0), alpha=1, beta=1, out=buf0)
        # Topologically Sorted Source Nodes: [gelu, ln], Original ATen: [aten.gelu, aten.native_layer_norm]
        cpp_fused_gelu_native_layer_norm_0(buf2, buf0)
        buf7 = torch.ops.aten.convolution_backward.default(buf6, primals_1, [0], [1], [0], [1], False, [0], 1, [True, True, False])
        return (buf0, )

def get_args():
    return []

def benchmark_compiled_module(args, times=10, repeat=10):
    pass
"""

TRITON_MODULE = """# AOT ID: ['1_backward']
async_compile = AsyncCompile()


# kernel path: /tmp/cache/g7/cg7sn6v5erx46b6wbgpphuivgkibzmf3o6nzydchfp5jrhmnipoy.py
# Topologically Sorted Source Nodes: [sin, y, s], Original ATen: [aten.sin, aten.add, aten.sum]
# Source node to ATen node mapping:
#   s => sum_1
# Graph fragment:
#   %sin : Tensor "f32[64, 300][300, 1]cuda:0"[num_users=1] = call_function[target=torch.ops.aten.sin.default](args = (%arg0_1,), kwargs = {})
triton_per_fused_add_sin_sum_0 = async_compile.triton('triton_per_fused_add_sin_sum_0', '''
import triton
@triton_heuristics.persistent_reduction(
    size_hints={'x': 64, 'r0_': 512},
    inductor_meta={'kernel_name': 'triton_per_fused_add_sin_sum_0'}
)
@triton.jit
def triton_per_fused_add_sin_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    pass
''', device_str='cuda')


# kernel path: /tmp/cache/ab/cabc.py
# Unsorted Source Nodes: [mm], Original ATen: [aten.mm]
triton_tem_fused_mm_1 = async_compile.triton('triton_tem_fused_mm_1', '''
@triton_heuristics.template(num_stages=3, num_warps=4)
@triton.jit
def triton_tem_fused_mm_1(arg_A, arg_B, out_ptr0):
    pass
''', device_str='cuda')


def call(args):
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((64, ), (1, ), torch.float32)
        stream0 = get_raw_stream(0)
        triton_per_fused_add_sin_sum_0.run(arg0_1, buf0, 64, 300, stream=stream0)
        # Topologically Sorted Source Nodes: [matmul], Original ATen: [aten.mm]
        extern_kernels.mm(arg0_1, arg1_1, out=buf1)
"""


def test_cpp_module():
    m = parse_module(CPP_MODULE)
    assert (m.aot_id, m.role, m.device) == ("0_forward", "forward", "cpu")
    ln = m.kernels["cpp_fused_gelu_native_layer_norm_0"]
    assert ln.kind == "cpp" and ln.heuristic == "reduction"
    assert ln.record_names == ["graph_0_cpp_fused_gelu_native_layer_norm_0"]
    # origin from the comment at its call site in call()
    assert ln.aten_ops == ["aten.gelu", "aten.native_layer_norm"]
    gemm = m.kernels["cpp_fused_mm_1"]
    assert gemm.heuristic == "template"
    assert gemm.aten_ops == ["fused: mm"]  # no comment anywhere: from the name
    assert m.kernel_for_record("graph_0_gemm_m64n128k256_kernel") is gemm
    assert m.kernel_for_record("graph_3_cpp_fused_gelu_native_layer_norm_0") is ln
    assert m.kernel_for_record("aten::addmm") is None
    assert [(e.callee, e.aten_ops) for e in m.externs] == [
        ("extern_kernels.addmm", ["aten.t", "aten.addmm"]),
        ("torch.ops.aten.convolution_backward.default", []),
    ]
    assert is_compiled_module(CPP_MODULE)


def test_triton_module():
    m = parse_module(TRITON_MODULE)
    assert (m.role, m.device) == ("backward", "cuda")
    per = m.kernels["triton_per_fused_add_sin_sum_0"]
    assert per.kind == "triton" and per.heuristic == "persistent_reduction"
    assert per.kernel_path == "/tmp/cache/g7/cg7sn6v5erx46b6wbgpphuivgkibzmf3o6nzydchfp5jrhmnipoy.py"
    assert per.aten_ops == ["aten.sin", "aten.add", "aten.sum"]
    assert per.source_nodes == ["sin", "y", "s"]
    tem = m.kernels["triton_tem_fused_mm_1"]
    assert tem.heuristic == "template" and tem.aten_ops == ["aten.mm"]
    assert [e.callee for e in m.externs] == ["extern_kernels.mm"]


def test_helpers():
    assert cpp_heuristic("float tmp_acc0 = 0;") == "reduction"
    assert cpp_heuristic("out_ptr0[x0] = tmp1;") == "pointwise"
    assert fused_ops_from_name("cpp_fused_gelu_native_layer_norm_0") == ["fused: gelu_native_layer_norm"]
    assert fused_ops_from_name("kernel") == []
    assert not is_compiled_module("print('hello')")


def test_string_lines_read_once_a_module_and_never_stale(monkeypatch):
    """Synthetic lines: a kernel's source (with its own ``def call``) in a triple-quoted string,
    then the module's ``call``. The lines inside strings are 2-4; asked again of the same lines
    (a new list, as every reader makes) they are not scanned again; lines changed, they are."""
    lines = ["k = compile(r\'\'\'", "def call(args):", "    harness()", "    pass", "\'\'\')",
             "def call(args):", "    buf0 = k(args)", "    return (buf0,)"]
    assert string_lines(lines) == {1, 2, 3, 4}
    assert function_body(lines, "call") == range(6, 8)
    scans = []
    monkeypatch.setattr(modparse, "_TRIPLE_QUOTE", _Counting(modparse._TRIPLE_QUOTE, scans))
    assert string_lines(list(lines)) == {1, 2, 3, 4} and function_body(list(lines), "call") == range(6, 8)
    assert scans == []  # both answered from the one scan above
    changed = ["x = 1", *lines]
    assert string_lines(changed) == {2, 3, 4, 5}
    assert len(scans) == len(changed)  # a new text: scanned, line by line


class _Counting:
    """A compiled pattern that records each line it is asked to search."""

    def __init__(self, pattern, seen):
        self.pattern, self.seen = pattern, seen

    def finditer(self, text):
        self.seen.append(text)
        return self.pattern.finditer(text)
