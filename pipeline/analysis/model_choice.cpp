// Choosing the snapshot analysis runs: the shuffle's train folder, its snapshots, pose_cfg.yaml.
#include "pipeline/analysis/model_choice.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/export/exported_model.hpp"
#include "pipeline/training/pose_config.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The train folder of the shuffle; throws Error when it was never made.
fs::path made_train_dir(const projects::ProjectConfig& config, int shuffle, double fraction) {
  const projects::ConfigValues& values = config.values();
  const projects::ProjectLayout layout(config.project_dir());
  const fs::path train_dir = projects::model_train_dir(
      layout.model_dir(values.iteration, values.task, values.date, fraction, shuffle));
  std::error_code error;
  if (!fs::exists(projects::pose_cfg_in(train_dir), error)) {
    throw Error(
        fmt::format("shuffle {} of trainset{} (iteration {}) was never made: {} does not exist",
                    shuffle, projects::training_fraction_percent(fraction), values.iteration,
                    projects::pose_cfg_in(train_dir).string()),
        fmt::format("make and train it first: labpose create-dataset {0} --shuffle {1}, then "
                    "labpose train {0} --shuffle {1} (or pick another with --shuffle / "
                    "--training-fraction)",
                    config.file().string(), shuffle));
  }
  return train_dir;
}

// The snapshot by index or by test error, among the trained ones in `train_dir`.
SnapshotFile choose_snapshot(const projects::ProjectConfig& config, const fs::path& train_dir,
                             int shuffle, std::optional<int> snapshot_index, bool best) {
  const projects::ConfigValues& values = config.values();
  const std::vector<SnapshotFile> snapshots = list_snapshots(train_dir);
  if (snapshots.empty()) {
    throw Error(fmt::format("no snapshots in {}: shuffle {} was never trained", train_dir.string(),
                            shuffle),
                fmt::format("train it first: labpose train {} --shuffle {}", config.file().string(),
                            shuffle));
  }
  const bool use_best = best || (!snapshot_index &&
                                 values.snapshot_index.kind == projects::SnapshotIndex::Kind::best);
  if (use_best) {
    return best_snapshot(
        snapshots, train_dir,
        "train with evaluate_iters > 0 in pose_cfg.yaml, or analyze with --snapshot -1");
  }
  int index = snapshot_index.value_or(values.snapshot_index.index);
  if (!snapshot_index && values.snapshot_index.kind == projects::SnapshotIndex::Kind::all) {
    console::warn("snapshotindex is 'all' in {}: analyzing with the last snapshot",
                  config.file().string());
    index = -1;
  }
  return select_snapshot(snapshots, index, train_dir);
}

}  // namespace

AnalysisModel find_analysis_model(const projects::ProjectConfig& config, int shuffle,
                                  std::optional<double> fraction, std::optional<int> snapshot_index,
                                  bool best) {
  if (config.values().multi_animal) {
    throw Error(fmt::format("{} is a multi-animal project; this command reads the tracks of "
                            "single-animal analyses only",
                            config.file().string()),
                "labpose analyze analyzes its videos into DeepLabCut's tracks of several animals "
                "(<video><scorer>_el.h5), which filter, plot-trajectories, labeled-video and "
                "extract-outliers take; labpose live runs on the project's config.yaml");
  }
  return find_shuffle_model(config, shuffle, fraction, snapshot_index, best);
}

AnalysisModel find_shuffle_model(const projects::ProjectConfig& config, int shuffle,
                                 std::optional<double> fraction, std::optional<int> snapshot_index,
                                 bool best) {
  const projects::ConfigValues& values = config.values();
  if (!fraction && values.training_fraction.empty()) {
    throw Error(fmt::format("{}: TrainingFraction is empty", config.file().string()),
                "set TrainingFraction (e.g. [0.95]) or pass --training-fraction");
  }
  const double chosen_fraction = fraction.value_or(values.training_fraction.front());
  const fs::path train_dir = made_train_dir(config, shuffle, chosen_fraction);
  const SnapshotFile chosen = choose_snapshot(config, train_dir, shuffle, snapshot_index, best);
  std::vector<std::string> warnings;
  const PoseConfig pose = read_pose_config(projects::pose_cfg_in(train_dir), &warnings);
  for (const auto& warning : warnings) console::warn("{}", warning);

  AnalysisModel model;
  model.snapshot = chosen.path;
  model.net_type = pose.net_type;
  model.bodyparts = pose.bodyparts;
  model.training_fraction = chosen_fraction;
  model.shuffle = shuffle;
  model.iterations = chosen.iteration;
  model.stride = pose.stride;
  model.locref_stdev = pose.locref_stdev;
  model.location_refinement = pose.location_refinement;
  model.scorer =
      projects::scorer_name(pose.net_type, values.task, values.date, shuffle, chosen.iteration);
  model.iteration = values.iteration;
  model.pcutoff = values.pcutoff;
  model.batch_size = std::max(1, values.batch_size);
  if (values.cropping) model.crop = values.crop;
  model.project = config.project_dir();
  return model;
}

AnalysisModel exported_analysis_model(const fs::path& folder) {
  const ExportedModel exported = read_exported_model(folder);
  AnalysisModel model;
  model.snapshot = exported_weights_file(folder);
  model.net_type = exported.net_type;
  model.scorer = exported.scorer;
  model.bodyparts = exported.bodyparts;
  model.training_fraction = exported.training_fraction;
  model.shuffle = exported.shuffle;
  model.iterations = exported.iterations;
  model.stride = exported.stride;
  model.locref_stdev = exported.locref_stdev;
  model.location_refinement = exported.location_refinement;
  model.iteration = exported.iteration;
  model.pcutoff = exported.pcutoff;
  model.batch_size = exported.batch_size;
  model.exported_folder = folder;
  return model;
}

}  // namespace labpose::pipeline
