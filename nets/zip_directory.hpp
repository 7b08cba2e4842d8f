// Where the stored (uncompressed) entries of a zip archive in memory lie: its central directory
// read for their names, sizes, CRCs and local headers, so that a 100 MB PyTorch checkpoint's
// tensors are read in place rather than copied out through libzip. Anything this reader cannot
// place with certainty is left out, and ZipArchive::read copies it through libzip as before.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace labpose::nets {

struct StoredZipEntry {
  std::string_view bytes;   // inside the archive's memory
  std::uint32_t crc32 = 0;  // as the central directory declares it
};

/// The entries of the zip archive `archive` that are stored uncompressed and unencrypted, by name.
/// Empty when the archive spans disks or its directory is not what this reader expects.
std::map<std::string, StoredZipEntry, std::less<>> stored_zip_entries(std::string_view archive);

}  // namespace labpose::nets
