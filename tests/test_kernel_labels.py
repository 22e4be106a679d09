"""Kernel names as tables show them (render/kernel_names.py): a long C++ name keeps what tells
its kernel from others (its functor, the function its lambda is defined in), and a column of
labels is distinct wherever its names are."""

from __future__ import annotations

import html
import re

import pytest
from typer.testing import CliRunner

from inductor_bench.cli import app
from inductor_bench.commands import output
from inductor_bench.commands.options import Settings
from inductor_bench.render.doc import new_doc
from inductor_bench.render.format import kernel_label, kernel_labels

from .conftest import FIXTURES

NS_TRACE = FIXTURES / "hta" / "ns_resolution_trace_rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz"
NAME_CHARS = 70  # render/analyze_top.py's kernel column

ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)")
_THRESHOLD = ("at::native::BinaryFunctor<float, float, float, at::native::(anonymous namespace)::"
              "threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>")
THRESHOLD = (f"void at::native::vectorized_elementwise_kernel<4, {_THRESHOLD}, at::detail::Array<char*, 3> >"
             f"(int, {_THRESHOLD}, at::detail::Array<char*, 3>)")
_CLAMP = ("at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, "
          "c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#7}::"
          "operator()() const::{lambda(float)#1}")
CLAMP = (f"void at::native::vectorized_elementwise_kernel<4, {_CLAMP}, at::detail::Array<char*, 2> >"
         f"(int, {_CLAMP}, at::detail::Array<char*, 2>)")
_FOO = ("<128, at::native::SomeFunctor<float, float, float>, at::detail::Array<char*, 3> >"
        "(int, at::native::SomeFunctor<float, float, float>, at::detail::Array<char*, 3>)")
FOO_NATIVE = "void at::native::foo_kernel" + _FOO
FOO_CUDA = "void at::cuda::foo_kernel" + _FOO
_MUL = ("at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >")
MUL = (f"void at::native::vectorized_elementwise_kernel<4, {_MUL}, std::array<char*, 3ul> >"
       f"(int, {_MUL}, std::array<char*, 3ul>)")
TRITON = "triton_per_fused_add_native_layer_norm_native_layer_norm_backward_view_8"


@pytest.mark.parametrize(("name", "label"), [
    (ADD, "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, Array<…> >"),
    (THRESHOLD, "vectorized_elementwise_kernel<…threshold_kernel_impl<float>::{lambda}…"),
    (CLAMP, "vectorized_elementwise_kernel<…launch_clamp_scalar::{lambda}, …"),
    (FOO_NATIVE, "foo_kernel<128, SomeFunctor<float, float, float>, Array<char*, 3> >"),
], ids=["add", "threshold", "clamp", "namespaced"])
def test_a_long_name_loses_namespaces_parameters_and_lambdas_before_its_arguments(name, label):
    assert kernel_label(name, NAME_CHARS) == label
    assert len(label) <= NAME_CHARS


def test_at_the_default_width_more_of_each_name_is_shown():
    assert [kernel_label(n) for n in (ADD, THRESHOLD, CLAMP)] == [
        "vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, Array<char*, 3> >",
        "vectorized_elementwise_kernel<…threshold_kernel_impl<…>::{lambda}>, Array<…> >",
        "vectorized_elementwise_kernel<4, launch_clamp_scalar::{lambda}, Array<…> >",
    ]


def test_a_column_of_labels_tells_apart_names_that_differ_only_by_namespace():
    assert kernel_label(FOO_NATIVE, NAME_CHARS) == kernel_label(FOO_CUDA, NAME_CHARS)
    assert kernel_labels([FOO_NATIVE, FOO_CUDA, FOO_NATIVE], NAME_CHARS) == [
        "at::native::foo_kernel<128, SomeFunctor<…>, Array<…> >",
        "at::cuda::foo_kernel<128, SomeFunctor<float, float, float>, Array<…> >",
        "at::native::foo_kernel<128, SomeFunctor<…>, Array<…> >",
    ]


def test_names_cut_to_one_label_are_shown_where_they_differ():
    names = [MUL, MUL.replace("MulFunctor", "AddFunctor"), MUL.replace("MulFunctor", "DivFunctor")]
    assert len({kernel_label(n, NAME_CHARS) for n in names}) == 1
    assert kernel_labels(names, NAME_CHARS) == [
        f"vectorized_elementwise_kernel<…{op}<float> >, array<…> >"
        for op in ("MulFunctor", "AddFunctor", "DivFunctor")
    ]


