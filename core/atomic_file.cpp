// AtomicFile: temp file + fsync + rename + directory fsync, and the removal of temp files that
// killed processes left behind. Not a lock (see the header).
#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>  // kill(pid, 0): is the writer alive
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose {
namespace fs = std::filesystem;
namespace {

std::atomic<unsigned> g_counter{0};

fs::path folder_of(const fs::path& file) {
  return file.has_parent_path() ? file.parent_path() : fs::path(".");
}

// Temp entries are named .<target>.tmp-<host>-<pid>-<n>: the host (a hash of its name) because a
// project on a network share is written from several machines, where a process id says nothing.
std::string host_tag() {
  static const std::string tag = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0) return std::string("local");
    std::uint32_t hash = 2166136261u;  // FNV-1a
    for (const char* c = name; *c != '\0'; ++c)
      hash = (hash ^ static_cast<unsigned char>(*c)) * 16777619u;
    return fmt::format("{:08x}", hash);
  }();
  return tag;
}

// The process id of a temp entry's name (".<name>.tmp-<host>-<pid>-<n>"), when it was made on this
// machine; names as an older labpose wrote them (".<name>.tmp-<pid>-<n>") count as this machine's.
std::optional<long> local_writer(std::string_view name) {
  const std::size_t marker = name.rfind(".tmp-");
  if (!name.starts_with('.') || marker == std::string_view::npos) return std::nullopt;
  std::string_view suffix = name.substr(marker + 5);
  const std::string host = host_tag() + "-";
  if (suffix.starts_with(host)) {
    suffix.remove_prefix(host.size());
  } else if (suffix.find('-') != suffix.rfind('-')) {
    return std::nullopt;  // another machine's
  }
  const std::size_t dash = suffix.find('-');
  if (dash == 0 || dash == std::string_view::npos || dash + 1 == suffix.size()) return std::nullopt;
  long pid = 0;
  for (const char c : suffix.substr(0, dash)) {
    if (c < '0' || c > '9' || pid > 100000000) return std::nullopt;
    pid = pid * 10 + (c - '0');
  }
  for (const char c : suffix.substr(dash + 1))
    if (c < '0' || c > '9') return std::nullopt;
  return pid;
}

void fsync_path(const fs::path& path, bool directory, const fs::path& target) {
  const int fd = ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
  if (fd < 0) throw write_error(target, errno);
  const int result = ::fsync(fd);
  const int saved = errno;
  ::close(fd);
  // Some file systems (and /proc-like mounts) do not support fsync on directories: not an error.
  if (result != 0 && !(directory && (saved == EINVAL || saved == EROFS)))
    throw write_error(target, saved);
}

}  // namespace

Error write_error(const fs::path& target, int error_number) {
  if (error_number == EFBIG) {
    return Error(fmt::format("cannot write {}: the file would be larger than the file system or "
                             "the file size limit (ulimit -f) allows",
                             target.string()),
                 "the previous file is unchanged");
  }
  std::string hint = "the previous file is unchanged";
  if (error_number == EACCES || error_number == EPERM || error_number == EROFS) {
    hint = fmt::format(
        "check that you may write to the folder {} (ls -ld), or work on a copy of the "
        "project in a folder you own",
        folder_of(target).string());
  } else if (error_number == ENOSPC || error_number == EDQUOT) {
    hint = fmt::format(
        "free some space there (df -h {}) and run the command again; the previous file is "
        "unchanged",
        folder_of(target).string());
  }
  return Error(
      fmt::format("cannot write {}: {}", target.string(), describe_errno(error_number, target)),
      hint);
}

fs::path temp_name_for(const fs::path& target) {
  return folder_of(target) / fmt::format(".{}.tmp-{}-{}-{}", target.filename().string(), host_tag(),
                                         ::getpid(), g_counter++);
}

