// The note is JSON so that it can grow. A lock file in the folder serializes writers (two `weights
// fetch` at once).
#include "pipeline/weights/weight_cache.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kSuffix = "-imagenet.safetensors";

fs::path note_file(const fs::path& weights_file) {
  fs::path note = weights_file;
  note += ".json";
  return note;
}

// An exclusive lock on <folder>/.lock for as long as it lives.
class FolderLock {
 public:
  explicit FolderLock(const fs::path& folder) {
    const fs::path file = folder / ".lock";
    descriptor_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (descriptor_ < 0) throw write_error(file, errno);
    while (::flock(descriptor_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int error = errno;
        ::close(descriptor_);
        throw Error(fmt::format("cannot lock {}: {}", file.string(), describe_errno(error)));
      }
    }
  }
  ~FolderLock() { ::close(descriptor_); }  // closing releases the lock
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int descriptor_ = -1;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The entry of `file` from its note, checked against the file's bytes.
CachedWeights checked_entry(const fs::path& file, const std::string& architecture) {
  CachedWeights entry;
  entry.architecture = architecture;
  entry.file = file;
  std::error_code error;
  entry.bytes = fs::file_size(file, error);
  const fs::path note = note_file(file);
  std::string bytes;
  try {
    const auto parsed = nlohmann::json::parse(read_file(note));
    entry.sha256 = parsed.at("sha256").get<std::string>();
    entry.source = parsed.value("source", "");
    entry.created = parsed.value("created", "");
    bytes = read_file(file);
  } catch (const nlohmann::json::exception&) {
    entry.problem = fmt::format("its note {} is damaged", note.string());
    return entry;
  } catch (const Error& problem) {
    entry.problem = problem.what();
    return entry;
  }
  if (sha256_hex(bytes) != entry.sha256) {
    entry.problem = fmt::format("{} differs from its checksum (damaged or changed since {})",
                                file.filename().string(), entry.created);
  }
  return entry;
}

}  // namespace

fs::path weights_cache_dir() {
  const char* own = std::getenv("LABPOSE_WEIGHTS_DIR");
  if (own != nullptr && *own != '\0') return own;
  const char* cache = std::getenv("XDG_CACHE_HOME");
  if (cache != nullptr && *cache == '/') return fs::path(cache) / "labpose" / "weights";
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') {
    throw Error(
        "cannot tell where the weights cache is: neither LABPOSE_WEIGHTS_DIR, "
        "XDG_CACHE_HOME nor HOME is set",
        "set LABPOSE_WEIGHTS_DIR to a folder for converted ImageNet weights");
  }
  return fs::path(home) / ".cache" / "labpose" / "weights";
}

fs::path cached_weights_file(const fs::path& folder, const std::string& architecture) {
  return folder / (architecture + std::string(kSuffix));
}

CachedWeights store_cached_weights(const fs::path& folder, const std::string& architecture,
                                   const nets::SafetensorsFile& weights,
                                   const std::string& source) {
  return store_cached_weights(folder, architecture, nets::view_of(weights), source);
}

CachedWeights store_cached_weights(const fs::path& folder, const std::string& architecture,
                                   const nets::SafetensorsView& weights,
                                   const std::string& source) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) throw write_error(folder, error.value());
  const FolderLock lock(folder);
  const fs::path file = cached_weights_file(folder, architecture);
  // The old note goes first: between the two renames the file has no note (absent, not wrong).
  fs::remove(note_file(file), error);
  // The file is written from the tensors where they lie, piece by piece, and hashed on the other
  // core while this one writes: no second copy of the weights in memory, and no second pass over
  // them. The tensors stay put until the end; the header, the one piece made on the way, is kept
  // here (declared before the hash, so the thread has stopped before it goes).
  std::string header;
  BackgroundSha256 hash;
  std::uintmax_t bytes = 0;
  write_pieces_atomically(file, [&](const PieceSink& sink) {
    nets::safetensors_pieces(weights, [&](std::string_view piece) {
      if (bytes == 0) {
        header = piece;
        piece = header;
      }
      hash.add(piece);
      bytes += piece.size();
      sink(piece);
    });
  });
  CachedWeights entry{architecture, file, hash.hex(), source, utc_now(), bytes, {}};
  const nlohmann::json note = {{"architecture", architecture},
                               {"sha256", entry.sha256},
                               {"source", source},
                               {"created", entry.created}};
  write_file_atomically(note_file(file), note.dump(2) + "\n");
  return entry;
}

std::vector<CachedWeights> list_cached_weights(const fs::path& folder) {
  std::vector<CachedWeights> entries;
  std::error_code error;
  if (!fs::is_directory(folder, error)) return entries;
  for (const auto& item : fs::directory_iterator(folder, error)) {
    const std::string name = item.path().filename().string();
    if (name.size() <= kSuffix.size() || !name.ends_with(kSuffix)) continue;
    entries.push_back(checked_entry(item.path(), name.substr(0, name.size() - kSuffix.size())));
  }
  std::sort(entries.begin(), entries.end(), [](const CachedWeights& a, const CachedWeights& b) {
    return a.architecture < b.architecture;
  });
  return entries;
}

std::optional<CachedWeights> find_cached_weights(const fs::path& folder,
                                                 const std::string& architecture) {
  const fs::path file = cached_weights_file(folder, architecture);
  std::error_code error;
  if (!fs::exists(file, error)) return std::nullopt;
  return checked_entry(file, architecture);
}

}  // namespace labpose::pipeline
