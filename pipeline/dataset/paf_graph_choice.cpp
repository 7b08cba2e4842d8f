// The PAF graph of a new multi-animal shuffle: complete (pruned when large), the skeleton, or the
// user's edges.
#include "pipeline/dataset/paf_graph_choice.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <set>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

// Whether `edges` touch all `nodes` bodyparts and join them into one piece.
bool connects_all(const PafGraph& edges, int nodes) {
  BodypartComponents components(nodes);
  for (const GraphEdge& edge : edges) components.join(edge);
  return components.pieces() <= 1;
}

// Every multi-animal bodypart on some edge, as DeepLabCut's validate_paf_graph demands.
void check_every_bodypart_linked(const PafGraph& graph, const std::vector<std::string>& names,
                                 const std::string& where) {
  std::vector<bool> linked(names.size(), false);
  for (const GraphEdge& edge : graph) {
    linked[static_cast<std::size_t>(edge.source)] = true;
    linked[static_cast<std::size_t>(edge.target)] = true;
  }
  std::vector<std::string> alone;
  for (std::size_t j = 0; j < names.size(); ++j)
    if (!linked[j]) alone.push_back(names[j]);
  if (alone.empty() || names.size() < 2) return;
  throw Error(
      fmt::format("{}: the PAF graph leaves {} unconnected: every multi-animal bodypart must be on "
                  "an edge, or assembly cannot attach it to an animal",
                  where, fmt::join(alone, ", ")),
      "add skeleton pairs that reach them (config.yaml's skeleton), or train every pair of "
      "bodyparts (leave out --paf-graph)");
}

int index_in(const std::vector<std::string>& names, const std::string& name) {
  const auto found = std::find(names.begin(), names.end(), name);
  return found == names.end() ? -1 : static_cast<int>(found - names.begin());
}

PafGraph skeleton_graph(const projects::ProjectConfig& config) {
  const auto& values = config.values();
  const auto& names = values.multianimal_bodyparts;
  if (values.skeleton.empty()) {
    throw Error(fmt::format("{}: --paf-graph skeleton, but config.yaml has no skeleton",
                            config.place("skeleton")),
                "list pairs of multianimalbodyparts under skeleton:, or leave out --paf-graph to "
                "train every pair");
  }
  PafGraph graph;
  for (std::size_t k = 0; k < values.skeleton.size(); ++k) {
    const projects::SkeletonEdge& pair = values.skeleton[k];
    const std::string where = config.place("skeleton", k);
    int ends[2] = {-1, -1};
    for (int side = 0; side < 2; ++side) {
      const std::string& name = side == 0 ? pair.from : pair.to;
      ends[side] = index_in(names, name);
      if (ends[side] >= 0) continue;
      const bool unique = index_in(values.unique_bodyparts, name) >= 0;
      throw Error(
          fmt::format("{}: the skeleton names \"{}\", which is {} ({}): the PAF graph "
                      "links multi-animal bodyparts only",
                      where, name, unique ? "a unique bodypart" : "not a multi-animal bodypart",
                      fmt::join(names, ", ")),
          "fix the name in config.yaml's skeleton (or remove the pair), or leave out "
          "--paf-graph to train every pair of bodyparts");
    }
    const GraphEdge edge{std::min(ends[0], ends[1]), std::max(ends[0], ends[1])};
    if (std::find(graph.begin(), graph.end(), edge) != graph.end()) {
      throw Error(
          fmt::format("{}: the skeleton pair {} - {} is given twice", where, pair.from, pair.to),
          "remove the repeated pair from config.yaml's skeleton");
    }
    graph.push_back(edge);
  }
  check_every_bodypart_linked(graph, names, config.place("skeleton"));
  return graph;
}

}  // namespace

PafGraphChoice parse_paf_graph_choice(const std::string& text) {
  if (text.empty() || text == "full") return {};
  if (text == "skeleton" || text == "config") return {PafGraphChoice::Kind::skeleton, {}};
  PafGraphChoice choice{PafGraphChoice::Kind::edges, {}};
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string pair = text.substr(at, comma - at);
    int a = -1, b = -1;
    char dash = 0;
    int used = 0;
    if (std::sscanf(pair.c_str(), "%d%c%d%n", &a, &dash, &b, &used) != 3 || dash != '-' ||
        static_cast<std::size_t>(used) != pair.size() || a < 0 || b < 0 || a == b) {
      throw UsageError(fmt::format("--paf-graph: \"{}\" is not a pair of two different bodypart "
                                   "indices like 0-1",
                                   pair),
                       "use full (every pair), skeleton (config.yaml's), or pairs of "
                       "multianimalbodyparts indices such as 0-1,0-2,1-2");
    }
    choice.edges.push_back({std::min(a, b), std::max(a, b)});
    at = comma + 1;
  }
  return choice;
}

PafGraph prune_graph(const PafGraph& graph, int nodes, int average_degree, std::uint64_t seed) {
  const auto wanted = static_cast<std::size_t>((nodes * average_degree + 1) / 2);
  if (graph.size() <= wanted || !connects_all(graph, nodes)) return graph;
  std::mt19937_64 random(seed);
  std::vector<std::size_t> order(graph.size());
  std::iota(order.begin(), order.end(), 0);
  for (;;) {  // DeepLabCut's rejection sampling; a dense graph passes within a few draws
    std::shuffle(order.begin(), order.end(), random);
    std::vector<std::size_t> kept(order.begin(),
                                  order.begin() + static_cast<std::ptrdiff_t>(wanted));
    std::sort(kept.begin(), kept.end());
    PafGraph pruned;
    for (const std::size_t e : kept) pruned.push_back(graph[e]);
    if (connects_all(pruned, nodes)) return pruned;
  }
}

PafGraph training_graph(const projects::ProjectConfig& config, const PafGraphChoice& choice,
                        std::uint64_t seed) {
  const auto& names = config.values().multianimal_bodyparts;
  const int bodyparts = static_cast<int>(names.size());
  switch (choice.kind) {
    case PafGraphChoice::Kind::complete: {
      const PafGraph graph = complete_graph(bodyparts);
      if (static_cast<int>(graph.size()) < kPruneEdgesFrom) return graph;
      return prune_graph(graph, bodyparts, kPrunedAverageDegree, seed);
    }
    case PafGraphChoice::Kind::skeleton:
      return skeleton_graph(config);
    case PafGraphChoice::Kind::edges:
      break;
  }
  std::set<std::pair<int, int>> seen;
  for (const GraphEdge& edge : choice.edges) {
    if (edge.target >= bodyparts || !seen.insert({edge.source, edge.target}).second) {
      throw UsageError(
          fmt::format("--paf-graph: the edge {}-{} {}", edge.source, edge.target,
                      edge.target >= bodyparts
                          ? fmt::format("names a bodypart beyond the {} multi-animal bodyparts "
                                        "(0 to {})",
                                        bodyparts, bodyparts - 1)
                          : "is given twice"),
          fmt::format("indices count config.yaml's multianimalbodyparts from 0: {}",
                      fmt::join(names, ", ")));
    }
  }
  check_every_bodypart_linked(choice.edges, names, "--paf-graph");
  return choice.edges;
}

}  // namespace labpose::pipeline
