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
  std::string recent;
  for (const double error : recent_) recent += (recent.empty() ? "" : ",") + exact_number(error);
  metadata["recent_test_errors"] = recent;
}

void BestSnapshot::restore(const std::map<std::string, std::string>& metadata) {
  best_.reset();
  recent_.clear();
  if (metadata.count("best_test_error") != 0) {
    best_ = exact_number(metadata, "best_test_error", 0.0);
  }
  without_improvement_ =
      static_cast<int>(exact_number(metadata, "evaluations_without_improvement", 0.0));
  if (const auto found = metadata.find("recent_test_errors"); found != metadata.end()) {
    const std::string& text = found->second;
    for (std::size_t start = 0; start < text.size();) {
      const std::size_t comma = std::min(text.find(',', start), text.size());
      recent_.push_back(std::strtod(text.substr(start, comma - start).c_str(), nullptr));
      start = comma + 1;
    }
    if (recent_.size() > kWindow) recent_.erase(recent_.begin(), recent_.end() - kWindow);
  }
}

}  // namespace labpose::pipeline
