// Finding the x/y/likelihood columns of each bodypart of each individual.
#include "pipeline/analysis/tracks.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

// The names in `names` once each, in order of first appearance.
std::vector<std::string> distinct(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const std::string& name : names) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
  }
  return out;
}

}  // namespace

std::vector<TrackColumns> track_position_columns(const projects::Table& tracks) {
  const auto& levels = tracks.column_level_names;
  if (levels.size() < 2 || levels.back() != "coords") {
    throw Error("this table has no bodyparts/coords levels: it is not a table of tracks",
                "use the .h5 that labpose analyze (or DeepLabCut's analyze_videos) wrote");
  }
  const std::size_t name_level = levels.size() - 2;
  const auto individuals = std::find(levels.begin(), levels.end(), "individuals");
  const std::ptrdiff_t individual_level =
      individuals == levels.end() ? -1 : individuals - levels.begin();
  std::vector<TrackColumns> parts;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (std::size_t c = 0; c < tracks.column_count(); ++c) {
    const auto& column = tracks.columns[c];
    const std::string individual =
        individual_level < 0 ? std::string() : column[static_cast<std::size_t>(individual_level)];
    const std::pair<std::string, std::string> key{individual, column[name_level]};
    if (index.count(key) == 0) {
      index[key] = parts.size();
      parts.push_back({individual, key.second, kNoColumn, kNoColumn, kNoColumn});
    }
    TrackColumns& part = parts[index[key]];
    const std::string& coord = column.back();
    if (coord == "x") part.x = c;
    if (coord == "y") part.y = c;
    if (coord == "likelihood") part.likelihood = c;
  }
  std::vector<TrackColumns> placed;
  for (const auto& part : parts) {
    if (part.x != kNoColumn && part.y != kNoColumn) placed.push_back(part);
  }
  return placed;
}

std::vector<TrackColumns> track_columns(const projects::Table& tracks) {
  std::vector<TrackColumns> complete;
  for (const auto& part : track_position_columns(tracks)) {
    if (part.likelihood != kNoColumn) complete.push_back(part);
  }
  return complete;
}

std::vector<std::string> track_individuals(const std::vector<TrackColumns>& columns) {
  std::vector<std::string> names;
  for (const TrackColumns& part : columns) names.push_back(part.individual);
  return distinct(names);
}

std::vector<std::string> track_bodyparts(const std::vector<TrackColumns>& columns) {
  std::vector<std::string> names;
  for (const TrackColumns& part : columns) names.push_back(part.bodypart);
  return distinct(names);
}

}  // namespace labpose::pipeline
