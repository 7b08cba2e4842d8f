// The bodyparts of a track table (DeepLabCut's scorer/bodyparts/coords columns, or
// scorer/individuals/bodyparts/coords for several animals) and which columns hold each one's x, y
// and likelihood. Shared by filter, plots, labeled videos, outliers and the scores of tracks
// against a ground truth; not the reading of files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

/// The column number of a coordinate that a table does not have.
constexpr std::size_t kNoColumn = SIZE_MAX;

struct TrackColumns {
  std::string individual;  // empty for single-animal tables; "single" for unique bodyparts
  std::string bodypart;
  std::size_t x = 0, y = 0, likelihood = 0;  // column numbers
};

/// The (individual, bodypart) pairs with an x and a y column, in column order; likelihood is
/// kNoColumn where the table has none (labels, a ground truth). Throws Error when the table has no
/// bodyparts/coords levels (not a table of tracks).
std::vector<TrackColumns> track_position_columns(const projects::Table& tracks);

/// The (individual, bodypart) pairs with all three coords, in column order. Throws Error when the
/// table has no bodyparts/coords levels (not a table of tracks).
std::vector<TrackColumns> track_columns(const projects::Table& tracks);

/// The individuals of `columns` in their order of first appearance; one empty name for the
/// columns of a single-animal table.
std::vector<std::string> track_individuals(const std::vector<TrackColumns>& columns);

/// The distinct bodypart names of `columns`, in order of first appearance (the colour order of
/// DeepLabCut's plots).
std::vector<std::string> track_bodyparts(const std::vector<TrackColumns>& columns);

}  // namespace labpose::pipeline
