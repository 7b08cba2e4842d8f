// NCCL as labpose reaches it: the functions GPU ranks of a data-parallel job call, filled from
// libnccl.so.<major> when such a job starts, so that nothing else needs NCCL installed. Built only
// where CMake finds nccl.h; not the communicator itself (nccl_communicator.hpp).
#pragma once

#include <nccl.h>

#include <string>
#include <vector>

namespace labpose::cuda {

// Every NCCL function labpose calls, without its "nccl" prefix: X(AllReduce) is ncclAllReduce.
#define LABPOSE_NCCL_FUNCTIONS(X) \
  X(GetVersion)                   \
  X(GetErrorString)               \
  X(GetUniqueId)                  \
  X(CommInitRank)                 \
  X(CommDestroy)                  \
  X(AllReduce)

/// The functions, each with NCCL's own signature: nccl().AllReduce(...).
struct NcclApi {
#define LABPOSE_NCCL_SLOT(name) decltype(&nccl##name) name = nullptr;
  LABPOSE_NCCL_FUNCTIONS(LABPOSE_NCCL_SLOT)
#undef LABPOSE_NCCL_SLOT
};

/// What opening NCCL gave: the table, or why there is none.
struct NcclLibrary {
  NcclApi api;
  std::string path;     // the file opened
  int version = 0;      // ncclGetVersion(), e.g. 22809 for 2.28.9
  std::string problem;  // "" when api is complete and of this build's major version
  bool usable() const { return problem.empty(); }
};

/// LABPOSE_NCCL_LIBRARY alone when it is set; else libnccl.so.<major> as the dynamic linker
/// finds it, then the library this build was compiled against.
std::vector<std::string> nccl_candidates();

/// Opens the first candidate that loads; checks its major version and its functions.
NcclLibrary open_nccl(const std::vector<std::string>& candidates);

/// The process's NCCL functions, opened at the first call; throws a labpose::Error saying why NCCL
/// cannot be used.
const NcclApi& nccl();

}  // namespace labpose::cuda
