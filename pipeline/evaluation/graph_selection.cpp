// DeepLabCut's choice of the PAF graph from a model's predictions on the labeled images.
#include "pipeline/evaluation/graph_selection.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/core.h>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

constexpr int kBins = 100;  // numpy.histogram with bins = linspace(0, 1, 101)

// Affinities of candidate pairs inside one labeled animal (within) and across animals (between).
struct EdgeAffinities {
  std::vector<double> within, between;
};

// A value's bin on [0, 1], or -1 outside (numpy.histogram's last bin includes 1).
int bin_of(double value) {
  if (!(value >= 0.0 && value <= 1.0)) return -1;
  return std::min(kBins - 1, static_cast<int>(value * kBins));
}

std::vector<double> normalized_histogram(const std::vector<double>& values) {
  std::vector<double> histogram(kBins, 0.0);
  double total = 0.0;
  for (const double value : values) {
    const int bin = bin_of(value);
    if (bin < 0) continue;
    histogram[static_cast<std::size_t>(bin)] += 1.0;
    total += 1.0;
  }
  for (double& count : histogram) count /= total;  // NaN when nothing fell in, as numpy gives
  return histogram;
}

// The area under the ROC curve: the between CDF integrated over the within CDF (trapezoids).
double separability(const EdgeAffinities& affinities) {
  const std::vector<double> between = normalized_histogram(affinities.between);
  const std::vector<double> within = normalized_histogram(affinities.within);
  double area = 0.0, between_cdf = 0.0, within_cdf = 0.0;
  for (int b = 0; b < kBins; ++b) {
    const double next_between = between_cdf + between[static_cast<std::size_t>(b)];
    const double next_within = within_cdf + within[static_cast<std::size_t>(b)];
    if (b > 0) area += (next_within - within_cdf) * (next_between + between_cdf) / 2;
    between_cdf = next_between;
    within_cdf = next_within;
  }
  return area;
}

// Per bodypart: labeled animal -> the index of the candidate paired with its keypoint, or -1.
std::vector<std::vector<int>> pair_labels_with_candidates(const Candidates& candidates,
                                                          const LabeledAnimals& labeled,
                                                          std::size_t bodyparts) {
  std::vector<std::vector<int>> lookup(bodyparts, std::vector<int>(labeled.size(), -1));
  for (std::size_t j = 0; j < bodyparts; ++j) {
    std::vector<Point2> found, truth;
    std::vector<std::size_t> animal_of;
    for (const Candidate& c : candidates[j]) found.push_back({c.x, c.y});
    for (std::size_t i = 0; i < labeled.size(); ++i) {
      const KeypointPrediction& p = labeled[i][j];
      if (std::isnan(p.x) || std::isnan(p.y)) continue;
      truth.push_back({p.x, p.y});
      animal_of.push_back(i);
    }
    const std::vector<int> paired = closest_neighbors(truth, found);
    for (std::size_t q = 0; q < paired.size(); ++q) lookup[j][animal_of[q]] = paired[q];
  }
  return lookup;
}

void check_inputs(const std::vector<ImageDetections>& images,
                  const std::vector<LabeledAnimals>& labeled, const PafGraph& graph) {
  if (images.size() != labeled.size()) {
    throw Error(
        fmt::format("{} images of detections but {} of labels", images.size(), labeled.size()));
  }
  for (const ImageDetections& image : images) check_made_for(image, graph);
}

// The maximum spanning forest of the edges with a finite separability (Kruskal), in the order
// the edges joined it.
std::vector<int> maximum_spanning_edges(const PafGraph& graph, const std::vector<int>& edges,
                                        const std::vector<double>& scores) {
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < edges.size(); ++k)
    if (std::isfinite(scores[k])) order.push_back(k);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  int nodes = 0;
  for (const GraphEdge& edge : graph) nodes = std::max({nodes, edge.source + 1, edge.target + 1});
  BodypartComponents components(nodes);
  std::vector<int> tree;
  for (const std::size_t k : order) {
    if (components.join(graph[static_cast<std::size_t>(edges[k])])) tree.push_back(edges[k]);
  }
  return tree;
}

}  // namespace

