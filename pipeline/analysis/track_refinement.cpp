// Swapping individuals in stitched tracks, and saving them back with the first version kept.
#include "pipeline/analysis/track_refinement.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "projects/labels.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

using projects::kUniqueIndividual;
// The keys a tracks file may hold its table under: labpose's stitching, then the key of tracks
// files re-saved from pandas (DeepLabCut's refined tracks use it). DeepLabCut itself writes both
// in pandas' "table" format, which is refused with the line that re-saves them.
constexpr const char* kTrackKeys[] = {"tracks", "df_with_missing"};

std::string listed(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

// The columns of `individual` by bodypart, in column order.
std::vector<TrackColumns> columns_of(const std::vector<TrackColumns>& columns,
                                     const std::string& individual) {
  std::vector<TrackColumns> out;
  for (const auto& column : columns)
    if (column.individual == individual) out.push_back(column);
  return out;
}

void check_frames(const TrackSwap& swap, std::size_t rows, const fs::path& file) {
  const auto last = static_cast<std::int64_t>(rows) - 1;
  const std::int64_t to = swap.to.value_or(last);
  if (swap.from < 0 || swap.from > last || to < swap.from || to > last) {
    throw Error(fmt::format("{}: cannot swap {} and {} in frames {} to {}: the tracks have frames "
                            "0 to {}",
                            file.string(), swap.first, swap.second, swap.from,
                            swap.to ? std::to_string(*swap.to) : std::string("the end"), last),
                "give a first frame (--from) and a last one (--to, included) within the video");
  }
}

FileIdentity stamp_of(const fs::path& file) {
  const FileIdentity stamp = file_identity(file);
  if (!stamp.exists) {
    throw Error(fmt::format("cannot read {}: it does not exist", file.string()),
                "check that the tracks file exists and may be read");
  }
  return stamp;
}

// Copies `file` to its backup unless the backup exists: the first version is the one kept.
void keep_original(const fs::path& file) {
  const fs::path backup = original_tracks_path(file);
  std::error_code error;
  if (fs::exists(backup, error)) return;
  write_file_atomically(backup, read_file(file));
}

}  // namespace

std::vector<std::string> swappable_individuals(const projects::Table& tracks,
                                               const fs::path& file) {
  const auto& levels = tracks.column_level_names;
  if (std::find(levels.begin(), levels.end(), "individuals") == levels.end()) {
    throw Error(fmt::format("{} has no individuals: it is not the tracks of several animals",
                            file.string()),
                "refine the stitched tracks of a multi-animal project (<video><scorer>_el.h5)");
  }
  std::vector<std::string> names = track_individuals(track_columns(tracks));
  std::erase(names, kUniqueIndividual);
  return names;
}

void swap_individuals(projects::Table& tracks, const TrackSwap& swap, const fs::path& file) {
  const std::vector<std::string> names = swappable_individuals(tracks, file);
  const std::string hint =
      fmt::format("the individuals of {} are: {}", file.filename().string(), listed(names));
  for (const std::string* name : {&swap.first, &swap.second}) {
    if (*name == kUniqueIndividual) {
      throw Error(fmt::format("{}: \"single\" holds the unique bodyparts of no animal and cannot "
                              "be swapped",
                              file.string()),
                  hint);
    }
    if (std::find(names.begin(), names.end(), *name) == names.end())
      throw Error(fmt::format("{} has no individual \"{}\"", file.string(), *name), hint);
  }
  if (swap.first == swap.second) {
    throw Error(fmt::format("{}: cannot swap {} with itself", file.string(), swap.first),
                "name two different individuals, e.g. --swap " +
                    (names.size() >= 2 ? names[0] + "," + names[1] : std::string("A,B")));
  }
  check_frames(swap, tracks.row_count(), file);

  const std::vector<TrackColumns> columns = track_columns(tracks);
  const auto first = columns_of(columns, swap.first);
  const auto second = columns_of(columns, swap.second);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (const auto& a : first) {
    const auto b = std::find_if(second.begin(), second.end(),
                                [&](const TrackColumns& c) { return c.bodypart == a.bodypart; });
    if (b == second.end() || first.size() != second.size()) {
      throw Error(fmt::format("{}: {} and {} do not have the same bodyparts", file.string(),
                              swap.first, swap.second),
                  "only individuals tracked with the same bodyparts can be swapped");
    }
    pairs.insert(pairs.end(), {{a.x, b->x}, {a.y, b->y}, {a.likelihood, b->likelihood}});
  }
  const auto last =
      static_cast<std::size_t>(swap.to.value_or(static_cast<std::int64_t>(tracks.row_count()) - 1));
  for (auto row = static_cast<std::size_t>(swap.from); row <= last; ++row) {
    for (const auto& [a, b] : pairs) std::swap(tracks.at(row, a), tracks.at(row, b));
  }
}

