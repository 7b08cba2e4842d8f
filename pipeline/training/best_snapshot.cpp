// The running mean of test errors and its minimum, kept exactly across snapshots.
#include "pipeline/training/best_snapshot.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <numeric>

namespace labpose::pipeline {
namespace {

std::string exact(double value) {
  return fmt::format("{:a}", value);
}

}  // namespace

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
  if (best_) metadata["best_test_error"] = exact(*best_);
  metadata["evaluations_without_improvement"] = std::to_string(without_improvement_);
  std::string recent;
  for (const double error : recent_) recent += (recent.empty() ? "" : ",") + exact(error);
  metadata["recent_test_errors"] = recent;
}

void BestSnapshot::restore(const std::map<std::string, std::string>& metadata) {
  best_.reset();
  recent_.clear();
  if (const auto found = metadata.find("best_test_error"); found != metadata.end()) {
    best_ = std::strtod(found->second.c_str(), nullptr);
  }
  if (const auto found = metadata.find("evaluations_without_improvement");
      found != metadata.end()) {
    without_improvement_ = std::atoi(found->second.c_str());
  }
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
