// A shared library opened at run time (dlopen) rather than at program start: how the CUDA backend
// reaches cuDNN and NCCL, so that one build of labpose starts on machines without them and says why
// it cannot use the GPU. Only the opening and the symbol lookup; what each library must offer is in
// cudnn_api.hpp and nccl_api.hpp.
#pragma once

#include <string>
#include <vector>

namespace labpose::cuda {

/// An open shared library; closing it leaves the code mapped (RTLD_NODELETE), as cuDNN and NCCL
/// keep threads and handlers of their own.
class SharedLibrary {
 public:
  SharedLibrary() = default;
  /// Opens the first of `candidates` (file names, searched as the dynamic linker does, or paths)
  /// that loads. On failure the library stays closed and `error` says what each candidate gave.
  static SharedLibrary open(const std::vector<std::string>& candidates, std::string& error);
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  bool is_open() const { return handle_ != nullptr; }
  /// The file the loader opened (after the search), for reports.
  const std::string& path() const { return path_; }
  /// The symbol's address, or nullptr where the library lacks it.
  void* symbol(const char* name) const;

 private:
  void* handle_ = nullptr;
  std::string path_;
};

/// Where a run-time library is looked for: the value of `environment_variable` alone when it is
/// set (a path or a file name); else `soname` as the dynamic linker finds it (LD_LIBRARY_PATH,
/// ld.so.conf), then in `build_directory`, where the build found it (nullptr: nowhere).
std::vector<std::string> library_candidates(const char* environment_variable,
                                            const std::string& soname, const char* build_directory);

/// One function pointer of an API table and the symbol that fills it.
struct SymbolSlot {
  const char* name;
  void** slot;
};

/// What opening a library and filling an API table from it gave.
struct BoundLibrary {
  bool opened = false;
  std::string path;     // the file opened
  std::string missing;  // the first symbol the library lacks ("" when every slot is filled)
  std::string problem;  // where none opened: "<what> could not be loaded (<the loader's words>)"
};

/// Opens the first of `candidates` that loads (`what` names it in the problem, e.g. "cuDNN") and
/// fills `slots` in order, stopping at the first symbol it lacks. The code stays mapped.
BoundLibrary open_and_bind(const std::vector<std::string>& candidates, const char* what,
                           const std::vector<SymbolSlot>& slots);

}  // namespace labpose::cuda
