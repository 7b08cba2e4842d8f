#include "core/file_identity.hpp"

#include <sys/stat.h>

#include <fmt/core.h>

#include <cerrno>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose {
namespace {

std::int64_t nanoseconds(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

}  // namespace

FileIdentity file_identity(const std::filesystem::path& file) {
  FileIdentity identity;
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return identity;
    throw Error(fmt::format("cannot read {}: {}", file.string(), describe_errno(errno)),
                "check the file's permissions (ls -l)");
  }
  identity.exists = true;
  identity.device = static_cast<std::uint64_t>(info.st_dev);
  identity.inode = static_cast<std::uint64_t>(info.st_ino);
  identity.size = static_cast<std::uint64_t>(info.st_size);
  identity.modified_ns = nanoseconds(info.st_mtim);
  identity.changed_ns = nanoseconds(info.st_ctim);
  return identity;
}

}  // namespace labpose
