// cuda/gemm.hpp: every matrix product of the CUDA backend goes through
// matmul(), a row-major front end to cuBLAS (which is column-major). It keeps
// the precision policy in one place: fp32 = CUBLAS_COMPUTE_32F with TF32 off,
// tf32 = CUBLAS_COMPUTE_32F_FAST_TF32, bf16 = bf16 operands with fp32
// accumulation (CUBLAS_COMPUTE_32F). Where cuBLAS splits K, it may add the
// partial sums of a bf16 output in bf16 (its default math mode allows it, as
// PyTorch's allow_bf16_reduced_precision_reduction does by default).
#pragma once
#include <cstddef>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "model/backend.hpp"

namespace transformer::cuda {

// A cuBLAS handle bound to one stream and one workspace, with the math mode
// and compute type of a precision.
class Gemm {
 public:
  Gemm(Precision precision, cudaStream_t stream);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;

  // The workspace (cuBLAS recommends 32 MiB on Hopper) is the caller's memory,
  // so cuBLAS makes no hidden allocations. Set before the first matmul; the
  // handle exists first so its own allocations happen before the caller
  // sizes its memory against what is free.
  void set_workspace(void* workspace, std::size_t bytes);

  cublasHandle_t handle() const { return handle_; }
  cublasComputeType_t compute_type() const { return compute_; }

  static constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

 private:
  cublasHandle_t handle_ = nullptr;
  cublasComputeType_t compute_;
};

enum class Op { none, transpose };

// A row-major operand: `row_stride` is the distance between rows (elements),
// `batch_stride` between the matrices of a strided batch.
struct Operand {
  const void* data;
  cudaDataType_t type;
  long long row_stride;
  long long batch_stride = 0;
};

struct Output {
  void* data;
  cudaDataType_t type;
  long long row_stride;
  long long batch_stride = 0;
};

// C[M, N] = alpha · op(A)[M, K] · op(B)[K, N] + beta · C, all row-major, for
// `batch` matrices at the given strides. beta = 0 never reads C.
void matmul(const Gemm& gemm, Op op_a, Op op_b, int m, int n, int k, float alpha, const Operand& a,
            const Operand& b, float beta, const Output& c, int batch = 1);

// The cuBLAS element type of a stored tensor.
template <class T>
constexpr cudaDataType_t data_type();
template <>
constexpr cudaDataType_t data_type<float>() {
  return CUDA_R_32F;
}
template <>
constexpr cudaDataType_t data_type<__nv_bfloat16>() {
  return CUDA_R_16BF;
}

// FLOPs of that product (a multiply-add counts 2).
inline double matmul_flops(double m, double n, double k, double batch = 1) { return 2.0 * m * n * k * batch; }

}  // namespace transformer::cuda
