// Kernel naming: demangling, base names and the categoriser, on names taken
// from real profiles (cuBLAS, PyTorch, NCCL, FlashAttention) and our own kernels.
#include <doctest/doctest.h>

#include <gpuprof/kernel_names.hpp>

using gpuprof::ActivityKind;
using gpuprof::base_name;
using gpuprof::CategoryRules;
using gpuprof::demangle;

TEST_CASE("demangle turns Itanium names into C++ and leaves other names alone") {
  CHECK(demangle("_Z14softmax_kernelPfi") == "softmax_kernel(float*, int)");
  CHECK(demangle("_ZN11transformer7rmsnorm14forward_kernelILi256EEEvPKfPfi") ==
        "void transformer::rmsnorm::forward_kernel<256>(float const*, float*, int)");
  const char* cublas =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
      "kernel__5x_cublas";
  CHECK(demangle(cublas) == cublas);
  CHECK(demangle("_Znot_really_mangled(") == "_Znot_really_mangled(");  // fails to demangle: unchanged
}

TEST_CASE("base_name strips return type, template arguments and parameter list") {
  CHECK(base_name("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                  "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
                  "at::detail::Array<char*, 3>)") == "at::native::vectorized_elementwise_kernel");
  CHECK(base_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>"
                  "(float*, float const*, int, int, int, bool const*, int, bool)") ==
        "(anonymous namespace)::softmax_warp_forward");
  CHECK(base_name("void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::"
                  "launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, "
                  "at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#8}::"
                  "operator()() const::{lambda(float)#1}, at::detail::Array<char*, 2> >(int, T2, T3)") ==
        "at::native::vectorized_elementwise_kernel");
  CHECK(base_name("softmax_kernel(float*, int)") == "softmax_kernel");
  CHECK(base_name("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4>"
                  "(cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4::Params)") == "cutlass::Kernel2");
  CHECK(base_name("void foo<int>(int) [clone .kd]") == "foo");
  const char* cublas =
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
      "kernel__5x_cublas";
  CHECK(base_name(cublas) == cublas);
  CHECK(base_name("nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT") ==
        "nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT");
}

TEST_CASE("mangled -> demangled -> base, end to end") {
  const std::string full = demangle("_ZN11transformer7rmsnorm14forward_kernelILi256EEEvPKfPfi");
  CHECK(base_name(full) == "transformer::rmsnorm::forward_kernel");
}

namespace {
std::string category_of(const std::string& full_name,
                        const CategoryRules& rules = CategoryRules::defaults()) {
  return rules.categorize(ActivityKind::kernel, base_name(full_name), full_name);
}
}  // namespace

