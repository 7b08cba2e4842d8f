// The links of one image, DeepLabCut's Assembler.extract_best_links: per PAF graph edge, the pairs
// of candidates that may belong to one animal. Not the grouping of links into animals
// (assemble.hpp) and not the affinities themselves (affinity.hpp).
//
// Optimal pairing (DeepLabCut's default): of each bodypart, the max_individuals most confident
// candidates (stable among equals) that reach pcutoff; the assignment of largest total affinity
// between the two sides (SciPy's linear_sum_assignment); pairs below min_affinity dropped.
// Greedy pairing: pairs whose confidences multiply to at least pcutoff^2 and whose affinity reaches
// min_affinity, strongest first, each candidate once, at most max_individuals pairs.
#pragma once

#include <vector>

#include "pipeline/assembly/affinity.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/candidates.hpp"
#include "pipeline/assembly/graph.hpp"

namespace labpose::pipeline {

/// A possible limb: candidates[graph[edge].source][source] to
/// candidates[graph[edge].target][target].
struct CandidateLink {
  int edge = 0;
  int source = 0;
  int target = 0;
  double affinity = 0.0;  // NaN affinities count as 0, as in DeepLabCut
};

/// The links of every edge, in graph order; within an edge in the order of the source side (most
/// confident first for optimal pairing, strongest first for greedy). The inputs must agree
/// (assemble checks them).
std::vector<CandidateLink> select_links(const Candidates& candidates,
                                        const std::vector<EdgeCosts>& costs, const PafGraph& graph,
                                        const AssemblySettings& settings);

}  // namespace labpose::pipeline
