// The CUDA row of the backend registry (devices/registry.cpp): NVIDIA GPUs named cuda and cuda:N,
// usable when the driver, the GPU's compute capability and this build's CUDA runtime agree. Not the
// table itself and not device choice (devices/devices.hpp).
#pragma once

#include "nets/backend_kind.hpp"

namespace labpose::cuda {

/// The registry's row for this build's CUDA backend.
nets::BackendKind backend_kind();

}  // namespace labpose::cuda
