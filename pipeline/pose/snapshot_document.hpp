// A small JSON file kept beside a snapshot and valid for that snapshot only (its size and SHA-256
// are in it): int8's calibration, int8's check against fp32. Reading one that is missing, of
// another format or version, from another snapshot of that name or damaged gives nothing and says
// why, so the caller measures again; never a stale figure. Not what the files hold.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace labpose::pipeline {

/// A snapshot file told apart from any other of its name: its size and SHA-256.
struct SnapshotIdentity {
  std::uintmax_t bytes = 0;
  std::string sha256;
};
SnapshotIdentity identify_snapshot(const std::filesystem::path& snapshot);

/// The document in `file` when its "format" is `format`, its "version" 1 and it names `snapshot`;
/// nullopt with `why_not` ("none yet", "not a <what> file of this version", "it was measured for
/// another snapshot of that name", "it is damaged") otherwise.
std::optional<nlohmann::json> read_snapshot_document(const std::filesystem::path& file,
                                                     std::string_view format, std::string_view what,
                                                     const SnapshotIdentity& snapshot,
                                                     std::string& why_not);

/// `fields` with the format, version 1 and the snapshot's identity added, written atomically.
void write_snapshot_document(const std::filesystem::path& file, std::string_view format,
                             const SnapshotIdentity& snapshot, nlohmann::json fields);

}  // namespace labpose::pipeline
