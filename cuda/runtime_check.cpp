// CUDA runtime error conversion.
#include "cuda/runtime_check.hpp"

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::cuda {
namespace {

// "cudaMemcpyAsync(dst, src, ...)" -> "cudaMemcpyAsync": the arguments are noise in a user's error.
std::string_view function_name(std::string_view call) {
  const auto paren = call.find('(');
  return paren == std::string_view::npos ? call : call.substr(0, paren);
}

}  // namespace

void check_cuda(cudaError_t status, std::string_view call, std::string_view context) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  std::string hint;
  if (status == cudaErrorMemoryAllocation) {
    hint =
        "the GPU is out of memory: use a smaller batch size or image size, or stop other "
        "programs using this GPU (see nvidia-smi)";
  } else if (status == cudaErrorIllegalAddress || status == cudaErrorLaunchFailure) {
    hint =
        "an earlier GPU operation failed; run again with CUDA_LAUNCH_BLOCKING=1 to see which, "
        "and please report it with the output of `labpose doctor`";
  } else if (status == cudaErrorNoKernelImageForDevice) {
    hint =
        "this build of labpose has no code for this GPU; rebuild with "
        "-DCMAKE_CUDA_ARCHITECTURES set to include it";
  } else {
    hint = "please report it with the output of `labpose doctor`";
  }
  throw Error(fmt::format("CUDA failed in {}: {}: {} ({})", context, function_name(call),
                          cudaGetErrorString(status), cudaGetErrorName(status)),
              hint);
}

void check_kernel_launch(const char* kernel) {
  check_cuda(cudaGetLastError(), "launching a kernel", fmt::format("{}_kernel", kernel));
}

}  // namespace labpose::cuda
