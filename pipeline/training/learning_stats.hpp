// learning_stats.csv, the training curve beside the snapshots: one row every display_iters
// iterations (and when training stops) with the mean loss, the learning rate, the test error when
// it was measured (the validation error in a sweep's trial), and the training time. Not the
// decision of when a row is due (the trainer's).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

namespace labpose::pipeline {

/// Which images the error column is measured on: the split's test images, or a sweep trial's
/// validation images (the header then says validation_error).
enum class HeldOutImages { test, validation };

/// One row of learning_stats.csv.
struct LearningStatsRow {
  std::int64_t iteration = 0;
  double loss = 0.0;  // mean over the display_iters steps up to `iteration`
  double learning_rate = 0.0;
  // Mean error (pixels) on the held-out images (test, or a trial's validation) when evaluated at
  // this iteration.
  std::optional<double> test_error;
  double seconds = 0.0;  // training wall time up to `iteration`, resumed runs included
};

/// Replaces `file` atomically with the header and `rows` (loss and rate to 6 significant digits,
/// test error to 0.001 px, seconds to 0.1 s).
void write_learning_stats(const std::filesystem::path& file,
                          const std::vector<LearningStatsRow>& rows,
                          HeldOutImages held_out = HeldOutImages::test);

/// Reads learning_stats.csv (for tests, plots and resuming); errors name the file and line.
std::vector<LearningStatsRow> read_learning_stats(const std::filesystem::path& file);

}  // namespace labpose::pipeline
