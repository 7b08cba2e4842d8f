// labpose export, DeepLabCut's export_model (reference/dlc-format.md §6.15): one trained snapshot
// of a shuffle as a self-contained folder that runs without the project —
// exported-models/DLC_<Task>_<net>_iteration-<K>_shuffle-<S>/ with model.safetensors (weights
// only), pose_cfg.yaml, the int8 calibration measured on the project's training images, a README
// and, on request, model.onnx. The folder appears whole or not at all (written beside it, then
// renamed). Not reading it back (exported_model.hpp) and not running it (pipeline/analysis).
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "projects/config.hpp"

namespace labpose::pipeline {

struct ExportOptions {
  int shuffle = 1;
  std::optional<double> training_fraction;    // default: config.yaml's first TrainingFraction
  std::optional<int> snapshot_index;          // default: config.yaml's snapshotindex
  bool best_snapshot = false;                 // the best snapshot by held-out error instead
  std::optional<std::filesystem::path> dest;  // default: <project>/exported-models
  bool overwrite = false;                     // replace an earlier export of the same model
  bool onnx = false;                          // also model.onnx
  bool onnx_decoding = false;                 // model.onnx with the `pose` output too
  std::string producer_version;               // labpose's version, in model.onnx
};

struct ExportResult {
  std::filesystem::path folder;
  std::vector<std::filesystem::path> files;  // what it holds, in the order written
  bool calibrated = false;                   // an int8 calibration is included
};

/// Exports the chosen snapshot. Throws UsageError when the folder exists (without overwrite) and
/// Error when the shuffle or snapshot is missing or a file cannot be written; nothing is left
/// half-written.
ExportResult export_model(const projects::ProjectConfig& config, const ExportOptions& options);

}  // namespace labpose::pipeline
