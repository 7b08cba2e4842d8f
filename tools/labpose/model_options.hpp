// The options that pick a trained model for the commands that use or find its tracks (analyze,
// filter, labeled-video): --shuffle, --training-fraction, --snapshot.
#pragma once

#include <CLI/CLI.hpp>

#include <filesystem>
#include <optional>
#include <string>

#include "pipeline/analysis/analyze.hpp"

namespace labpose::tools {

struct ModelOptions {
  int shuffle = 1;
  std::optional<double> training_fraction;
  std::string snapshot;  // an index, "best", or empty (config.yaml's snapshotindex)

  void add_to(CLI::App& app, const std::string& purpose);
  /// The snapshot choice: (index, best). Throws UsageError for text that is neither.
  std::pair<std::optional<int>, bool> snapshot_choice() const;
  pipeline::AnalysisModel find(const projects::ProjectConfig& config) const;
};

/// The tracks analyze (or, with `filtered`, filter) made of `video` with `model`, in `dest` or beside
/// the video; nothing, with a warning naming the command to run, when there are none.
std::optional<std::filesystem::path> find_tracks(const pipeline::AnalysisModel& model,
                                                 const std::filesystem::path& video,
                                                 const std::string& dest, bool filtered);

/// Throws the Error for `missing` videos without tracks (`what`: "to plot", "to draw").
void refuse_missing_tracks(int missing, const std::string& what);

}  // namespace labpose::tools
