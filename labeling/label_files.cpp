// Reading a folder's two label files safely and deciding which labels they hold.
#include "labeling/label_files.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <thread>
#include <tuple>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "labeling/label_columns.hpp"
#include "labeling/label_store.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;
using projects::Table;

namespace {

// An editor saving a file is done well within this; a file another program changed more recently
// is read again once it has been left alone this long.
constexpr std::chrono::milliseconds kSettle{1000};
// Reads of a file that keep changing under labpose before it gives up and refuses.
constexpr int kReadAttempts = 5;

std::string hash_of(std::string_view bytes) {
  // FNV-1a, 64 bits: not a defence against anyone, only "is this the file labpose wrote?".
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : bytes) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}-{}", hash, bytes.size());
}

FileSnapshot stat_file(const fs::path& file) {
  FileSnapshot snapshot;
  try {
    static_cast<FileIdentity&>(snapshot) = file_identity(file);
  } catch (const Error& unreadable) {
    throw RequestError(409, unreadable.what(), unreadable.hint());
  }
  return snapshot;
}

// One label file as read: its table, or why it cannot be used.
struct FileRead {
  fs::path file;
  FileSnapshot snapshot;
  std::string bytes;
  std::optional<Table> table;
  std::string problem;      // when it exists and there is no table
  bool old_format = false;  // a .h5 in pandas' "table" format (intact, but not read here)
};

// Reads `file` whole while nothing writes it: its identity, size and times are the same before the
// read and after `parse` (which may read the file again by name, as the HDF5 reader does).
template <typename Parse>
FileRead read_settled_copy(const fs::path& file, Parse&& parse) {
  for (int attempt = 0; attempt < kReadAttempts; ++attempt) {
    FileRead read;
    read.file = file;
    const FileSnapshot before = stat_file(file);
    if (!before.exists) return read;
    try {
      read.bytes = read_file(file);
      parse(read);
    } catch (const std::exception& failure) {  // Error, or bad_alloc from a damaged size
      read.table.reset();
      read.problem = failure.what();
    }
    const FileSnapshot after = stat_file(file);
    if (after.same_file_as(before) && read.bytes.size() == before.size) {
      read.snapshot = before;
      read.snapshot.hash = hash_of(read.bytes);
      return read;
    }
  }
  throw RequestError(409,
                     fmt::format("{} kept changing while labpose read it: another program is "
                                 "writing it; nothing was saved",
                                 file.string()),
                     "click again once that program has saved the file");
}

FileRead read_csv(const fs::path& file) {
  return read_settled_copy(file, [&](FileRead& read) {
    Table table = projects::parse_table_csv(read.bytes, file);
    projects::keypoint_columns(table, file);  // throws for columns that are not DeepLabCut's
    read.table = std::move(table);
  });
}

FileRead read_h5(const fs::path& file) {
  return read_settled_copy(file, [&](FileRead& read) {
    if (projects::probe_table_hdf5(file) != projects::Hdf5Format::fixed) {
      read.old_format = true;
      read.problem = fmt::format("{} is in pandas' old \"table\" format", file.string());
      return;
    }
    Table table = projects::read_table_hdf5(file);
    projects::keypoint_columns(table, file);
    read.table = std::move(table);
  });
}

fs::path record_path(const projects::LabelFiles& files) {
  return files.csv.parent_path() / ".labpose-backups" /
         (files.csv.stem().string() + ".labpose-saved");
}

// What labpose last wrote: file name -> hash of its bytes.
std::map<std::string, std::string> read_record(const projects::LabelFiles& files) {
  std::map<std::string, std::string> record;
  std::error_code error;
  const fs::path path = record_path(files);
  if (!fs::is_regular_file(path, error)) return record;
  std::string text;
  try {
    text = read_file(path);
  } catch (const Error&) {
    return record;  // no record: the loads are only more careful
  }
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line(text.data() + at, end - at);
    const std::size_t space = line.rfind(' ');
    if (space != std::string_view::npos && !line.starts_with('#'))
      record[std::string(line.substr(0, space))] = std::string(line.substr(space + 1));
    at = end + 1;
  }
  return record;
}

enum class SinceSaved { unknown, unchanged, changed };

SinceSaved since_saved(const std::map<std::string, std::string>& record, const FileRead& read) {
  const auto it = record.find(read.file.filename().string());
  if (it == record.end()) return SinceSaved::unknown;
  return it->second == read.snapshot.hash ? SinceSaved::unchanged : SinceSaved::changed;
}

