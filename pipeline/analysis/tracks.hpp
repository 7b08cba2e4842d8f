// The bodyparts of a track table (DeepLabCut's scorer/bodyparts/coords columns, or with
// individuals) and which columns hold each one's x, y and likelihood. Shared by filter, plots and
// labeled videos.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

struct TrackColumns {
  std::string bodypart;
  std::size_t x = 0, y = 0, likelihood = 0;  // column numbers
};

/// The bodyparts with all three coords, in column order. Throws Error when the table has no
/// bodyparts/coords levels (not a table of tracks).
std::vector<TrackColumns> track_columns(const projects::Table& tracks);

}  // namespace labpose::pipeline