TEST_CASE("the default rules categorise real-world kernel names") {
  CHECK(category_of("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_"
                    "segment_k_off_kernel__5x_cublas") == "gemm");
  CHECK(category_of("nvjet_tst_128x256_64x4_2x1_v_bz_coopB_TNT") == "gemm");
  CHECK(category_of("ampere_sgemm_128x32_nn") == "gemm");
  CHECK(category_of("void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_256x128_16x3_nn_align4>(Params)") ==
        "gemm");
  CHECK(category_of("void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float>(Params)") ==
        "gemm");
  CHECK(category_of("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, "
                    "false>(float*)") == "softmax");
  CHECK(category_of("void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float>(float*)") ==
        "softmax");
  CHECK(category_of(
            "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int)") ==
        "norm");
  CHECK(category_of("void transformer::rmsnorm_forward_kernel(float const*, float*)") == "norm");
  // The template argument mentions a norm, but the kernel is a reduction.
  CHECK(category_of("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                    "at::native::NormTwoOps<float, float, float> > >(int)") == "reduction");
  CHECK(category_of(
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >(int)") ==
        "elementwise");
  // "normal" in the template argument must not make random init a "norm".
  CHECK(category_of(
            "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, "
            "at::native::templates::cuda::normal_and_transform<float> >(int)") == "elementwise");
  CHECK(category_of("void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 64, 128, 4> >(Flash_fwd_params)") ==
        "attention");
  CHECK(category_of("fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float>::"
                    "Params)") == "attention");
  // The transformer example's own fused attention (examples/transformer/cuda/flash_attention.cu).
  CHECK(category_of(
            "void transformer::cuda::(anonymous namespace)::flash_forward_kernel<64>(__nv_bfloat16 const*, "
            "__nv_bfloat16 const*, __nv_bfloat16 const*, __nv_bfloat16*, float*, int, int, int, float)") ==
        "attention");
  CHECK(
      category_of(
          "void transformer::cuda::(anonymous namespace)::flash_backward_kernel<80>(__nv_bfloat16 const*)") ==
      "attention");
  CHECK(
      category_of("transformer::cuda::(anonymous namespace)::flash_backward_preprocess_kernel(__nv_bfloat16 "
                  "const*, __nv_bfloat16 const*, float*, int, int)") == "attention");
  CHECK(category_of("transformer::cuda::(anonymous namespace)::flash_backward_dq_kernel(float const*, "
                    "__nv_bfloat16*, float, unsigned long)") == "attention");
  // cuDNN's fused attention (the example's --attention cudnn): the two flash
  // kernels and the backward's helpers, as CUPTI names them on an H100/H200.
  CHECK(category_of("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_32_64x256x64_4x1x1_"
                    "cga1x1x1_kernel0_0") == "attention");
  CHECK(category_of("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_"
                    "cga1x1x1_kernel0_0") == "attention");
  CHECK(category_of("void cudnn::fusion::compute_dot_do_o_specialized<true, 64>(void const*, void const*, "
                    "void*, void*, unsigned int, float, void const*, bool, int)") == "attention");
  CHECK(category_of("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, unsigned int, float "
                    "const*, float*, void const*, void*, bool, bool)") == "attention");
  CHECK(category_of("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)") ==
        "communication");
  CHECK(category_of("void transformer::swiglu_forward_kernel(float const*)") == "elementwise");
  CHECK(category_of("void transformer::adamw_step_kernel(float*)") == "elementwise");
  CHECK(category_of("void spin_kernel(long long)") == "other");
  CHECK(CategoryRules::defaults().categorize(ActivityKind::memcpy, "[CUDA memcpy Host-to-Device]",
                                             "[CUDA memcpy Host-to-Device]") == "memory");
}

TEST_CASE("user rules: prepend wins over the defaults, replace drops them") {
  CategoryRules rules = CategoryRules::defaults();
  rules.prepend({"attention", {"attention_softmax"}});
  CHECK(category_of("void transformer::attention_softmax_kernel(float*)", rules) == "attention");
  CHECK(category_of("void transformer::softmax_kernel(float*)", rules) == "softmax");

  rules.replace({{"mine", {"SPIN"}}});  // case-insensitive
  CHECK(category_of("void spin_kernel(long long)", rules) == "mine");
  CHECK(category_of("ampere_sgemm_128x32_nn", rules) == "other");
  CHECK(rules.rules().size() == 1);
}

TEST_CASE("name_record fills name, base name and category from the raw name") {
  gpuprof::KernelRecord record;
  gpuprof::name_record(record, "_Z14softmax_kernelPfi", CategoryRules::defaults());
  CHECK(record.name == "softmax_kernel(float*, int)");
  CHECK(record.base_name == "softmax_kernel");
  CHECK(record.category == "softmax");

  gpuprof::KernelRecord copy;
  copy.kind = ActivityKind::memset;
  gpuprof::name_record(copy, "[CUDA memset]", CategoryRules::defaults());
  CHECK(copy.name == "[CUDA memset]");
  CHECK(copy.base_name == "[CUDA memset]");
  CHECK(copy.category == "memory");
}
