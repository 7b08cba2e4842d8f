// Opening cuDNN and checking that it pairs with this build.
#include "cuda/cudnn_api.hpp"

#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/device_query.hpp"
#include "cuda/shared_library.hpp"

namespace labpose::cuda {
namespace {

constexpr int kCudaMajor = CUDART_VERSION / 1000;

std::string soname() {
  return fmt::format("libcudnn.so.{}", CUDNN_MAJOR);
}

std::string install_hint() {
  return fmt::format(
      "install cuDNN {} for CUDA {} (NVIDIA's package cudnn{}-cuda-{}), or point "
      "LABPOSE_CUDNN_LIBRARY at its {}; --device cpu works meanwhile",
      CUDNN_MAJOR, kCudaMajor, CUDNN_MAJOR, kCudaMajor, soname());
}

std::string version_problem(const std::string& path, std::size_t version, std::size_t cudart) {
  const std::size_t major = version / 10000;
  if (major != static_cast<std::size_t>(CUDNN_MAJOR)) {
    return fmt::format("{} is cuDNN {}, but labpose was built with cuDNN {}", path,
                       cudnn_version_text(version), CUDNN_MAJOR);
  }
  if (cudart / 1000 != static_cast<std::size_t>(kCudaMajor)) {
    return fmt::format("{} is cuDNN {} built for CUDA {}, but labpose was built with CUDA {}", path,
                       cudnn_version_text(version), cudart / 1000, kCudaMajor);
  }
  return {};
}

}  // namespace

std::vector<std::string> cudnn_candidates() {
#ifdef LABPOSE_CUDNN_BUILD_DIRECTORY
  return library_candidates("LABPOSE_CUDNN_LIBRARY", soname(), LABPOSE_CUDNN_BUILD_DIRECTORY);
#else
  return library_candidates("LABPOSE_CUDNN_LIBRARY", soname(), nullptr);
#endif
}

CudnnLibrary open_cudnn(const std::vector<std::string>& candidates) {
  CudnnLibrary opened;
  std::vector<SymbolSlot> slots;
#define LABPOSE_CUDNN_ENTRY(name) \
  slots.push_back({"cudnn" #name, reinterpret_cast<void**>(&opened.api.name)});
  LABPOSE_CUDNN_FUNCTIONS(LABPOSE_CUDNN_ENTRY)
#undef LABPOSE_CUDNN_ENTRY
  const BoundLibrary bound = open_and_bind(candidates, "cuDNN", slots);
  opened.path = bound.path;
  // GetVersion and GetCudartVersion come first in the table and exist in every cuDNN since 7: an
  // old cuDNN lacks functions, and its version says why.
  if (!bound.opened) {
    opened.problem = bound.problem;
  } else if (opened.api.GetVersion == nullptr || opened.api.GetCudartVersion == nullptr) {
    opened.problem = fmt::format("{} is not cuDNN: it has no {}", opened.path, bound.missing);
  } else {
    opened.version = opened.api.GetVersion();
    opened.problem = version_problem(opened.path, opened.version, opened.api.GetCudartVersion());
    if (opened.problem.empty() && !bound.missing.empty()) {
      opened.problem = fmt::format(
          "{} (cuDNN {}) has no {}, which labpose (built with cuDNN {}) calls", opened.path,
          cudnn_version_text(opened.version), bound.missing, cudnn_version_text(CUDNN_VERSION));
    }
  }
  if (!opened.problem.empty()) opened.api = CudnnApi{};
  return opened;
}

const CudnnLibrary& cudnn_library() {
  static const CudnnLibrary library = open_cudnn(cudnn_candidates());
  return library;
}

const CudnnApi& cudnn() {
  const CudnnLibrary& library = cudnn_library();
  if (!library.usable()) throw Error(library.problem, install_hint());
  return library.api;
}

}  // namespace labpose::cuda
