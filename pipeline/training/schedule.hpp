// The learning-rate schedule of a training run: multi_step's drops, when the frozen backbone
// stages start to train and the backbone's warm-up, by iterations or fitted to a time budget
// (pose_cfg.yaml's `schedule: time` with train --max-minutes). Says which rates a step uses and
// records the iterations at which the drops happened, for snapshots, so that --resume continues
// exactly. Not the optimizer and not the training loop (trainer.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {

class TrainingSchedule {
 public:
  /// A run from its start: fitted to `budget_seconds` of training time when > 0 (the multi_step
  /// ends and unfreeze_backbone_after are then fractions of max_iters), else by iterations.
  TrainingSchedule(const PoseConfig& pose, double budget_seconds);
  /// The schedule of the run a snapshot after `iteration` steps belongs to, from the metadata
  /// save() wrote: a time schedule keeps its budget and the iterations of the drops already passed;
  /// snapshots without schedule fields (older ones) continue by iterations.
  static TrainingSchedule resumed(const PoseConfig& pose,
                                  const std::map<std::string, std::string>& metadata,
                                  std::int64_t iteration);

  bool timed() const { return budget_ > 0; }
  /// The training time (seconds) the time schedule spans; 0 by iterations.
  double budget_seconds() const { return budget_; }
  /// Whether the run is over after `iteration` steps and `seconds` of training time: the budget
  /// spent (time) or max_iters reached (iterations).
  bool finished(std::int64_t iteration, double seconds) const;

  /// Moves the schedule to the step that follows `iteration` steps and `seconds` of training time;
  /// returns one log line for each drop or unfreeze that falls due there.
  std::vector<std::string> advance(std::int64_t iteration, double seconds);
  /// The head's learning rate of the step advance() moved to.
  double rate() const { return rates_[drops_.size()]; }
  /// The backbone's: rate() x backbone_lr_multiplier x the warm-up's ramp (from 0 to 1).
  double backbone_rate() const { return rate() * multiplier_ * ramp_; }
  /// Whether freeze_backbone_stages still hold (unfreeze_backbone_after not reached).
  bool backbone_frozen() const { return frozen_stages_ && !unfrozen_at_; }

  /// "schedule: time, 12 minutes (learning rate 1e-3, 3e-4 from 60 %, ...)" for the startup line.
  std::string description() const;
  /// The state a snapshot keeps: schedule, schedule_seconds, schedule_drops, schedule_unfreeze.
  void save(std::map<std::string, std::string>& metadata) const;

 private:
  bool due(std::int64_t end, std::int64_t iteration, double seconds) const;
  std::string when(std::int64_t iteration, double seconds) const;  // "iteration 1843 (60 % ...)"
  std::string at_end(std::int64_t end) const;                      // "60 %" or "iteration 6000"

  std::vector<double> rates_;        // multi_step's rates
  std::vector<std::int64_t> ends_;   // multi_step's ends: drop k happens at ends_[k]
  std::int64_t max_iters_ = 1;       // the ends' scale under the time schedule
  bool frozen_stages_ = false;       // freeze_backbone_stages > 0
  std::int64_t unfreeze_end_ = 0;    // 0: never, or nothing to unfreeze
  double multiplier_ = 1.0;          // backbone_lr_multiplier
  double warmup_ = 0.0;              // backbone_warmup: fraction of the run
  double budget_ = 0.0;              // seconds; 0: by iterations
  std::vector<std::int64_t> drops_;  // the iterations at which the passed drops happened
  std::optional<std::int64_t> unfrozen_at_;
  double ramp_ = 1.0;  // the warm-up at the current step
};

}  // namespace labpose::pipeline