// How long to wait before `read` can be trusted: a file someone else changed in the last moment
// may be half-written by an editor that is still saving it.
std::chrono::milliseconds settle_time(const std::map<std::string, std::string>& record,
                                      const FileRead& read) {
  if (!read.snapshot.exists || since_saved(record, read) == SinceSaved::unchanged)
    return std::chrono::milliseconds(0);
  // system_clock is CLOCK_REALTIME, the clock of st_mtim.
  const auto age = std::chrono::system_clock::now().time_since_epoch() -
                   std::chrono::nanoseconds(read.snapshot.modified_ns);
  if (age >= kSettle) return std::chrono::milliseconds(0);
  // A time in the future (another machine's clock on a network disk): wait once, not for hours.
  if (age < std::chrono::nanoseconds(0)) return kSettle;
  return std::chrono::duration_cast<std::chrono::milliseconds>(kSettle - age) +
         std::chrono::milliseconds(1);
}

using PointKey = std::tuple<std::string, std::string, Keypoint>;  // stem, image, keypoint
struct PointAt {
  double x = 0, y = 0;
  std::size_t row = 0;
};
using PointMap = std::map<PointKey, PointAt>;

// The points of a label table, single- or multi-animal (the first row wins where an image appears
// twice, as everywhere in the store).
PointMap points_of(const Table& table, const fs::path& file) {
  PointMap points;
  for (const auto& keypoint : projects::keypoint_columns(table, file)) {
    for (std::size_t row = 0; row < table.row_count(); ++row) {
      const double x = table.at(row, keypoint.x), y = table.at(row, keypoint.y);
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      const auto key = projects::image_key(table, row);
      points.emplace(
          PointKey{key.stem, key.image, Keypoint{keypoint.individual, keypoint.bodypart}},
          PointAt{x, y, row});
    }
  }
  return points;
}

bool same_point(const PointAt& a, const PointAt& b) {
  return a.x == b.x && a.y == b.y;
}

bool same_points(const PointMap& a, const PointMap& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](const auto& left, const auto& right) {
           return left.first == right.first && same_point(left.second, right.second);
         });
}

// Where a row of a file is, for messages: "<csv>:<line>", or the .h5's path (it has no lines; the
// message names the image).
std::string where(const FileRead& read, std::size_t row) {
  if (read.file.extension() == ".csv") {
    if (const std::size_t line = csv_line_of(read.bytes, *read.table, row))
      return fmt::format("{}:{}", read.file.string(), line);
  }
  return read.file.string();
}

// Where the image of `key` is in `read` (its row when it has one, else the file alone).
std::string where_image(const FileRead& read, const PointKey& key) {
  const auto row = find_row(*read.table, std::get<0>(key), std::get<1>(key));
  return row ? where(read, *row) : read.file.string();
}

std::string describe(const PointKey& key) {
  return fmt::format("{} in {}", labeling::describe(std::get<2>(key)), std::get<1>(key));
}

std::string hint_to_choose(const FileRead& a, const FileRead& b) {
  return fmt::format(
      "make the two files agree: if {0} is right, move {1} out of the folder (labpose writes it "
      "again from {0}); if {1} is right, move {0} out instead; then click again",
      a.file.filename().string(), b.file.filename().string());
}

LoadedLabels use(LoadedLabels loaded, FileRead& read, std::string note) {
  loaded.table = std::move(*read.table);
  if (!note.empty()) loaded.notes.push_back(std::move(note));
  return loaded;
}

