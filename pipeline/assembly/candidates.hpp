// Candidate keypoints of a multi-animal model, DeepLabCut's way: per bodypart, every local maximum
// of the score map after a Gaussian smoothing (sigma, window 2 * nms_radius + 1), in a max-pool
// window of nms_radius x nms_radius cells, at or above min_confidence; position refined as the
// single-animal decoder does (pipeline/pose/decode.hpp), then, by default, with the refinements of
// its neighbours (below); confidence = the unsmoothed score there.
// Not the grouping into animals (assemble.hpp) and not the sigmoid: scores are probabilities.
//
// Differences from DeepLabCut (TensorFlow engine, find_local_peak_indices_maxpool_nms):
// - equal maxima inside one window (a flat plateau) give one candidate, the first in row-major
//   order; DeepLabCut's max-pool keeps every cell of the plateau.
// - positions and confidences are not rounded to 3 or 5 decimals.
// - top_k can cap the candidates per bodypart; DeepLabCut keeps all (its `topktoretain` is the
//   number of animals: AssemblySettings::max_individuals).
// - the PyTorch engine reports the smoothed score as the confidence; labpose, like TensorFlow,
//   reports the score map's own value.
// - a candidate's position is the mean, weighted by their scores, of the positions that its cell
//   and the 8 cells around it refine to, counting those closer than one stride to its own cell's
//   (`locref_neighbours: true`, the default; false is DeepLabCut's: its own cell's alone). Every
//   cell of the disk around a keypoint learns to point at it, and the mean of several is less
//   noisy than one (docs/analysis.md#where-a-candidate-lies).
#pragma once

#include <vector>

#include "pipeline/assembly/maps.hpp"
#include "pipeline/pose/decode.hpp"

namespace labpose::pipeline {

struct CandidateSettings {
  int nms_radius = 5;  // pose_cfg `nmsradius`: the max-pool window is this many cells wide
  double min_confidence = 0.01;   // pose_cfg `minconfidence`, on the smoothed map
  double smoothing_sigma = 1.0;   // pose_cfg `sigma`, in cells; 0 turns the smoothing off
  int top_k = 0;                  // the most candidates kept per bodypart (the highest); 0 = all
  bool locref_neighbours = true;  // pose_cfg `locref_neighbours` (labpose's): the neighbours' mean
  DecodeSettings decode;          // stride, locref_stdev, location_refinement
};

/// One local maximum of one bodypart's score map.
struct Candidate {
  int bodypart = 0;
  int row = 0, col = 0;     // the cell on the map grid
  double x = 0.0, y = 0.0;  // image pixels: col * stride + stride / 2 + dx * locref_stdev
  double confidence = 0.0;  // the score map's value at the cell
};

/// candidates[j]: bodypart j's candidates in row-major order of their cells.
using Candidates = std::vector<std::vector<Candidate>>;

/// The candidates of every bodypart of one image.
/// scores: (J, H, W) probabilities; locref: (2J, H, W) with dx of bodypart j in channel 2j and dy
/// in 2j + 1 (as the network writes them, before locref_stdev), or no values at all when
/// settings.decode.location_refinement is false. Throws Error when the sizes disagree.
Candidates find_candidates(const MapStack& scores, const MapStack& locref,
                           const CandidateSettings& settings);

/// The cells (row * W + col, row-major order) of the peaks of one H x W map: the cells equal to the
/// maximum of their nms_radius x nms_radius window (TensorFlow's "SAME" max-pool) and at or above
/// min_confidence, ties inside a window going to the first cell. No smoothing; NaN never peaks.
std::vector<int> find_map_peaks(const float* map, int height, int width, int nms_radius,
                                double min_confidence);

/// DeepLabCut's Gaussian smoothing of one H x W map: a (2 * nms_radius + 1)^2 kernel, the outer
/// product of softmax(-k^2 / (2 sigma^2)) for k in [-nms_radius, nms_radius], zeros outside.
std::vector<float> smooth_map(const float* map, int height, int width, int nms_radius,
                              double sigma);

}  // namespace labpose::pipeline
