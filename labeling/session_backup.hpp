// The labeling session's backup of a folder's label files, as they were before the session first
// changed them: labeled-data/<video>/.labpose-backups/<date-time>/, whole or absent. The copies are
// made in a hidden temp folder beside it, flushed, and the folder renamed into place; a failed
// backup leaves nothing behind and is tried again on the next save. Not the .bak beside each file
// (core/atomic_file.hpp's keep_backup) and not the label writing.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace labpose::labeling {

class SessionBackups {
 public:
  /// `stamp` names this session's folders (e.g. "20261123-141502").
  explicit SessionBackups(std::string stamp) : stamp_(std::move(stamp)) {}

  /// Where `folder`'s backup of this session is (or will be).
  std::filesystem::path dir(const std::filesystem::path& folder) const;

  /// Copies the `files` that exist into this session's backup of `folder`, once per session: does
  /// nothing when that backup was made. Throws Error naming the paths (e.g. "no space left on the
  /// device"); nothing is then left, and the next call tries again.
  void ensure(const std::filesystem::path& folder, const std::vector<std::filesystem::path>& files);

 private:
  std::string stamp_;
  std::map<std::filesystem::path, std::filesystem::path> made_;  // folder -> its backup
};

}  // namespace labpose::labeling
