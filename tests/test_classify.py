"""classify.py: every row of the rule table, with real-looking kernel and op names."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core.categories import CATEGORIES
from inductor_bench.core.classify import FALLBACK, RULES, classify, rule_for
from inductor_bench.core.modparse import KernelInfo, read_module

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def triton(name: str, heuristic: str | None) -> KernelInfo:
    return KernelInfo(name=name, kind="triton", heuristic=heuristic)


def cpp(name: str, heuristic: str | None) -> KernelInfo:
    return KernelInfo(name=name, kind="cpp", heuristic=heuristic)


# (name, info or None, expected category)
SOURCE_CASES = [
    ("triton_poi_fused_sin_0", triton("triton_poi_fused_sin_0", "pointwise"), "triton_pointwise"),
    ("triton_red_fused_add_sin_sum_1", triton("triton_red_fused_add_sin_sum_1", "reduction"),
     "triton_reduction"),
    # the source beats the name: a cooperative reduction is named triton_unk_
    ("triton_unk_fused_sum_0", triton("triton_unk_fused_sum_0", "cooperative_reduction"),
     "triton_reduction"),
    ("triton_per_fused__softmax_3", triton("triton_per_fused__softmax_3", "persistent_reduction"),
     "triton_persistent_reduction"),
    ("triton_spl_fused_cumsum_4", triton("triton_spl_fused_cumsum_4", "split_scan"),
     "triton_split_scan"),
    ("triton_tem_fused_mm_0", triton("triton_tem_fused_mm_0", "template"), "triton_template"),
    ("triton_for_fused_0", triton("triton_for_fused_0", "foreach"), "triton_foreach"),
    ("triton_unk_fused_0", triton("triton_unk_fused_0", "fixed_config"), "triton_other"),
    ("triton_", triton("triton_", "user_autotune"), "triton_other"),
    # unique kernel names off: every kernel is "triton_", the decorator still tells
    ("triton_", triton("triton_", "pointwise"), "triton_pointwise"),
    ("cpp_fused_sum_1", cpp("cpp_fused_sum_1", "reduction"), "cpp_reduction"),
    ("cpp_fused_addmm_0", cpp("cpp_fused_addmm_0", "template"), "cpp_template"),
    ("cpp_fused_gelu_0", cpp("cpp_fused_gelu_0", "pointwise"), "cpp_pointwise"),
    # a source without a decorator falls back to the name
    ("triton_red_fused_mean_2", triton("triton_red_fused_mean_2", None), "triton_reduction"),
]

NAME_CASES = [
    ("triton_poi_fused_add_gelu_7", "triton_pointwise"),
    ("triton_red_fused_native_layer_norm_backward_12", "triton_reduction"),
    ("triton_per_fused__log_softmax_5", "triton_persistent_reduction"),
    ("triton_spl_fused_cumsum_0", "triton_split_scan"),
    ("triton_tem_fused_addmm_relu_3", "triton_template"),
    ("triton_for_fused_1", "triton_foreach"),
    ("triton_unk_fused_sum_0", "triton_other"),
    ("triton_mix_fused_new_prefix_0", "triton_other"),  # the prefix set is open
    ("triton_", "triton_other"),
    # C++ kernels by profiler name
    ("graph_0_gemm_m128n512k256_kernel", "cpp_template"),
    ("graph_1_cpp_CppMicroGemmAMX_kernel", "cpp_template"),
    ("cpp_fused_addmm_gemm_0", "cpp_template"),
    ("graph_0_cpp_fused_gelu_native_layer_norm_0", "cpp_pointwise"),
    ("cpp_fused_sum_1", "cpp_pointwise"),
    # CPU extern ops
    ("aten::mm", "extern_gemm"),
    ("aten::addmm", "extern_gemm"),
    ("aten::bmm", "extern_gemm"),
    ("aten::baddbmm", "extern_gemm"),
    ("aten::matmul", "extern_gemm"),
    ("aten::linear", "extern_gemm"),
    ("aten::_mkl_linear", "extern_gemm"),
    ("mkl::_mkl_linear", "extern_gemm"),
    ("mkldnn::_linear_pointwise", "extern_gemm"),
    ("mkldnn::_linear_pointwise_binary", "extern_gemm"),
    ("aten::convolution", "extern_conv"),
    ("aten::_convolution", "extern_conv"),
    ("aten::mkldnn_convolution", "extern_conv"),
    ("aten::convolution_backward", "extern_conv"),
    ("aten::conv2d", "extern_conv"),
    ("mkldnn::_convolution_pointwise", "extern_conv"),
    ("aten::scaled_dot_product_attention", "extern_attention"),
    ("aten::_scaled_dot_product_flash_attention_for_cpu", "extern_attention"),
    ("aten::_efficient_attention_forward", "extern_attention"),
    # CUDA attention (before convolution: cuDNN's SDPA kernels say "cudnn" and "fprop")
    (("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
     "cutlass::bfloat16_t, Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, "
     "false, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"),
     "extern_attention"),
    (("void pytorch_flash::flash_bwd_convert_dq_kernel<Flash_bwd_kernel_traits<64, 128, 128, 8, 4, "
     "2, 2, false, false, cutlass::bfloat16_t>, true, true>(pytorch_flash::Flash_bwd_params)"),
     "extern_attention"),
    (("fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<"
     "cutlass::bfloat16_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)"),
     "extern_attention"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wmma_f16_knob_3_64x64x64_4x1x1_kernel0_0",
     "extern_attention"),
    # CUDA convolution (before GEMM: implicit-GEMM convs say "gemm")
    (("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x64"
     "_warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn"), "extern_conv"),
    (("sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw_tilesize64x64x64"
     "_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel"), "extern_conv"),
    (("sm80_xmma_wgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32"
     "_stage4_warpsize2x2x1_g1_tensor16x8x16_kernel"), "extern_conv"),
    (("void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>"
     "(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long "
     "long, int, float, float, int, float const*, float const*, bool, int, int)"), "extern_conv"),
    (("void at::native::(anonymous namespace)::conv_depthwise2d_forward_kernel<3, float, int>"
     "(at::GenericPackedTensorAccessor<float const, 4ul, at::DefaultPtrTraits, int>, ...)"),
     "extern_conv"),
    (("void nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, "
     "(cudnnKernelDataType_t)0>(int, int, int, int, void const*, void*, float, float)"),
     "extern_conv"),
    ("_5x_cudnn_ampere_scudnn_128x64_relu_small_nn_v1", "extern_conv"),
    # CUDA GEMM
    (("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"
     "_execute_segment_k_off_kernel__5x_cublas"), "extern_gemm"),
    ("ampere_sgemm_128x64_tn", "extern_gemm"),
    ("volta_sgemm_128x64_nn", "extern_gemm"),
    ("ampere_bf16_s1688gemm_bf16_128x64_sliced1x2_ldg8_f2f_tn", "extern_gemm"),
    (("void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8>"
     "(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x2_tn_align8::Params)"),
     "extern_gemm"),
    ("nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NNT", "extern_gemm"),
    (("void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false, "
     "cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, "
     "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> "
     ">(cublasGemvParamsEx<...>, float, float)"), "extern_gemm"),
    # memcpy / memset
    ("Memcpy HtoD (Pageable -> Device)", "memcpy"),
    ("Memcpy DtoD (Device -> Device)", "memcpy"),
    ("Memcpy DtoH (Device -> Pinned)", "memcpy"),
    ("Memset (Device)", "memset"),
    # everything else
    (("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, "
     "1>)"), FALLBACK),
    (("void at::native::(anonymous namespace)::convert_indices_from_coo_to_csr_cuda_kernel<int, "
     "long>(int*, long const*, long, long)"), FALLBACK),  # "convert" is not "conv"
    ("aten::index_put_", FALLBACK),
    ("aten::_convert_indices_from_coo_to_csr", FALLBACK),
    ("aten::copy_", FALLBACK),
]


@pytest.mark.parametrize(("name", "info", "expected"), SOURCE_CASES,
                         ids=[f"{c[0]}:{c[1].heuristic}" for c in SOURCE_CASES])
def test_category_from_source(name, info, expected):
    assert classify(name, info) == expected


@pytest.mark.parametrize(("name", "expected"), NAME_CASES, ids=[c[0][:60] for c in NAME_CASES])
def test_category_from_name(name, expected):
    assert classify(name) == expected


def test_every_rule_is_exercised():
    hit = {id(rule_for(n, i)) for n, i, _ in SOURCE_CASES}
    hit |= {id(rule_for(n)) for n, _ in NAME_CASES}
    missed = [r.why for r in RULES if id(r) not in hit]
    assert missed == []


def test_every_rule_names_a_known_category():
    assert FALLBACK in CATEGORIES
    assert {r.category for r in RULES} <= set(CATEGORIES)
    # every category but the fallback has a way in
    assert {r.category for r in RULES} | {FALLBACK} == set(CATEGORIES)


def test_kernels_of_the_fixture_modules():
    cuda = read_module(FIXTURES / "synthetic_cuda_transformer" / "module.py")
    assert {k.name: classify(k.name, k) for k in cuda.kernels.values()} == {
        "triton_per_fused_native_layer_norm_0": "triton_persistent_reduction",
        "triton_tem_fused_addmm_1": "triton_template",
        "triton_poi_fused_gelu_2": "triton_pointwise",
        "triton_red_fused_sum_3": "triton_reduction",
    }
    bwd = read_module(FIXTURES / "cpu_mlp_train" / "0-backward" / "module.py")
    # both C++ kernels accumulate (tmp_acc / Welford): reductions, though named cpp_fused_*
    assert {k.name: classify(k.name, k) for k in bwd.kernels.values()} == {
        "cpp_fused_gelu_gelu_backward_native_layer_norm_native_layer_norm_backward_sum_0":
            "cpp_reduction",
        "cpp_fused_sum_1": "cpp_reduction",
    }
