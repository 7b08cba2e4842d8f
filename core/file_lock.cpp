// Open-file-description locks: the whole file, exclusive, released by closing the descriptor.
#include "core/file_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose {
namespace {

struct flock whole_file() {
  struct flock region {};
  region.l_type = F_WRLCK;
  region.l_whence = SEEK_SET;
  region.l_start = 0;
  region.l_len = 0;  // to the end, however long
  region.l_pid = 0;  // required by F_OFD_*
  return region;
}

}  // namespace

int FileLock::open_lock_file(const std::filesystem::path& file) {
  const int descriptor = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (descriptor < 0) {
    const int error = errno;
    throw Error(
        fmt::format("cannot open the lock file {}: {}", file.string(), describe_errno(error, file)),
        "check that you may write to its folder");
  }
  return descriptor;
}

FileLock FileLock::wait_for(const std::filesystem::path& file) {
  const int descriptor = open_lock_file(file);
  struct flock region = whole_file();
  while (::fcntl(descriptor, F_OFD_SETLKW, &region) != 0) {
    const int error = errno;
    if (error == EINTR) continue;
    ::close(descriptor);
    throw Error(fmt::format("cannot lock {}: {}", file.string(), describe_errno(error)),
                "the file system may not support locks (on NFS, check that the lock service "
                "runs)");
  }
  return FileLock(descriptor);
}

std::optional<FileLock> FileLock::try_take(const std::filesystem::path& file) {
  const int descriptor = open_lock_file(file);
  struct flock region = whole_file();
  if (::fcntl(descriptor, F_OFD_SETLK, &region) == 0) return FileLock(descriptor);
  const int error = errno;
  ::close(descriptor);
  if (error == EAGAIN || error == EACCES) return std::nullopt;
  throw Error(fmt::format("cannot lock {}: {}", file.string(), describe_errno(error)),
              "the file system may not support locks (on NFS, check that the lock service runs)");
}

FileLock::FileLock(FileLock&& other) noexcept : descriptor_(std::exchange(other.descriptor_, -1)) {}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (descriptor_ >= 0) ::close(descriptor_);
    descriptor_ = std::exchange(other.descriptor_, -1);
  }
  return *this;
}

FileLock::~FileLock() {
  if (descriptor_ >= 0) ::close(descriptor_);
}

}  // namespace labpose
