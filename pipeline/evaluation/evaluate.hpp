// labpose evaluate, DeepLabCut's evaluate_network (reference/dlc-format.md §6.8): a shuffle's
// snapshots predict every image of its training set at full size; train and test errors (mean
// distance in pixels, also over predictions with likelihood >= pcutoff, overall and per bodypart)
// go to labpose-evaluation-results/iteration-K/ in DeepLabCut's layouts, with plotted frames on
// request. A multi-animal network's animals are assembled, matched to the labeled ones for the
// errors, and scored by COCO's mAP and mAR as DeepLabCut scores them (keypoint_similarity.hpp).
// Not training-time evaluation (the trainer calls summarize_errors itself).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "pipeline/evaluation/assembly_purity.hpp"
#include "pipeline/evaluation/errors.hpp"
#include "pipeline/evaluation/keypoint_similarity.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct EvaluateOptions {
  int shuffle = 1;
  std::optional<double> training_fraction;           // default: every TrainingFraction
  std::optional<projects::SnapshotIndex> snapshots;  // default: config.yaml's snapshotindex
  std::string device = "cpu";
  /// Other than fp32: the images are predicted in this precision too, and its errors and how far
  /// its keypoints are from fp32's are reported (SnapshotEvaluation::reduced); the files always
  /// hold fp32's. `automatic` compares only where it picks a precision other than fp32.
  nets::PlanPrecision precision = nets::PlanPrecision::fp32;
  bool plot = false;  // PNGs of the test and training frames, labels vs predictions
};

/// A snapshot's errors in a precision other than fp32, and how far its keypoints moved.
struct ReducedPrecisionEvaluation {
  nets::PlanPrecision precision = nets::PlanPrecision::bf16;
  ErrorSummary train, test;
  KeypointShift shift;  // against fp32, over every image of the training set
};

/// A multi-animal model's keypoint metrics on its training and test images.
struct AssemblyEvaluation {
  AssemblyScores train, test;
  PurityScores train_purity, test_purity;  // assembly_purity.hpp
  std::vector<int> paf_best;               // the edges chosen (graph_selection.hpp)
  std::size_t graph_edges = 0;             // of the model's graph
  int nms_radius = 5;                      // the candidates' nmsradius
  bool nms_radius_chosen = false;          // chosen on the labeled images and written
};

struct SnapshotEvaluation {
  double training_fraction = 0.0;
  int shuffle = 1;
  std::int64_t iterations = 0;
  std::string snapshot;  // the snapshot's file stem, e.g. "snapshot-5000"
  std::string scorer;    // DLC_<net>_<Task><date>shuffle<S>_<iterations>
  std::vector<std::string> bodyparts;
  double pcutoff = 0.6;
  std::size_t train_images = 0, test_images = 0;
  ErrorSummary train, test;
  std::filesystem::path folder;                       // the shuffle's evaluation folder
  std::vector<std::filesystem::path> written;         // files written for this snapshot
  std::optional<ReducedPrecisionEvaluation> reduced;  // with EvaluateOptions::precision
  std::optional<AssemblyEvaluation> assembly;         // multi-animal models
};

/// Evaluates the chosen snapshots of `options.shuffle` for each training fraction and writes the
/// results (each file atomically; CombinedEvaluation-results.csv merged). Throws Error when the
/// shuffle was never made, has no snapshots (train first) or its files do not fit together, and
/// UsageError for a snapshot index out of range.
std::vector<SnapshotEvaluation> evaluate_network(const projects::ProjectConfig& config,
                                                 const EvaluateOptions& options);

}  // namespace labpose::pipeline
