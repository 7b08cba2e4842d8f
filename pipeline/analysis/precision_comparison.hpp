// How far an analysis in bf16 or int8 is from fp32 on the same video (analyze --against-fp32): the
// keypoints of two track tables compared row by row, the figures printed and added to the reduced
// run's _meta.json. Not running the analyses (analyze.cpp runs fp32 into a temporary folder).
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "pipeline/evaluation/errors.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

/// The keypoints of each row of a track table (x, y, likelihood per bodypart).
std::vector<std::vector<KeypointPrediction>> table_keypoints(const projects::Table& table);

/// An analysis in `precision` against fp32's of the same video.
struct PrecisionComparison {
  std::string precision;
  KeypointShift shift;
  double pcutoff = 0.6;
  double frames_per_second = 0.0, fp32_frames_per_second = 0.0;
};

/// Compares the tracks `reduced_h5` with `fp32_h5` (the same video and network).
PrecisionComparison compare_tracks(const std::filesystem::path& reduced_h5,
                                   const std::filesystem::path& fp32_h5, double pcutoff);

/// One line for the console: "<video>: bf16 against fp32: keypoints moved ...".
std::string comparison_text(const std::string& video, const PrecisionComparison& comparison);

/// A shift's percentiles as labpose's JSON files hold them ("keypoints", "median_px", "p99_px",
/// "largest_px"), and back; the reading throws nlohmann::json::exception for a missing or mistyped
/// field.
nlohmann::json percentiles_json(const ShiftPercentiles& percentiles);
ShiftPercentiles percentiles_from_json(const nlohmann::json& json);

/// Adds the comparison to an analysis's _meta.json as "against_fp32" (rewritten atomically).
void record_comparison(const std::filesystem::path& meta_json,
                       const PrecisionComparison& comparison);

}  // namespace labpose::pipeline
