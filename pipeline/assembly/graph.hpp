// The part-affinity graph of a multi-animal model: which pairs of multi-animal bodyparts have a PAF
// (edge e owns PAF channels 2e = x and 2e + 1 = y). DeepLabCut's default graph and the one from a
// config's skeleton. Not DeepLabCut's random pruning of large graphs (15+ bodyparts), not unique
// bodyparts (they are never linked), and not the drawing skeleton of labeled videos.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace labpose::pipeline {

/// One edge: indices into the multi-animal bodyparts, source < target for the graphs built here.
struct GraphEdge {
  int source = 0;
  int target = 0;
  bool operator==(const GraphEdge&) const = default;
};

using PafGraph = std::vector<GraphEdge>;

/// DeepLabCut's default graph: every pair (i, j), i < j, of `bodyparts` multi-animal bodyparts in
/// itertools.combinations order: (0,1), (0,2), ..., (0,J-1), (1,2), ...; J(J-1)/2 edges.
PafGraph complete_graph(int bodyparts);

/// The graph of a skeleton (pairs of names of `multianimal_bodyparts`), in skeleton order, each
/// pair sorted by bodypart index as DeepLabCut does. Throws Error for a name that is not a
/// multi-animal bodypart, a pair naming one bodypart twice, and a pair given twice.
PafGraph graph_from_skeleton(const std::vector<std::string>& multianimal_bodyparts,
                             const std::vector<std::pair<std::string, std::string>>& skeleton);

/// The edges `edges` (indices into `graph`) of `graph`, in that order. Throws Error for an index
/// outside the graph or given twice.
PafGraph subgraph(const PafGraph& graph, const std::vector<int>& edges);

/// Throws Error when an edge names a bodypart outside [0, bodyparts) or the same bodypart twice.
void check_graph(const PafGraph& graph, int bodyparts);

/// Which bodyparts edges have joined so far (a union-find over bodyparts 0..nodes-1), for spanning
/// trees and connectedness.
class BodypartComponents {
 public:
  explicit BodypartComponents(int nodes);
  /// Joins the pieces of `edge`'s two bodyparts; false when they were already one piece.
  bool join(const GraphEdge& edge);
  /// How many pieces the bodyparts are in (each alone at first).
  int pieces() const { return pieces_; }

 private:
  int root_of(int node);
  std::vector<int> parent_;
  int pieces_;
};

}  // namespace labpose::pipeline