@pytest.mark.parametrize("width", [30, 40, 60, 70, 80])
def test_labels_are_distinct_and_fit_at_any_width(width):
    names = [ADD, THRESHOLD, CLAMP, FOO_NATIVE, FOO_CUDA, MUL, MUL.replace("Mul", "Add"), TRITON]
    labels = kernel_labels(names, width)
    assert len(set(labels)) == len(names)
    assert all(len(x) <= width for x in labels)


def test_names_that_fit_are_shown_whole():
    """Inductor's kernel names are short: they keep every character, in a column with long ones."""
    labels = kernel_labels([TRITON, ADD, THRESHOLD, CLAMP], 80)
    assert labels[0] == kernel_label(TRITON, 80) == TRITON
    assert labels[1:] == [kernel_label(n, 80) for n in (ADD, THRESHOLD, CLAMP)]


def test_the_analyze_report_names_its_three_elementwise_kernels_apart():
    """The V100 trace's add, threshold_backward and clamp_min_ run one template kernel each: the
    text report's kernel column shows three different labels for them."""
    result = CliRunner().invoke(app, ["analyze", str(NS_TRACE)], obj=Settings())
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "vectorized_elementwise_kernel<" in line]
    labels = {line.split("vectorized_elementwise_kernel<")[1].split("  ")[0] for line in rows}
    assert len(rows) == len(labels) == 3
    assert any("CUDAFunctor_add<float>" in x for x in labels)
    assert any("threshold_kernel_impl" in x for x in labels)
    assert any("launch_clamp_scalar" in x for x in labels)


UNROLLED = (
    "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<double>, "
    "at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, unsigned int>, TrivialOffsetCalculator<1, "
    "unsigned int>, at::native::memory::LoadWithCast<2>, at::native::memory::StoreWithCast<1> >(int, "
    "at::native::CUDAFunctor_add<double>, at::detail::Array<char*, 3>, TrivialOffsetCalculator<2, "
    "unsigned int>, TrivialOffsetCalculator<1, unsigned int>, at::native::memory::LoadWithCast<2>, "
    "at::native::memory::StoreWithCast<1>)"
)  # HTA's negative_queue_length trace (tests/fixtures/hta/README.md)


def test_too_many_arguments_keep_the_first_whole_and_end_in_an_ellipsis():
    """Six template arguments that do not fit even collapsed: the first ones whole, never a cut
    through the middle of one."""
    assert kernel_label(UNROLLED, 80) == "unrolled_elementwise_kernel<CUDAFunctor_add<double>, Array<char*, 3>, …"
    assert kernel_label(UNROLLED, 70) == "unrolled_elementwise_kernel<CUDAFunctor_add<double>, Array<char*, 3>…"


def test_a_top_kernels_row_shortens_its_launchers_as_kernel_names():
    """An autograd node's C++ name (from a real fbgemm trace) is shortened as a kernel's name
    is (in every format), an op's name of one word stays whole, and the count of the rest follows (synthetic row)."""
    from inductor_bench.core.top_kernels import TypicalKernel
    from inductor_bench.render.analyze_top import LAUNCHER_CHARS, _launchers

    node = "torch::autograd::CppNode<fbgemm_gpu::PermutePooledEmbsFunction<&fbgemm_gpu::permute_pooled_embs_gpu> >"
    k = TypicalKernel(device="0", name="permute_pooled_embs_kernel<float>", category="extern_other", calls=2,
                      ms=4.4, launchers=[node, "aten::mm", "fbgemm::permute_pooled_embs_auto_grad"])
    text = _launchers(new_doc("text", width=200), k)  # on a terminal; whole in a file but the C++ name
    assert text == "CppNode<PermutePooledEmbsFunction<…> >, aten::mm (+1 more)"
    assert all(len(part) <= LAUNCHER_CHARS for part in text.split(", "))
    assert _launchers(new_doc("markdown"), k) == text


H200_RUN = FIXTURES / "runs" / "cuda_h200_transformer_train"  # a real run on an NVIDIA H200
_SM80 = "sm80_xmma_gemm_f32f32_f32f32_f32_{}_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_{}"
GEMM_TN = _SM80.format("tn", "kernel__5x_cublas")  # cuBLAS's GEMMs in that run
GEMM_NN = _SM80.format("nn", "kernel__5x_cublas")
GEMM_NN_SPLIT = _SM80.format("nn", "split_k_kernel__5x_cublas")


