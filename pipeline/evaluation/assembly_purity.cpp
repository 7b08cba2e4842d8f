// Purity and misses of assembled animals against the labeled ones, DeepLabCut's way.
#include "pipeline/evaluation/assembly_purity.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <set>

namespace labpose::pipeline {
namespace {

double squared_distance(const Point2& a, const Point2& b) {
  const double dx = a.x - b.x, dy = a.y - b.y;
  return dx * dx + dy * dy;
}

// The labeled keypoints as points with their animal, and the predicted ones with theirs.
struct LabeledPoints {
  std::vector<Point2> points;
  std::vector<int> animal;
};

LabeledPoints points_of(const std::vector<std::vector<KeypointPrediction>>& animals) {
  LabeledPoints out;
  for (std::size_t i = 0; i < animals.size(); ++i) {
    for (const KeypointPrediction& p : animals[i]) {
      if (std::isnan(p.x) || std::isnan(p.y)) continue;
      out.points.push_back({p.x, p.y});
      out.animal.push_back(static_cast<int>(i));
    }
  }
  return out;
}

}  // namespace

std::vector<int> closest_neighbors(const std::vector<Point2>& queries,
                                   const std::vector<Point2>& references, int k) {
  std::vector<int> paired(queries.size(), -1);
  if (references.empty()) return paired;
  const std::size_t nearest_count =
      std::min<std::size_t>(static_cast<std::size_t>(k), references.size());
  // Each query's nearest references, nearest first.
  std::vector<std::vector<int>> nearest(queries.size());
  std::vector<double> first_distance(queries.size());
  std::vector<int> order(references.size());
  for (std::size_t q = 0; q < queries.size(); ++q) {
    std::iota(order.begin(), order.end(), 0);
    std::partial_sort(
        order.begin(), order.begin() + static_cast<std::ptrdiff_t>(nearest_count), order.end(),
        [&](int a, int b) {
          return squared_distance(queries[q], references[static_cast<std::size_t>(a)]) <
                 squared_distance(queries[q], references[static_cast<std::size_t>(b)]);
        });
    nearest[q].assign(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(nearest_count));
    first_distance[q] =
        squared_distance(queries[q], references[static_cast<std::size_t>(order[0])]);
  }
  std::vector<std::size_t> by_distance(queries.size());
  std::iota(by_distance.begin(), by_distance.end(), 0);
  std::stable_sort(by_distance.begin(), by_distance.end(), [&](std::size_t a, std::size_t b) {
    return first_distance[a] < first_distance[b];
  });
  std::vector<bool> taken(references.size(), false);
  std::size_t taken_count = 0;
  for (const std::size_t q : by_distance) {
    for (const int r : nearest[q]) {
      if (taken[static_cast<std::size_t>(r)]) continue;
      taken[static_cast<std::size_t>(r)] = true;
      paired[q] = r;
      ++taken_count;
      break;
    }
    if (taken_count == references.size()) break;
  }
  return paired;
}

ImagePurity image_purity(const std::vector<std::vector<KeypointPrediction>>& labeled,
                         const std::vector<Assembly>& predicted) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  ImagePurity result{kNaN, kNaN, 0, 0};
  const LabeledPoints truth = points_of(labeled);
  if (std::set<int>(truth.animal.begin(), truth.animal.end()).size() < 2) return result;
  std::vector<std::vector<KeypointPrediction>> animals;
  for (const Assembly& assembly : predicted) animals.push_back(assembly.keypoints);
  const LabeledPoints found = points_of(animals);
  const auto labeled_count = static_cast<double>(truth.points.size());
  if (found.points.empty()) {
    result.miss = 1.0;
    return result;
  }
  result.miss =
      std::max(0.0, (labeled_count - static_cast<double>(found.points.size())) / labeled_count);
  const std::vector<int> paired = closest_neighbors(truth.points, found.points);
  // The contingency matrix: per predicted animal, how many of its pairs each labeled animal has.
  std::map<int, std::map<int, int>> counts;
  int total = 0;
  for (std::size_t q = 0; q < paired.size(); ++q) {
    if (paired[q] < 0) continue;
    ++counts[found.animal[static_cast<std::size_t>(paired[q])]][truth.animal[q]];
    ++total;
  }
  int majority = 0;
  for (const auto& [animal, by_label] : counts) {
    int most = 0;
    for (const auto& [label, count] : by_label) most = std::max(most, count);
    majority += most;
    ++result.animals;
    if (by_label.size() == 1) ++result.whole_animals;
  }
  result.purity = static_cast<double>(majority) / total;
  return result;
}

PurityScores mean_purity(const std::vector<ImagePurity>& images) {
  PurityScores scores;
  double miss_sum = 0, purity_sum = 0;
  int misses = 0, purities = 0, animals = 0, whole = 0;
  for (const ImagePurity& image : images) {
    if (std::isnan(image.miss)) continue;
    ++scores.images;
    miss_sum += image.miss;
    ++misses;
    animals += image.animals;
    whole += image.whole_animals;
    if (std::isnan(image.purity)) continue;
    purity_sum += image.purity;
    ++purities;
  }
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  scores.miss = misses ? miss_sum / misses : kNaN;
  scores.purity = purities ? purity_sum / purities : kNaN;
  scores.whole_animals = animals ? static_cast<double>(whole) / animals : kNaN;
  return scores;
}

}  // namespace labpose::pipeline
