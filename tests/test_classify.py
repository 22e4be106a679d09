"""classify.py: every row of the rule table, with real-looking kernel and op names and launch
stacks (the real traces are checked in test_classify_real.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from inductor_bench.core.categories import CATEGORIES
from inductor_bench.core.classify import FALLBACK, RULES, classify, deciding_op, rule_for
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
    ("cpp_fused_flex_attention_1", cpp("cpp_fused_flex_attention_1", "attention"), "cpp_attention_template"),
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
    # by name alone a C++ kernel's kind is unknown: the source says (the cases above)
    ("graph_0_cpp_fused_gelu_native_layer_norm_0", "cpp_kernel"),
    ("cpp_fused_sum_1", "cpp_kernel"),
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
    # name fallbacks added for real traces (where no launching op decides). Names copied from
    # profiler output quoted in public repositories unless the comment says otherwise.
    # FlashAttention 3 runs as a cutlass::device_kernel: attention, not CUTLASS GEMM
    (("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<"
      "flash::CollectiveMainloopFwdSm90<2, cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, "
      "cute::tuple<cute::C<128>, cute::C<176>, cute::C<128> >, 128, cutlass::bfloat16_t, float, "
      "cutlass::arch::Sm90, false, false, false, false, false, false, false, false, true, true, "
      "false, false, false, cutlass::bfloat16_t, false, 1>, ...> > >(...::Params)"),
     "extern_attention"),
    ("flash::enable_sm90<flash::FlashAttnBwdSm90<flash::CollectiveMainloopBwdS...>>",
     "extern_attention"),
    # FlashInfer
    (("void flashinfer::BatchPrefillWithRaggedKVCacheKernel<flashinfer::KernelTraits<"
      "(flashinfer::MaskMode)1, 128u, 2u, 4u, 4u, 4u, 4u, 1u, (flashinfer::PosEncodingMode)0, "
      "__nv_bfloat16, __nv_bfloat16, __nv_bf...>, ...>(...)"), "extern_attention"),
    ("flashinfer::BatchDecodeWithPagedKVCacheKernel", "extern_attention"),
    ("flashinfer::BatchPrefillWithPagedKVCacheKernel", "extern_attention"),
    # Blackwell (sm100) batched GEMMs named bmm_<dtypes>_...
    ("bmm_Bfloat16_E4m3E4m3_Fp32_t128x16x128u2_s6_et64x16_m64x16x32_c1x1x1_rM_TN_transOut_noShfl",
     "extern_gemm"),
    ("bmm_Bfloat16_Bfloat16Bfloat16_Fp32_sm100f", "extern_gemm"),
    # CUTLASS kernels themselves are GEMM ...
    (("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>("
      "cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4::Params)"), "extern_gemm"),
    # ... a cutlass:: type in another kernel's template arguments is not (name constructed from
    # the template in torch's SparseSemiStructuredTile.cu, not copied from a trace)
    (("void at::native::sparse_semi_structured_tile_kernel<at::native::KernelTypes<"
      "cutlass::bfloat16_t>, at::native::MetadataCutlass, at::native::LargestValuesGreedy<"
      "at::native::Tile4x4Accessor> >(at::native::KernelTypes<cutlass::bfloat16_t>::Params, "
      "at::native::MetadataCutlass, at::native::LargestValuesGreedy<at::native::Tile4x4Accessor>)"),
     FALLBACK),
    # fbgemm_gpu kernels (embeddings, sparse ops, quantization) are not GEMM
    ("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
     FALLBACK),
    (("void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu("
      "at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >"
      "(int, ...)"), FALLBACK),
    # cuDNN batch norm says "cudnn" but is not convolution
    (("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>("
      "cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, ...)"), FALLBACK),
    (("void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float, float, float, "
      "float, cudnnTensorStruct, float const*, cudnnTensorStruct, ...)"), FALLBACK),
    ("void cudnn::bn_fw_tr_1C11_singleread<float, 512, true, 1, 2, 0>(cudnn::bn_fw_tr_1C11_args<float>)",
     FALLBACK),
    # NCCL / RCCL
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     "communication"),
    ("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "communication"),
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "communication"),
    # ROCm: rocBLAS / hipBLASLt (Tensile Cijk_*), Composable Kernel, MIOpen
    (("Cijk_Ailk_Bljk_SB_MT16x16x16_SE_AF0EM1_AMAS2_ASEM1_BL0_DTL0_EPS0_FL0_GRVW2_GSU1_ISA000_K1_"
      "KLS_LPA0_LPB0_NLCA1_NLCB1_PGR1_PLR1_TT2_2_USFGRO0_VAW1_VW2_WG8_8_1_WGM1"), "extern_gemm"),
    ("Cijk_Alik_Bljk_HHS_MT128x128x32_MI16x16x16x1", "extern_gemm"),
    ("Custom_Cijk_Ailk_Bljk_F8NH_HHS_BH_Bias_AS_SAB_SAV_shortname0_gfx942", "extern_gemm"),
    ("ck::kernel_gemm_xdl_cshuffle_v3_multi_d_blockscale_b_preshuffle", "extern_gemm"),
    ("MIOpenConvUni", "extern_conv"),
    ("miopenGcnAsmConv1x1U", "extern_conv"),
    ("miopenSp3AsmConv3x3F", "extern_conv"),
    (("igemm_fwd_gtcx3_nhwc_fp16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2_ta1x8x2x1_1x4x1x64_"
      "tb1x8x2x1_1x4x1x64_gkgs"), "extern_conv"),  # says "gemm", is MIOpen's implicit-GEMM conv
    ("naive_conv_fwd_nchw_fp32", "extern_conv"),
    ("MIOpenBatchNormFwdTrainSpatial", FALLBACK),
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
    # a CPU-only trace's record functions that wrap other ops (their own time only)
    ("CompiledFunction", "host_compiled"),
    ("CompiledFunctionBackward", "host_compiled"),
    ("Torch-Compiled Region: 0/0", "host_framework"),
    ("autograd::engine::evaluate_function: CompiledFunctionBackward", "host_framework"),
    ("TorchDynamo Cache Lookup", "host_framework"),
    ("AddmmBackward0", "host_framework"),  # eager autograd's node: it holds the aten::mm
    ("CheckpointFunctionBackward", "host_framework"),  # a Python autograd.Function's node
    ("torch::autograd::AccumulateGrad", "host_framework"),
    # a compiled graph's call record: where its C++ kernels are no op (a user's trace) its time
    # outside its ops is theirs; a key that happens to spell a library's word is no library
    ("## Call CompiledFxGraph fr5bkty33tgta5pz4jvkzzmrriyxdrkib6a5idffkarcjj ##", "host_compiled"),
    ("## Call CompiledFxGraph gemmconvattentionfmhacudnnmm2x ##", "host_compiled"),
    ("## Call something else ##", FALLBACK),
    # custom ops: an op of a namespace not torch's own, on the host timeline
    ("ibtest::scaled_tanh", "extern_custom"),  # torch.library.custom_op (tests/fixtures/models/custom_op.py)
    ("torchvision::nms", "extern_custom"),  # a library's own op
    ("mylib::fused_rope.default", "extern_custom"),
    # ... and torch's own namespaces and record functions are not
    ("prims::convert_element_type", FALLBACK),
    ("inductor::_alloc_from_pool", FALLBACK),
    ("quantized::linear_dynamic", FALLBACK),
    ("profiler::_record_function_enter_new", FALLBACK),
    ("inductor_bench::iteration", FALLBACK),  # this tool's own iteration marker
    ("c10d::allreduce_", "communication"),  # on the host the op is the collective (gloo); on a device:
    ("_c10d_functional::all_reduce_", "communication"),  # the kernel under it is (below)
    ("record_param_comms", "communication"),
    ("mylib::op: a label", FALLBACK),  # a record function a user named with "::"
]


# (kernel name, launch stack innermost first, expected): the innermost recognised op decides.
# Stacks as launch_stacks() gives them for the real traces in tests/fixtures/hta/.
CONV_FWD = ("aten::cudnn_convolution", "aten::_convolution", "aten::convolution", "aten::conv2d")
CONV_BWD = ("aten::convolution_backward", "ConvolutionBackward0",
            "autograd::engine::evaluate_function: ConvolutionBackward0")
MM_BWD = ("aten::mm", "AddmmBackward0", "autograd::engine::evaluate_function: AddmmBackward0")
SDPA_MATH = ("aten::_scaled_dot_product_attention_math", "aten::scaled_dot_product_attention")
COPY = ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
        "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#2}::...")
OP_CASES = [
    # cuBLAS / cuDNN kernels named like GEMMs, run for a convolution
    ("volta_sgemm_64x64_nn", CONV_FWD, "extern_conv"),
    ("volta_sgemm_32x128_nt", CONV_BWD, "extern_conv"),
    ("ampere_gcgemm_64x64_nt", CONV_FWD, "extern_conv"),  # cuDNN FFT convolution
    (("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4>("
      "cutlass_80_tensorop_s1688gemm_256x64_16x4_nn_align4::Params)"), CONV_FWD, "extern_conv"),
    # the same sgemm for a matmul
    ("volta_sgemm_128x32_nt", MM_BWD, "extern_gemm"),
    # unrecognised ops are skipped over: the bias add of cuDNN's conv, mm's contiguous copy
    ("void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
     "at::native::CUDAFunctor_add<float> >(...)", ("aten::add_", *CONV_FWD[1:]), "extern_conv"),
    (COPY, ("aten::copy_", "aten::clone", *MM_BWD), "extern_gemm"),
    # attention; in the math path the bmm is a GEMM, the softmax counts for attention
    ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<...> >(...)",
     ("aten::_flash_attention_forward", "aten::_scaled_dot_product_flash_attention",
      "aten::scaled_dot_product_attention"), "extern_attention"),
    ("ampere_sgemm_128x64_nn", ("aten::bmm", "aten::matmul", *SDPA_MATH), "extern_gemm"),
    ("void (anonymous namespace)::softmax_warp_forward<float, float, float, 7, false, false>(...)",
     ("aten::_softmax", "aten::softmax", *SDPA_MATH), "extern_attention"),
    # named by the op (other ATen): batch norm, layer norm, embedding, fbgemm
    ("void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 32, true, 1, true>(...)",
     ("aten::cudnn_batch_norm", "aten::_batch_norm_impl_index", "aten::batch_norm"), FALLBACK),
    ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(...)",
     ("aten::native_layer_norm", "aten::layer_norm", "forward"), FALLBACK),
    ("void cub::DeviceScanKernel<cub::AgentScanPolicy<128, 15, int, ...> >(...)",
     ("fbgemm::permute_2D_sparse_data",), FALLBACK),
    # a collective's own copy (functional all_reduce clones its input)
    (COPY, ("aten::copy_", "aten::clone", "_c10d_functional::all_reduce"), "communication"),
    ("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
     ("record_param_comms", "c10d::allreduce_"), "communication"),
    # a copy or fill stays one whatever op issued it
    ("Memset (Device)", CONV_FWD, "memset"),
    ("Memcpy HtoD (Pageable -> Device)", ("aten::copy_", "aten::_to_copy", "aten::to", *CONV_FWD),
     "memcpy"),
    # Inductor's Triton kernels keep their names' rule; their record function is not an op
    ("triton_poi_fused_add_cos_sin_0", ("triton_poi_fused_add_cos_sin_0",
                                        "Torch-Compiled Region: 0/0"), "triton_pointwise"),
    ("triton__0d1d2d", ("CompiledFunction",), "triton_other"),  # torch 2.0 names
    # nothing recognised (a CUDA-graph replay, an optimizer step): the name decides
    (("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1>("
      "cutlass_80_tensorop_s1688gemm_256x128_32x3_nn_align1::Params)"),
     ("CompiledFunctionBackward", "autograd::engine::evaluate_function: CompiledFunctionBackward"),
     "extern_gemm"),
    ("void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, ...>(...)", (),
     FALLBACK),
    ("volta_sgemm_128x32_nt", (), "extern_gemm"),
    # a library kernel inside a custom op: custom op time, unless an op inside it says what
    # it is (its GEMM) or the kernel's own name does (flash-attn's ops are custom ops)
    ("void at::native::vectorized_elementwise_kernel<4, at::native::tanh_kernel_cuda(...)>(...)",
     ("aten::tanh", "ibtest::scaled_tanh"), "extern_custom"),
    ("ampere_sgemm_128x64_nn", ("aten::mm", "aten::matmul", "mylib::fused_mlp"), "extern_gemm"),
    ("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 64, 4> >(...)",
     ("flash_attn::_flash_attn_forward",), "extern_attention"),
]


@pytest.mark.parametrize(("name", "info", "expected"), SOURCE_CASES,
                         ids=[f"{c[0]}:{c[1].heuristic}" for c in SOURCE_CASES])
def test_category_from_source(name, info, expected):
    assert classify(name, info) == expected


@pytest.mark.parametrize(("name", "expected"), NAME_CASES, ids=[c[0][:60] for c in NAME_CASES])
def test_category_from_name(name, expected):
    assert classify(name) == expected


@pytest.mark.parametrize(("name", "ops", "expected"), OP_CASES,
                         ids=[f"{c[0][:40]}<-{c[1][0] if c[1] else '()'}" for c in OP_CASES])
def test_category_from_launching_op(name, ops, expected):
    assert classify(name, None, ops=ops) == expected


def test_source_beats_the_launching_op():
    info = triton("triton_tem_fused_mm_0", "template")
    assert classify("triton_tem_fused_mm_0", info, ops=("aten::mm",)) == "triton_template"
    # and an ATen op seen on the host timeline is classified by its own name
    assert classify("aten::addmm", None, ops=()) == "extern_gemm"


def test_deciding_op():
    assert deciding_op(("aten::copy_", "aten::clone", *MM_BWD)) == "aten::mm"
    assert deciding_op(("aten::fill_", "aten::zero_", "CompiledFunction")) is None
    assert deciding_op(()) is None


def test_every_rule_is_exercised():
    hit = {id(rule_for(n, i)) for n, i, _ in SOURCE_CASES}
    hit |= {id(rule_for(n)) for n, _ in NAME_CASES}
    hit |= {id(rule_for(n, None, ops)) for n, ops, _ in OP_CASES}
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