RefinableTracks read_refinable_tracks(const fs::path& file) {
  std::error_code error;
  if (!fs::exists(file, error)) {
    throw Error(fmt::format("{} does not exist", file.string()),
                "analyze the video first (labpose analyze) or name the tracks with --tracks");
  }
  const std::vector<std::string> keys(std::begin(kTrackKeys), std::end(kTrackKeys));
  // A key the file lacks is the least telling failure: report another one when there is one.
  std::optional<Error> failure;
  for (const std::string& key : keys) {
    try {
      const FileIdentity stamp = stamp_of(file);
      RefinableTracks tracks{file, key, projects::read_table_hdf5(file, key), stamp};
      swappable_individuals(tracks.table, file);
      return tracks;
    } catch (const Error& error_of_key) {
      const bool missing_key =
          std::string_view(error_of_key.what()).find("no table under the key") !=
          std::string_view::npos;
      if (!failure || !missing_key) failure = error_of_key;
    }
  }
  if (std::string_view(failure->what()).find("\"table\" format") != std::string_view::npos) {
    throw Error(fmt::format("{} is in pandas' \"table\" format (DeepLabCut's stitch_tracklets "
                            "and tracklet refinement write it), which labpose does not read",
                            file.string()),
                "re-save it in the fixed format under its key, then refine it: python -c \"import "
                "pandas as pd; p='" +
                    file.string() + "'; pd.read_hdf(p).to_hdf(p, key='tracks', mode='w')\"");
  }
  throw *failure;
}

fs::path original_tracks_path(const fs::path& file) {
  return fs::path(file.string() + ".orig");
}

std::vector<fs::path> forget_original_tracks(const std::vector<fs::path>& files) {
  std::vector<fs::path> removed;
  for (const fs::path& file : files) {
    const fs::path backup = original_tracks_path(file);
    std::error_code error;
    if (fs::remove(backup, error)) removed.push_back(backup);
    if (error) {
      throw Error(fmt::format("cannot remove {}, the backup of the tracks before they were "
                              "stitched again: {}",
                              backup.string(), error.message()),
                  "remove it by hand: it holds the earlier tracks, not these");
    }
  }
  return removed;
}

fs::path tracks_csv_path(const fs::path& file) {
  return fs::path(file).replace_extension(".csv");
}

std::vector<fs::path> save_refined_tracks(RefinableTracks& tracks) {
  if (stamp_of(tracks.file) != tracks.stamp) {
    throw Error(fmt::format("{} changed since it was read (another refine-tracks, a second page, "
                            "or analyze or stitch again); the swaps were not saved, so its changes "
                            "are kept",
                            tracks.file.string()),
                "reload the page (or run the command again) and redo the swaps on the tracks as "
                "they are now");
  }
  const fs::path csv = tracks_csv_path(tracks.file);
  std::error_code error;
  const bool with_csv = csv != tracks.file && fs::exists(csv, error);
  keep_original(tracks.file);
  if (with_csv) keep_original(csv);
  projects::write_table_hdf5(tracks.table, tracks.file, tracks.key);
  tracks.stamp = stamp_of(tracks.file);
  std::vector<fs::path> written{tracks.file};
  if (with_csv) {
    projects::write_table_csv(tracks.table, csv);
    written.push_back(csv);
  }
  return written;
}

}  // namespace labpose::pipeline
