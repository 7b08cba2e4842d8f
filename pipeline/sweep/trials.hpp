// A sweep's trials as ordinary shuffles in DeepLabCut's layout: each trial's split (the base
// shuffle's training images less the validation images, the same test images, the validation
// images named apart), Documentation pickle, metadata.yaml entry and train/ and test/pose_cfg.yaml.
// Not the trials' values (trial_config.hpp) or their training (sweep.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/dataset/dataset.hpp"
#include "pipeline/training/pose_config.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// The base shuffle a sweep starts from: its configuration, split and labels.
struct SweepBase {
  int shuffle = 1;
  double training_fraction = 0.95;
  std::filesystem::path train_dir;  // labpose-models/.../train of the base shuffle
  PoseConfig pose;
  Split split;
  Dataset dataset;
};

/// Reads the base shuffle (made by create-dataset); errors say how to make it.
SweepBase read_sweep_base(const projects::ProjectConfig& config, int shuffle,
                          double training_fraction);

/// The validation images: `fraction` of the base's training images (at least 1, leaving at least
/// 1 to train on), drawn with `seed`, in the training list's order.
std::vector<std::string> draw_validation_images(const Split& base, double fraction,
                                                std::uint64_t seed);

/// A trial to write: its shuffle number and configuration.
struct TrialShuffle {
  int shuffle = 1;
  PoseConfig pose;  // from trial_pose_config; paths and shuffle are set here
};

/// Writes every trial's files (each atomically) and enters them in metadata.yaml. Returns the model
/// folder of each, in order.
std::vector<std::filesystem::path> write_trial_shuffles(const projects::ProjectConfig& config,
                                                        const SweepBase& base,
                                                        const std::vector<std::string>& validation,
                                                        std::uint64_t seed,
                                                        std::vector<TrialShuffle> trials);

}  // namespace labpose::pipeline
