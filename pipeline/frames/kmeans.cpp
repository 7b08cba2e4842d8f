// Mini-batch k-means on Eigen (distances as one matrix product per batch).
#include "pipeline/frames/kmeans.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "core/error.hpp"

namespace labpose::pipeline {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMatrixMap = Eigen::Map<const Matrix>;

// For each row of `points`: the nearest centre and its squared distance.
void assign(const Eigen::Ref<const Matrix>& points, const Matrix& centres, std::vector<int>& labels,
            std::vector<float>& distances) {
  // |x - c|^2 = |x|^2 - 2 x.c + |c|^2, with x.c for all pairs in one product.
  const Eigen::VectorXf point_norms = points.rowwise().squaredNorm();
  const Eigen::RowVectorXf centre_norms = centres.rowwise().squaredNorm().transpose();
  const Matrix products = points * centres.transpose();
  const auto n = static_cast<std::size_t>(points.rows());
  labels.resize(n);
  distances.resize(n);
  for (Eigen::Index i = 0; i < points.rows(); ++i) {
    Eigen::Index best = 0;
    const float minimum = (centre_norms - 2.0f * products.row(i)).minCoeff(&best);
    labels[static_cast<std::size_t>(i)] = static_cast<int>(best);
    distances[static_cast<std::size_t>(i)] = std::max(0.0f, minimum + point_norms(i));
  }
}

// k-means++: the first centre uniformly at random, each next one with probability proportional
// to its squared distance from the nearest centre chosen so far.
Matrix initial_centres(const Matrix& sample, int clusters, std::mt19937_64& random) {
  const Eigen::Index n = sample.rows();
  Matrix centres(clusters, sample.cols());
  const auto first =
      static_cast<Eigen::Index>(bounded_random(random(), static_cast<std::uint64_t>(n)));
  centres.row(0) = sample.row(first);
  Eigen::VectorXd nearest =
      (sample.rowwise() - centres.row(0)).rowwise().squaredNorm().cast<double>();
  for (int c = 1; c < clusters; ++c) {
    const double total = nearest.sum();
    Eigen::Index chosen = 0;
    if (total > 0) {
      const double target =
          total * static_cast<double>(random() >> 11) * 0x1.0p-53;  // uniform in [0, total)
      double running = 0;
      for (chosen = 0; chosen < n - 1; ++chosen) {
        running += nearest(chosen);
        if (running > target) break;
      }
    } else {  // every row coincides with a centre: any row will do
      chosen = static_cast<Eigen::Index>(bounded_random(random(), static_cast<std::uint64_t>(n)));
    }
    centres.row(c) = sample.row(chosen);
    nearest = nearest.cwiseMin(
        (sample.rowwise() - centres.row(c)).rowwise().squaredNorm().cast<double>());
  }
  return centres;
}

}  // namespace

std::uint64_t bounded_random(std::uint64_t random_bits, std::uint64_t bound) {
  LABPOSE_ASSERT(bound > 0);
  return random_bits % bound;  // bias below bound / 2^64: nil for the sizes used here
}

std::vector<int> minibatch_kmeans(const std::vector<float>& data, std::size_t rows,
                                  std::size_t columns, const KMeansOptions& options) {
  LABPOSE_ASSERT(data.size() == rows * columns && columns > 0);
  LABPOSE_ASSERT(options.clusters >= 1 && static_cast<std::size_t>(options.clusters) <= rows);
  const auto n = static_cast<Eigen::Index>(rows);
  const ConstMatrixMap points(data.data(), n, static_cast<Eigen::Index>(columns));
  std::mt19937_64 random(options.seed);
  const auto pick_rows = [&](std::size_t count) {
    Matrix picked(static_cast<Eigen::Index>(count), points.cols());
    for (Eigen::Index i = 0; i < picked.rows(); ++i) {
      picked.row(i) = points.row(
          static_cast<Eigen::Index>(bounded_random(random(), static_cast<std::uint64_t>(n))));
    }
    return picked;
  };

  // Initialise on a random sample of 3 x batch rows (at least 3 per cluster), as scikit-learn does.
  const std::size_t batch = static_cast<std::size_t>(std::max(1, options.batch_size));
  std::size_t init_size = std::max(3 * batch, 3 * static_cast<std::size_t>(options.clusters));
  init_size = std::min(init_size, rows);
  Matrix centres = initial_centres(pick_rows(init_size), options.clusters, random);

  // Tolerance relative to the data: mean over columns of the per-column variance.
  Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(points.cols());
  Eigen::RowVectorXd sum_of_squares = Eigen::RowVectorXd::Zero(points.cols());
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::RowVectorXd row = points.row(i).cast<double>();
    sum += row;
    sum_of_squares += row.cwiseAbs2();
  }
  const Eigen::RowVectorXd mean = sum / static_cast<double>(n);
  const double variance = (sum_of_squares / static_cast<double>(n) - mean.cwiseAbs2()).mean();
  const double tolerance = options.tolerance * std::max(0.0, variance);

  std::vector<double> counts(static_cast<std::size_t>(options.clusters), 0.0);
  std::vector<int> labels;
  std::vector<float> distances;
  const std::size_t steps =
      std::max<std::size_t>(1, static_cast<std::size_t>(options.max_iterations) * rows / batch);
  const double alpha =
      std::min(1.0, 2.0 * static_cast<double>(batch) / static_cast<double>(rows + 1));
  double smoothed_inertia = -1, best_inertia = std::numeric_limits<double>::infinity();
  int without_improvement = 0;
  for (std::size_t step = 0; step < steps; ++step) {
    const Matrix minibatch = pick_rows(batch);
    assign(minibatch, centres, labels, distances);
    // Each centre moves to the running mean of every row ever assigned to it.
    const Matrix before = centres;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      const auto c = static_cast<std::size_t>(labels[i]);
      counts[c] += 1.0;
      const float rate = static_cast<float>(1.0 / counts[c]);
      centres.row(static_cast<Eigen::Index>(c)) +=
          rate *
          (minibatch.row(static_cast<Eigen::Index>(i)) - centres.row(static_cast<Eigen::Index>(c)));
    }
    const double moved = (centres - before).cast<double>().squaredNorm();
    if (tolerance > 0 && moved <= tolerance) break;
    double inertia = 0;
    for (const float d : distances) inertia += static_cast<double>(d);
    inertia /= static_cast<double>(batch);
    smoothed_inertia =
        smoothed_inertia < 0 ? inertia : smoothed_inertia * (1 - alpha) + inertia * alpha;
    if (smoothed_inertia < best_inertia) {
      best_inertia = smoothed_inertia;
      without_improvement = 0;
    } else if (++without_improvement >= options.max_no_improvement) {
      break;
    }
  }
  assign(points, centres, labels, distances);
  return labels;
}

}  // namespace labpose::pipeline
