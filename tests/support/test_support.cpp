// Test helpers.
#include "tests/support/test_support.hpp"

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

namespace labpose::testing {
namespace fs = std::filesystem;

TempDir::TempDir() {
  std::random_device device;
  path_ = fs::temp_directory_path() /
          ("labpose-test-" + std::to_string(getpid()) + "-" + std::to_string(device()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  // Restore permissions a test may have removed, so the tree can be deleted. Links are left alone:
  // changing a link's permissions changes its target's, which may be a file outside the temp folder
  // (a project's videos are links to the user's videos); remove_all removes the link, not its
  // target.
  for (auto it = fs::recursive_directory_iterator(path_, ignored);
       it != fs::recursive_directory_iterator(); it.increment(ignored)) {
    if (it->is_symlink(ignored)) continue;
    fs::permissions(it->path(), fs::perms::owner_all,
                    fs::perm_options::add | fs::perm_options::nofollow, ignored);
  }
  fs::remove_all(path_, ignored);
}

SmallDisk::SmallDisk(std::size_t bytes) {
  const std::string options = "size=" + std::to_string(bytes) + ",mode=0755";
  if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    why_not_ = std::string("mount: ") + std::strerror(errno);
    return;
  }
  mounted_ = true;
}

SmallDisk::~SmallDisk() {
  if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
}

void SmallDisk::fill(std::size_t leave_free) {
  const fs::path filler = dir_.path() / ".filler";
  const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + filler.string());
  const std::vector<char> block(4096, 'x');
  std::size_t written = 0;
  for (;;) {
    const ssize_t n = ::write(fd, block.data(), block.size());
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  // tmpfs hands out whole pages: shrink the filler by whole pages.
  const std::size_t pages = (leave_free + 4095) / 4096;
  if (::ftruncate(fd, static_cast<off_t>(written > pages * 4096 ? written - pages * 4096 : 0)) != 0)
    throw std::runtime_error("cannot shrink " + filler.string());
  ::close(fd);
}

void SmallDisk::empty() {
  std::error_code ignored;
  fs::remove(dir_.path() / ".filler", ignored);
}

std::optional<fs::path> openfield_project() {
  const fs::path project = fs::path(LABPOSE_SHARED_DIR) / "data" / "openfield-Pranav-2018-10-30";
  std::error_code error;
  if (!fs::is_regular_file(project / "config.yaml", error)) return std::nullopt;
  return project;
}

fs::path copy_openfield_project(const fs::path& source, const fs::path& destination) {
  fs::path copy = destination / source.filename();
  fs::create_directories(copy);
  fs::copy(source / "config.yaml", copy / "config.yaml");
  fs::copy(source / "labeled-data", copy / "labeled-data", fs::copy_options::recursive);
  fs::create_directories(copy / "videos");
  return copy;
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

CommandResult run(const std::string& command_line) {
  CommandResult result;
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.output.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

CommandResult run_until_then_signal(const std::string& command_line, const std::string& ready,
                                    const std::string& signal) {
  // bash's `jobs -rp` lists the command only while it runs (kill -0 also succeeds on a zombie).
  const std::string script = "out=$(mktemp); ( " + command_line + " ) >\"$out\" 2>&1 & pid=$!; " +
                             "while [ -n \"$(jobs -rp)\" ] && ! { " + ready +
                             "; } >/dev/null 2>&1; do sleep 0.02; done; kill -" + signal +
                             " $pid 2>/dev/null; wait $pid; status=$?; cat \"$out\"; " +
                             "rm -f \"$out\"; echo \"labpose-test-exit $status\"";
  CommandResult result = run("bash -c " + shell_quote(script));
  const std::string marker = "labpose-test-exit ";
  const std::size_t at = result.output.rfind(marker);
  if (at == std::string::npos) return result;  // bash itself failed: exit_code says so
  result.exit_code = std::stoi(result.output.substr(at + marker.size()));
  result.output.erase(at);
  return result;
}

std::string labpose_binary() {
  return LABPOSE_BINARY;
}

CommandResult run_labpose(const std::string& arguments) {
  return run(shell_quote(labpose_binary()) + " " + arguments);
}

fs::path demo_project_from_cli(const fs::path& dir, int frames, int labeled_frames) {
  const CommandResult made =
      run_labpose("--quiet demo --project-only --dir " + shell_quote(dir.string()) + " --frames " +
                  std::to_string(frames) + " --labeled-frames " + std::to_string(labeled_frames));
  if (made.exit_code != 0) ADD_FAILURE() << "labpose demo failed: " << made.output;
  return made.output.substr(0, made.output.find('\n'));
}

std::optional<std::string> interop_python() {
  const char* configured = std::getenv("LABPOSE_TEST_PYTHON");
  const std::string python = configured != nullptr ? configured : "/usr/bin/python3";
  static std::optional<bool> available;
  if (!available) {
    available =
        run(shell_quote(python) + " -c 'import pandas, tables, ruamel.yaml, scipy'").exit_code == 0;
  }
  if (!*available) return std::nullopt;
  return python;
}

std::optional<std::string> torch_python() {
  const char* configured = std::getenv("LABPOSE_TEST_PYTHON");
  const std::string python = configured != nullptr ? configured : "/usr/bin/python3";
  static std::optional<bool> available;
  if (!available)
    available = run(shell_quote(python) + " -c 'import torch, torchvision'").exit_code == 0;
  if (!*available) return std::nullopt;
  return python;
}

fs::path python_scripts_dir() {
  return fs::path(LABPOSE_SOURCE_DIR) / "tests" / "python";
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

void set_yaml_values(const fs::path& path,
                     const std::vector<std::pair<std::string, std::string>>& values) {
  std::string text = "\n" + read_text(path);
  for (const auto& [key, value] : values) {
    const auto at = text.find("\n" + key + ":");
    if (at == std::string::npos) {
      ADD_FAILURE() << path << " has no key " << key;
      continue;
    }
    const auto end = text.find('\n', at + 1);
    text.replace(at + 1, end - at - 1, key + ": " + value);
  }
  write_text(path, text.substr(1));
}

ScopedEnvironment::ScopedEnvironment(const char* name, const char* value) : name_(name) {
  if (const char* old = std::getenv(name)) old_ = old;
  if (value == nullptr) {
    unsetenv(name);
  } else {
    setenv(name, value, 1);
  }
}

ScopedEnvironment::~ScopedEnvironment() {
  if (old_) {
    setenv(name_, old_->c_str(), 1);
  } else {
    unsetenv(name_);
  }
}

}  // namespace labpose::testing