// Both files were read and hold different points: keep one whole, or refuse.
LoadedLabels reconcile(LoadedLabels loaded, FileRead& csv, FileRead& h5,
                       const std::map<std::string, std::string>& record) {
  const PointMap csv_points = points_of(*csv.table, csv.file);
  const PointMap h5_points = points_of(*h5.table, h5.file);
  if (same_points(csv_points, h5_points)) {
    // The same labels, perhaps written differently (index style, empty rows): keep the newer.
    return h5.snapshot.modified_ns > csv.snapshot.modified_ns ? use(std::move(loaded), h5, "")
                                                              : use(std::move(loaded), csv, "");
  }
  const SinceSaved csv_since = since_saved(record, csv), h5_since = since_saved(record, h5);
  if (csv_since == SinceSaved::unchanged && h5_since == SinceSaved::changed) {
    return use(std::move(loaded), h5,
               fmt::format("{} was changed since labpose saved it; its labels are used and {} is "
                           "written again from them",
                           h5.file.string(), csv.file.filename().string()));
  }
  if (h5_since == SinceSaved::unchanged && csv_since == SinceSaved::changed) {
    return use(std::move(loaded), csv,
               fmt::format("{} was changed since labpose saved it; its labels are used and {} is "
                           "written again from them",
                           csv.file.string(), h5.file.filename().string()));
  }
  if (csv_since == SinceSaved::changed && h5_since == SinceSaved::changed) {
    // Two edits labpose did not make: which one is right is the user's call. The points differ, so
    // one of the two loops below finds where and throws.
    for (const auto& [key, point] : csv_points) {
      const auto other = h5_points.find(key);
      if (other != h5_points.end() && same_point(point, other->second)) continue;
      throw RequestError(
          409,
          fmt::format(
              "{} and {} disagree about {} ({:g}, {:g} in the CSV; {} in the .h5), and both were "
              "changed since labpose last saved them: labpose cannot tell which is right, so it "
              "saved nothing",
              where(csv, point.row), h5.file.string(), describe(key), point.x, point.y,
              other == h5_points.end()
                  ? std::string("none")
                  : fmt::format("{:g}, {:g}", other->second.x, other->second.y)),
          hint_to_choose(csv, h5));
    }
    for (const auto& [key, point] : h5_points) {
      if (csv_points.count(key) != 0) continue;
      throw RequestError(
          409,
          fmt::format("{} has {} at ({:g}, {:g}) but {} has none, and both were changed since "
                      "labpose last saved them: labpose cannot tell which is right, so it saved "
                      "nothing",
                      where(h5, point.row), describe(key), point.x, point.y, where_image(csv, key)),
          hint_to_choose(csv, h5));
    }
  }
  // No record of labpose's last save (files another program wrote): the newer file, where the
  // older one has nothing the newer lacks. A point there only is an addition or a deletion, and
  // only the user can say which.
  const bool h5_newer = h5.snapshot.modified_ns > csv.snapshot.modified_ns;
  FileRead& newer = h5_newer ? h5 : csv;
  FileRead& older = h5_newer ? csv : h5;
  const PointMap& newer_points = h5_newer ? h5_points : csv_points;
  const PointMap& older_points = h5_newer ? csv_points : h5_points;
  std::size_t missing = 0, moved = 0;
  const PointMap::value_type* first_missing = nullptr;
  for (const auto& entry : older_points) {
    const auto it = newer_points.find(entry.first);
    if (it == newer_points.end()) {
      if (missing++ == 0) first_missing = &entry;
    } else if (!same_point(it->second, entry.second)) {
      ++moved;
    }
  }
  if (first_missing) {
    throw RequestError(
        409,
        fmt::format("{} has {} at ({:g}, {:g}) but {}, saved later, has none{}: labpose cannot "
                    "tell whether it was deleted from one or added to the other, so it saved "
                    "nothing",
                    where(older, first_missing->second.row), describe(first_missing->first),
                    first_missing->second.x, first_missing->second.y,
                    where_image(newer, first_missing->first),
                    missing > 1 ? fmt::format(" ({} such points in all)", missing) : ""),
        hint_to_choose(newer, older));
  }
  const std::size_t added = newer_points.size() - older_points.size();
  return use(
      std::move(loaded), newer,
      fmt::format("{} and {} differ ({} point(s) moved, {} only in {}); the newer {} is used",
                  csv.file.string(), h5.file.filename().string(), moved, added,
                  newer.file.filename().string(), newer.file.filename().string()));
}

}  // namespace

bool FileSnapshot::same_file_as(const FileSnapshot& other) const {
  return static_cast<const FileIdentity&>(*this) == static_cast<const FileIdentity&>(other);
}

std::size_t csv_line_of(std::string_view text, const Table& table, std::size_t row) {
  if (row >= table.row_count()) return 0;
  const auto& key = table.index[row];
  std::size_t line = 0, at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view content(text.data() + at, end - at);
    at = end + 1;
    ++line;
    if (line <= table.column_level_names.size()) continue;  // the header lines
    if (!content.empty() && content.back() == '\r') content.remove_suffix(1);
    bool matches = true;
    for (std::size_t level = 0; level < key.size() && matches; ++level) {
      const std::size_t comma = std::min(content.find(','), content.size());
      std::string_view cell = content.substr(0, comma);
      if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"')
        cell = cell.substr(1, cell.size() - 2);
      matches = cell == key[level];
      content.remove_prefix(std::min(comma + 1, content.size()));
    }
    if (matches) return line;
  }
  return 0;
}