void remove_stale_temps(const fs::path& folder) {
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::optional<long> pid = local_writer(it->path().filename().string());
    if (!pid || *pid == ::getpid()) continue;
    // A process that still runs (or that we may not signal) may still be writing it.
    if (::kill(static_cast<pid_t>(*pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

std::string describe_errno(int error_number, const fs::path& file) {
  if (error_number == ENOSPC) return fmt::format("no space left on {}", folder_of(file).string());
  if (error_number == EDQUOT)
    return fmt::format("your disk quota is used up on {}", folder_of(file).string());
  if (error_number == EIO)
    return fmt::format("input/output error on {} (the disk or network share failed)",
                       folder_of(file).string());
  return describe_errno(error_number);
}

std::string describe_errno(int error_number) {
  switch (error_number) {
    case ENOENT:
      return "no such file or folder";
    case EACCES:
      return "permission denied";
    case EPERM:
      return "operation not permitted";
    case EROFS:
      return "the file system is read-only";
    case ENOSPC:
      return "no space left on the device";
    case EDQUOT:
      return "disk quota exceeded";
    case EISDIR:
      return "it is a folder, not a file";
    case ENOTDIR:
      return "a part of the path is not a folder";
    default:
      return std::strerror(error_number);
  }
}

AtomicFile::AtomicFile(fs::path target) : target_(std::move(target)) {
  const fs::path folder = folder_of(target_);
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw Error(fmt::format("cannot write {}: the folder {} does not exist", target_.string(),
                            folder.string()),
                "create the folder first or check the path for typos");
  }
  if (fs::is_directory(target_, error)) throw write_error(target_, EISDIR);
  remove_stale_temps(folder);
  temp_ = temp_name_for(target_);
  mode_t mode = 0666;  // umask applies, as for any new file
  struct stat existing {};
  if (::stat(target_.c_str(), &existing) == 0) mode = existing.st_mode & 07777;  // keep permissions
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw write_error(target_, errno);
  ::close(fd);
}

AtomicFile::~AtomicFile() {
  if (!committed_) {
    std::error_code ignored;
    fs::remove(temp_, ignored);
  }
}

void AtomicFile::commit() {
  LABPOSE_ASSERT(!committed_);
  fsync_path(temp_, false, target_);
  if (::rename(temp_.c_str(), target_.c_str()) != 0) throw write_error(target_, errno);
  committed_ = true;
  fsync_path(folder_of(target_), true, target_);
}

void write_pieces_atomically(const fs::path& target,
                             const std::function<void(const PieceSink&)>& produce) {
  AtomicFile file(target);
  const int fd = ::open(file.temp_path().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) throw write_error(target, errno);
  try {
    produce([&](std::string_view piece) {
      std::size_t written = 0;
      while (written < piece.size()) {
        const ssize_t n = ::write(fd, piece.data() + written, piece.size() - written);
        if (n < 0) {
          if (errno == EINTR) continue;
          throw write_error(target, errno);
        }
        written += static_cast<std::size_t>(n);
      }
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw write_error(target, errno);
  file.commit();
}

void write_file_atomically(const fs::path& target, std::string_view contents) {
  write_pieces_atomically(target, [&](const PieceSink& sink) { sink(contents); });
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int saved = errno;
    std::error_code error;
    if (fs::is_directory(path, error)) {
      throw Error(fmt::format("cannot read {}: it is a folder, not a file", path.string()));
    }
    throw Error(
        fmt::format("cannot read {}: {}", path.string(), describe_errno(saved ? saved : ENOENT)));
  }
  // One read into a string of the file's size (a stream buffer would copy the bytes twice and
  // grow step by step: seconds for a 100 MB checkpoint). A file that grows or shrinks meanwhile
  // is read as it is at the end.
  std::string bytes;
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (!error && size > 0) {
    bytes.resize(static_cast<std::size_t>(size));
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (!in.eof() && !in.bad()) {
    char more[65536];
    while (in.read(more, sizeof more) || in.gcount() > 0) {
      bytes.append(more, static_cast<std::size_t>(in.gcount()));
      if (in.eof()) break;
    }
  }
  if (in.bad()) throw Error(fmt::format("cannot read {}: read error", path.string()));
  return bytes;
}

void create_folder(const fs::path& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    throw Error(fmt::format("cannot create the folder {}: {}", folder.string(), error.message()),
                "check that you may write to its parent folder and that the disk is not full");
  }
}

fs::path keep_backup(const fs::path& file) {
  fs::path backup = file;
  backup += ".bak";
  // Not fs::copy_file: libstdc++ reports a full disk during its copy as "input/output error".
  write_file_atomically(backup, read_file(file));
  return backup;
}

}  // namespace labpose
