// The parts of a label table the labeling store edits, single- or multi-animal alike: a keypoint
// named by (individual, bodypart), its columns, rows found or added in image order, and the merge
// of another table's points. Not file reading or writing (label_files.hpp, projects/labels.hpp)
// and not the rules of what may be saved (label_store.hpp).
#pragma once

#include <compare>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "projects/config.hpp"
#include "projects/labels.hpp"
#include "projects/table.hpp"

namespace labpose::labeling {

/// A keypoint of one animal: `individual` is empty in single-animal projects, "single" for a
/// multi-animal project's unique bodyparts.
struct Keypoint {
  std::string individual, bodypart;
  auto operator<=>(const Keypoint&) const = default;
};

/// Every keypoint of config.yaml in DeepLabCut's column order: the bodyparts (single animal), or
/// each individual with all multianimalbodyparts, then "single" with the uniquebodyparts.
std::vector<Keypoint> config_keypoints(const projects::ConfigValues& values);

/// "snout", or "individual2's bodypart1": a keypoint in messages.
std::string describe(const Keypoint& keypoint);

/// The table's keypoints by name (throws Error for columns that are not DeepLabCut's).
std::map<Keypoint, projects::KeypointColumns> keypoint_columns_by_name(
    const projects::Table& table);

/// Adds x and y columns (NaN in every row) for each of `wanted` the table lacks, for `scorer`.
/// A single-animal table gets them at its end; a multi-animal one where DeepLabCut's order puts
/// them (after the columns of the keypoint before it in `wanted`), so its files keep that order.
void add_missing_columns(projects::Table& table, const std::string& scorer,
                         const std::vector<Keypoint>& wanted);

/// The scorer of the table's first column, or `fallback` when it has none.
std::string table_scorer(const projects::Table& table, const std::string& fallback);

/// The row of `table` whose image is `image` in labeled-data/`video`, or nullopt.
std::optional<std::size_t> find_row(const projects::Table& table, std::string_view video,
                                    std::string_view image);

/// Adds a row for the image in the table's index style, before the first row that sorts after
/// it, and returns its number.
std::size_t insert_row(projects::Table& table, std::string_view video, std::string_view image);

/// Copies into `base` the points of `other` that `base` lacks (matched by image, individual and
/// bodypart; rows and keypoints `base` lacks are added). Returns how many points were added.
/// Throws Error when one table is single-animal and the other multi-animal.
std::size_t merge_points(projects::Table& base, const projects::Table& other);

}  // namespace labpose::labeling
