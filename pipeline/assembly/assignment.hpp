// The optimal assignment between two sets (rows and columns of a weight matrix), as SciPy's
// linear_sum_assignment(maximize=True) finds it for DeepLabCut's link selection: min(rows, cols)
// pairs, each row and column at most once, of the largest total weight. Hungarian method with
// potentials, O(n^2 m). Not a general min-cost-flow solver (tracking has its own), and among equal
// optima it may pick another one than SciPy.
#pragma once

#include <utility>
#include <vector>

namespace labpose::pipeline {

/// weights: (rows, cols) row-major; NaN (as DeepLabCut sets it before assigning) and infinities
/// count as 0.
/// Returns the (row, col) pairs in increasing row order.
std::vector<std::pair<int, int>> max_weight_assignment(const std::vector<double>& weights, int rows,
                                                       int cols);

}  // namespace labpose::pipeline