def test_gemms_alike_at_a_narrow_width_keep_their_layout_and_entry_point():
    """The H200 run's three cuBLAS GEMMs differ in their layout (tn / nn) and in their entry point
    (execute_kernel / execute_split_k_kernel): each label keeps the name's start and both."""
    assert kernel_labels([GEMM_TN, GEMM_NN, GEMM_NN_SPLIT], 40) == [
        "sm80_xmma_…tn_n_…execute_kernel__5x_…",
        "sm80_xmma_…nn_n_…execute_kernel__5x_…",
        "sm80_xmma_…nn_n_…split_k_kernel__5x_…",
    ]


def test_gemms_alike_twice_are_told_apart_by_all_they_were_alike_to():
    """Two layouts in two tile sizes (synthetic names in cuBLAS's sm90 form): cut alike by layout,
    then alike by tile, each label shows both the layout and the tile, none numbered."""
    names = [f"sm90_xmma_gemm_bf16bf16_bf16f32_f32_{layout}_n_tilesize{tile}x128x64_warpgroupsize1x1x1_"
             "execute_segment_k_off_kernel__5x_cublas" for layout in ("tn", "nn") for tile in (64, 128)]
    assert kernel_labels(names, 45) == [
        "sm90_xmma_gemm_…tn_n_tilesize64x128x64_…",
        "sm90_xmma_gemm_…tn_n_tilesize128x128x64_…",
        "sm90_xmma_gemm_…nn_n_tilesize64x128x64_…",
        "sm90_xmma_gemm_…nn_n_tilesize128x128x64_…",
    ]


def test_gemm_labels_distinct_at_a_tables_width_are_left_as_they_are():
    assert kernel_labels([GEMM_TN, GEMM_NN, GEMM_NN_SPLIT], 80) == [
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8…_execute_kernel__5x_cublas",
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8…_execute_kernel__5x_cublas",
        "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8…_split_k_kernel__5x_cublas",
    ]


def test_the_h200_reports_chart_names_each_gemm_by_its_layout():
    """The HTML report's top-kernels chart of the H200 run: the GEMMs read
    'sm80_xmma_…kernel__5x_cublas' (which of tn / nn?) and 'sm80_xmma_…split_k_kernel__5x_cublas'."""
    result = CliRunner().invoke(app, ["report", str(H200_RUN), "--format", "html"], obj=Settings())
    assert result.exit_code == 0, result.output
    chart = result.output.split('aria-label="Top 15 kernels and extern calls"')[1].split("</svg>")[0]
    shown = {html.unescape(full): html.unescape(label) for full, label in
             re.findall(r'text-anchor="end"><title>([^<]*)</title>([^<]*)</text>', chart)}
    shown = {full.split("\n")[0] if "splitKreduce" not in full else full: x for full, x in shown.items()}
    assert shown[GEMM_TN] == "sm80_xmma_…tn_n_…execute_kernel__5x_cublas"
    assert shown[GEMM_NN] == "sm80_xmma_…nn_n_…execute_kernel__5x_cublas"
    assert shown[GEMM_NN_SPLIT] == "sm80_xmma_…nn_n_…split_k_kernel__5x_cublas"
    assert shown["void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>"
                 "(cutlass_80_simt_sgemm_64x64_8x5_tn_align1::Params)"] == "Kernel2<cutlass_80_simt_sgemm_…_8x5_tn_align1>"
    # the split-K reduction in both graphs: its name and its first whole arguments, not a cut
    # through them ('0-backward · splitKreduce_kernel<… false, float, …' before)
    assert sorted(label for full, label in shown.items() if "splitKreduce_kernel" in full) == [
        "0-backward · splitKreduce_kernel<32, 16, int, …", "0-forward · splitKreduce_kernel<32, 16, int, …"]


def test_gemm_labels_are_distinct_and_fit_at_every_width_a_chart_tries():
    """A chart searches widths down to 8 characters, where the name's start is cut inside a part."""
    names = [GEMM_TN, GEMM_NN, GEMM_NN_SPLIT]
    for width in range(8, 81):
        labels = kernel_labels(names, width)
        assert len(set(labels)) == 3 and all(len(x) <= width for x in labels), width


