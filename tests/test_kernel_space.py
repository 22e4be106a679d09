"""A kernel that reads a slice or a gather of a larger buffer is counted for the part it reaches
(``core/kernel_space.py``), as Inductor's own ``estimate_kernel_num_bytes`` counts its Triton
kernels: the recorded Triton files give Inductor's figure to agree with, and the real C++ kernel
of a Llama decode step's embedding and RMSNorm is counted against its buffers worked out here."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from inductor_bench.core.graph_work import call_work
from inductor_bench.core.kernel_space import cpp_int, cpp_space, elements_reached, reach, triton_space
from inductor_bench.core.kernelfile import read_kernel_file
from inductor_bench.core.modparse import parse_module

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CPP = FIXTURES / "cpp_kernels" / "llama_decode_embedding_rmsnorm.cpp"


def _triton_module(path: Path, buffers: list[tuple[tuple[int, ...], str]], numel: int) -> str:
    """The kernel file's kernel, embedded in a module that passes it ``buffers`` (shape, dtype)."""
    name = path.stem
    lines = [f"{name} = async_compile.triton('{name}', '''\n{path.read_text()}\n''', device_str='cuda')",
             "", "class Runner:", "    def call(self, args):"]
    for i, (shape, dtype) in enumerate(buffers):
        stride = tuple(math.prod(shape[j + 1:]) for j in range(len(shape)))
        lines.append(f"        buf{i} = empty_strided_cuda({shape}, {stride}, torch.{dtype})")
    names = ", ".join(f"buf{i}" for i in range(len(buffers)))
    lines.append(f"        {name}.run({names}, {numel}, stream=stream0)")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name, buffers, numel, expected", [
    # 24 ids (int64), the 1000 x 128 table, the 24 x 128 rows out: 24*8 + 24*128*4 * 2
    ("triton_poi_fused_embedding_mul_0", [((24,), "int64"), ((1000, 128), "float32"), ((24, 128), "float32")],
     3072, 24 * 8 + 2 * 24 * 128 * 4),
    # 64 of 1024 columns of 256 rows in, the 256 x 64 out
    ("triton_poi_fused_mul_slice_0", [((256, 1024), "float32"), ((256, 64), "float32")], 16384, 2 * 256 * 64 * 4),
])
def test_a_triton_gather_and_slice_count_the_part_they_reach_as_inductor_does(name, buffers, numel, expected):
    path = FIXTURES / "triton_kernels" / "cpu" / f"{name}.py"
    module = _triton_module(path, buffers, numel)
    (_, work), = call_work(parse_module(module), module)
    assert work.bytes == expected
    assert work.bytes == pytest.approx(read_kernel_file(path).num_gb * 1e9, abs=0.5)  # Inductor's own


def test_the_llama_decode_embedding_kernel_reads_two_rows_of_its_table():
    """ids (2, 1) int64, the 1000 x 128 table, the RMSNorm weight (128), the variance (2, 1, 1)
    and the normalised rows (2, 1, 128) out: the table counts the 2 rows the ids select."""
    src = CPP.read_text()
    assert cpp_space(src) == 2 * 128
    space, indexes = reach(src, "cpp")
    assert indexes["in_ptr1"] == 1  # loaded twice, through tmp0 and tmp1: one index expression
    name = "cpp_fused_add_embedding_mean_mul_pow_rsqrt_0"
    module = "\n".join([
        f"{name} = async_compile.cpp_pybinding(['const int64_t*', 'const float*', 'const float*', "
        f"'float*', 'float*'], r'''\n{src}''')", "",
        "def call(args):",
        "    arg0_1, arg1_1, arg5_1 = args",
        "    assert_size_stride(arg0_1, (2, 1), (1, 1), 'input')",
        "    assert_size_stride(arg1_1, (1000, 128), (128, 1), 'input')",
        "    assert_size_stride(arg5_1, (128, ), (1, ), 'input')",
        "    buf0 = empty_strided_cpu((2, 1, 1), (1, 2, 2), torch.float32)",
        "    buf1 = empty_strided_cpu((2, 1, 128), (128, 128, 1), torch.float32)",
        f"    {name}(arg0_1, arg1_1, arg5_1, buf0, buf1)",
        "",
        "def get_args():",
        "    arg0_1 = rand_strided((2, 1), (1, 1), device='cpu', dtype=torch.int64)",
        "    arg1_1 = rand_strided((1000, 128), (128, 1), device='cpu', dtype=torch.float32)",
        "    arg5_1 = rand_strided((128, ), (1, ), device='cpu', dtype=torch.float32)",
        "    return [arg0_1, arg1_1, arg5_1]", ""])
    (_, work), = call_work(parse_module(module), module)
    assert work.bytes == 2 * 8 + 2 * 128 * 4 + 128 * 4 + 2 * 4 + 2 * 128 * 4  # 2584, not 514,584


