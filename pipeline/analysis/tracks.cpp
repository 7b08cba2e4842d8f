// Finding the x/y/likelihood columns of each bodypart.
#include "pipeline/analysis/tracks.hpp"

#include <cstdint>
#include <map>

#include "core/error.hpp"

namespace labpose::pipeline {

std::vector<TrackColumns> track_columns(const projects::Table& tracks) {
  if (tracks.column_level_names.size() < 2 || tracks.column_level_names.back() != "coords") {
    throw Error("this table has no bodyparts/coords levels: it is not a table of tracks",
                "use the .h5 that labpose analyze (or DeepLabCut's analyze_videos) wrote");
  }
  const std::size_t name_level = tracks.column_level_names.size() - 2;
  std::vector<TrackColumns> parts;
  std::map<std::string, std::size_t> index;
  for (std::size_t c = 0; c < tracks.column_count(); ++c) {
    const std::string& name = tracks.columns[c][name_level];
    const std::string& coord = tracks.columns[c].back();
    if (index.count(name) == 0) {
      index[name] = parts.size();
      parts.push_back({name, SIZE_MAX, SIZE_MAX, SIZE_MAX});
    }
    TrackColumns& part = parts[index[name]];
    if (coord == "x") part.x = c;
    if (coord == "y") part.y = c;
    if (coord == "likelihood") part.likelihood = c;
  }
  std::vector<TrackColumns> complete;
  for (const auto& part : parts) {
    if (part.x != SIZE_MAX && part.y != SIZE_MAX && part.likelihood != SIZE_MAX)
      complete.push_back(part);
  }
  return complete;
}

}  // namespace labpose::pipeline
