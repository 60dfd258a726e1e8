// Which CUDA functions kernel capture records by default: every one that can
// launch a kernel, copy or memset, and none of the calls eager frameworks
// make around them. Names as CUPTI gives them (cupti_runtime_cbid.h and
// cupti_driver_cbid.h of CUDA 13.0).
#include <doctest/doctest.h>

#include <gpuprof/detail/cupti_launch_apis.hpp>

using gpuprof::detail::api_launches_work;

TEST_CASE("launch API selection: every launch, copy, memset and graph launch is recorded") {
  for (const char* name : {"cudaLaunchKernel_v7000",
                           "cudaLaunchKernel_ptsz_v7000",
                           "__cudaLaunchKernel_v13000",
                           "cudaLaunchKernelExC_v11060",
                           "cudaLaunchCooperativeKernel_v9000",
                           "cudaLaunch_v3020",
                           "cudaLaunchHostFunc_v10000",
                           "cudaMemcpyAsync_v3020",
                           "cudaMemcpy2DAsync_ptsz_v7000",
                           "cudaMemcpyBatchAsync_v13000",
                           "cudaMemcpyPeerAsync_v4000",
                           "cudaMemcpyToSymbol_v3020",
                           "cudaMemsetAsync_v3020",
                           "cudaMemset3D_ptds_v7000",
                           "cudaGraphLaunch_v10000",
                           "cudaGraphLaunch_ptsz_v10000",
                           "cuLaunchKernel",
                           "cuLaunchKernel_ptsz",
                           "cuLaunchKernelEx",
                           "cuLaunchKernelEx_ptsz",
                           "cuLaunchGridAsync",
                           "cuLaunchCooperativeKernel",
                           "cuMemcpyHtoDAsync_v2",
                           "cuMemcpyDtoD_v2_ptds",
                           "cuMemcpyBatchAsync_v2",
                           "cuMemsetD32Async",
                           "cuMemsetD2D8_v2_ptds",
                           "cuGraphLaunch",
                           "cuGraphLaunch_ptsz"}) {
    INFO(name);
    CHECK(api_launches_work(name));
  }
}

TEST_CASE("launch API selection: the calls around launches and graph construction are not") {
  for (const char* name : {"cudaGetDevice_v3020",
                           "cudaSetDevice_v3020",
                           "cudaGetLastError_v3020",
                           "cudaPeekAtLastError_v3020",
                           "cudaStreamSynchronize_v3020",
                           "cudaStreamGetCaptureInfo_v2_v11030",
                           "cudaEventRecord_v3020",
                           "cudaEventQuery_v3020",
                           "cudaMalloc_v3020",
                           "cudaFree_v3020",
                           "cudaMallocAsync_v11020",
                           "cudaDeviceSynchronize_v3020",
                           "cudaFuncGetAttributes_v3020",
                           "cudaGraphAddMemcpyNode_v10000",
                           "cudaGraphExecMemsetNodeSetParams_v10020",
                           "cudaGraphMemcpyNodeSetParams1D_v11010",
                           "cudaGraphInstantiate_v10000",
                           "cudaGraphUpload_v11010",
                           "cuCtxGetCurrent",
                           "cuCtxSetCurrent",
                           "cuDevicePrimaryCtxRetain",
                           "cuStreamWaitEvent",
                           "cuMemAlloc_v2",
                           "cuModuleGetFunction",
                           "cuGraphAddMemsetNode",
                           "cuGraphExecMemcpyNodeSetParams",
                           "cuGetProcAddress_v2",
                           ""}) {
    INFO(name);
    CHECK_FALSE(api_launches_work(name));
  }
}
