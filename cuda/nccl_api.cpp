// Opening NCCL and checking its version.
#include "cuda/nccl_api.hpp"

#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/shared_library.hpp"

namespace labpose::cuda {
namespace {

std::string soname() {
  return fmt::format("libnccl.so.{}", NCCL_MAJOR);
}

// NCCL numbers its versions X*10000 + Y*100 + Z since 2.9, X*1000 + Y*100 + Z before.
int major_of(int version) {
  return version >= 10000 ? version / 10000 : version / 1000;
}

std::string version_text(int version) {
  return fmt::format("{}.{}.{}", major_of(version), version / 100 % 100, version % 100);
}

}  // namespace

std::vector<std::string> nccl_candidates() {
#ifdef LABPOSE_NCCL_BUILD_DIRECTORY
  return library_candidates("LABPOSE_NCCL_LIBRARY", soname(), LABPOSE_NCCL_BUILD_DIRECTORY);
#else
  return library_candidates("LABPOSE_NCCL_LIBRARY", soname(), nullptr);
#endif
}

NcclLibrary open_nccl(const std::vector<std::string>& candidates) {
  NcclLibrary opened;
  std::vector<SymbolSlot> slots;
#define LABPOSE_NCCL_ENTRY(name) \
  slots.push_back({"nccl" #name, reinterpret_cast<void**>(&opened.api.name)});
  LABPOSE_NCCL_FUNCTIONS(LABPOSE_NCCL_ENTRY)
#undef LABPOSE_NCCL_ENTRY
  const BoundLibrary bound = open_and_bind(candidates, "NCCL", slots);
  opened.path = bound.path;
  if (!bound.opened) {
    opened.problem = bound.problem;
  } else if (opened.api.GetVersion == nullptr) {
    opened.problem = fmt::format("{} is not NCCL: it has no ncclGetVersion", opened.path);
  } else if (opened.api.GetVersion(&opened.version); major_of(opened.version) != NCCL_MAJOR) {
    opened.problem = fmt::format("{} is NCCL {}, but labpose was built with NCCL {}", opened.path,
                                 version_text(opened.version), NCCL_MAJOR);
  } else if (!bound.missing.empty()) {
    opened.problem =
        fmt::format("{} (NCCL {}) has no {}, which labpose (built with NCCL {}) calls", opened.path,
                    version_text(opened.version), bound.missing, version_text(NCCL_VERSION_CODE));
  }
  if (!opened.problem.empty()) opened.api = NcclApi{};
  return opened;
}

const NcclApi& nccl() {
  static const NcclLibrary library = open_nccl(nccl_candidates());
  if (!library.usable()) {
    throw Error(library.problem,
                fmt::format("GPU ranks exchange gradients with NCCL {}: install it (NVIDIA's "
                            "package libnccl2) or point LABPOSE_NCCL_LIBRARY at its {}; or train "
                            "the ranks on the CPU (--device cpu)",
                            NCCL_MAJOR, soname()));
  }
  return library.api;
}

}  // namespace labpose::cuda
