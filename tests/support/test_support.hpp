// Shared helpers for the test suites: temp folders, the reference DeepLabCut project in
// ../shared/data (tests skip with a message when it is absent), running programs, Python + pandas.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace labpose::testing {

/// A fresh folder under the system temp dir, removed with everything in it at scope exit.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

/// A small file system (tmpfs of a given size) mounted on a fresh temp folder, to try what a full
/// disk does; unmounted at scope exit. Mounting needs root (or CAP_SYS_ADMIN): where it is not
/// allowed, mounted() is false and why_not() says why (the test skips with it).
class SmallDisk {
 public:
  explicit SmallDisk(std::size_t bytes);
  ~SmallDisk();
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& why_not() const { return why_not_; }
  const std::filesystem::path& path() const { return dir_.path(); }
  std::filesystem::path operator/(const std::string& name) const { return dir_.path() / name; }
  /// Fills the disk with a file of its own until nothing is left, then frees `leave_free` bytes.
  void fill(std::size_t leave_free = 0);
  /// Removes the filling.
  void empty();

 private:
  TempDir dir_;
  bool mounted_ = false;
  std::string why_not_;
};

/// ../shared/data/openfield-Pranav-2018-10-30, or nullopt when ../shared is not beside the
/// checkout.
std::optional<std::filesystem::path> openfield_project();

/// Copies the reference project (without its video) into `destination` and returns the copy's path.
std::filesystem::path copy_openfield_project(const std::filesystem::path& source,
                                             const std::filesystem::path& destination);

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
/// Runs a shell command line and captures what it prints.
CommandResult run(const std::string& command_line);
/// Starts `command_line` in the background, waits until the shell condition `ready` holds (as
/// long as the command runs: no fixed time, a loaded machine only makes it slower), then sends the
/// command `signal` (INT, TERM, KILL) and waits for it to end. `ready` may read what the command
/// has printed so far in the file "$out", e.g. `grep -q token= "$out"`. exit_code is the command's
/// own (130 after an unhandled SIGINT, 137 after SIGKILL); a command that ends before `ready` holds
/// is not signalled.
CommandResult run_until_then_signal(const std::string& command_line, const std::string& ready,
                                    const std::string& signal);
/// Quotes a path or word for the shell.
std::string shell_quote(const std::string& text);

/// The labpose binary built with the tests.
std::string labpose_binary();
/// Runs `labpose <arguments>` (arguments quoted by the caller).
CommandResult run_labpose(const std::string& arguments);

/// The CLI tests' demo project: `labpose demo --project-only` in `dir` with a `frames`-frame
/// synthetic video and `labeled_frames` labeled frames. Returns its config.yaml; the test fails
/// (ADD_FAILURE) when the command does.
std::filesystem::path demo_project_from_cli(const std::filesystem::path& dir, int frames = 60,
                                            int labeled_frames = 8);

/// A Python interpreter with pandas, PyTables, ruamel.yaml and SciPy (Debian's /usr/bin/python3 by
/// default, or LABPOSE_TEST_PYTHON), or nullopt when there is none.
std::optional<std::string> interop_python();
/// Debian's python3 with torch and torchvision (for the whole-model checks against PyTorch), or
/// nullopt.
std::optional<std::string> torch_python();

/// The tests/python folder of the source tree.
std::filesystem::path python_scripts_dir();

/// True when `part` occurs in `text` (error messages and command output in assertions).
inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string read_text(const std::filesystem::path& path);
void write_text(const std::filesystem::path& path, const std::string& text);
/// Rewrites the top-level `key: value` lines of a YAML file (a pose_cfg.yaml) with `values`, in
/// place; a key the file lacks fails the test.
void set_yaml_values(const std::filesystem::path& path,
                     const std::vector<std::pair<std::string, std::string>>& values);

/// The message of the labpose::Error that `call` throws, with "\nhint: <hint>" when it has one;
/// "" when it throws none (assertions on what a user would read).
template <typename Call>
std::string error_text(Call&& call) {
  try {
    std::forward<Call>(call)();
  } catch (const Error& error) {
    const std::string hint = error.hint();
    return std::string(error.what()) + (hint.empty() ? "" : "\nhint: " + hint);
  }
  return "";
}

/// Sets an environment variable (or unsets it, for nullptr) for the scope, then restores it.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value);
  ~ScopedEnvironment();
  ScopedEnvironment(const ScopedEnvironment&) = delete;
  ScopedEnvironment& operator=(const ScopedEnvironment&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace labpose::testing

// NOLINTBEGIN(bugprone-macro-parentheses): `name` is a variable these macros declare, not an
// expression.

/// Declares a SmallDisk `name` of `bytes` and skips the test (with the reason) when it cannot be
/// mounted.
#define LABPOSE_REQUIRE_SMALL_DISK(name, bytes)                           \
  ::labpose::testing::SmallDisk name(bytes);                              \
  if (!name.mounted())                                                    \
  GTEST_SKIP() << "cannot mount a small disk to fill (" << name.why_not() \
               << "); this test needs root, as in CI"

/// Skips the test (with the reason) unless the reference project exists; binds its path to `name`.
#define LABPOSE_REQUIRE_OPENFIELD(name)                                                \
  const auto name##_optional = ::labpose::testing::openfield_project();                \
  if (!name##_optional)                                                                \
    GTEST_SKIP() << "../shared/data/openfield-Pranav-2018-10-30 is not present; this " \
                    "test needs the reference DeepLabCut project";                     \
  const std::filesystem::path& name = *name##_optional

/// Skips the test unless that Python is available (fails instead when
/// LABPOSE_REQUIRE_INTEROP_PYTHON=1).
#define LABPOSE_REQUIRE_INTEROP_PYTHON(name)                                                 \
  const auto name##_optional = ::labpose::testing::interop_python();                         \
  if (!name##_optional) {                                                                    \
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)                            \
      FAIL() << "python3 with pandas, PyTables, ruamel.yaml and SciPy is required "          \
                "(LABPOSE_REQUIRE_INTEROP_PYTHON is set)";                                   \
    GTEST_SKIP() << "python3 with pandas, PyTables, ruamel.yaml and SciPy is not installed " \
                    "(tools/install-deps.sh --tests installs them)";                         \
  }                                                                                          \
  const std::string& name = *name##_optional

/// Skips unless python3 with torch and torchvision is available (fails when
/// LABPOSE_REQUIRE_INTEROP_PYTHON=1).
#define LABPOSE_REQUIRE_TORCH(name)                                                               \
  const auto name##_optional = ::labpose::testing::torch_python();                                \
  if (!name##_optional) {                                                                         \
    if (std::getenv("LABPOSE_REQUIRE_INTEROP_PYTHON") != nullptr)                                 \
      FAIL() << "python3 with torch is required";                                                 \
    GTEST_SKIP()                                                                                  \
        << "python3 with torch and torchvision is not installed (tools/install-deps.sh --tests)"; \
  }                                                                                               \
  const std::string& name = *name##_optional
// NOLINTEND(bugprone-macro-parentheses)