@pytest.mark.parametrize(("width", "labels"), [
    (60, ["sm80_xmma_gemm_…tn_n_tilesize32x32x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…nn_n_tilesize32x32x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…nn_n_tilesize32x32x8_…split_k_kernel__5x_…"]),
    (64, ["sm80_xmma_gemm_…tn_n_tilesize32x32x8_…execute_kernel__5x_cublas",
          "sm80_xmma_gemm_…nn_n_tilesize32x32x8_…execute_kernel__5x_cublas",
          "sm80_xmma_gemm_…nn_n_tilesize32x32x8_…split_k_kernel__5x_cublas"]),
    (70, ["sm80_xmma_gemm_f32f32_…tn_n_tilesize32x32x8_…execute_kernel__5x_cublas",
          "sm80_xmma_gemm_f32f32_…nn_n_tilesize32x32x8_…execute_kernel__5x_cublas",
          "sm80_xmma_gemm_f32f32_…nn_n_tilesize32x32x8_…split_k_kernel__5x_cublas"]),
])
def test_gemms_cut_through_what_tells_them_apart_are_shown_where_they_differ(width, labels):
    """At diff's and analyze's kernel columns (60, 70; 64 between) the H200 run's nn GEMMs read
    '…nn_n_tile…ute_kernel__5x_cublas' and '…nn_n_tile…t_k_kernel__5x_cublas': distinct by a few
    letters beside the cut, 'execute_' and 'split_k_' both cut through. Each label now shows the
    parts its name differs in whole: the layout and the entry point."""
    assert kernel_labels([GEMM_TN, GEMM_NN, GEMM_NN_SPLIT], width) == labels


STACK_TRACE = FIXTURES / "cuda_h200_stack_loop" / "stack-loop.pt.trace.json.gz"  # a real H200 loop


def test_the_analyze_report_names_the_h200_loops_gemms_by_what_differs(monkeypatch):
    """The stack loop's four cuBLAS GEMMs in analyze's top kernels on a terminal (its 70-character
    column; a file or a pipe shows them whole): the
    nn GEMM and its split-K twin read '…tilesize…ecute_kernel__5x_cublas' and
    '…tilesize…lit_k_kernel__5x_cublas' before; each row now names its layout, tile and warp
    shape and its entry point, the same parts in each ('sm80_xmma_gemm_f32f32_…nn_…tilesize…' for
    the split-K one alone before)."""
    monkeypatch.setattr(output, "terminal_width", lambda: 300)
    result = CliRunner().invoke(app, ["analyze", str(STACK_TRACE)], obj=Settings())
    assert result.exit_code == 0, result.output
    top = result.output.split("Top 15 of 18 kernels")[1]
    rows = [line.split("  0         ")[1].split("  ")[0] for line in top.splitlines() if "sm80_" in line]
    assert rows == [
        "sm80_…tn_n_tilesize64x64x8_…warpsize1x4x1_ffma_…execute_kernel__5x_…",
        "sm80_…tn_n_tilesize128x128x8_…warpsize2x2x1_ffma_…execute_kernel__5x_…",
        "sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…execute_kernel__5x_…",
        "sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…split_k_kernel__5x_…",
    ]


# cuBLASLt's split-K reduction in the H200 run (runs/cuda_h200_transformer_train/breakdown.json),
# and the same kernel with one flag other in the H200 MLP trace (cuda_h200_mlp_zeroed/trace.json.gz)
_SPLIT_K = ("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, false, float, float, "
            "float, true, {}, false, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, "
            "float*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, "
            "int*, float*, float*, float const*, float const*, float const*, float const*, float const*)")
SPLIT_K, SPLIT_K_MLP = _SPLIT_K.format("false"), _SPLIT_K.format("true")


@pytest.mark.parametrize(("width", "label"), [
    (20, "splitKreduce_kernel…"),
    (22, "splitKreduce_kernel<…>"),
    (30, "splitKreduce_kernel<32, 16, …"),
    (60, "splitKreduce_kernel<32, 16, int, float, float, float, …"),
])
def test_a_long_kernel_name_keeps_its_name_before_its_arguments(width, label):
    """Where its name fits, a template kernel's label is its name and its first whole arguments,
    or its name alone: 'splitKreduce_…false>' at 20 characters before, the middle of its
    arguments cut out."""
    assert kernel_label(SPLIT_K, width) == label


def test_split_k_reductions_alike_but_one_flag_are_named_whole_and_told_apart():
    assert kernel_labels([SPLIT_K, SPLIT_K_MLP], 30) == [
        "splitKreduce_kernel<…false, …", "splitKreduce_kernel<…true, …"]


_STACK = "sm80_xmma_gemm_f32f32_f32f32_f32_{}_n_tilesize{}_stage3_warpsize{}_ffma_aligna4_alignc4_execute_{}kernel__5x_cublas"
STACK_GEMMS = [_STACK.format("tn", "64x64x8", "1x4x1", ""), _STACK.format("tn", "128x128x8", "2x2x1", ""),
               _STACK.format("nn", "256x128x8", "4x2x1", ""), _STACK.format("nn", "256x128x8", "4x2x1", "split_k_")]


