// CUDA runtime failures turned into labpose errors where they happen: LABPOSE_CUDA_CHECK names the
// call, the op and its shapes; check_kernel_launch reports a kernel that failed to start. Not for
// cuDNN (cudnn_handles.hpp has LABPOSE_CUDNN_CHECK) and never used inside device code.
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

namespace labpose::cuda {

/// Throws a labpose::Error when `status` is not cudaSuccess: "CUDA failed in <context>: <call>:
/// <reason>", with a hint for out-of-memory and for errors left by earlier asynchronous work.
void check_cuda(cudaError_t status, std::string_view call, std::string_view context);

/// After a kernel launch: throws when the launch itself failed (bad configuration, no kernel image
/// for this GPU). Errors inside the kernel surface at the next synchronizing call.
void check_kernel_launch(const char* kernel);

}  // namespace labpose::cuda

/// LABPOSE_CUDA_CHECK(cudaMemcpyAsync(...), context): context says which op on which shapes.
#define LABPOSE_CUDA_CHECK(call, context) ::labpose::cuda::check_cuda((call), #call, (context))