def test_the_rule():
    assert elements_reached(1000, None, 1) == 1000  # space unknown: whole
    assert elements_reached(100, 256, 3) == 100  # no larger than the space: whole
    assert elements_reached(128000, 256, 1) == 256
    assert elements_reached(128000, 256, 2) == 512  # two index expressions: two spaces
    assert elements_reached(300, 256, 2) == 300  # never more than the buffer


def test_loops_with_a_size_symbol_are_read_at_the_values_the_call_passes():
    src = ("for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(ks0); x0+=static_cast<int64_t>(1L))\n"
           "{\n    out_ptr0[static_cast<int64_t>(x0)] = in_ptr0[static_cast<int64_t>(x0)];\n}\n")
    assert cpp_space(src) is None  # no values: unknown
    assert cpp_space(src, {"ks1": 3}) is None  # not the symbol it names
    assert cpp_space(src, {"ks0": 40}) == 40
    triton = "def k(in_ptr0, xnumel, r0_numel):\n    xoffset = 0\n"
    assert triton_space(triton) is None  # xnumel an argument
    assert triton_space(triton, {"xnumel": 96, "r0_numel": 128, "ks0": 7}) == 96 * 128


@pytest.mark.parametrize(("text", "value"), [
    ("16L*(c10::div_floor_integer(static_cast<int64_t>(ks0), static_cast<int64_t>(16L)))", 32),
    ("ks0*ks1", 40 * 3),
    ("std::max(static_cast<int64_t>(1L), ks1)", 3),
    ("128L", 128),
    ("ks2", None),  # a name the call does not pass
    ("x0 + 1", None),
])
def test_a_cpp_loop_bound_is_read_at_the_kernels_arguments(text, value):
    assert cpp_int(text, {"ks0": 40, "ks1": 3}) == value


@pytest.mark.parametrize("version", ["2.5.1", "2.13.0", "2.14.1"])
def test_a_dynamic_embedding_lookup_counts_the_rows_it_reads_not_the_tables(version):
    """tests/fixtures/dynamic/record_embedding.py: token (1000x128) and position (256x128)
    embeddings summed and layer-normed, sequence length a symbol, recorded on CPU with each
    torch on 2026-11-28, the harness at 2 sequences of 24 tokens. The kernel loops over
    ks0 x ks1 x 128 = 6,144 elements; each table counts one such space (one index
    expression each), not its 512 kB / 128 kB. Counted here from the shapes, in bytes."""
    text = (FIXTURES / "dynamic" / f"{version}-embedding.py").read_text()
    ((call, work),) = [(c, w) for c, w in call_work(parse_module(text), text) if not c.extern]
    space = 2 * 24 * 128 * 4  # a float32 tensor of the iteration space
    stats = 2 * 24 * 4  # a (2, 24, 1) float32 mean or rstd
    ids, weight_and_bias = 2 * 24 * 8, 2 * 128 * 4
    tables_and_output = 3 * space
    # 2.13+ writes the mean in place (in_out_ptr0: read and written) and the rstd; 2.5.1 two outputs
    expected = ids + tables_and_output + weight_and_bias + (3 * stats if version != "2.5.1" else 2 * stats)
    assert call.values[-2:] == [2, 24]
    assert work.bytes == expected


def test_lane_loops_inside_a_vector_step_are_not_counted_twice():
    """A 2-D tile: the outer loops step by 16, the lanes within a step loop ``x1_inner``."""
    src = ("for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(64L); x0+=static_cast<int64_t>(16L))\n{\n"
           "  for(int64_t x1=static_cast<int64_t>(0L); x1<static_cast<int64_t>(32L); x1+=static_cast<int64_t>(16L))\n  {\n"
           "    for(int64_t x1_inner=static_cast<int64_t>(0L); x1_inner<static_cast<int64_t>(16L); "
           "x1_inner+=static_cast<int64_t>(1L))\n    {\n"
           "      out_ptr0[static_cast<int64_t>(x0 + 64L*x1 + 64L*x1_inner)] = 0;\n    }\n  }\n}\n")
    assert cpp_space(src) == 64 * 32
