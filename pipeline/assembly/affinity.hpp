// Edge costs of a multi-animal model: for each PAF graph edge and each pair of candidates of its
// two bodyparts, how well the part-affinity field supports a limb between them (the affinity) and
// how long the limb is. Not the choice of links or animals (assemble.hpp).
//
// DeepLabCut's affinity (compute_edge_costs, both engines), which labpose computes by default:
// n points (10) on the segment between the two candidates' cells, np.linspace then truncated to
// whole cells (nearest-below, no interpolation); the PAF's x and y components are integrated
// separately by the trapezoidal rule against the samples' columns and rows; the affinity is the
// norm of that 2-vector divided by the segment's length in cells. So it ignores the PAF's sign, and
// a perfect field gives 1 along the axes but sqrt(ux^4 + uy^4) (0.71 at 45 degrees) elsewhere.
// AffinityMethod::mean_dot is the textbook (OpenPose) integral at the same samples: the mean of
// PAF . unit vector, signed. labpose does not round affinities and lengths to 3 decimals.
#pragma once

#include <vector>

#include "pipeline/assembly/candidates.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/assembly/maps.hpp"

namespace labpose::pipeline {

enum class AffinityMethod {
  deeplabcut,  // | (integral of PAF_x d col, integral of PAF_y d row) | / length
  mean_dot,    // mean over the samples of PAF . (target - source) / length
};

struct AffinitySettings {
  int samples = 10;  // DeepLabCut's n_points
  AffinityMethod method = AffinityMethod::deeplabcut;
};

/// The costs of one graph edge: (sources, targets) matrices, row-major, over the candidates of the
/// edge's source and target bodyparts in their Candidates order.
struct EdgeCosts {
  int sources = 0;
  int targets = 0;
  std::vector<double> affinity;  // (sources, targets); 0 where the two cells coincide
  std::vector<double> length;    // (sources, targets), in map cells (DeepLabCut's "distance")

  double affinity_at(int s, int t) const { return affinity[index(s, t)]; }
  double length_at(int s, int t) const { return length[index(s, t)]; }
  void set_affinity(int s, int t, double value) { affinity[index(s, t)] = value; }

 private:
  std::size_t index(int s, int t) const {
    return static_cast<std::size_t>(s) * static_cast<std::size_t>(targets) +
           static_cast<std::size_t>(t);
  }
};

/// The affinity of a segment from cell (source_row, source_col) to (target_row, target_col) in the
/// PAF of graph edge `edge`: channels 2 * edge (x) and 2 * edge + 1 (y) of `pafs` (2E, H, W).
double segment_affinity(const MapStack& pafs, int edge, int source_row, int source_col,
                        int target_row, int target_col, const AffinitySettings& settings);

/// The costs of every edge of `graph` (one EdgeCosts per edge, in graph order; 0 x n when a side
/// has no candidates). pafs: (2E, H, W), E = graph.size(), on the grid of the score maps the
/// candidates came from. Throws Error when the PAF channels are not 2E, an edge names a bodypart
/// that `candidates` does not have, or settings.samples < 2.
std::vector<EdgeCosts> edge_costs(const MapStack& pafs, const Candidates& candidates,
                                  const PafGraph& graph, const AffinitySettings& settings);

}  // namespace labpose::pipeline
