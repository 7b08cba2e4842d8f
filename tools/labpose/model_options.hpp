// The options that pick a trained model for the commands that use or find its tracks (analyze,
// filter, labeled-video): --shuffle, --training-fraction, --snapshot; and for the commands that
// read a multi-animal project's stitched tracks, --track-method (DeepLabCut's track_method).
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/analyze.hpp"
#include "pipeline/tracking/sort_tracker.hpp"

namespace labpose::tools {

/// A tracker's name as an option or config.yaml gives it: ellipse (also for empty text), box or
/// identity (the identity head's votes alone).
/// Throws UsageError naming `where` (the option, or config.yaml's line) for any other.
pipeline::TrackMethod parse_tracker(const std::string& text,
                                    const std::string& where = "--tracker");
/// The name parse_tracker reads for `tracker` ("ellipse", "box", "identity").
std::string tracker_name(pipeline::TrackMethod tracker);

/// The model whose tracks a command reads and, for a multi-animal project, the tracker whose
/// stitched tracks (<video><scorer>_el.h5, _bx.h5) they are.
struct TrackedModel {
  pipeline::AnalysisModel model;
  std::optional<pipeline::TrackMethod> tracker;  // multi-animal projects only
};

struct ModelOptions {
  std::optional<int> shuffle;  // unset: the promoted model's (labpose sweep --promote), else 1
  std::optional<double> training_fraction;
  std::string snapshot;      // an index, "best", or empty (config.yaml's snapshotindex)
  std::string track_method;  // --track-method: ellipse, box, or empty (config.yaml's)

  void add_to(CLI::App& app, const std::string& purpose);
  /// The snapshot choice: (index, best). Throws UsageError for text that is neither.
  std::pair<std::optional<int>, bool> snapshot_choice() const;
  pipeline::AnalysisModel find(const projects::ProjectConfig& config) const;
  /// Adds --track-method (also spelled --tracker, as analyze has it).
  void add_track_method_to(CLI::App& app);
  /// find() for the commands that read tracks of either kind of project: a multi-animal project's
  /// tracker is --track-method, else config.yaml's default_track_method, else ellipse (as
  /// DeepLabCut's get_track_method). UsageError for --track-method on a single-animal project or
  /// a tracker labpose does not have.
  TrackedModel find_tracked(const projects::ProjectConfig& config) const;
  /// The shuffle and training fraction to use (see projects::default_model_shuffle).
  std::pair<int, std::optional<double>> chosen_shuffle(const projects::ProjectConfig& config) const;
  /// Throws UsageError when any of --shuffle, --training-fraction, --snapshot was given with an
  /// exported folder (`--model`), which holds one snapshot.
  void refuse_with_exported_model() const;
};

/// A video and the tracks of it that a command reads.
struct TrackedVideo {
  std::filesystem::path video;
  std::filesystem::path folder;  // where analyze wrote: --dest, or beside the video
  pipeline::AnalysisFiles files;
  std::filesystem::path tracks;  // files.h5, or its _filtered.h5
};

/// Calls `use` for each of `videos` (folders expanded to their videos, sorted) that has the tracks
/// analyze (or, with `filtered`, filter) made with `model` (for a multi-animal project the
/// stitched tracks of its tracker); warns for each that has none (naming the file and the command
/// to run) and, after the others, throws an Error that counts them (`what`: "to plot", ...).
void for_each_tracked_video(const TrackedModel& model, const std::vector<std::string>& videos,
                            const std::string& dest, bool filtered, const std::string& what,
                            const std::function<void(const TrackedVideo&)>& use);

}  // namespace labpose::tools
