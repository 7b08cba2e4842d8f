// A file's identity as stat(2) sees it, to tell whether anything replaced or wrote a file between
// two looks at it: the label files of the labeling page and the tracks that refine-tracks saves.
#pragma once

#include <cstdint>
#include <filesystem>

namespace labpose {

/// Whether a file exists, its device and inode, size, and modification and status-change times.
/// Two readings that are equal mean nothing replaced or wrote the file between them (to the
/// resolution of the file system's clock; the status-change time also moves on a rename over it).
struct FileIdentity {
  bool exists = false;
  std::uint64_t device = 0, inode = 0, size = 0;
  std::int64_t modified_ns = 0, changed_ns = 0;  // st_mtim and st_ctim

  bool operator==(const FileIdentity&) const = default;
};

/// stat(2) of `file`: exists is false where it (or a folder on its path) is absent. Throws Error
/// naming the file and the system's reason when it cannot be looked at (permissions, I/O).
FileIdentity file_identity(const std::filesystem::path& file);

}  // namespace labpose
