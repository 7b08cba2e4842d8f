// Which snapshot training keeps as the best: the one at which the test error, smoothed over the
// last few evaluations (a running mean of kWindow), is lowest. A small test set (DeepLabCut's 95/5
// split of a 116-frame project tests 6 frames) gives noisy single evaluations, and the plain
// minimum picks a lucky one. Also counts evaluations without improvement for early stopping. Not
// the evaluation itself (the trainer's) and not snapshot files (snapshot.hpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace labpose::pipeline {

class BestSnapshot {
 public:
  /// Evaluations in the running mean.
  static constexpr std::size_t kWindow = 3;

  /// Records one evaluation's mean test error (pixels); true when the smoothed error is the lowest
  /// so far (keep this iteration's snapshot as the best).
  bool observe(double test_error);

  /// The lowest smoothed test error so far, or nullopt before the first evaluation.
  std::optional<double> best() const { return best_; }
  /// The running mean of the last kWindow evaluations (fewer at the start); NaN before any.
  double smoothed() const;
  int evaluations_without_improvement() const { return without_improvement_; }

  /// The state a snapshot keeps so that a resumed run decides as an uninterrupted one, exactly
  /// (doubles in hexadecimal floating point): best_test_error, evaluations_without_improvement,
  /// recent_test_errors.
  void save(std::map<std::string, std::string>& metadata) const;
  /// Reads what save() wrote; snapshots from before the running mean have no recent errors and
  /// start the mean afresh.
  void restore(const std::map<std::string, std::string>& metadata);

 private:
  std::vector<double> recent_;  // the last kWindow test errors, oldest first
  std::optional<double> best_;
  int without_improvement_ = 0;
};

}  // namespace labpose::pipeline
