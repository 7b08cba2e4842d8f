// The running mean of test errors and its minimum, kept exactly across snapshots.
#include "pipeline/training/best_snapshot.hpp"

#include <cmath>
#include <cstdlib>
#include <numeric>

#include "pipeline/training/snapshot.hpp"

namespace labpose::pipeline {

bool BestSnapshot::observe(double test_error) {
  recent_.push_back(test_error);
  if (recent_.size() > kWindow) recent_.erase(recent_.begin());
  const double mean = smoothed();
  if (!best_ || mean < *best_) {
    best_ = mean;
    without_improvement_ = 0;
    return true;
  }
  ++without_improvement_;
  return false;
}

double BestSnapshot::smoothed() const {
  if (recent_.empty()) return std::nan("");
  return std::accumulate(recent_.begin(), recent_.end(), 0.0) / static_cast<double>(recent_.size());
}

void BestSnapshot::save(std::map<std::string, std::string>& metadata) const {
  if (best_) metadata["best_test_error"] = exact_number(*best_);
  metadata["evaluations_without_improvement"] = std::to_string(without_improvement_);
  metadata["recent_test_errors"] = exact_numbers(recent_);
}

void BestSnapshot::restore(const std::map<std::string, std::string>& metadata) {
  best_.reset();
  if (metadata.count("best_test_error") != 0) {
    best_ = exact_number(metadata, "best_test_error", 0.0);
  }
  without_improvement_ =
      static_cast<int>(exact_number(metadata, "evaluations_without_improvement", 0.0));
  recent_ = exact_numbers(metadata, "recent_test_errors");
  if (recent_.size() > kWindow) recent_.erase(recent_.begin(), recent_.end() - kWindow);
}

}  // namespace labpose::pipeline
