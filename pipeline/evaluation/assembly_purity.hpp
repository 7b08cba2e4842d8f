// How well assembled animals keep each labeled animal's keypoints together, as DeepLabCut measures
// it when it picks the PAF graph (_benchmark_paf_graphs in deeplabcut/pose_estimation_tensorflow/
// lib/crossvalutils.py): per image with two or more labeled animals, every labeled keypoint takes
// the nearest predicted keypoint of any animal (three nearest tried, nearest first, each predicted
// keypoint taken once); then
// - purity: of those pairs, the fraction whose labeled animal is the one most of its predicted
//   animal's pairs belong to (the contingency matrix's column maxima over its total);
// - miss: the fraction of labeled keypoints with no predicted keypoint to match, (labeled -
//   predicted) / labeled, at least 0; 1 where nothing was assembled;
// - whole animals: the fraction of predicted animals whose paired keypoints all belong to one
//   labeled animal (the stricter figure; DeepLabCut does not report it).
// Not COCO's keypoint metrics (keypoint_similarity.hpp).
#pragma once

#include <vector>

#include "pipeline/assembly/assemble.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

struct Point2 {
  double x = 0.0, y = 0.0;
};

/// For each query point the index of the reference point paired with it, or -1: queries in order
/// of their nearest distance each take the first of their `k` nearest references not yet taken,
/// until every reference is taken (DeepLabCut's _find_closest_neighbors).
std::vector<int> closest_neighbors(const std::vector<Point2>& queries,
                                   const std::vector<Point2>& references, int k = 3);

struct ImagePurity {
  double miss = 0.0;      // NaN for images with fewer than two labeled animals
  double purity = 0.0;    // NaN there and where nothing was assembled
  int animals = 0;        // predicted animals with a paired keypoint
  int whole_animals = 0;  // of those, the ones whose pairs all belong to one labeled animal
};

/// One image: `labeled` animals over the multi-animal bodyparts (NaN where unlabeled; animal i is
/// identity i), `predicted` the assembled ones.
ImagePurity image_purity(const std::vector<std::vector<KeypointPrediction>>& labeled,
                         const std::vector<Assembly>& predicted);

struct PurityScores {
  double miss = 0.0;           // mean over the images that have one; NaN when none has
  double purity = 0.0;         // mean over the images that have one; NaN when none has
  double whole_animals = 0.0;  // whole / predicted animals over every image; NaN without animals
  int images = 0;              // images with two or more labeled animals
};

PurityScores mean_purity(const std::vector<ImagePurity>& images);

}  // namespace labpose::pipeline
