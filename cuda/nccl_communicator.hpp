// The communicator of GPU ranks: gradient means with NCCL on the GPU's memory, on a stream of its
// own that waits for backward to have written each bucket and that the backend's stream waits for
// in turn, so neither the host nor the GPU stops for it; NCCL's id goes from rank 0 to the others
// over the host communicator (MPI), which also does the small host exchanges. nccl_communicator.cpp
// where CMake finds NCCL, else nccl_missing.cpp, whose communicator says so. Not device choice
// (devices/world.hpp).
#pragma once

#include <memory>

#include "nets/backend.hpp"
#include "nets/communicator.hpp"

namespace labpose::cuda {

/// A communicator over the GPUs of `host`'s ranks, for gradients on `backend` (a CudaBackend); both
/// must outlive it. Collective: every rank of `host` calls it. Throws a labpose::Error saying why
/// NCCL cannot start.
std::unique_ptr<nets::Communicator> make_nccl_communicator(nets::Communicator& host,
                                                           nets::Backend& backend);

}  // namespace labpose::cuda
