// Residual chaining (a longest path per connected group of a small DAG) and the two rounds of
// putting residuals back, after stitch.py.
#include "pipeline/tracking/residuals.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace labpose::pipeline {
namespace {

double distance(const std::array<double, 2>& a, const std::array<double, 2>& b) {
  return std::hypot(a[0] - b[0], a[1] - b[1]);
}

std::size_t find_root(std::vector<std::size_t>& parent, std::size_t i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

// The hole of `track` that holds `residual` entirely: the distance of its centroids to the track's
// on either side, as stitch.py measures it; none when it lies in no hole.
std::optional<double> hole_distance(const Piece& track, const Piece& residual) {
  const auto after = std::lower_bound(track.frames.begin(), track.frames.end(), residual.end()) -
                     track.frames.begin();
  if (after == 0 || static_cast<std::size_t>(after) >= track.size()) return std::nullopt;
  const auto e = static_cast<std::size_t>(after), s = e - 1;
  const int left_gap = residual.start() - track.frames[s];
  const int right_gap = track.frames[e] - residual.end();
  if (left_gap <= 0 || right_gap <= 0) return std::nullopt;
  const double left = distance(track.centroid[s], residual.centroid.front());
  const double right = distance(track.centroid[e], residual.centroid.back());
  if (left_gap <= 3) return left;
  if (right_gap <= 3) return right;
  return left + right;
}

}  // namespace

std::vector<Piece> prestitch_residuals(std::vector<Piece> residuals, int max_gap) {
  std::stable_sort(residuals.begin(), residuals.end(),
                   [](const Piece& a, const Piece& b) { return a.start() < b.start(); });
  const std::size_t n = residuals.size();
  std::vector<std::vector<std::pair<std::size_t, double>>> next(n);
  std::vector<std::size_t> parent(n);
  std::iota(parent.begin(), parent.end(), std::size_t{0});
  std::vector<bool> linked(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      const int gap = residuals[j].start() - residuals[i].end();
      if (gap < 1) continue;
      if (gap >= max_gap) break;
      next[i].push_back({j, 1.0 - box_overlap(residuals[i], residuals[j])});
      linked[i] = linked[j] = true;
      parent[find_root(parent, i)] = find_root(parent, j);
    }
  }
  // Longest (heaviest) path ending at each node; nodes are in topological order already.
  std::vector<double> best(n, 0.0);
  std::vector<std::size_t> previous(n, n);
  for (std::size_t i = 0; i < n; ++i)
    for (const auto& [j, weight] : next[i])
      if (best[i] + weight > best[j]) {
        best[j] = best[i] + weight;
        previous[j] = i;
      }
  std::vector<std::size_t> path_end(n, n);  // per group root: the node where its longest path ends
  for (std::size_t i = 0; i < n; ++i) {
    if (!linked[i]) continue;
    auto& end = path_end[find_root(parent, i)];
    if (end == n || best[i] > best[end]) end = i;
  }
  std::vector<bool> used(n, false);
  std::vector<Piece> result;
  for (std::size_t root = 0; root < n; ++root) {
    if (path_end[root] == n) continue;
    Piece chain;
    for (std::size_t at = path_end[root]; at != n; at = previous[at]) {
      chain = chain.frames.empty() ? residuals[at] : join(residuals[at], chain);
      used[at] = true;
    }
    result.push_back(std::move(chain));
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!used[i]) result.push_back(std::move(residuals[i]));
  return result;
}

std::vector<Piece> add_back_residuals(std::vector<Piece>& tracks, std::vector<Piece> residuals) {
  std::erase_if(residuals, [](const Piece& residual) { return residual.size() < 2; });
  std::stable_sort(residuals.begin(), residuals.end(),
                   [](const Piece& a, const Piece& b) { return a.size() > b.size(); });
  std::vector<Piece> fit_nowhere;
  for (bool added = true; added;) {
    added = false;
    std::vector<Piece> undecided;
    for (auto& residual : residuals) {
      std::vector<std::size_t> fits;
      for (std::size_t t = 0; t < tracks.size(); ++t)
        if (!tracks[t].frames.empty() && !overlap(tracks[t], residual)) fits.push_back(t);
      if (fits.empty()) {
        fit_nowhere.push_back(std::move(residual));
      } else if (fits.size() == 1) {
        auto& track = tracks[fits.front()];
        track = join(track, residual);
        added = true;
      } else {
        undecided.push_back(std::move(residual));
      }
    }
    residuals = std::move(undecided);
  }
  for (auto& residual : residuals) {
    std::size_t best = tracks.size();
    double best_distance = std::numeric_limits<double>::infinity();
    for (std::size_t t = 0; t < tracks.size(); ++t) {
      if (tracks[t].frames.empty() || overlap(tracks[t], residual)) continue;
      const auto hole = hole_distance(tracks[t], residual);
      if (hole && *hole < best_distance) {
        best = t;
        best_distance = *hole;
      }
    }
    if (best == tracks.size()) {
      fit_nowhere.push_back(std::move(residual));
      continue;
    }
    tracks[best] = join(tracks[best], residual);
  }
  return fit_nowhere;
}

}  // namespace labpose::pipeline
