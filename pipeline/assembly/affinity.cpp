// PAF line integrals between candidates.
#include "pipeline/assembly/affinity.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstddef>

#include "core/error.hpp"

namespace labpose::pipeline {

double segment_affinity(const MapStack& pafs, int edge, int source_row, int source_col,
                        int target_row, int target_col, const AffinitySettings& settings) {
  const double delta_row = target_row - source_row, delta_col = target_col - source_col;
  const double length = std::hypot(delta_row, delta_col);
  if (length == 0.0) return 0.0;
  // np.linspace(start, stop, n) is start + i * ((stop - start) / (n - 1)), the last one exactly
  // stop; DeepLabCut then truncates to int32.
  const int n = settings.samples;
  const double step_row = delta_row / (n - 1), step_col = delta_col / (n - 1);
  std::vector<int> rows(static_cast<std::size_t>(n)), cols(static_cast<std::size_t>(n));
  std::vector<double> paf_x(static_cast<std::size_t>(n)), paf_y(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool last = i == n - 1;
    rows[k] = last ? target_row : static_cast<int>(i * step_row + source_row);
    cols[k] = last ? target_col : static_cast<int>(i * step_col + source_col);
    paf_x[k] = pafs.at(2 * edge, rows[k], cols[k]);
    paf_y[k] = pafs.at(2 * edge + 1, rows[k], cols[k]);
  }
  if (settings.method == AffinityMethod::mean_dot) {
    double sum = 0.0;
    for (std::size_t k = 0; k < rows.size(); ++k) {
      sum += (paf_x[k] * delta_col + paf_y[k] * delta_row) / length;
    }
    return sum / n;
  }
  double integral_x = 0.0, integral_y = 0.0;  // np.trapz(y, x) per component
  for (std::size_t k = 1; k < rows.size(); ++k) {
    integral_x += 0.5 * (paf_x[k] + paf_x[k - 1]) * (cols[k] - cols[k - 1]);
    integral_y += 0.5 * (paf_y[k] + paf_y[k - 1]) * (rows[k] - rows[k - 1]);
  }
  return std::hypot(integral_x, integral_y) / length;
}

std::vector<EdgeCosts> edge_costs(const MapStack& pafs, const Candidates& candidates,
                                  const PafGraph& graph, const AffinitySettings& settings) {
  check_map_stack(pafs, "part affinity fields");
  const auto edges = static_cast<int>(graph.size());
  if (pafs.channels != 2 * edges) {
    throw Error(fmt::format("part affinity fields: a graph of {} edges needs {} channels (x, y "
                            "each), found {}",
                            edges, 2 * edges, pafs.channels),
                "the graph must be the one the network was trained with (pose_cfg.yaml "
                "partaffinityfield_graph)");
  }
  check_graph(graph, static_cast<int>(candidates.size()));
  if (settings.samples < 2) {
    throw Error(
        fmt::format("a PAF integral needs at least 2 samples (found {})", settings.samples));
  }
  std::vector<EdgeCosts> costs(graph.size());
  for (int e = 0; e < edges; ++e) {
    const auto& sources =
        candidates[static_cast<std::size_t>(graph[static_cast<std::size_t>(e)].source)];
    const auto& targets =
        candidates[static_cast<std::size_t>(graph[static_cast<std::size_t>(e)].target)];
    EdgeCosts& edge = costs[static_cast<std::size_t>(e)];
    edge.sources = static_cast<int>(sources.size());
    edge.targets = static_cast<int>(targets.size());
    for (const Candidate& s : sources) {
      for (const Candidate& t : targets) {
        for (const Candidate* c : {&s, &t}) {
          if (c->row < 0 || c->row >= pafs.height || c->col < 0 || c->col >= pafs.width) {
            throw Error(
                fmt::format("a candidate of bodypart {} lies at cell ({}, {}), outside the "
                            "{} rows by {} columns of the part affinity fields",
                            c->bodypart, c->row, c->col, pafs.height, pafs.width));
          }
        }
        edge.affinity.push_back(segment_affinity(pafs, e, s.row, s.col, t.row, t.col, settings));
        edge.length.push_back(std::hypot(t.row - s.row, t.col - s.col));
      }
    }
  }
  return costs;
}

}  // namespace labpose::pipeline
