// Human labels (CollectedData_<scorer>.csv / .h5 in each labeled-data folder): locating, reading
// (fixed-format .h5, else the CSV beside it), writing both files, and checking a table against the
// project's config. Not the labeling tool and not the merged training set.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "projects/config.hpp"
#include "projects/table.hpp"

namespace labpose::projects {

/// DeepLabCut's individual of the unique bodyparts of a multi-animal project, which belong to no
/// animal: the last individual of its label and tracks tables, and a key of its pickles.
inline constexpr std::string_view kUniqueIndividual = "single";

struct LabelFiles {
  std::filesystem::path csv, h5;
  bool any_exists() const;
};
/// CollectedData_<scorer>.csv/.h5 in `folder`.
LabelFiles label_files(const std::filesystem::path& folder, std::string_view scorer);
/// The scorers that have CollectedData files in `folder` (from the file names), sorted.
std::vector<std::string> label_scorers(const std::filesystem::path& folder);

struct LoadedLabels {
  Table table;
  std::filesystem::path source;    // the file that was read
  std::vector<std::string> notes;  // why that one (e.g. the .h5 is in the old table format)
};

/// Reads the labels: the .h5 when pandas' fixed format, else the CSV. Throws when neither exists
/// or neither can be read (the message names both files).
LoadedLabels read_labels(const LabelFiles& files);

/// Writes the CSV and the .h5 (each atomically).
void write_labels(const Table& table, const LabelFiles& files);

/// One keypoint's columns in a label table.
struct KeypointColumns {
  std::string individual;  // empty in single-animal tables
  std::string bodypart;
  std::size_t x = 0, y = 0;
  std::optional<std::size_t> likelihood;
};

struct Finding {
  enum class Severity { error, warning };
  Severity severity;
  std::string message;  // names the file (and line/column where it helps)
  std::string hint;
};

/// The keypoints of a label table, in column order. Throws when the columns are not DeepLabCut's
/// (scorer[/individuals]/bodyparts/coords with x and y for every keypoint).
std::vector<KeypointColumns> keypoint_columns(const Table& table,
                                              const std::filesystem::path& file);

/// Checks columns against the config: scorer, unknown or missing bodyparts, individuals.
std::vector<Finding> check_label_columns(const Table& table, const ProjectConfig& config,
                                         const std::filesystem::path& file,
                                         std::string_view expected_scorer);

/// ("labeled-data", stem, image) for a row, whichever index style the file uses.
struct ImageKey {
  std::string folder, stem, image;
};
ImageKey image_key(const Table& table, std::size_t row);

/// An empty single-animal label table with DeepLabCut's columns and 3-level rows.
Table make_label_table(std::string_view scorer, const std::vector<std::string>& bodyparts);

/// An empty multi-animal label table in DeepLabCut's column order: every individual (config order)
/// with all `multianimal_bodyparts`, then the individual "single" with the `unique_bodyparts`
/// (none when there are none); four column levels, 3-level rows.
Table make_multi_animal_label_table(std::string_view scorer,
                                    const std::vector<std::string>& individuals,
                                    const std::vector<std::string>& multianimal_bodyparts,
                                    const std::vector<std::string>& unique_bodyparts);

}  // namespace labpose::projects
