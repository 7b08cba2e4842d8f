// Which trained network analysis uses: a shuffle's snapshot chosen by index, config.yaml's
// snapshotindex or the best test error, with its pose_cfg.yaml and the scorer name that names the
// outputs. Not loading the network (training/snapshot.hpp) and not running it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "projects/config.hpp"

namespace labpose::pipeline {

/// The trained network analyze uses: a shuffle's snapshot and what names its outputs.
struct AnalysisModel {
  std::filesystem::path snapshot;  // snapshot-<iteration>.safetensors (or snapshot-best-...)
  std::string net_type;
  std::string scorer;  // DLC_<net>_<Task><date>shuffle<S>_<iterations>
  std::vector<std::string> bodyparts;
  double training_fraction = 0.95;
  int shuffle = 1;
  std::int64_t iterations = 0;
  int stride = 8;
  double locref_stdev = 7.2801;
  bool location_refinement = true;
};

/// The snapshot `snapshot_index` (config.yaml's snapshotindex when not given; -1 = the last in
/// list order, which is the best one when there is one) of shuffle `shuffle` at `fraction`
/// (default: the first TrainingFraction). Throws Error when the shuffle was never made or never
/// trained, and UsageError for an index out of range.
AnalysisModel find_analysis_model(const projects::ProjectConfig& config, int shuffle,
                                  std::optional<double> fraction, std::optional<int> snapshot_index,
                                  bool best = false);

}  // namespace labpose::pipeline
