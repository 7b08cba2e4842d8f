// Mini-batch k-means as DeepLabCut's frame selection uses it (scikit-learn's MiniBatchKMeans:
// k-means++ initialisation on a sample, random mini-batches with per-centre learning rates, early
// stop on a smoothed inertia or small centre moves, then labels for every row). Deterministic for
// a given seed on every platform. Not a general clustering library: Euclidean distance only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace labpose::pipeline {

struct KMeansOptions {
  int clusters = 20;
  int batch_size = 100;         // rows per mini-batch (DeepLabCut: 100, or half the rows if fewer)
  int max_iterations = 50;      // passes over the data, counted in mini-batches
  double tolerance = 1e-3;      // stop when centres move less than this x the data's mean variance
  int max_no_improvement = 10;  // mini-batches without a better smoothed inertia before stopping
  std::uint64_t seed = 0;
};

/// Clusters the rows of `data` (rows x columns floats, row-major) and returns each row's cluster
/// in 0..clusters-1. Some clusters may end up empty. Requires 1 <= clusters <= rows.
std::vector<int> minibatch_kmeans(const std::vector<float>& data, std::size_t rows,
                                  std::size_t columns, const KMeansOptions& options);

/// A uniform integer in [0, bound) from a 64-bit generator output; the same on every platform,
/// unlike std::uniform_int_distribution.
std::uint64_t bounded_random(std::uint64_t random_bits, std::uint64_t bound);

}  // namespace labpose::pipeline
