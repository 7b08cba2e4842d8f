// make_nccl_communicator() of a build without NCCL: GPU ranks cannot exchange gradients.
#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/nccl_communicator.hpp"

namespace labpose::cuda {

std::unique_ptr<nets::Communicator> make_nccl_communicator(nets::Communicator& host,
                                                           nets::Backend& backend) {
  static_cast<void>(backend);
  throw Error(fmt::format("rank {}: this build of labpose has no NCCL, which GPU ranks need to "
                          "exchange gradients",
                          host.rank()),
              "build labpose where NCCL is installed (it comes with NVIDIA's CUDA packages), or "
              "train the ranks on the CPU (--device cpu)");
}

}  // namespace labpose::cuda
