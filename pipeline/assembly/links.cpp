// Per-edge link selection: optimal assignment or greedy pairing.
#include "pipeline/assembly/links.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>

#include "pipeline/assembly/assignment.hpp"

namespace labpose::pipeline {
namespace {

std::size_t at(int index) {
  return static_cast<std::size_t>(index);
}

double affinity_or_zero(const EdgeCosts& cost, int s, int t) {
  const double a = cost.affinity_at(s, t);
  return std::isnan(a) ? 0.0 : a;
}

// The indices of the `limit` most confident candidates (stable among equals) reaching `pcutoff`,
// most confident first.
std::vector<int> most_confident(const std::vector<Candidate>& list, int limit, double pcutoff) {
  std::vector<int> order(list.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&list](int a, int b) {
    return list[at(a)].confidence > list[at(b)].confidence;
  });
  if (order.size() > at(limit)) order.resize(at(limit));
  std::erase_if(order, [&](int i) { return !(list[at(i)].confidence >= pcutoff); });
  return order;
}

void optimal_pairs(int edge, const std::vector<Candidate>& sources,
                   const std::vector<Candidate>& targets, const EdgeCosts& cost,
                   const AssemblySettings& settings, std::vector<CandidateLink>& links) {
  const std::vector<int> keep_s =
      most_confident(sources, settings.max_individuals, settings.pcutoff);
  const std::vector<int> keep_t =
      most_confident(targets, settings.max_individuals, settings.pcutoff);
  std::vector<double> weights;
  for (const int s : keep_s) {
    for (const int t : keep_t) weights.push_back(affinity_or_zero(cost, s, t));
  }
  const auto rows = static_cast<int>(keep_s.size()), cols = static_cast<int>(keep_t.size());
  for (const auto& [r, c] : max_weight_assignment(weights, rows, cols)) {
    const double w = weights[at(r * cols + c)];
    if (w >= settings.min_affinity) links.push_back({edge, keep_s[at(r)], keep_t[at(c)], w});
  }
}

void greedy_pairs(int edge, const std::vector<Candidate>& sources,
                  const std::vector<Candidate>& targets, const EdgeCosts& cost,
                  const AssemblySettings& settings, std::vector<CandidateLink>& links) {
  std::vector<CandidateLink> pairs;  // row-major, then strongest first
  const double floor = settings.pcutoff * settings.pcutoff;
  for (int s = 0; s < cost.sources; ++s) {
    for (int t = 0; t < cost.targets; ++t) {
      const double w = affinity_or_zero(cost, s, t);
      if (sources[at(s)].confidence * targets[at(t)].confidence >= floor &&
          w >= settings.min_affinity) {
        pairs.push_back({edge, s, t, w});
      }
    }
  }
  std::stable_sort(pairs.begin(), pairs.end(), [](const CandidateLink& a, const CandidateLink& b) {
    return a.affinity > b.affinity;
  });
  std::vector<char> source_seen(sources.size(), 0), target_seen(targets.size(), 0);
  int linked = 0;
  for (const CandidateLink& p : pairs) {
    if (source_seen[at(p.source)] || target_seen[at(p.target)]) continue;
    source_seen[at(p.source)] = target_seen[at(p.target)] = 1;
    links.push_back(p);
    if (++linked == settings.max_individuals) break;
  }
}

}  // namespace

std::vector<CandidateLink> select_links(const Candidates& candidates,
                                        const std::vector<EdgeCosts>& costs, const PafGraph& graph,
                                        const AssemblySettings& settings) {
  std::vector<CandidateLink> links;
  for (std::size_t e = 0; e < graph.size(); ++e) {
    const auto& sources = candidates[at(graph[e].source)];
    const auto& targets = candidates[at(graph[e].target)];
    if (sources.empty() || targets.empty()) continue;
    const auto edge = static_cast<int>(e);
    if (settings.greedy) {
      greedy_pairs(edge, sources, targets, costs[e], settings, links);
    } else {
      optimal_pairs(edge, sources, targets, costs[e], settings, links);
    }
  }
  return links;
}

}  // namespace labpose::pipeline
