// The learning-rate schedule: drops, unfreeze and warm-up by iterations or by training time, and
// their record in snapshot metadata.
#include "pipeline/training/schedule.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "pipeline/training/snapshot.hpp"

namespace labpose::pipeline {
namespace {

// "12 minutes", "1 minute", "0.5 minutes".
std::string minutes_text(double seconds) {
  return fmt::format("{:g} minute{}", seconds / 60, seconds == 60 ? "" : "s");
}

// 1e-3, 3e-4, 2.5e-4: as multi_step's rates are usually written.
std::string rate_text(double rate) {
  if (rate <= 0 || !std::isfinite(rate)) return fmt::format("{}", rate);
  int exponent = static_cast<int>(std::floor(std::log10(rate)));
  double mantissa = rate / std::pow(10.0, exponent);
  if (mantissa >= 9.995) {
    mantissa /= 10;
    ++exponent;
  }
  return fmt::format("{:.3g}e{}", mantissa, exponent);
}

}  // namespace

TrainingSchedule::TrainingSchedule(const PoseConfig& pose, double budget_seconds)
    : max_iters_(std::max<std::int64_t>(pose.max_iters, 1)),
      multiplier_(pose.backbone_lr_multiplier),
      warmup_(pose.backbone_warmup),
      budget_(std::max(budget_seconds, 0.0)) {
  for (const auto& [rate, until] : pose.multi_step) {
    rates_.push_back(rate);
    ends_.push_back(until);
  }
  if (rates_.empty()) rates_.push_back(PoseConfig().learning_rate(0));
  ends_.resize(rates_.size() - 1);  // the last rate holds to the end
  frozen_stages_ = pose.freeze_backbone_stages > 0;
  if (frozen_stages_) unfreeze_end_ = pose.unfreeze_backbone_after;
}

TrainingSchedule TrainingSchedule::resumed(const PoseConfig& pose,
                                           const std::map<std::string, std::string>& metadata,
                                           std::int64_t iteration) {
  const auto kind = metadata.find("schedule");
  if (kind == metadata.end() || kind->second != schedule_name(ScheduleKind::time)) {
    TrainingSchedule schedule(pose, 0.0);
    schedule.advance(iteration, 0.0);  // by iterations the passed drops follow from the iteration
    return schedule;
  }
  TrainingSchedule schedule(pose, exact_number(metadata, "schedule_seconds", 0.0));
  for (const double iteration_of_drop : exact_numbers(metadata, "schedule_drops")) {
    if (schedule.drops_.size() < schedule.ends_.size()) {
      schedule.drops_.push_back(static_cast<std::int64_t>(iteration_of_drop));
    }
  }
  if (metadata.count("schedule_unfreeze") != 0 && schedule.unfreeze_end_ > 0) {
    schedule.unfrozen_at_ =
        static_cast<std::int64_t>(exact_number(metadata, "schedule_unfreeze", 0));
  }
  return schedule;
}

bool TrainingSchedule::finished(std::int64_t iteration, double seconds) const {
  return timed() ? seconds >= budget_ : iteration >= max_iters_;
}

// Whether a point given as an iteration out of max_iters is reached: by iterations exactly, by
// time as the same fraction of the budget.
bool TrainingSchedule::due(std::int64_t end, std::int64_t iteration, double seconds) const {
  if (!timed()) return iteration >= end;
  return seconds / budget_ >= static_cast<double>(end) / static_cast<double>(max_iters_);
}

std::vector<std::string> TrainingSchedule::advance(std::int64_t iteration, double seconds) {
  std::vector<std::string> lines;
  while (drops_.size() < ends_.size() && due(ends_[drops_.size()], iteration, seconds)) {
    drops_.push_back(iteration);
    lines.push_back(
        fmt::format("{}: learning rate {}", when(iteration, seconds), rate_text(rate())));
  }
  if (backbone_frozen() && unfreeze_end_ > 0 && due(unfreeze_end_, iteration, seconds)) {
    unfrozen_at_ = iteration;
    lines.push_back(fmt::format("{}: the backbone trains from now on (unfreeze_backbone_after)",
                                when(iteration, seconds)));
  }
  ramp_ = 1.0;
  if (warmup_ > 0) {
    // From the unfreeze point, or the start when nothing waits to be unfrozen.
    const double start = static_cast<double>(unfreeze_end_) / static_cast<double>(max_iters_);
    const double progress = timed()
                                ? seconds / budget_
                                : static_cast<double>(iteration) / static_cast<double>(max_iters_);
    ramp_ = std::clamp((progress - start) / warmup_, 0.0, 1.0);
  }
  return lines;
}

std::string TrainingSchedule::when(std::int64_t iteration, double seconds) const {
  if (!timed()) return fmt::format("iteration {}", iteration);
  return fmt::format("iteration {} ({:.0f} % of {:g} min)", iteration, 100 * seconds / budget_,
                     budget_ / 60);
}

std::string TrainingSchedule::at_end(std::int64_t end) const {
  if (!timed()) return fmt::format("iteration {}", end);
  return fmt::format("{:.3g} %",
                     100.0 * static_cast<double>(end) / static_cast<double>(max_iters_));
}

std::string TrainingSchedule::description() const {
  std::string text = timed() ? fmt::format("schedule: time, {} (learning rate {}",
                                           minutes_text(budget_), rate_text(rates_[0]))
                             : fmt::format("schedule: iterations, {} iterations (learning rate {}",
                                           max_iters_, rate_text(rates_[0]));
  for (std::size_t k = 0; k < ends_.size() && ends_[k] < max_iters_; ++k) {
    text += fmt::format(", {} from {}", rate_text(rates_[k + 1]), at_end(ends_[k]));
  }
  if (unfreeze_end_ > 0 && unfreeze_end_ < max_iters_) {
    text += "; backbone trains from " + at_end(unfreeze_end_);
  }
  if (warmup_ > 0)
    text += fmt::format("; backbone warm-up over {:.3g} % of the run", 100 * warmup_);
  return text + ")";
}

void TrainingSchedule::save(std::map<std::string, std::string>& metadata) const {
  metadata["schedule"] =
      std::string(schedule_name(timed() ? ScheduleKind::time : ScheduleKind::iterations));
  if (timed()) metadata["schedule_seconds"] = exact_number(budget_);
  metadata["schedule_drops"] = exact_numbers(std::vector<double>(drops_.begin(), drops_.end()));
  if (unfrozen_at_)
    metadata["schedule_unfreeze"] = exact_number(static_cast<double>(*unfrozen_at_));
}

}  // namespace labpose::pipeline
