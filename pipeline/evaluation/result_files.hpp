// The files evaluate writes, in DeepLabCut's TensorFlow layouts (reference/dlc-format.md §6.8):
// <scorer>-results.csv and CombinedEvaluation-results.csv (one row per training fraction, shuffle
// and snapshot; errors rounded to 2 decimals), <scorer>-keypoint-results.csv (per bodypart), and
// the predictions table. Not the evaluation itself (evaluate.hpp) and not the plots.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "pipeline/evaluation/errors.hpp"
#include "pipeline/evaluation/keypoint_similarity.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

/// One row of <scorer>-results.csv / CombinedEvaluation-results.csv (errors in pixels, unrounded).
struct EvaluationRow {
  std::int64_t iterations = 0;  // "Training iterations:"
  int percent = 0;              // "%Training dataset": int(100 * fraction)
  int shuffle = 1;              // "Shuffle number"
  double train_error = 0, test_error = 0;
  double pcutoff = 0.6;
  double train_error_pcutoff = 0, test_error_pcutoff = 0;
};

/// numpy.round(value, 2).
double round_to_hundredths(double value);

/// The CSV text pandas writes for `rows`: an unnamed index column 0..n-1, DeepLabCut's column
/// names (with their leading spaces), errors rounded to 2 decimals, NaN as an empty field.
std::string evaluation_results_csv(const std::vector<EvaluationRow>& rows);

/// Adds `rows` to CombinedEvaluation-results.csv (created if absent), replacing rows with the
/// same (iterations, percent, shuffle) and keeping the others as they are, sorted by percent,
/// shuffle, iterations; written atomically. Throws (and writes nothing) when the existing file is
/// not in that layout.
void merge_combined_evaluation(const std::filesystem::path& file,
                               const std::vector<EvaluationRow>& rows);
/// Throws as merge_combined_evaluation would, without writing (to fail before any work).
void check_combined_evaluation(const std::filesystem::path& file);

/// <scorer>-keypoint-results.csv: an "Error Type" column with rows "Train error (px)", "Test error
/// (px)", "Train error (px) with p-cutoff", "Test error (px) with p-cutoff", one column per
/// bodypart (means, not rounded, as DeepLabCut writes them).
std::string keypoint_results_csv(const std::vector<std::string>& bodyparts,
                                 const ErrorSummary& train, const ErrorSummary& test);

/// <scorer>-assembly-results.csv, a multi-animal model's keypoint metrics: `row`'s first three
/// columns, then "train mAP", "train mAR", "test mAP", "test mAR" (COCO's OKS 0.50:0.95, as
/// DeepLabCut's evaluate_assembly computes them; fractions, not rounded).
std::string assembly_results_csv(const EvaluationRow& row, const AssemblyScores& train,
                                 const AssemblyScores& test);

/// The predictions on dataset.images (one per image, in order) as DeepLabCut's evaluation table:
/// columns (scorer, bodyparts, coords x/y/likelihood), rows ("labeled-data", video, image). A
/// multi-animal dataset's has DeepLabCut's four column levels (scorer, individuals, bodyparts,
/// coords), each individual's predictions in its labeled order.
projects::Table predictions_table(const Dataset& dataset,
                                  const std::vector<std::vector<KeypointPrediction>>& predictions,
                                  const std::string& scorer);

}  // namespace labpose::pipeline
