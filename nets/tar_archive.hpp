// The members of a tar archive held in memory (POSIX ustar and the older v7 layout; pax headers
// skipped), for the tar checkpoints of torch < 0.4. Not a general tar reader: no long-name
// extensions, no sparse files, nothing written or extracted to disk.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace labpose::nets {

/// True when `bytes` starts with a tar header (a valid checksum; ustar or v7).
bool looks_like_tar(std::string_view bytes);

/// The regular files of the archive in `bytes`, by name, as views into `bytes`. Errors name
/// `name` and the byte offset of the bad header (checksum, size beyond the data, duplicates).
std::map<std::string, std::string_view> tar_members(std::string_view bytes,
                                                    const std::string& name);

}  // namespace labpose::nets
