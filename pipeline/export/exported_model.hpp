// An exported model folder (labpose export), DeepLabCut's
// exported-models/DLC_<Task>_<net>_iteration-<K>_shuffle-<S>/: model.safetensors (the weights of
// one snapshot, no optimizer state), pose_cfg.yaml (what running it needs: bodyparts, network,
// input normalization, stride, locref_stdev, the scorer and the snapshot it came from) and, when
// measured, model.safetensors.int8.json (its int8 calibration). Its names and its pose_cfg.yaml,
// written and read back. Not making one (export.hpp) and not running one (pipeline/analysis).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace labpose::pipeline {

/// What an exported folder's pose_cfg.yaml holds.
struct ExportedModel {
  std::string net_type;
  std::vector<std::string> bodyparts;
  std::string scorer;    // DLC_<net>_<Task><date>shuffle<S>_<iterations>, which names the outputs
  std::string snapshot;  // the snapshot file it was exported from
  std::int64_t iterations = 0;  // that snapshot's training iterations
  std::string task, date;
  int iteration = 0;  // the project's active-learning iteration
  int shuffle = 1;
  double training_fraction = 0.95;
  int stride = 8;
  double locref_stdev = 7.2801;
  bool location_refinement = true;
  double pcutoff = 0.6;
  int batch_size = 8;
  std::vector<float> mean_pixel, std_pixel;  // RGB on the 0-255 scale, applied inside the network
};

/// "DLC_<Task>_<net>_iteration-<K>_shuffle-<S>", DeepLabCut's name for an exported model's folder.
std::string exported_folder_name(const ExportedModel& model);
std::filesystem::path exported_weights_file(const std::filesystem::path& folder);
std::filesystem::path exported_pose_config_file(const std::filesystem::path& folder);
std::filesystem::path exported_onnx_file(const std::filesystem::path& folder);

/// pose_cfg.yaml's text: DeepLabCut's test-time keys (sorted, as DeepLabCut exports them) and
/// labpose's.
std::string exported_pose_config_text(const ExportedModel& model);

/// Reads `folder`'s pose_cfg.yaml and checks that model.safetensors is there. Throws Error naming
/// the folder, file:line and key when the folder is not an exported model or a value is wrong.
ExportedModel read_exported_model(const std::filesystem::path& folder);

/// Whether `path` is a folder holding an exported model's pose_cfg.yaml (not a config.yaml).
bool is_exported_model(const std::filesystem::path& path);

}  // namespace labpose::pipeline