def test_a_pair_of_names_is_compared_once_whatever_the_widths_asked(monkeypatch):
    """A chart labels its column at each width it tries (8 to 80 characters): the parts two GEMM
    names differ in are found once per pair of names, not once per width (seven real cuBLAS
    names: 73 widths took seconds, a difflib match per pair per width), and a column asked
    again at a width is not labelled again."""
    from inductor_bench.render import distinct_labels

    distinct_labels._labels.cache_clear()
    distinct_labels._differing_from.cache_clear()
    compared, labelled = [], []
    parts_differing, label = distinct_labels._parts_differing, distinct_labels.kernel_label
    monkeypatch.setattr(distinct_labels, "_parts_differing", lambda a, b: compared.append((a, b)) or parts_differing(a, b))
    monkeypatch.setattr(distinct_labels, "kernel_label", lambda n, w: labelled.append(w) or label(n, w))
    names = STACK_GEMMS + [GEMM_TN, GEMM_NN, GEMM_NN_SPLIT]
    first = [kernel_labels(names, width) for width in range(8, 81)]
    assert len(compared) == len(set(compared)) <= len(names) * (len(names) - 1)
    assert len(labelled) == len(names) * 73
    assert [kernel_labels(names, width) for width in range(8, 81)] == first
    assert len(labelled) == len(names) * 73


@pytest.mark.parametrize(("width", "labels"), [
    (50, ["sm80_…tn_n_tilesize64x64x8_…execute_kernel__5x_…",
          "sm80_…tn_n_tilesize128x128x8_…execute_kernel__5x_…",
          "sm80_…nn_n_tilesize256x128x8_…execute_kernel__5x_…",
          "sm80_…nn_n_tilesize256x128x8_…split_k_kernel__5x_…"]),
    (60, ["sm80_xmma_gemm_…tn_n_tilesize64x64x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…tn_n_tilesize128x128x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…nn_n_tilesize256x128x8_…execute_kernel__5x_…",
          "sm80_xmma_gemm_…nn_n_tilesize256x128x8_…split_k_kernel__5x_…"]),
    (70, ["sm80_…tn_n_tilesize64x64x8_…warpsize1x4x1_ffma_…execute_kernel__5x_…",
          "sm80_…tn_n_tilesize128x128x8_…warpsize2x2x1_ffma_…execute_kernel__5x_…",
          "sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…execute_kernel__5x_…",
          "sm80_…nn_n_tilesize256x128x8_…warpsize4x2x1_ffma_…split_k_kernel__5x_…"]),
])
def test_a_family_of_gemms_shows_the_same_parts_in_each_label(width, labels):
    """The H200 stack loop's four cuBLAS GEMMs differ in layout, tile, warp shape and entry
    point. Each label shows the same of them, and the same start: where all four do not fit,
    the warp shape (which the tile decides here) is left out of every label. At 60 characters
    the nn GEMM read 'sm80_xmma_gemm_…kernel__5x_cublas' (its layout and tile hidden) beside
    'sm80_…tn_n_tilesize64x64x8_…warpsize1x4x1_…execute_kernel__…'; at 50 the tn GEMMs showed
    tile and warp, the nn ones their entry point alone; at 70 the split-K one alone started
    'sm80_xmma_gemm_f32f32_…' and left out its layout's 'n_'."""
    assert kernel_labels(STACK_GEMMS, width) == labels


SM90_GEMMS = [f"sm90_xmma_gemm_bf16bf16_bf16f32_f32_{layout}_n_tilesize{tile}x128x64_warpgroupsize1x1x1_"
              "execute_segment_k_off_kernel__5x_cublas" for layout in ("tn", "nn") for tile in (64, 128)]


def test_names_numbered_apart_stay_apart_where_the_number_cuts_them_alike():
    """Four GEMMs (synthetic names in cuBLAS's sm90 form) at 16 characters, a width a chart's
    search tries: alike in pairs, each pair numbered #1 and #2, and the cut for the number made
    the 64 and 128 tiles' labels alike, two rows reading 'sm90_…tilesi… #1'. They are numbered
    together by what is left."""
    assert kernel_labels(SM90_GEMMS, 16) == [f"sm90_…tilesi… #{i}" for i in range(1, 5)]
    for width in range(8, 81):
        labels = kernel_labels(SM90_GEMMS, width)
        assert len(set(labels)) == 4 and all(len(x) <= width for x in labels), width
