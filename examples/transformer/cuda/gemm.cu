// cuda/gemm.cu: the row-major cuBLAS front end (see gemm.hpp).
//
// A row-major matrix with row stride ld is, to column-major cuBLAS, its
// transpose with the same leading dimension. So C = op(A)·op(B) in row-major
// is Cᵀ = op(B)ᵀ·op(A)ᵀ in column-major: the same ops, the operands swapped,
// and m/n exchanged.
#include "cuda/gemm.hpp"

#include "common/cuda_check.hpp"

namespace transformer::cuda {

Gemm::Gemm(Precision precision, cudaStream_t stream)
    : compute_(precision == Precision::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F) {
  EXAMPLE_CUBLAS_CHECK(cublasCreate(&handle_));
  try {
    EXAMPLE_CUBLAS_CHECK(cublasSetStream(handle_, stream));
    // CUBLAS_DEFAULT_MATH never lets CUBLAS_COMPUTE_32F use TF32 (that needs
    // CUBLAS_TF32_TENSOR_OP_MATH or the _FAST_TF32 compute type), so fp32 is
    // true fp32 like PyTorch's default; tf32 asks for it through compute_.
    EXAMPLE_CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
    EXAMPLE_CUBLAS_CHECK(cublasSetPointerMode(handle_, CUBLAS_POINTER_MODE_HOST));
  } catch (...) {
    cublasDestroy(handle_);
    throw;
  }
}

Gemm::~Gemm() { cublasDestroy(handle_); }  // a destructor cannot report a failure

void Gemm::set_workspace(void* workspace, std::size_t bytes) {
  EXAMPLE_CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace, bytes));
}

namespace {
cublasOperation_t to_cublas(Op op) { return op == Op::transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }
}  // namespace

void matmul(const Gemm& gemm, Op op_a, Op op_b, int m, int n, int k, float alpha, const Operand& a,
            const Operand& b, float beta, const Output& c, int batch) {
  if (batch == 1) {
    EXAMPLE_CUBLAS_CHECK(cublasGemmEx(
        gemm.handle(), to_cublas(op_b), to_cublas(op_a), n, m, k, &alpha, b.data, b.type,
        static_cast<int>(b.row_stride), a.data, a.type, static_cast<int>(a.row_stride), &beta, c.data, c.type,
        static_cast<int>(c.row_stride), gemm.compute_type(), CUBLAS_GEMM_DEFAULT));
    return;
  }
  EXAMPLE_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      gemm.handle(), to_cublas(op_b), to_cublas(op_a), n, m, k, &alpha, b.data, b.type,
      static_cast<int>(b.row_stride), b.batch_stride, a.data, a.type, static_cast<int>(a.row_stride),
      a.batch_stride, &beta, c.data, c.type, static_cast<int>(c.row_stride), c.batch_stride, batch,
      gemm.compute_type(), CUBLAS_GEMM_DEFAULT));
}

}  // namespace transformer::cuda
