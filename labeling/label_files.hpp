// What the labeling server reads before it changes a folder's labels: CollectedData_<scorer>.csv
// and .h5, each read whole while it is not being written, then either found to agree, reconciled by
// the rules in label_files.cpp, or refused with a message that names the file and the line (nothing
// is written then). Also the record of what labpose last wrote, which tells a file edited by hand
// or by another tool from one labpose wrote. Not the writing (label_store.cpp), not the formats
// (projects/).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/file_identity.hpp"
#include "projects/labels.hpp"
#include "projects/table.hpp"

namespace labpose::labeling {

/// A file as it was seen: whether it exists, its identity and times, and a hash of its bytes.
struct FileSnapshot : FileIdentity {
  std::string hash;  // of the bytes (empty when the file is absent)

  /// Same file, same size and times (the hash is not compared: it is only known after a read).
  bool same_file_as(const FileSnapshot& other) const;
};

/// The scorer's labels in one folder, read and reconciled.
struct LoadedLabels {
  projects::LabelFiles files;
  projects::Table table;
  FileSnapshot csv, h5;
  // Files that were read as they are (their .bak may be rotated): an unreadable file is never
  // copied over its .bak, which may be the only good copy left.
  bool csv_read = false, h5_read = false;
  std::vector<std::string> notes;  // what was reconciled and how, for the console
};

/// Reads CollectedData_<scorer>.csv and .h5 in `folder` and decides what the labels are (a point
/// is an image's keypoint: its bodypart, and its individual in a multi-animal table):
/// - neither exists: an empty table (from `scorer`'s point of view, bodyparts added by the caller;
///   four column levels when `multi_animal`);
/// - one readable and the other absent: that one; the .h5 in pandas' old "table" format beside a
///   readable CSV: the CSV (as DeepLabCut reads them);
/// - either unreadable otherwise: refused (409), the message naming the file, line and problem;
/// - both readable with the same points: that table;
/// - they differ and labpose's record shows one of them unchanged since labpose wrote both: the
///   other one, whole (moves, additions and deletions made by hand or by another tool are kept);
/// - they differ and both changed since: refused, naming the first point they disagree on;
/// - they differ and there is no record (files another program wrote): the newer file, with the
///   older one's points where the newer has the same point elsewhere (a move) — and refused when
///   the older file has a point the newer one lacks (deleted from one, or added to the other?).
/// Files that another program changed within the last second are read again once they have been
/// left alone for a second (an editor may be writing them). Labels with single-animal columns in a
/// multi-animal project (or the reverse) are refused too. Throws RequestError.
LoadedLabels load_labels(const std::filesystem::path& folder, std::string_view scorer,
                         bool multi_animal);

/// Throws RequestError(409) when a file changed on disk since `loaded` was read (another program
/// saved it meanwhile): the caller then writes nothing.
void check_unchanged(const LoadedLabels& loaded);

/// Remembers in `folder`/.labpose-backups/ what labpose just wrote into `files` (their hashes),
/// so a later load can tell which file was changed by someone else. Best effort: a record that
/// cannot be written only makes later loads more careful.
void record_saved(const projects::LabelFiles& files);

/// The 1-based line of `text` (a CSV table) that holds row `row` of `table` (read from it), or 0.
std::size_t csv_line_of(std::string_view text, const projects::Table& table, std::size_t row);

}  // namespace labpose::labeling
