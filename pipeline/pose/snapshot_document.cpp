// Snapshot documents: read whole, checked field by field, written with temp file and rename.
#include "pipeline/pose/snapshot_document.hpp"

#include <fmt/core.h>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/weights/weight_cache.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

SnapshotIdentity identify_snapshot(const fs::path& snapshot) {
  const std::string contents = read_file(snapshot);
  return {contents.size(), sha256_hex(contents)};
}

std::optional<json> read_snapshot_document(const fs::path& file, std::string_view format,
                                           std::string_view what, const SnapshotIdentity& snapshot,
                                           std::string& why_not) {
  std::error_code error;
  if (!fs::exists(file, error)) {
    why_not = "none yet";
    return std::nullopt;
  }
  try {
    json document = json::parse(read_file(file));
    if (!document.is_object() || document.value("format", "") != format ||
        document.value("version", 0) != 1) {
      why_not = fmt::format("not a {} file of this version", what);
      return std::nullopt;
    }
    if (document.at("snapshot_bytes").get<std::uintmax_t>() != snapshot.bytes ||
        document.at("snapshot_sha256").get<std::string>() != snapshot.sha256) {
      why_not = "it was measured for another snapshot of that name";
      return std::nullopt;
    }
    return document;
  } catch (const json::exception&) {
    why_not = "it is damaged";
    return std::nullopt;
  } catch (const Error& read_failure) {
    if (read_failure.kind() == ErrorKind::interrupted) throw;
    why_not = read_failure.what();
    return std::nullopt;
  }
}

void write_snapshot_document(const fs::path& file, std::string_view format,
                             const SnapshotIdentity& snapshot, json fields) {
  fields["format"] = format;
  fields["version"] = 1;
  fields["snapshot_bytes"] = snapshot.bytes;
  fields["snapshot_sha256"] = snapshot.sha256;
  write_file_atomically(file, fields.dump(1) + "\n");
}

}  // namespace labpose::pipeline
