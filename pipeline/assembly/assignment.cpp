// Hungarian method (shortest augmenting paths with row and column potentials).
#include "pipeline/assembly/assignment.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

// Minimum-cost assignment of every row of `cost` (n x m, n <= m, 1-based inside) to a distinct
// column; returns column_of_row (0-based).
std::vector<int> min_cost_rows(const std::vector<std::vector<double>>& cost, int n, int m) {
  const double infinity = std::numeric_limits<double>::infinity();
  const auto size = static_cast<std::size_t>(m) + 1;
  std::vector<double> u(static_cast<std::size_t>(n) + 1, 0.0), v(size, 0.0);
  std::vector<int> row_of(size, 0), way(size, 0);  // row_of[j]: the row (1-based) on column j
  for (int i = 1; i <= n; ++i) {
    row_of[0] = i;
    std::size_t j0 = 0;
    std::vector<double> min_slack(size, infinity);
    std::vector<char> used(size, 0);
    do {
      used[j0] = 1;
      const auto i0 = static_cast<std::size_t>(row_of[j0]);
      double delta = infinity;
      std::size_t j1 = 0;
      for (std::size_t j = 1; j < size; ++j) {
        if (used[j]) continue;
        const double slack = cost[i0 - 1][j - 1] - u[i0] - v[j];
        if (slack < min_slack[j]) {
          min_slack[j] = slack;
          way[j] = static_cast<int>(j0);
        }
        if (min_slack[j] < delta) {
          delta = min_slack[j];
          j1 = j;
        }
      }
      for (std::size_t j = 0; j < size; ++j) {
        if (used[j]) {
          u[static_cast<std::size_t>(row_of[j])] += delta;
          v[j] -= delta;
        } else {
          min_slack[j] -= delta;
        }
      }
      j0 = j1;
    } while (row_of[j0] != 0);
    do {  // flip the augmenting path
      const auto j1 = static_cast<std::size_t>(way[j0]);
      row_of[j0] = row_of[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> column_of(static_cast<std::size_t>(n), -1);
  for (std::size_t j = 1; j < size; ++j) {
    if (row_of[j] != 0)
      column_of[static_cast<std::size_t>(row_of[j] - 1)] = static_cast<int>(j - 1);
  }
  return column_of;
}

}  // namespace

std::vector<std::pair<int, int>> max_weight_assignment(const std::vector<double>& weights, int rows,
                                                       int cols) {
  LABPOSE_ASSERT(rows >= 0 && cols >= 0 &&
                 weights.size() == static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  if (rows == 0 || cols == 0) return {};
  // The solver assigns every row of a matrix no taller than wide; transpose when needed.
  const bool transpose = rows > cols;
  const int n = transpose ? cols : rows, m = transpose ? rows : cols;
  std::vector<std::vector<double>> cost(static_cast<std::size_t>(n),
                                        std::vector<double>(static_cast<std::size_t>(m)));
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double w = weights[static_cast<std::size_t>(r * cols + c)];
      const double value = std::isfinite(w) ? -w : 0.0;  // maximizing weight = minimizing -weight
      if (transpose) {
        cost[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)] = value;
      } else {
        cost[static_cast<std::size_t>(r)][static_cast<std::size_t>(c)] = value;
      }
    }
  }
  const std::vector<int> column_of = min_cost_rows(cost, n, m);
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < n; ++i) {
    const int j = column_of[static_cast<std::size_t>(i)];
    pairs.emplace_back(transpose ? j : i, transpose ? i : j);
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

}  // namespace labpose::pipeline
