// Writes of user data: to a temp file beside the target, flushed to disk, then renamed over it, so
// a crash, Ctrl-C or full disk never leaves a half-written file and the previous version stays
// intact. Not a lock: two processes writing the same file still race (the last rename wins, whole).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace labpose {

/// A temp file in the target's folder; commit() renames it over the target, the destructor removes
/// it if commit() never ran. The temp file exists (empty) after construction, so permission
/// problems surface before any work is done.
class AtomicFile {
 public:
  explicit AtomicFile(std::filesystem::path target);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::filesystem::path& target() const { return target_; }
  /// Where the writer writes; close every handle to it before commit().
  const std::filesystem::path& temp_path() const { return temp_; }
  /// Flushes the temp file to disk and renames it over the target (atomic on POSIX).
  void commit();

 private:
  std::filesystem::path target_;
  std::filesystem::path temp_;
  bool committed_ = false;
};

/// Replaces `target` with `contents` atomically.
void write_file_atomically(const std::filesystem::path& target, std::string_view contents);

/// Where a writer puts its pieces, in order.
using PieceSink = std::function<void(std::string_view piece)>;
/// Replaces `target` atomically with the pieces `produce` hands to its sink, each written as it
/// comes: for files built from parts that need not be joined in memory first (a checkpoint's
/// tensors). An exception from `produce` leaves the old file as it was.
void write_pieces_atomically(const std::filesystem::path& target,
                             const std::function<void(const PieceSink&)>& produce);

/// Reads a whole file; errors name the path.
std::string read_file(const std::filesystem::path& path);

/// Creates `folder` and its parents (nothing when it exists); throws an Error naming the folder and
/// the reason.
void create_folder(const std::filesystem::path& folder);

/// Copies `file` to `<file>.bak` (atomically, replacing an older backup) and returns that path.
std::filesystem::path keep_backup(const std::filesystem::path& file);

/// A message for errno `error_number`, e.g. "permission denied".
std::string describe_errno(int error_number);
/// The same about writing or reading `file`, naming its folder where that is what the user must
/// act on: "no space left on /data/project/labeled-data/m1".
std::string describe_errno(int error_number, const std::filesystem::path& file);

/// The Error for a failed write of `target` with errno `error_number`: names the file, the full
/// folder or the permission problem, and a hint that says what to do and that the old file is kept.
Error write_error(const std::filesystem::path& target, int error_number);

/// A new name beside `target` for a temp file or folder that becomes `target` by a rename:
/// .<name>.tmp-<host>-<pid>-<n>, which remove_stale_temps() recognises.
std::filesystem::path temp_name_for(const std::filesystem::path& target);

/// Removes the temp files and folders in `folder` (named by temp_name_for) that a process of this
/// machine which no longer runs left behind (killed while writing). AtomicFile calls it before each
/// write; other writers of whole folders call it before they make theirs.
void remove_stale_temps(const std::filesystem::path& folder);

}  // namespace labpose
