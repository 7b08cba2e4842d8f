// The tracks CSV of a live run, written row by row as the poses come: DeepLabCut's tracks CSV of
// one animal, or for several animals one row per animal tracked, with its track id. Not the frame
// loop (live.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/live/live.hpp"

namespace labpose::pipeline {

/// A processor writing the poses as CSV with DeepLabCut's scorer/bodyparts/coords header rows, each
/// row ending in two more columns: the pose's timestamp and latency in seconds.
/// - One animal: DeepLabCut's tracks CSV, one row per pose (its frame number, then x, y, likelihood
///   per bodypart).
/// - Several animals (`animal_bodyparts` set: the first that many of `bodyparts` are each
///   animal's, the rest the unique ones): a `track` column after the frame number and one row per
///   animal tracked (its track id, its keypoints; the unique bodyparts' cells empty), then, when
///   there are unique bodyparts, a row `single` with theirs. A frame with neither has one row with
///   an empty track and empty keypoints, so that every frame's timestamp and latency are kept.
/// Rows go to `<file>.part` as they come and finish() renames it to `file`, so a run killed midway
/// leaves its rows in the .part file and never a half-written `file`.
class LiveCsvWriter final : public PoseProcessor {
 public:
  LiveCsvWriter(const std::filesystem::path& file, const std::string& scorer,
                const std::vector<std::string>& bodyparts,
                std::optional<std::size_t> animal_bodyparts = std::nullopt);
  ~LiveCsvWriter() override;
  LiveCsvWriter(const LiveCsvWriter&) = delete;
  LiveCsvWriter& operator=(const LiveCsvWriter&) = delete;
  void process(const LivePose& pose) override;
  /// Flushes and renames the file into place. Throws Error when the disk refused a row.
  void finish();

 private:
  void write_row(const LivePose& pose, const std::string& track,
                 const std::vector<KeypointPrediction>& animal,
                 const std::vector<KeypointPrediction>& unique);

  std::filesystem::path file_, part_;
  std::ofstream out_;
  std::size_t bodyparts_ = 0;
  std::optional<std::size_t> animal_bodyparts_;
  std::int64_t rows_ = 0;
};

}  // namespace labpose::pipeline
