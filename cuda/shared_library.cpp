// dlopen, dlinfo and dlsym behind SharedLibrary.
#include "cuda/shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <utility>

namespace labpose::cuda {

SharedLibrary SharedLibrary::open(const std::vector<std::string>& candidates, std::string& error) {
  SharedLibrary library;
  error.clear();
  for (const std::string& candidate : candidates) {
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char* reason = dlerror();
      if (!error.empty()) error += "; ";
      error += reason != nullptr ? reason : candidate + ": cannot be opened";
      continue;
    }
    library.handle_ = handle;
    library.path_ = candidate;
    // Name the file the search found, not the name it searched for.
    const link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
        map->l_name[0] != '\0') {
      library.path_ = map->l_name;
    }
    error.clear();
    break;
  }
  return library;
}

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

void* SharedLibrary::symbol(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

std::vector<std::string> library_candidates(const char* environment_variable,
                                            const std::string& soname,
                                            const char* build_directory) {
  if (const char* chosen = std::getenv(environment_variable);
      chosen != nullptr && chosen[0] != '\0') {
    return {chosen};
  }
  std::vector<std::string> candidates = {soname};
  if (build_directory != nullptr) candidates.push_back(std::string(build_directory) + "/" + soname);
  return candidates;
}

BoundLibrary open_and_bind(const std::vector<std::string>& candidates, const char* what,
                           const std::vector<SymbolSlot>& slots) {
  BoundLibrary bound;
  std::string error;
  const SharedLibrary library = SharedLibrary::open(candidates, error);
  if (!library.is_open()) {
    bound.problem = std::string(what) + " could not be loaded (" + error + ")";
    return bound;
  }
  bound.opened = true;
  bound.path = library.path();
  for (const SymbolSlot& entry : slots) {
    *entry.slot = library.symbol(entry.name);
    if (*entry.slot == nullptr) {
      bound.missing = entry.name;
      break;
    }
  }
  return bound;
}

}  // namespace labpose::cuda
