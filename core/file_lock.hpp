// An exclusive lock on a file that several processes, threads and machines respect: Linux's
// open-file-description locks (fcntl F_OFD_SETLK), which NFS carries to the server and which end
// when the last descriptor of the open file closes - on exit, on kill -9, and in a child that
// inherited the descriptor only once the child ends too. Not a lock on the file's contents for
// programs that do not take it.
#pragma once

#include <filesystem>
#include <optional>

namespace labpose {

class FileLock {
 public:
  /// Waits until the lock on `file` (created if missing) is free and takes it. Throws Error naming
  /// the file when it cannot be opened or locked.
  static FileLock wait_for(const std::filesystem::path& file);
  /// Takes the lock if it is free now; nullopt when another holder has it.
  static std::optional<FileLock> try_take(const std::filesystem::path& file);

  FileLock(FileLock&& other) noexcept;
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

  /// The open descriptor that holds the lock (close-on-exec): a child that must hold it too dups
  /// it to a descriptor it keeps across exec.
  int descriptor() const { return descriptor_; }

 private:
  explicit FileLock(int descriptor) : descriptor_(descriptor) {}
  static int open_lock_file(const std::filesystem::path& file);
  int descriptor_ = -1;
};

}  // namespace labpose
