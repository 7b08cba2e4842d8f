// Part-affinity graphs: complete, from a skeleton, and their checks.
#include "pipeline/assembly/graph.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <numeric>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

int index_of(const std::vector<std::string>& names, const std::string& name, std::size_t pair) {
  const auto found = std::find(names.begin(), names.end(), name);
  if (found == names.end()) {
    throw Error(fmt::format("skeleton pair {}: '{}' is not one of the {} multianimalbodyparts ({})",
                            pair + 1, name, names.size(), fmt::join(names, ", ")),
                "a PAF edge joins two multianimalbodyparts; unique bodyparts have no edges");
  }
  return static_cast<int>(found - names.begin());
}

}  // namespace

PafGraph complete_graph(int bodyparts) {
  PafGraph graph;
  for (int i = 0; i < bodyparts; ++i) {
    for (int j = i + 1; j < bodyparts; ++j) graph.push_back({i, j});
  }
  return graph;
}

PafGraph graph_from_skeleton(const std::vector<std::string>& multianimal_bodyparts,
                             const std::vector<std::pair<std::string, std::string>>& skeleton) {
  PafGraph graph;
  for (std::size_t k = 0; k < skeleton.size(); ++k) {
    const int a = index_of(multianimal_bodyparts, skeleton[k].first, k);
    const int b = index_of(multianimal_bodyparts, skeleton[k].second, k);
    if (a == b) {
      throw Error(
          fmt::format("skeleton pair {}: '{}' is joined to itself", k + 1, skeleton[k].first),
          "each skeleton pair names two different bodyparts");
    }
    const GraphEdge edge{std::min(a, b), std::max(a, b)};
    if (std::find(graph.begin(), graph.end(), edge) != graph.end()) {
      throw Error(fmt::format("skeleton pair {}: '{}'-'{}' is given twice", k + 1,
                              skeleton[k].first, skeleton[k].second),
                  "remove the repeated pair from the skeleton");
    }
    graph.push_back(edge);
  }
  return graph;
}

PafGraph subgraph(const PafGraph& graph, const std::vector<int>& edges) {
  PafGraph out;
  std::vector<bool> used(graph.size(), false);
  for (const int e : edges) {
    if (e < 0 || static_cast<std::size_t>(e) >= graph.size() || used[static_cast<std::size_t>(e)]) {
      throw Error(fmt::format("edge {} is not an edge of the {}-edge PAF graph, or is given twice",
                              e, graph.size()),
                  "paf_best in test/pose_cfg.yaml lists edge indices of partaffinityfield_graph, "
                  "each once; evaluate again to choose them afresh");
    }
    used[static_cast<std::size_t>(e)] = true;
    out.push_back(graph[static_cast<std::size_t>(e)]);
  }
  return out;
}

void check_graph(const PafGraph& graph, int bodyparts) {
  for (std::size_t e = 0; e < graph.size(); ++e) {
    const GraphEdge& edge = graph[e];
    for (const int part : {edge.source, edge.target}) {
      if (part < 0 || part >= bodyparts) {
        throw Error(fmt::format("PAF graph edge {} ({}, {}) names bodypart {}, but there are {} "
                                "multi-animal bodyparts (0 to {})",
                                e, edge.source, edge.target, part, bodyparts, bodyparts - 1),
                    "the graph indexes multianimalbodyparts only; unique bodyparts come after");
      }
    }
    if (edge.source == edge.target) {
      throw Error(fmt::format("PAF graph edge {} joins bodypart {} to itself", e, edge.source));
    }
  }
}

BodypartComponents::BodypartComponents(int nodes)
    : parent_(static_cast<std::size_t>(std::max(nodes, 0))), pieces_(std::max(nodes, 0)) {
  std::iota(parent_.begin(), parent_.end(), 0);
}

int BodypartComponents::root_of(int node) {
  while (parent_[static_cast<std::size_t>(node)] != node) {  // with path halving
    const int up = parent_[static_cast<std::size_t>(node)];
    node = parent_[static_cast<std::size_t>(node)] = parent_[static_cast<std::size_t>(up)];
  }
  return node;
}

bool BodypartComponents::join(const GraphEdge& edge) {
  const int a = root_of(edge.source), b = root_of(edge.target);
  if (a == b) return false;
  parent_[static_cast<std::size_t>(a)] = b;
  --pieces_;
  return true;
}

}  // namespace labpose::pipeline
