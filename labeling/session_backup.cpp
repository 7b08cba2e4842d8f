// A session's backup folder: copies in a temp folder, flushed, then one rename.
#include "labeling/session_backup.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;

namespace {

constexpr const char* kHint =
    "free some disk space (df -h) or check the folder's permissions (ls -ld), then click again: "
    "the backup is tried again, and no label was changed";

Error backup_error(const fs::path& file, const fs::path& backup, int error_number) {
  return Error(fmt::format("cannot keep a backup of {} in {}: {}", file.string(), backup.string(),
                           describe_errno(error_number, backup / file.filename())),
               kHint);
}

void fsync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);  // best effort: some file systems cannot sync a folder
  ::close(fd);
}

// Copies `from` to the new file `to` and flushes it to disk; throws with the errno of the step
// that failed (a full disk fails the write, the fsync or the close).
void copy_flushed(const fs::path& from, const fs::path& to, const fs::path& backup) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) throw backup_error(from, backup, errno);
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (out < 0) {
    const int saved = errno;
    ::close(in);
    throw backup_error(from, backup, saved);
  }
  int failure = 0;
  char buffer[1 << 16];
  while (failure == 0) {
    const ssize_t got = ::read(in, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno != EINTR) failure = errno;
      continue;
    }
    for (ssize_t put = 0; put < got && failure == 0;) {
      const ssize_t n = ::write(out, buffer + put, static_cast<std::size_t>(got - put));
      if (n < 0 && errno != EINTR) failure = errno;
      if (n > 0) put += n;
    }
  }
  if (failure == 0 && ::fsync(out) != 0) failure = errno;
  if (::close(out) != 0 && failure == 0) failure = errno;
  ::close(in);
  if (failure != 0) throw backup_error(from, backup, failure);
}

}  // namespace

fs::path SessionBackups::dir(const fs::path& folder) const {
  const auto it = made_.find(folder);
  if (it != made_.end() && !it->second.empty()) return it->second;
  return folder / ".labpose-backups" / stamp_;
}

void SessionBackups::ensure(const fs::path& folder, const std::vector<fs::path>& files) {
  if (made_.count(folder) != 0) return;
  std::vector<fs::path> existing;
  std::error_code error;
  for (const fs::path& file : files)
    if (fs::exists(file, error)) existing.push_back(file);
  if (existing.empty()) {
    made_[folder] = fs::path();  // nothing to keep: every file here is this session's
    return;
  }
  const fs::path backups = folder / ".labpose-backups";
  fs::create_directories(backups, error);
  if (error) throw backup_error(existing.front(), backups, error.value());
  remove_stale_temps(backups);  // of sessions that were killed while making their backup
  fs::path target = backups / stamp_;
  // Another session started in the same second: a folder of its own.
  for (int n = 2; fs::exists(target, error); ++n)
    target = backups / fmt::format("{}-{}", stamp_, n);
  const fs::path temp = temp_name_for(target);
  if (!fs::create_directory(temp, error) || error)
    throw backup_error(existing.front(), target, error ? error.value() : EEXIST);
  try {
    for (const fs::path& file : existing) copy_flushed(file, temp / file.filename(), target);
    fsync_folder(temp);
    if (::rename(temp.c_str(), target.c_str()) != 0)
      throw backup_error(existing.front(), target, errno);
    fsync_folder(backups);
  } catch (...) {
    fs::remove_all(temp, error);
    throw;
  }
  made_[folder] = target;
}

}  // namespace labpose::labeling
