// The previous frame's animals as a prior on the links of the next (temporal_prior.hpp).
#include "pipeline/assembly/temporal_prior.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::size_t at(int index) {
  return static_cast<std::size_t>(index);
}

// The largest distance between two keypoints of the animal; 0 with fewer than two.
double animal_size(const Assembly& animal, int multi_bodyparts) {
  double largest = 0.0;
  for (int a = 0; a < multi_bodyparts; ++a) {
    const KeypointPrediction& p = animal.keypoints[at(a)];
    if (!present(p)) continue;
    for (int b = a + 1; b < multi_bodyparts; ++b) {
      const KeypointPrediction& q = animal.keypoints[at(b)];
      if (present(q)) largest = std::max(largest, std::hypot(p.x - q.x, p.y - q.y));
    }
  }
  return largest;
}

// The nearest and the next nearest of a row of distances (infinity where absent).
struct Nearest {
  int index = -1;
  double first = kInfinity;
  double second = kInfinity;

  void offer(int i, double distance) {
    if (distance < first) {
      second = first;
      first = distance;
      index = i;
    } else if (distance < second) {
      second = distance;
    }
  }
  bool clear(double margin) const { return index >= 0 && first * margin <= second; }
};

}  // namespace

PreviousOwners previous_owners(const Candidates& candidates, int multi_bodyparts,
                               const std::vector<Assembly>& previous, const TemporalPrior& prior) {
  if (multi_bodyparts < 0 || candidates.size() < at(multi_bodyparts)) {
    throw Error(fmt::format("{} multi-animal bodyparts asked for, but the candidates have {}",
                            multi_bodyparts, candidates.size()));
  }
  for (const Assembly& animal : previous) {
    if (animal.keypoints.size() != at(multi_bodyparts)) {
      throw Error(fmt::format("an animal of the previous frame has {} keypoints, not {}",
                              animal.keypoints.size(), multi_bodyparts));
    }
  }
  std::vector<std::vector<int>> owners(at(multi_bodyparts));
  std::vector<double> sizes;
  for (const Assembly& animal : previous) sizes.push_back(animal_size(animal, multi_bodyparts));
  for (int b = 0; b < multi_bodyparts; ++b) {
    const auto& list = candidates[at(b)];
    owners[at(b)].assign(list.size(), -1);
    if (!prior.enabled) continue;
    // each candidate's nearest animals, and each animal's nearest candidates (by keypoint b)
    std::vector<Nearest> by_candidate(list.size());
    std::vector<Nearest> by_animal(previous.size());
    for (std::size_t a = 0; a < previous.size(); ++a) {
      const KeypointPrediction& p = previous[a].keypoints[at(b)];
      if (!present(p)) continue;
      for (std::size_t c = 0; c < list.size(); ++c) {
        const double d = std::hypot(list[c].x - p.x, list[c].y - p.y);
        by_candidate[c].offer(static_cast<int>(a), d);
        by_animal[a].offer(static_cast<int>(c), d);
      }
    }
    for (std::size_t c = 0; c < list.size(); ++c) {
      const Nearest& mine = by_candidate[c];
      if (!mine.clear(prior.margin)) continue;
      const Nearest& theirs = by_animal[at(mine.index)];
      if (theirs.index != static_cast<int>(c) || !theirs.clear(prior.margin)) continue;
      if (mine.first > prior.max_shift * sizes[at(mine.index)]) continue;
      owners[at(b)][c] = mine.index;
    }
  }
  return owners;
}

void weaken_links_across_animals(std::vector<EdgeCosts>& costs, const PafGraph& graph,
                                 const std::vector<int>& edges, int multi_bodyparts,
                                 const PreviousOwners& owners, const TemporalPrior& prior) {
  if (costs.size() != graph.size()) {
    throw Error(fmt::format("the costs of {} edges for a graph of {}", costs.size(), graph.size()));
  }
  if (owners.size() != at(multi_bodyparts)) {
    throw Error(fmt::format("the owners of {} bodyparts for {} multi-animal bodyparts",
                            owners.size(), multi_bodyparts));
  }
  for (const int e : edges) {
    if (e < 0 || at(e) >= graph.size())
      throw Error(fmt::format("edge {} is not in the graph of {} edges", e, graph.size()));
    const GraphEdge& ends = graph[at(e)];
    EdgeCosts& edge = costs[at(e)];
    if (std::max(ends.source, ends.target) >= multi_bodyparts ||
        std::min(ends.source, ends.target) < 0 ||
        at(edge.sources) != owners[at(ends.source)].size() ||
        at(edge.targets) != owners[at(ends.target)].size()) {
      throw Error(fmt::format("the costs of edge {} do not fit its bodyparts' candidates", e));
    }
    const auto& sources = owners[at(ends.source)];
    const auto& targets = owners[at(ends.target)];
    for (int s = 0; s < edge.sources; ++s) {
      const int from = sources[at(s)];
      if (from < 0) continue;
      for (int t = 0; t < edge.targets; ++t) {
        const int to = targets[at(t)];
        if (to >= 0 && to != from) edge.set_affinity(s, t, edge.affinity_at(s, t) * prior.factor);
      }
    }
  }
}

Assemblies assemble_after(const ImageDetections& detections, const PafGraph& graph,
                          const std::vector<int>& edges, int multi_bodyparts,
                          const MapAssemblySettings& settings,
                          const std::vector<Assembly>& previous) {
  if (!settings.temporal.enabled || previous.empty()) {
    return assemble_edges(detections, graph, edges, multi_bodyparts, settings.assembly);
  }
  check_made_for(detections, graph);
  const PreviousOwners owners =
      previous_owners(detections.candidates, multi_bodyparts, previous, settings.temporal);
  ImageDetections weakened = detections;
  weaken_links_across_animals(weakened.costs, graph, edges, multi_bodyparts, owners,
                              settings.temporal);
  return assemble_edges(weakened, graph, edges, multi_bodyparts, settings.assembly, owners);
}

}  // namespace labpose::pipeline