std::vector<std::optional<double>> edge_separability(const std::vector<ImageDetections>& images,
                                                     const std::vector<LabeledAnimals>& labeled,
                                                     const std::vector<std::size_t>& train,
                                                     const PafGraph& graph) {
  check_inputs(images, labeled, graph);
  std::vector<EdgeAffinities> affinities(graph.size());
  for (const std::size_t index : train) {
    const ImageDetections& image = images.at(index);
    const LabeledAnimals& animals = labeled.at(index);
    const auto lookup =
        pair_labels_with_candidates(image.candidates, animals, image.candidates.size());
    for (std::size_t e = 0; e < graph.size(); ++e) {
      const EdgeCosts& costs = image.costs[e];
      const auto& sources = lookup.at(static_cast<std::size_t>(graph[e].source));
      const auto& targets = lookup.at(static_cast<std::size_t>(graph[e].target));
      std::vector<bool> within(static_cast<std::size_t>(costs.sources * costs.targets), false);
      for (std::size_t i = 0; i < animals.size(); ++i) {
        if (sources[i] >= 0 && targets[i] >= 0)
          within[static_cast<std::size_t>(sources[i] * costs.targets + targets[i])] = true;
      }
      for (int s = 0; s < costs.sources; ++s) {
        for (int t = 0; t < costs.targets; ++t) {
          auto& values = within[static_cast<std::size_t>(s * costs.targets + t)]
                             ? affinities[e].within
                             : affinities[e].between;
          values.push_back(costs.affinity_at(s, t));
        }
      }
    }
  }
  std::vector<std::optional<double>> scores(graph.size());
  for (std::size_t e = 0; e < graph.size(); ++e)
    if (!affinities[e].within.empty()) scores[e] = separability(affinities[e]);
  return scores;
}

std::vector<std::vector<int>> graphs_to_try(const PafGraph& graph,
                                            const std::vector<std::optional<double>>& separability,
                                            int graphs) {
  std::vector<int> edges;
  std::vector<double> scores;
  for (std::size_t e = 0; e < graph.size() && e < separability.size(); ++e) {
    if (!separability[e]) continue;
    edges.push_back(static_cast<int>(e));
    scores.push_back(*separability[e]);
  }
  if (std::none_of(scores.begin(), scores.end(), [](double s) { return std::isfinite(s); }))
    return {edges};  // one animal per image: nothing to tell apart
  const std::vector<int> root = maximum_spanning_edges(graph, edges, scores);
  std::vector<std::size_t> rest;
  for (std::size_t k = 0; k < edges.size(); ++k)
    if (std::find(root.begin(), root.end(), edges[k]) == root.end()) rest.push_back(k);
  std::stable_sort(rest.begin(), rest.end(), [&](std::size_t a, std::size_t b) {
    const bool fa = std::isfinite(scores[a]), fb = std::isfinite(scores[b]);
    return fa != fb ? fa : (fa && scores[a] > scores[b]);
  });
  std::vector<std::vector<int>> tried{root};
  // numpy.linspace(0, n, min(graphs, n + 1), dtype=int)[1:]
  const auto n = static_cast<int>(rest.size());
  const int points = std::min(graphs, n + 1);
  for (int i = 1; i < points; ++i) {
    const int length =
        i == points - 1 ? n : static_cast<int>(i * (static_cast<double>(n) / (points - 1)));
    std::vector<int> next = root;
    for (int k = 0; k < length; ++k) next.push_back(edges[rest[static_cast<std::size_t>(k)]]);
    tried.push_back(std::move(next));
  }
  return tried;
}

// numpy.argmax, which DeepLabCut takes, returns the first NaN: a graph that assembled no animal at
// all (miss 1, purity NaN) would win.
double assembly_score(const PurityScores& scores) {
  return (1.0 - scores.miss) * scores.purity;
}

std::size_t best_trial(const std::vector<GraphTrial>& trials) {
  std::size_t chosen = 0;
  double best = -1.0;
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const double value = assembly_score(trials[k].scores);
    if (!std::isnan(value) && value > best) {
      best = value;
      chosen = k;
    }
  }
  return chosen;
}

GraphSelection select_graph(const std::vector<ImageDetections>& images,
                            const std::vector<LabeledAnimals>& labeled,
                            const std::vector<std::size_t>& train, const PafGraph& graph,
                            int multi_bodyparts, const AssemblySettings& settings) {
  GraphSelection selection;
  const auto separability = edge_separability(images, labeled, train, graph);
  for (std::vector<int>& edges : graphs_to_try(graph, separability)) {
    std::vector<ImagePurity> purities;
    for (std::size_t i = 0; i < images.size(); ++i) {
      const Assemblies found = assemble_edges(images[i], graph, edges, multi_bodyparts, settings);
      purities.push_back(image_purity(labeled[i], found.animals));
    }
    selection.trials.push_back({std::move(edges), mean_purity(purities)});
  }
  selection.best = best_trial(selection.trials);
  return selection;
}

}  // namespace labpose::pipeline
