// Which trained network analysis uses: a shuffle's snapshot chosen by index, config.yaml's
// snapshotindex or the best test error, with its pose_cfg.yaml and the scorer name that names the
// outputs; or an exported model folder (pipeline/export), which carries the same. Not loading the
// network (training/snapshot.hpp) and not running it.
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
  // What analysis takes from config.yaml (or, for an exported model, from its pose_cfg.yaml).
  int iteration = 0;  // the active-learning iteration
  double pcutoff = 0.6;
  int batch_size = 8;
  std::optional<projects::CropBox> crop;  // config.yaml's crop when cropping is on
  /// The project, whose training images calibrate int8 plans; empty for an exported model (its
  /// calibration was measured at export and lies beside model.safetensors).
  std::filesystem::path project;
  /// The exported model folder it came from; empty for a project's shuffle.
  std::filesystem::path exported_folder;
};

/// The snapshot `snapshot_index` (config.yaml's snapshotindex when not given; -1 = the last in
/// list order, which is the best one when there is one) of shuffle `shuffle` at `fraction`
/// (default: the first TrainingFraction). Throws Error when the shuffle was never made or never
/// trained or the project is a multi-animal one (whose tracks the single-animal commands do not
/// read), and UsageError for an index out of range.
AnalysisModel find_analysis_model(const projects::ProjectConfig& config, int shuffle,
                                  std::optional<double> fraction, std::optional<int> snapshot_index,
                                  bool best = false);
/// find_analysis_model without its refusal of a multi-animal project: the snapshot of either kind
/// of shuffle (multi-animal analysis checks the network's heads itself).
AnalysisModel find_shuffle_model(const projects::ProjectConfig& config, int shuffle,
                                 std::optional<double> fraction, std::optional<int> snapshot_index,
                                 bool best = false);

/// The model of an exported folder (labpose export): its model.safetensors and pose_cfg.yaml.
/// Throws Error naming the folder and the file when one is missing or damaged.
AnalysisModel exported_analysis_model(const std::filesystem::path& folder);

}  // namespace labpose::pipeline
