// The project's model: labpose-models/iteration-<K>/promoted.yaml names the shuffle that
// `labpose sweep --promote` chose, which the commands that use a trained model (evaluate, analyze,
// filter, labeled-video, plot-trajectories, extract-outliers) take when no --shuffle is given. A
// labpose file beside its models: config.yaml keeps DeepLabCut's keys only. Not the sweep itself.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "projects/config.hpp"

namespace labpose::projects {

struct PromotedModel {
  int shuffle = 1;
  double training_fraction = 0.95;
  std::string sweep;  // the sweep it came from
  int trial = 0;      // its trial there
};

/// labpose-models/iteration-<K>/promoted.yaml of the config's iteration.
std::filesystem::path promoted_model_file(const ProjectConfig& config);

/// The promoted model of the config's iteration, or nullopt when none was promoted. Errors name the
/// file and line.
std::optional<PromotedModel> read_promoted_model(const ProjectConfig& config);

/// Writes promoted.yaml atomically.
void write_promoted_model(const ProjectConfig& config, const PromotedModel& model);

/// The shuffle and training fraction a model command uses: `shuffle` and `fraction` when given;
/// otherwise the promoted model's (said once on the console) or shuffle 1 and config.yaml's first
/// TrainingFraction (nullopt: every fraction, as evaluate does).
std::pair<int, std::optional<double>> default_model_shuffle(const ProjectConfig& config,
                                                            std::optional<int> shuffle,
                                                            std::optional<double> fraction);

}  // namespace labpose::projects
