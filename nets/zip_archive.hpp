// A zip archive opened for reading (libzip): from a file or from bytes in memory, its entry names,
// and one entry read whole with a size cap and a CRC check. For PyTorch checkpoints (stored
// entries, read in place when the archive is in memory) and wheels (deflate). Not a writer and not
// a streaming reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nets/zip_directory.hpp"

struct zip;  // libzip's archive handle

namespace labpose::nets {

/// Whether reading an entry checks its CRC-32. Skipped only for an archive in memory whose SHA-256
/// was just found to be a published digest, which proves more; libzip checks copied entries anyway.
enum class CrcCheck { check, skip_digest_verified };

class ZipArchive {
 public:
  /// Entries larger than this are refused by read() unless it is given another cap.
  static constexpr std::uint64_t kDefaultMaxEntryBytes = std::uint64_t{4} << 30;  // 4 GiB

  /// Opens `file`; an Error names the file and says why libzip refused it.
  explicit ZipArchive(const std::filesystem::path& file);
  /// Opens the archive in `bytes`, which must outlive this object; `name` is what messages name.
  ZipArchive(std::string_view bytes, std::string name, CrcCheck crc = CrcCheck::check);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  /// What messages name: the file, or the name given with the bytes.
  const std::string& name() const { return name_; }
  /// The names of all entries, in the archive's order.
  std::vector<std::string> entry_names() const;
  /// True when an entry of exactly this name exists.
  bool contains(const std::string& entry) const;
  /// The whole content of `entry`: an Error when it is missing, declares or holds more than
  /// `max_bytes`, holds another size than it declares, or fails its CRC check.
  std::string read(const std::string& entry, std::uint64_t max_bytes = kDefaultMaxEntryBytes) const;
  /// The same content, checked the same way, where it lies in the archive's memory when the archive
  /// was opened from bytes and the entry is stored uncompressed (no copy); otherwise read() into
  /// `copy`, which the view then shows.
  std::string_view read_view(const std::string& entry, std::string& copy,
                             std::uint64_t max_bytes = kDefaultMaxEntryBytes) const;

 private:
  zip* archive_ = nullptr;
  std::string name_;
  std::uint64_t archive_bytes_ = 0;  // the archive's own size: what read() may set aside at once
  std::map<std::string, StoredZipEntry, std::less<>> stored_;  // an in-memory archive's, in place
  CrcCheck crc_ = CrcCheck::check;                             // of the entries in stored_
};

}  // namespace labpose::nets
