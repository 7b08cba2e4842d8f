// A sweep trial's training configuration: the base shuffle's pose_cfg.yaml with the trial's values
// applied (lr scales multi_step's rates; init_weights imagenet takes the cached ImageNet weights of
// the trial's network; without init_weights, a trial of another network than a pretrained base's
// starts from that network's cached weights, or from scratch when there are none; a pretrained
// trial gets the fine-tuning recipe unless the space sets it) and
// the schedule set by the sweep's budget. Every value is checked the way train checks it, with
// errors that name sweep.yaml:line. Not the trial's files (trials.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "pipeline/sweep/space.hpp"
#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {

/// How long each trial trains at most: minutes of training time under the time schedule, or
/// iterations (multi_step and the unfreeze point scaled to them; runs that repeat exactly).
struct TrialBudget {
  double minutes = 0.0;         // > 0: by time
  std::int64_t iterations = 0;  // > 0: by iterations
  bool by_time() const { return minutes > 0; }
  double amount() const { return by_time() ? minutes : static_cast<double>(iterations); }
};

/// The file of ImageNet weights of a network (the weights cache), or nullopt when there is none.
using ImageNetWeights = std::function<std::optional<std::string>(const std::string& net_type)>;

/// A trial's values as one line: "lr 0.001, batch_size 8".
std::string describe_trial(const TrialParameters& parameters);

/// The configuration of a trial with `parameters`. Throws UsageError naming the space's line of the
/// value at fault (or the trial's values, for a combination train would refuse).
PoseConfig trial_pose_config(const PoseConfig& base, const TrialParameters& parameters,
                             const SweepSpace& space, const ImageNetWeights& imagenet,
                             const TrialBudget& budget);

/// Checks every value of the space (each choice, each range's ends) alone against `base`: what
/// train would refuse is an error naming sweep.yaml:line, before anything runs. What depends on
/// other values (a network's stages, its ImageNet weights) is trial_pose_config's to check.
void check_space_values(const PoseConfig& base, const SweepSpace& space);

}  // namespace labpose::pipeline
