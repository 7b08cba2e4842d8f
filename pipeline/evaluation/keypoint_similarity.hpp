// COCO's keypoint metrics of a multi-animal model as DeepLabCut computes them (evaluate_assembly in
// deeplabcut/core/inferenceutils.py): the object keypoint similarity (OKS) of a predicted animal to
// a labeled one, DeepLabCut's greedy matching of the predicted animals to the labeled ones, and
// mAP and mAR over OKS thresholds 0.50:0.05:0.95. Not the keypoint errors (errors.hpp) and not
// the per-keypoint matching that the RMSE uses (animal_matching.hpp).
//
// DeepLabCut's definitions, which labpose follows:
// - OKS = mean over the keypoints both animals have of exp(-d^2 / (2 s^2 (2 sigma)^2)), with s^2
//   the area of the labeled animal's bounding box (+ machine epsilon on each side) and one sigma
//   for every keypoint (0.072, the median of COCO's); undefined with fewer than 2 such keypoints.
// - per image, the predicted animals in decreasing affinity each take the remaining labeled animal
//   of highest OKS (an undefined OKS counts as the best, as numpy's argmax of a NaN does), until
//   no labeled animal is left; labeled animals left over are misses.
// - per threshold t, over every match in that order: precision-recall from cumulative counts of
//   OKS >= t (NaN counts as below), precision sorted decreasingly and read at 101 recall points;
//   mAP is the mean of those precisions over the thresholds, mAR the mean of the final recalls.
#pragma once

#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

/// DeepLabCut's OKS sigma: the median of COCO's per-keypoint standard deviations.
inline constexpr double kOksSigma = 0.072;

/// The OKS of `predicted` to `labeled` (the same bodyparts, NaN where absent); NaN when fewer than
/// two bodyparts are in both.
double object_keypoint_similarity(const std::vector<KeypointPrediction>& predicted,
                                  const std::vector<KeypointPrediction>& labeled, double sigma);

/// One image's predicted animals (with their affinities) and labeled ones, over the multi-animal
/// bodyparts.
struct ImageAnimals {
  std::vector<Assembly> predicted;
  std::vector<std::vector<KeypointPrediction>> labeled;  // the animals with a labeled keypoint
};

struct AssemblyScores {
  double mean_average_precision = 0.0;  // mAP, OKS 0.50:0.05:0.95
  double mean_average_recall = 0.0;     // mAR
  std::size_t matches = 0, misses = 0;  // predicted animals matched; labeled animals left over
};

/// mAP and mAR over `images`, DeepLabCut's way; NaN for both when nothing is labeled.
AssemblyScores score_assemblies(const std::vector<ImageAnimals>& images, double sigma = kOksSigma);

}  // namespace labpose::pipeline
