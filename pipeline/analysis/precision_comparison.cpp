// Track tables against each other: the same rows and columns by construction (one row per frame,
// x/y/likelihood per bodypart), so a shape mismatch is a programming error reported as such.
#include "pipeline/analysis/precision_comparison.hpp"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

std::vector<std::vector<KeypointPrediction>> table_keypoints(const projects::Table& table) {
  std::vector<std::vector<KeypointPrediction>> keypoints(table.row_count());
  for (std::size_t row = 0; row < table.row_count(); ++row) {
    for (std::size_t column = 0; column + 2 < table.column_count(); column += 3) {
      keypoints[row].push_back(
          {table.at(row, column), table.at(row, column + 1), table.at(row, column + 2)});
    }
  }
  return keypoints;
}

PrecisionComparison compare_tracks(const fs::path& reduced_h5, const fs::path& fp32_h5,
                                   double pcutoff) {
  const projects::Table reduced = projects::read_table_hdf5(reduced_h5);
  const projects::Table fp32 = projects::read_table_hdf5(fp32_h5);
  if (reduced.row_count() != fp32.row_count() || reduced.column_count() != fp32.column_count()) {
    throw Error(fmt::format("{} has {} rows of {} columns but {} has {} of {}: not the same video",
                            reduced_h5.string(), reduced.row_count(), reduced.column_count(),
                            fp32_h5.string(), fp32.row_count(), fp32.column_count()));
  }
  PrecisionComparison comparison;
  comparison.pcutoff = pcutoff;
  comparison.shift = keypoint_shift(table_keypoints(fp32), table_keypoints(reduced), pcutoff);
  return comparison;
}

std::string comparison_text(const std::string& video, const PrecisionComparison& comparison) {
  const KeypointShift& shift = comparison.shift;
  return fmt::format(
      "{}: {} against fp32: keypoints moved {:.3f} px (median), {:.3f} px (99th percentile), "
      "{:.3f} px at most, over the {} with likelihood >= {} in fp32; over all {}: {:.3f} px "
      "(median), {:.3f} px (99th percentile); likelihoods by {:.4f} at most; {:.1f} frames/s "
      "against fp32's {:.1f} ({:.2f}x)",
      video, comparison.precision, shift.confident.median, shift.confident.p99,
      shift.confident.largest, shift.confident.keypoints, comparison.pcutoff, shift.all.keypoints,
      shift.all.median, shift.all.p99, shift.likelihood_change, comparison.frames_per_second,
      comparison.fp32_frames_per_second,
      comparison.fp32_frames_per_second > 0
          ? comparison.frames_per_second / comparison.fp32_frames_per_second
          : 0.0);
}

nlohmann::json percentiles_json(const ShiftPercentiles& p) {
  return nlohmann::json{{"keypoints", p.keypoints},
                        {"median_px", p.median},
                        {"p99_px", p.p99},
                        {"largest_px", p.largest}};
}

ShiftPercentiles percentiles_from_json(const nlohmann::json& json) {
  ShiftPercentiles p;
  p.median = json.at("median_px").get<double>();
  p.p99 = json.at("p99_px").get<double>();
  p.largest = json.at("largest_px").get<double>();
  p.keypoints = json.at("keypoints").get<std::size_t>();
  return p;
}

void record_comparison(const fs::path& meta_json, const PrecisionComparison& comparison) {
  nlohmann::json meta = nlohmann::json::parse(read_file(meta_json));
  meta["against_fp32"] = {{"precision", comparison.precision},
                          {"pcutoff", comparison.pcutoff},
                          {"confident", percentiles_json(comparison.shift.confident)},
                          {"all", percentiles_json(comparison.shift.all)},
                          {"likelihood_change", comparison.shift.likelihood_change},
                          {"frames_per_second", comparison.frames_per_second},
                          {"fp32_frames_per_second", comparison.fp32_frames_per_second}};
  write_file_atomically(meta_json, meta.dump(1) + "\n");
}

}  // namespace labpose::pipeline
