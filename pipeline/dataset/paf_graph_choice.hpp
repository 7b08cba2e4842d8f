// Which part-affinity graph a new multi-animal shuffle trains, as DeepLabCut's
// create_multianimaltraining_dataset chooses it (`paf_graph`):
// - every pair of multi-animal bodyparts (the default). From 105 edges on (15 bodyparts), a random
//   connected graph with an average degree of 6 is kept instead, as DeepLabCut prunes it
//   (prune_paf_graph; Lauer et al. 2022, Fig. S9c), drawn from the shuffle's seed;
// - config.yaml's skeleton (DeepLabCut's paf_graph="config"): every bodypart of an animal must be
//   on it, and it may only name multi-animal bodyparts;
// - a list of index pairs given by the user.
// `evaluate` later picks the edges assembly uses from the graph trained (graph_selection.hpp).
#pragma once

#include <cstdint>
#include <string>

#include "pipeline/assembly/graph.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// DeepLabCut's defaults: graphs with this many edges or more are pruned to this average degree.
inline constexpr int kPruneEdgesFrom = 105;
inline constexpr int kPrunedAverageDegree = 6;

struct PafGraphChoice {
  enum class Kind { complete, skeleton, edges };
  Kind kind = Kind::complete;
  PafGraph edges;  // Kind::edges only
};

/// `--paf-graph`: "full", "skeleton" (or DeepLabCut's "config"), or index pairs "0-1,0-2,1-2".
/// Throws UsageError for anything else.
PafGraphChoice parse_paf_graph_choice(const std::string& text);

/// The graph to train for `config`'s multi-animal bodyparts. Throws Error naming config.yaml:line
/// for a skeleton (or edge list) that names a bodypart that is not a multi-animal one, joins one
/// to itself, repeats an edge, or leaves a bodypart unconnected.
PafGraph training_graph(const projects::ProjectConfig& config, const PafGraphChoice& choice,
                        std::uint64_t seed);

/// A random connected subgraph of `graph` (over `nodes` bodyparts) with ceil(nodes * degree / 2)
/// edges, in `graph`'s order; `graph` itself when it has no more edges than that.
PafGraph prune_graph(const PafGraph& graph, int nodes, int average_degree, std::uint64_t seed);

}  // namespace labpose::pipeline
