// The options that pick a trained model for the commands that use or find its tracks (analyze,
// filter, labeled-video): --shuffle, --training-fraction, --snapshot.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/analyze.hpp"

namespace labpose::tools {

struct ModelOptions {
  std::optional<int> shuffle;  // unset: the promoted model's (labpose sweep --promote), else 1
  std::optional<double> training_fraction;
  std::string snapshot;  // an index, "best", or empty (config.yaml's snapshotindex)

  void add_to(CLI::App& app, const std::string& purpose);
  /// The snapshot choice: (index, best). Throws UsageError for text that is neither.
  std::pair<std::optional<int>, bool> snapshot_choice() const;
  pipeline::AnalysisModel find(const projects::ProjectConfig& config) const;
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
/// analyze (or, with `filtered`, filter) made with `model`; warns for each that has none (naming
/// the command to run) and, after the others, throws an Error that counts them (`what`: "to plot",
/// ...).
void for_each_tracked_video(const pipeline::AnalysisModel& model,
                            const std::vector<std::string>& videos, const std::string& dest,
                            bool filtered, const std::string& what,
                            const std::function<void(const TrackedVideo&)>& use);

}  // namespace labpose::tools
