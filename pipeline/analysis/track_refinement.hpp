// Refining a multi-animal video's stitched tracks (<stem><scorer>_el.h5, _bx.h5) by hand, as
// DeepLabCut's tracklet refinement does: two individuals swapped from a frame on, and the tracks
// saved back in place, the file as it was first kept beside it. Not the command that asks for the
// swaps (tools/labpose/refine_tracks.cpp), and not the stitching (multi_animal_tracking.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/file_identity.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

/// One swap: every bodypart (x, y, likelihood) of `first` exchanged with the same bodypart of
/// `second` in frames `from` to `to`, both included (no `to`: to the last frame).
struct TrackSwap {
  std::string first, second;
  std::int64_t from = 0;
  std::optional<std::int64_t> to;
};

/// A tracks file as read for refinement: the table and the key it is stored under.
struct RefinableTracks {
  std::filesystem::path file;  // the .h5
  std::string key;             // "tracks" (labpose's stitching) or "df_with_missing"
  projects::Table table;
  FileIdentity stamp;  // of `file` when read or last saved: a save refuses a file changed since
};

/// The individuals of a multi-animal tracks table that can be swapped (in column order, without
/// "single"). Throws Error naming `file` when the table has no individuals level.
std::vector<std::string> swappable_individuals(const projects::Table& tracks,
                                               const std::filesystem::path& file);

/// Applies `swap` to `tracks` in place. Throws Error naming `file`, listing the individuals, for
/// an unknown name, "single", the same name twice, individuals with different bodyparts, or frames
/// outside 0..rows-1 (`to` before `from`).
void swap_individuals(projects::Table& tracks, const TrackSwap& swap,
                      const std::filesystem::path& file);

/// Reads the tracks in `file` (pandas' fixed format, under "tracks" or else "df_with_missing").
/// Throws Error naming the file; for pandas' "table" format, which DeepLabCut's own stitching and
/// refinement write, the hint is the line that re-saves it in the fixed format.
RefinableTracks read_refinable_tracks(const std::filesystem::path& file);

/// "<file>.orig": where the tracks file as it was before its first refinement is kept.
std::filesystem::path original_tracks_path(const std::filesystem::path& file);

/// Removes the "<file>.orig" backups of `files` (a tracks file and its CSV twin) after stitching
/// wrote them anew: a backup of the earlier tracks is no longer "the stitched tracks" that copying
/// it back restores. Returns the backups removed; throws Error naming one that cannot be removed.
std::vector<std::filesystem::path> forget_original_tracks(
    const std::vector<std::filesystem::path>& files);

/// The CSV twin of a tracks file ("<stem>.csv" beside "<stem>.h5"), written with it when present.
std::filesystem::path tracks_csv_path(const std::filesystem::path& file);

/// Writes `tracks.table` back into tracks.file under tracks.key (the layout analyze writes), and
/// into the CSV twin when one exists, each atomically. Before, keeps each file as it was in
/// "<file>.orig" unless that backup exists already (it is never overwritten). Returns the paths
/// written. Throws Error, writing nothing, when the file changed since it was read or last saved
/// (another refine-tracks, a second page, analyze or stitch again): its changes are kept.
std::vector<std::filesystem::path> save_refined_tracks(RefinableTracks& tracks);

}  // namespace labpose::pipeline