LoadedLabels load_labels(const fs::path& folder, std::string_view scorer, bool multi_animal) {
  LoadedLabels loaded;
  loaded.files = projects::label_files(folder, scorer);
  const auto record = read_record(loaded.files);
  FileRead csv, h5;
  for (int pass = 0;; ++pass) {
    csv = read_csv(loaded.files.csv);
    h5 = read_h5(loaded.files.h5);
    const auto wait = std::max(settle_time(record, csv), settle_time(record, h5));
    if (pass > 0 || wait.count() == 0) break;
    std::this_thread::sleep_for(wait);
  }
  loaded.csv = csv.snapshot;
  loaded.h5 = h5.snapshot;
  loaded.csv_read = csv.table.has_value();
  loaded.h5_read = h5.table.has_value() || h5.old_format;

  const std::string keep_note =
      fmt::format("labpose saves nothing in {} while it cannot be read, so no edit in it is lost",
                  folder.string());
  if (csv.snapshot.exists && !csv.table) {
    std::string hint = "fix that line in a text editor and click again";
    if (h5.table) {
      hint += fmt::format("; or, to go back to the labels in {}, move the CSV out of the folder",
                          h5.file.filename().string());
    }
    throw RequestError(409, fmt::format("{}; {}", csv.problem, keep_note), hint);
  }
  if (h5.snapshot.exists && !h5.table && !h5.old_format) {
    if (!csv.table) {
      throw RequestError(
          409, fmt::format("cannot read the labels: {}", h5.problem),
          fmt::format("restore it from {}.bak or from a folder in {}", h5.file.filename().string(),
                      (folder / ".labpose-backups").string()));
    }
    throw RequestError(409, fmt::format("{}; {}", h5.problem, keep_note),
                       fmt::format("if {} holds your labels, move the damaged {} out of the "
                                   "folder and click again: labpose writes a new one from the CSV",
                                   csv.file.filename().string(), h5.file.filename().string()));
  }
  if (h5.old_format && !csv.table) {
    throw RequestError(409, fmt::format("cannot read the labels: {}", h5.problem),
                       "write the CSV beside it with DeepLabCut (or pandas: "
                       "df.to_csv) and click again");
  }
  if (csv.table && h5.table) {
    loaded = reconcile(std::move(loaded), csv, h5, record);
  } else if (csv.table) {
    if (h5.old_format) {
      loaded.notes.push_back(
          fmt::format("{}; the CSV beside it is used and the .h5 is written "
                      "again in the fixed format (the old one kept as .bak)",
                      h5.problem));
    }
    loaded.table = std::move(*csv.table);
  } else if (h5.table) {
    loaded.table = std::move(*h5.table);
  } else if (multi_animal) {
    loaded.table = projects::make_multi_animal_label_table(scorer, {}, {}, {});
  } else {
    loaded.table = projects::make_label_table(scorer, {});
  }
  if ((loaded.table.column_level_names.size() == 4) != multi_animal) {
    throw RequestError(
        409,
        fmt::format("{}: {}-animal columns in a {}-animal project", loaded.files.csv.string(),
                    multi_animal ? "single" : "multi", multi_animal ? "multi" : "single"),
        "check multianimalproject in config.yaml");
  }
  return loaded;
}

void check_unchanged(const LoadedLabels& loaded) {
  for (const auto& [file, seen] :
       {std::pair{loaded.files.csv, loaded.csv}, std::pair{loaded.files.h5, loaded.h5}}) {
    if (stat_file(file).same_file_as(seen)) continue;
    throw RequestError(409,
                       fmt::format("{} was changed by another program while labpose was saving; "
                                   "labpose saved nothing, so that change is kept",
                                   file.string()),
                       "click again: labpose then reads the file as it is now");
  }
}

void record_saved(const projects::LabelFiles& files) {
  try {
    std::string text =
        "# what labpose last wrote here; the labeling server compares it with the files to tell "
        "an edit made elsewhere from its own\n";
    for (const fs::path& file : {files.csv, files.h5})
      text += fmt::format("{} {}\n", file.filename().string(), hash_of(read_file(file)));
    const fs::path record = record_path(files);
    fs::create_directories(record.parent_path());
    write_file_atomically(record, text);
  } catch (const std::exception& failure) {
    console::warn("cannot record what labpose saved in {}: {}", files.csv.parent_path().string(),
                  failure.what());
  }
}

}  // namespace labpose::labeling
