// Fuzz harness for the HDF5 label and track reader: the bytes are an .h5 file image
// (parse_table_hdf5, libhdf5's in-memory driver: no temp file per input). Any bytes give a Table or
// an Error, never a crash in labpose's code, a hang or an unbounded allocation; a label or track
// table that was read is written with write_table_hdf5 and read back to the same table; no HDF5
// object or file descriptor stays open. Not a fuzzer of libhdf5 itself, which reads out of bounds
// on some damaged metadata (hence read_table_hdf5's child process): each input runs first in a
// child, where a crash inside libhdf5 is recognised and skipped, and only an input that did not
// crash libhdf5 runs again in this process, where the sanitizers and libFuzzer's coverage see it.
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <hdf5.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "projects/child_process.hpp"
#include "projects/labels.hpp"
#include "projects/table.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>
#define LABPOSE_FUZZ_ASAN 1
#endif
#endif

namespace {
namespace fs = std::filesystem;
namespace projects = labpose::projects;

constexpr int kCrashInLibhdf5 = 87;  // the child's exit status for a crash inside libhdf5

bool names_libhdf5(const char* text) {
  return text != nullptr && std::strstr(text, "libhdf5");
}

// Whether the code running now was called by libhdf5 (labpose's code never is): the stack as
// backtrace() sees it, from a signal handler or a sanitizer's callback too.
bool libhdf5_on_the_stack() {
  void* frames[64];
  const int count = backtrace(frames, 64);
  for (int i = 0; i < count; ++i) {
    Dl_info where{};
    if (dladdr(frames[i], &where) != 0 && names_libhdf5(where.dli_fname)) return true;
  }
  return false;
}

#ifdef LABPOSE_FUZZ_ASAN
// In the child: an AddressSanitizer report from inside libhdf5 (its memcpy out of a heap block,
// through ASan's interceptor) is libhdf5's.
extern "C" void on_asan_report(const char*) {
  if (libhdf5_on_the_stack()) _exit(kCrashInLibhdf5);
}

// In the child: libhdf5 allocates what a damaged header says (4 GB for an object header seen here)
// before any check of ours; libFuzzer's malloc limit would count that as our finding. Installed
// before main, so that it runs before libFuzzer's own hook.
bool g_in_child = false;
extern "C" void on_malloc(const volatile void*, std::size_t size) {
  if (g_in_child && size >= (std::size_t{1} << 30) && libhdf5_on_the_stack())
    _exit(kCrashInLibhdf5);
}
extern "C" void on_free(const volatile void*) {}
const int g_malloc_hook = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif

// In the child: a SIGSEGV or SIGBUS with libhdf5 on the stack is libhdf5's, anything else ours
// (then the signal is raised again and kills the child, which the parent reports). backtrace()
// was called once before, so that it allocates nothing here.
extern "C" void on_crash_signal(int number) {
  if (libhdf5_on_the_stack()) _exit(kCrashInLibhdf5);
  signal(number, SIG_DFL);
  raise(number);
}

std::size_t open_descriptors() {
  std::size_t count = 0;
  if (DIR* folder = opendir("/proc/self/fd")) {
    while (readdir(folder) != nullptr) ++count;
    closedir(folder);
  }
  return count;
}

// Where the round trip writes, removed after each input: in memory where there is /dev/shm (the
// write's fsync costs nothing there), one name per process.
fs::path round_trip_file() {
  const fs::path folder = fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path();
  return folder / ("labpose-fuzz-round-trip-" + std::to_string(getpid()) + ".h5");
}

}  // namespace

#ifdef LABPOSE_FUZZ_ASAN
// Every input forks (below), and fork copies the page tables: a small quarantine keeps this
// process small (30 exec/s instead of 20 here). libhdf5 leaks on some of its error paths; not ours
// to fix.
extern "C" const char* __asan_default_options() {
  return "quarantine_size_mb=16:malloc_context_size=10";
}
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5\n";
}
extern "C" const char* __lsan_default_options() {
  return "print_suppressions=0";
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const fs::path name = "CollectedData_fuzz.h5";
  const std::size_t descriptors = open_descriptors();

  // 1. In a child: does libhdf5 survive these bytes?
  const projects::ChildResult trial = projects::run_in_child(
      [&] {
        if (std::getenv("LABPOSE_FUZZ_CHILD_STDERR") == nullptr) {
          const int null = open("/dev/null", O_WRONLY);
          if (null >= 0) dup2(null, STDERR_FILENO);
        }
        void* warm_up[1];
        backtrace(warm_up, 1);
        signal(SIGSEGV, on_crash_signal);
        signal(SIGBUS, on_crash_signal);
#ifdef LABPOSE_FUZZ_ASAN
        __asan_set_error_report_callback(on_asan_report);
        g_in_child = true;
#endif
        try {
          projects::parse_table_hdf5(bytes, name);
        } catch (const labpose::Error&) {
        }
        return std::string("survived");
      },
      std::chrono::seconds(8));  // libFuzzer's -timeout is 10 s
  if (trial.status == projects::ChildResult::Status::crashed &&
      trial.exit_code == kCrashInLibhdf5) {
    return 0;  // libhdf5's own bug: read_table_hdf5 turns it into an Error naming the file
  }
  if (trial.status != projects::ChildResult::Status::finished) {
    std::fprintf(stderr,
                 "the child crashed in labpose's code or hung (status %d, signal %d, exit %d); "
                 "run again with LABPOSE_FUZZ_CHILD_STDERR=1 to see its report\n",
                 static_cast<int>(trial.status), trial.signal, trial.exit_code);
    __builtin_trap();
  }

  // 2. The same bytes in this process: the sanitizers and coverage see the reader.
  projects::Table table;
  try {
    table = projects::parse_table_hdf5(bytes, name);
  } catch (const labpose::Error&) {
    table = {};
  }
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) __builtin_trap();  // an HDF5 id left open

  // 3. A label or track table (DeepLabCut's columns) is written and read back unchanged.
  bool keypoint_table = !table.columns.empty();
  try {
    if (keypoint_table) projects::keypoint_columns(table, name);
  } catch (const labpose::Error&) {
    keypoint_table = false;
  }
  if (keypoint_table) {
    const fs::path file = round_trip_file();
    projects::write_table_hdf5(table, file);
    const std::string written = labpose::read_file(file);
    fs::remove(file);
    if (!projects::same_table(table, projects::parse_table_hdf5(written, file))) __builtin_trap();
  }
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) __builtin_trap();
  if (open_descriptors() != descriptors) __builtin_trap();  // a pipe or file left open
  return 0;
}
