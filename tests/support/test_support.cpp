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
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>

#include "pipeline/synthetic/demo_project.hpp"
#include "pipeline/video/writer.hpp"

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

fs::path copy_demo_project(const fs::path& destination) {
  static const auto made = [] {
    auto dir = std::make_unique<TempDir>();  // removed when the test program ends
    pipeline::DemoProjectOptions options;
    options.dir = dir->path();
    options.video.frames = 60;
    options.labeled_frames = 10;
    const fs::path project = pipeline::create_demo_project(options).config.parent_path();
    return std::make_pair(std::move(dir), project);
  }();
  const fs::path copy = destination / made.second.filename();
  fs::copy(made.second, copy, fs::copy_options::recursive);
  return copy / "config.yaml";
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

void write_test_video(const fs::path& path, int frames, int width, int height) {
  pipeline::VideoWriter writer(path, {width, height, 25.0, "auto", 18});
  std::vector<std::uint8_t> frame(static_cast<std::size_t>(width) *
                                  static_cast<std::size_t>(height) * 3);
  for (int index = 0; index < frames; ++index) {
    const int cx = width / 4 + index * width / (2 * std::max(frames, 1)), cy = height / 2;
    for (int y = 0; y < height; ++y) {
      for (int x = 0; x < width; ++x) {
        const bool inside = (x - cx) * (x - cx) + (y - cy) * (y - cy) < (height / 6) * (height / 6);
        std::uint8_t* pixel =
            &frame[(static_cast<std::size_t>(y) * static_cast<std::size_t>(width) +
                    static_cast<std::size_t>(x)) *
                   3];
        pixel[0] = inside ? 220 : static_cast<std::uint8_t>(40 + (x * 7 + y * 3) % 50);
        pixel[1] = inside ? 200 : static_cast<std::uint8_t>(60 + (x * 5 + y * 11) % 40);
        pixel[2] = inside ? 180 : 70;
      }
    }
    writer.write_bgr(frame.data(), static_cast<std::size_t>(width) * 3);
  }
  writer.close();
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

void corrupt_avi_frames(const std::filesystem::path& path, const std::vector<int>& frames,
                        double from) {
  std::string bytes = read_text(path);
  const std::size_t movi = bytes.find("movi");
  if (movi == std::string::npos) throw std::runtime_error(path.string() + " is not an AVI file");
  std::size_t at = movi + 4;
  int frame = 0;
  while (at + 8 <= bytes.size()) {
    const std::string id = bytes.substr(at, 4);
    std::uint32_t size = 0;
    std::memcpy(&size, &bytes[at + 4], 4);
    if (id == "idx1") break;
    if (id == "00dc" || id == "00db") {
      if (std::find(frames.begin(), frames.end(), frame) != frames.end()) {
        for (auto i = static_cast<std::uint32_t>(size * from); i < size; ++i)
          bytes[at + 8 + i] = from == 0.0 ? '\0' : static_cast<char>(i * 37);
      }
      ++frame;
    }
    at += 8 + size + (size & 1);
  }
  write_text(path, bytes);
}

}  // namespace labpose::testing
