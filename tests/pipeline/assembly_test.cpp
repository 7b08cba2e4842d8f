// Multi-animal assembly on hand-made maps with known animals: candidates (NMS, threshold,
// location refinement, smoothing), PAF affinities against an independent oracle, the optimal
// assignment against brute force, the Assembler's rules, and errors for inputs that disagree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "pipeline/assembly/affinity.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/assignment.hpp"
#include "pipeline/assembly/candidates.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/assembly/maps.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::HasSubstr;

struct Cell {
  int row = 0, col = 0;
};

// One image's maps on a stride-8 grid: J score maps, 2J locref maps (zero: peaks sit at cell
// centres), 2E PAF maps, all (C, H, W).
struct Scene {
  int height, width, bodyparts, edges;
  std::vector<float> scores, locref, pafs;

  Scene(int h, int w, int j, int e)
      : height(h),
        width(w),
        bodyparts(j),
        edges(e),
        scores(static_cast<std::size_t>(j * h * w), 0.0f),
        locref(static_cast<std::size_t>(2 * j * h * w), 0.0f),
        pafs(static_cast<std::size_t>(2 * e * h * w), 0.0f) {}

  float& value(std::vector<float>& maps, int channel, int row, int col) {
    return maps[static_cast<std::size_t>((channel * height + row) * width + col)];
  }
  // A peak of `value` at the cell, 0.6 * value on its four neighbours.
  void peak(int bodypart, Cell at, float peak_value) {
    value(scores, bodypart, at.row, at.col) = peak_value;
    const Cell around[] = {{-1, 0}, {1, 0}, {0, -1}, {0, 1}};
    for (const Cell d : around) {
      const int r = at.row + d.row, c = at.col + d.col;
      if (r >= 0 && r < height && c >= 0 && c < width) {
        float& v = value(scores, bodypart, r, c);
        v = std::max(v, 0.6f * peak_value);
      }
    }
  }
  // A limb of edge `e` from `a` to `b`: the unit vector a -> b (times `strength`) on every cell
  // within one cell of the segment.
  void limb(int e, Cell a, Cell b, float strength = 1.0f) {
    const double dr = b.row - a.row, dc = b.col - a.col, length = std::hypot(dr, dc);
    for (int r = 0; r < height; ++r) {
      for (int c = 0; c < width; ++c) {
        const double pr = r - a.row, pc = c - a.col;
        const double along = (pr * dr + pc * dc) / length;
        const double across = std::abs(pr * dc - pc * dr) / length;
        if (along < -0.5 || along > length + 0.5 || across > 1.0) continue;
        value(pafs, 2 * e, r, c) = static_cast<float>(strength * dc / length);
        value(pafs, 2 * e + 1, r, c) = static_cast<float>(strength * dr / length);
      }
    }
  }
  // An animal of the complete graph over its bodyparts: a peak per cell (none where row < 0) and a
  // limb per edge between present bodyparts.
  void animal(const std::vector<Cell>& cells, float confidence = 0.9f, float strength = 1.0f) {
    const PafGraph graph = complete_graph(static_cast<int>(cells.size()));
    for (std::size_t j = 0; j < cells.size(); ++j) {
      if (cells[j].row >= 0) peak(static_cast<int>(j), cells[j], confidence);
    }
    for (std::size_t e = 0; e < graph.size(); ++e) {
      const Cell a = cells[static_cast<std::size_t>(graph[e].source)];
      const Cell b = cells[static_cast<std::size_t>(graph[e].target)];
      if (a.row >= 0 && b.row >= 0) limb(static_cast<int>(e), a, b, strength);
    }
  }

  MapStack score_maps() const { return {scores, bodyparts, height, width}; }
  MapStack locref_maps() const { return {locref, 2 * bodyparts, height, width}; }
  MapStack paf_maps() const { return {pafs, 2 * edges, height, width}; }
};

double pixel(int cell) {
  return cell * 8 + 4;
}

// The animals as sets of (bodypart, row, col) read back from their pixel positions.
std::set<std::vector<int>> animal_cells(const Assemblies& result) {
  std::set<std::vector<int>> animals;
  for (const Assembly& a : result.animals) {
    std::vector<int> cells;
    for (std::size_t j = 0; j < a.keypoints.size(); ++j) {
      if (a.candidate[j] == -1) {
        EXPECT_TRUE(std::isnan(a.keypoints[j].x));
        cells.insert(cells.end(), {-1, -1});
        continue;
      }
      cells.push_back(static_cast<int>((a.keypoints[j].y - 4) / 8));
      cells.push_back(static_cast<int>((a.keypoints[j].x - 4) / 8));
    }
    animals.insert(cells);
  }
  return animals;
}

Assemblies assemble_scene(const Scene& scene, const PafGraph& graph, int multi,
                          const AssemblySettings& assembly) {
  MapAssemblySettings settings;
  settings.assembly = assembly;
  return assemble_maps(scene.score_maps(), scene.locref_maps(), scene.paf_maps(), graph, multi,
                       settings);
}

template <class Call>
void expect_error(Call call, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one saying: " << part;
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(part));
  }
}

CandidateSettings unsmoothed() {
  CandidateSettings settings;
  settings.smoothing_sigma = 0.0;
  return settings;
}

// ---------------------------------------------------------------------------------------------
// Graphs

TEST(AssemblyGraph, CompleteGraphIsEveryPairInCombinationsOrder) {
  const PafGraph graph = complete_graph(4);
  const PafGraph expected{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  EXPECT_EQ(graph, expected);
  EXPECT_TRUE(complete_graph(1).empty());
}

TEST(AssemblyGraph, SkeletonPairsAreSortedByBodypartIndex) {
  const std::vector<std::string> parts{"snout", "leftear", "rightear", "tailbase"};
  const PafGraph graph =
      graph_from_skeleton(parts, {{"tailbase", "snout"}, {"leftear", "rightear"}});
  const PafGraph expected{{0, 3}, {1, 2}};
  EXPECT_EQ(graph, expected);
}

TEST(AssemblyGraph, ComponentsJoinOnlyWhatIsApart) {
  BodypartComponents components(4);
  EXPECT_EQ(components.pieces(), 4);
  EXPECT_TRUE(components.join({0, 1}));
  EXPECT_TRUE(components.join({2, 3}));
  EXPECT_EQ(components.pieces(), 2);
  EXPECT_FALSE(components.join({1, 0}));
  EXPECT_TRUE(components.join({1, 3}));
  EXPECT_FALSE(components.join({0, 2}));  // a cycle through both pieces joined
  EXPECT_EQ(components.pieces(), 1);
  EXPECT_EQ(BodypartComponents(0).pieces(), 0);
}

TEST(AssemblyGraph, SkeletonErrorsNameTheProblem) {
  const std::vector<std::string> parts{"snout", "tailbase"};
  expect_error(
      [&] {
        graph_from_skeleton(parts, {{"snout", "tail"}});
      },
      "'tail' is not one of the 2 multianimalbodyparts (snout, tailbase)");
  expect_error(
      [&] {
        graph_from_skeleton(parts, {{"snout", "snout"}});
      },
      "'snout' is joined to itself");
  expect_error(
      [&] {
        graph_from_skeleton(parts, {{"snout", "tailbase"}, {"tailbase", "snout"}});
      },
      "skeleton pair 2: 'tailbase'-'snout' is given twice");
}

// ---------------------------------------------------------------------------------------------
// Candidates

// DeepLabCut's decoding (locref_neighbours: false): the peak's own cell alone.
TEST(AssemblyCandidates, PositionIsRefinedLikeTheSingleAnimalDecoder) {
  Scene scene(8, 10, 1, 0);
  scene.peak(0, {3, 5}, 0.8f);
  scene.value(scene.locref, 0, 3, 5) = 0.5f;    // dx
  scene.value(scene.locref, 1, 3, 5) = -0.25f;  // dy
  CandidateSettings own_cell;
  own_cell.locref_neighbours = false;
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), own_cell);
  ASSERT_EQ(found.size(), 1u);
  ASSERT_EQ(found[0].size(), 1u);
  const Candidate& c = found[0][0];
  EXPECT_EQ(c.row, 3);
  EXPECT_EQ(c.col, 5);
  EXPECT_NEAR(c.x, 5 * 8 + 4 + 0.5 * 7.2801, 1e-6);
  EXPECT_NEAR(c.y, 3 * 8 + 4 - 0.25 * 7.2801, 1e-6);
  EXPECT_FLOAT_EQ(static_cast<float>(c.confidence), 0.8f);  // the map's value, not the smoothed one

  CandidateSettings plain;
  plain.decode.location_refinement = false;
  const Candidates unrefined = find_candidates(scene.score_maps(), MapStack{}, plain);
  EXPECT_DOUBLE_EQ(unrefined[0][0].x, pixel(5));
  EXPECT_DOUBLE_EQ(unrefined[0][0].y, pixel(3));
}

// labpose's default: the mean of what the peak's cell and its neighbours refine to, weighted by
// their scores, among those closer than one stride (8 px) to the peak's own.
TEST(AssemblyCandidates, NeighboursPointingAtTheSameKeypointAreAveraged) {
  Scene scene(8, 10, 1, 0);
  scene.peak(0, {3, 5}, 0.8f);                             // 0.48 on its four neighbours
  const auto point = [&](Cell cell, double x, double y) {  // the cell refines to (x, y)
    scene.value(scene.locref, 0, cell.row, cell.col) =
        static_cast<float>((x - pixel(cell.col)) / 7.2801);
    scene.value(scene.locref, 1, cell.row, cell.col) =
        static_cast<float>((y - pixel(cell.row)) / 7.2801);
  };
  point({3, 5}, 48.0, 27.0);  // the peak's own cell
  point({3, 6}, 46.0, 27.0);
  point({3, 4}, 47.0, 28.0);
  point({2, 5}, 47.0, 26.0);
  point({4, 5}, 47.0, 35.5);  // 8.5 px away: another animal's keypoint, not counted
  point({2, 6}, 47.0, 27.0);  // a score of 0 counts for nothing
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), unsmoothed());
  ASSERT_EQ(found[0].size(), 1u);
  const Candidate& c = found[0][0];
  EXPECT_EQ(c.row, 3);
  EXPECT_EQ(c.col, 5);
  const double weights = 0.8 + 3 * 0.48;
  EXPECT_NEAR(c.x, (0.8 * 48.0 + 0.48 * (46.0 + 47.0 + 47.0)) / weights, 1e-5);
  EXPECT_NEAR(c.y, (0.8 * 27.0 + 0.48 * (27.0 + 28.0 + 26.0)) / weights, 1e-5);
  EXPECT_FLOAT_EQ(static_cast<float>(c.confidence), 0.8f);

  // At the map's corner only the neighbours inside count.
  Scene corner(4, 4, 1, 0);
  corner.peak(0, {0, 3}, 0.5f);
  corner.value(corner.locref, 0, 1, 3) =
      static_cast<float>(-2.0 / 7.2801);  // (26, 6), not (28, 12)
  corner.value(corner.locref, 1, 1, 3) = static_cast<float>(-6.0 / 7.2801);
  const Candidates cornered =
      find_candidates(corner.score_maps(), corner.locref_maps(), unsmoothed());
  ASSERT_EQ(cornered[0].size(), 1u);
  const double share = 0.3 / (0.5 + 0.3);  // (0, 2) refines to (20, 4): 8 px away, not counted
  EXPECT_NEAR(cornered[0][0].x, 28.0 - 2.0 * share, 1e-5);
  EXPECT_NEAR(cornered[0][0].y, 4.0 + 2.0 * share, 1e-5);
}

TEST(AssemblyCandidates, BelowMinConfidenceIsNoCandidate) {
  Scene scene(6, 12, 2, 0);
  scene.value(scene.scores, 0, 2, 2) = 0.009f;
  scene.value(scene.scores, 0, 2, 9) = 0.011f;
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), unsmoothed());
  ASSERT_EQ(found[0].size(), 1u);
  EXPECT_EQ(found[0][0].col, 9);
  EXPECT_TRUE(found[1].empty());
  // DeepLabCut thresholds the smoothed map: a lone 0.02 spike spreads below 0.01.
  const Candidates smoothed = find_candidates(scene.score_maps(), scene.locref_maps(), {});
  EXPECT_TRUE(smoothed[0].empty());
}

TEST(AssemblyCandidates, PlateauGivesOnePeakAndSeparatePeaksTwo) {
  Scene scene(12, 20, 1, 0);
  for (const Cell c : {Cell{4, 4}, Cell{4, 5}, Cell{5, 4}, Cell{5, 5}}) {
    scene.value(scene.scores, 0, c.row, c.col) = 0.7f;
  }
  scene.value(scene.scores, 0, 4, 12) = 0.9f;  // alone
  scene.value(scene.scores, 0, 9, 12) = 0.5f;  // 5 rows below: outside a 5-cell window
  scene.value(scene.scores, 0, 9, 14) = 0.6f;  // 2 columns from the 0.5: inside, and higher
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), unsmoothed());
  std::vector<std::pair<int, int>> cells;
  for (const Candidate& c : found[0]) cells.emplace_back(c.row, c.col);
  const std::vector<std::pair<int, int>> expected{{4, 4}, {4, 12}, {9, 14}};
  EXPECT_EQ(cells, expected);
  // With DeepLabCut's smoothing the plateau still gives one peak, in it.
  const Candidates smoothed = find_candidates(scene.score_maps(), scene.locref_maps(), {});
  int in_plateau = 0;
  for (const Candidate& c : smoothed[0]) in_plateau += c.row >= 4 && c.row <= 5 && c.col <= 5;
  EXPECT_EQ(in_plateau, 1);
}

TEST(AssemblyCandidates, TopKKeepsTheHighestInRowMajorOrder) {
  Scene scene(10, 30, 1, 0);
  scene.peak(0, {2, 3}, 0.5f);
  scene.peak(0, {2, 15}, 0.9f);
  scene.peak(0, {7, 25}, 0.7f);
  CandidateSettings settings;
  settings.top_k = 2;
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), settings);
  ASSERT_EQ(found[0].size(), 2u);
  EXPECT_EQ(found[0][0].col, 15);
  EXPECT_EQ(found[0][1].col, 25);
}

TEST(AssemblyCandidates, SmoothingIsDeepLabCutsNormalizedGaussian) {
  const int size = 15, radius = 5;
  std::vector<float> map(size * size, 0.0f);
  map[7 * size + 7] = 1.0f;
  const std::vector<float> smoothed = smooth_map(map.data(), size, size, radius, 1.0);
  double total = 0.0;
  for (int k = -radius; k <= radius; ++k) total += std::exp(-k * k / 2.0);
  for (int r = 0; r < size; ++r) {
    for (int c = 0; c < size; ++c) {
      const int dr = r - 7, dc = c - 7;
      const double expected = std::abs(dr) > radius || std::abs(dc) > radius
                                  ? 0.0
                                  : std::exp(-(dr * dr + dc * dc) / 2.0) / (total * total);
      EXPECT_NEAR(smoothed[static_cast<std::size_t>(r * size + c)], expected, 1e-7)
          << r << "," << c;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Affinities

// DeepLabCut's integral written out independently: truncated linspace samples, np.trapz per
// component, norm over length.
double oracle_affinity(const Scene& scene, int edge, Cell s, Cell t, int n) {
  std::vector<double> rows, cols, x, y;
  for (int i = 0; i < n; ++i) {  // numpy.linspace: i * step + start, the last one exactly stop
    const double fr = i == n - 1 ? t.row : i * ((t.row - s.row) / double(n - 1)) + s.row;
    const double fc = i == n - 1 ? t.col : i * ((t.col - s.col) / double(n - 1)) + s.col;
    const int r = static_cast<int>(std::trunc(fr)), c = static_cast<int>(std::trunc(fc));
    rows.push_back(r);
    cols.push_back(c);
    const auto at = [&](int channel) {
      return scene.pafs[static_cast<std::size_t>((channel * scene.height + r) * scene.width + c)];
    };
    x.push_back(at(2 * edge));
    y.push_back(at(2 * edge + 1));
  }
  double ix = 0.0, iy = 0.0;
  for (std::size_t i = 1; i < x.size(); ++i) {
    ix += (x[i] + x[i - 1]) / 2 * (cols[i] - cols[i - 1]);
    iy += (y[i] + y[i - 1]) / 2 * (rows[i] - rows[i - 1]);
  }
  return std::hypot(ix, iy) / std::hypot(t.row - s.row, t.col - s.col);
}

TEST(AssemblyAffinity, ConstantFieldsGiveTheClosedForms) {
  Scene scene(12, 12, 0, 1);
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 12; ++c) {
      scene.value(scene.pafs, 0, r, c) = 0.8f;  // x
      scene.value(scene.pafs, 1, r, c) = 0.6f;  // y
    }
  }
  const MapStack pafs = scene.paf_maps();
  const AffinitySettings dlc;
  AffinitySettings dot;
  dot.method = AffinityMethod::mean_dot;
  // Along the field, 3 rows and 4 columns: DeepLabCut gives |(0.8 * 4, 0.6 * 3)| / 5.
  EXPECT_NEAR(segment_affinity(pafs, 0, 1, 1, 4, 5, dlc), std::hypot(3.2, 1.8) / 5, 1e-6);
  EXPECT_NEAR(segment_affinity(pafs, 0, 1, 1, 4, 5, dot), 1.0, 1e-6);
  // Backwards: DeepLabCut's norm ignores the sign, the dot product does not.
  EXPECT_NEAR(segment_affinity(pafs, 0, 4, 5, 1, 1, dlc), std::hypot(3.2, 1.8) / 5, 1e-6);
  EXPECT_NEAR(segment_affinity(pafs, 0, 4, 5, 1, 1, dot), -1.0, 1e-6);
  // Along a row only the x component counts; a segment of no length has no affinity.
  EXPECT_NEAR(segment_affinity(pafs, 0, 2, 0, 2, 9, dlc), 0.8, 1e-6);
  EXPECT_EQ(segment_affinity(pafs, 0, 2, 2, 2, 2, dlc), 0.0);
}

TEST(AssemblyAffinity, RandomFieldsMatchTheOracle) {
  Scene scene(20, 24, 0, 2);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> field(-1.0f, 1.0f);
  for (float& v : scene.pafs) v = field(random);
  std::uniform_int_distribution<int> row(0, 19), col(0, 23);
  for (int trial = 0; trial < 200; ++trial) {
    const Cell s{row(random), col(random)}, t{row(random), col(random)};
    if (s.row == t.row && s.col == t.col) continue;
    const int edge = trial % 2;
    EXPECT_NEAR(segment_affinity(scene.paf_maps(), edge, s.row, s.col, t.row, t.col, {}),
                oracle_affinity(scene, edge, s, t, 10), 1e-9)
        << s.row << "," << s.col << " -> " << t.row << "," << t.col;
  }
}

TEST(AssemblyAffinity, EdgeCostsCoverEveryPairOfCandidates) {
  Scene scene(16, 16, 2, 1);
  scene.peak(0, {2, 2}, 0.9f);
  scene.peak(0, {2, 12}, 0.9f);
  scene.peak(1, {10, 2}, 0.9f);
  scene.limb(0, {2, 2}, {10, 2});
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), {});
  const std::vector<EdgeCosts> costs = edge_costs(scene.paf_maps(), found, {{0, 1}}, {});
  ASSERT_EQ(costs.size(), 1u);
  ASSERT_EQ(costs[0].sources, 2);
  ASSERT_EQ(costs[0].targets, 1);
  EXPECT_NEAR(costs[0].affinity_at(0, 0), 1.0, 1e-6);  // on the limb, along a column
  EXPECT_LT(costs[0].affinity_at(1, 0), 0.2);
  EXPECT_DOUBLE_EQ(costs[0].length_at(0, 0), 8.0);
  EXPECT_DOUBLE_EQ(costs[0].length_at(1, 0), std::hypot(8.0, 10.0));
}

// ---------------------------------------------------------------------------------------------
// Assignment

double brute_force_best(const std::vector<double>& w, int rows, int cols) {
  // Every injective map of the smaller side into the larger one.
  const bool transpose = rows > cols;
  const int n = transpose ? cols : rows, m = transpose ? rows : cols;
  std::vector<int> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  double best = -1e300;
  do {
    double sum = 0.0;
    for (int i = 0; i < n; ++i) {
      const int r = transpose ? perm[static_cast<std::size_t>(i)] : i;
      const int c = transpose ? i : perm[static_cast<std::size_t>(i)];
      sum += w[static_cast<std::size_t>(r * cols + c)];
    }
    best = std::max(best, sum);
  } while (std::next_permutation(perm.begin(), perm.end()));
  return best;
}

TEST(AssemblyAssignment, MatchesBruteForceOnRandomMatrices) {
  std::mt19937 random(11);
  std::uniform_real_distribution<double> weight(-0.2, 1.0);
  for (int trial = 0; trial < 60; ++trial) {
    const int rows = 1 + trial % 5, cols = 1 + (trial / 5) % 5;
    std::vector<double> w(static_cast<std::size_t>(rows * cols));
    for (double& v : w) v = weight(random);
    const auto pairs = max_weight_assignment(w, rows, cols);
    ASSERT_EQ(pairs.size(), static_cast<std::size_t>(std::min(rows, cols)));
    std::set<int> used_rows, used_cols;
    double sum = 0.0;
    for (const auto& [r, c] : pairs) {
      used_rows.insert(r);
      used_cols.insert(c);
      sum += w[static_cast<std::size_t>(r * cols + c)];
    }
    EXPECT_EQ(used_rows.size(), pairs.size());
    EXPECT_EQ(used_cols.size(), pairs.size());
    EXPECT_TRUE(std::is_sorted(pairs.begin(), pairs.end()));
    EXPECT_NEAR(sum, brute_force_best(w, rows, cols), 1e-9) << rows << "x" << cols;
  }
}

// ---------------------------------------------------------------------------------------------
// Assembly

AssemblySettings two_animals() {
  AssemblySettings settings;
  settings.max_individuals = 2;
  return settings;
}

TEST(Assembly, TwoAnimalsFarApart) {
  Scene scene(32, 40, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}});
  scene.animal({{20, 30}, {24, 34}, {28, 30}}, 0.8f);
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, two_animals());
  const std::set<std::vector<int>> expected{{4, 4, 8, 8, 12, 4}, {20, 30, 24, 34, 28, 30}};
  EXPECT_EQ(animal_cells(result), expected);
  ASSERT_EQ(result.animals.size(), 2u);
  for (const Assembly& a : result.animals) {
    EXPECT_EQ(a.size(), 3);
    EXPECT_EQ(a.links, 3);  // the third edge closes the triangle
    EXPECT_GT(a.affinity(), 0.6);
  }
  EXPECT_NEAR(result.animals[0].confidence() + result.animals[1].confidence(), 1.7, 1e-6);
  EXPECT_FALSE(result.single.has_value());
}

TEST(Assembly, CrossingLimbsFollowThePafNotTheDistance) {
  // The limbs cross, and each head is nearer the other animal's tail (22 and 10 cells) than its own
  // (25.6 cells). (Crossing limbs with the same bounding box would fall to the pose NMS.)
  Scene scene(30, 30, 2, 1);
  scene.animal({{4, 4}, {20, 24}});
  scene.animal({{10, 24}, {26, 4}});
  AssemblySettings settings = two_animals();
  settings.min_links = 1;  // DeepLabCut's default for 2 bodyparts: len(multianimalbodyparts) / 2
  for (const bool greedy : {false, true}) {
    settings.greedy = greedy;
    const Assemblies result = assemble_scene(scene, complete_graph(2), 2, settings);
    const std::set<std::vector<int>> expected{{4, 4, 20, 24}, {10, 24, 26, 4}};
    EXPECT_EQ(animal_cells(result), expected) << "greedy " << greedy;
  }
}

TEST(Assembly, AnimalInsideABetterOnesBoxFallsToPoseNms) {
  // Crossing limbs with the same bounding box: DeepLabCut keeps the animal of higher total
  // affinity.
  Scene scene(26, 30, 2, 1);
  scene.animal({{4, 24}, {20, 4}}, 0.9f, 0.8f);
  scene.animal({{4, 4}, {20, 24}});
  AssemblySettings settings = two_animals();
  settings.min_links = 1;
  const Assemblies result = assemble_scene(scene, complete_graph(2), 2, settings);
  EXPECT_EQ(animal_cells(result), (std::set<std::vector<int>>{{4, 4, 20, 24}}));
  settings.max_overlap = 1.0;  // off
  const Assemblies both = assemble_scene(scene, complete_graph(2), 2, settings);
  EXPECT_EQ(animal_cells(both), (std::set<std::vector<int>>{{4, 4, 20, 24}, {4, 24, 20, 4}}));
}

TEST(Assembly, MissingBodypartLeavesAHole) {
  Scene scene(32, 40, 4, 6);
  scene.animal({{4, 4}, {8, 8}, {12, 4}, {12, 10}});
  scene.animal({{20, 30}, {24, 34}, {-1, -1}, {28, 36}});
  const Assemblies result = assemble_scene(scene, complete_graph(4), 4, two_animals());
  const std::set<std::vector<int>> expected{{4, 4, 8, 8, 12, 4, 12, 10},
                                            {20, 30, 24, 34, -1, -1, 28, 36}};
  EXPECT_EQ(animal_cells(result), expected);
}

TEST(Assembly, TooFewLinksIsDropped) {
  // The second animal has two bodyparts: one link.
  Scene scene(32, 40, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}});
  scene.animal({{20, 30}, {24, 34}, {-1, -1}});
  const Assemblies kept_one = assemble_scene(scene, complete_graph(3), 3, two_animals());
  EXPECT_EQ(animal_cells(kept_one), (std::set<std::vector<int>>{{4, 4, 8, 8, 12, 4}}));
  AssemblySettings settings = two_animals();
  settings.min_links = 1;
  const Assemblies kept_both = assemble_scene(scene, complete_graph(3), 3, settings);
  EXPECT_EQ(kept_both.animals.size(), 2u);
}

TEST(Assembly, PartialAnimalsFillThePlacesOfHiddenOnesWithKeepPartial) {
  // Three animals, the third half hidden: two bodyparts, one link, fewer than min_links (2).
  Scene scene(40, 48, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}});
  scene.animal({{4, 30}, {8, 34}, {12, 30}});
  scene.animal({{28, 16}, {32, 20}, {-1, -1}});
  AssemblySettings settings;
  settings.max_individuals = 3;
  const std::set<std::vector<int>> whole{{4, 4, 8, 8, 12, 4}, {4, 30, 8, 34, 12, 30}};
  EXPECT_EQ(animal_cells(assemble_scene(scene, complete_graph(3), 3, settings)), whole)
      << "DeepLabCut drops it";
  settings.keep_partial = true;
  const Assemblies kept = assemble_scene(scene, complete_graph(3), 3, settings);
  std::set<std::vector<int>> all = whole;
  all.insert({28, 16, 32, 20, -1, -1});
  EXPECT_EQ(animal_cells(kept), all);
  ASSERT_EQ(kept.animals.size(), 3u);
  EXPECT_EQ(kept.animals[2].links, 1) << "after the whole ones";

  // Two partial animals whose boxes overlap (crossing limbs): the stronger fills the one place
  // free; the other falls to the pose NMS, as a whole animal would.
  Scene crossing(26, 30, 2, 1);
  crossing.animal({{4, 24}, {20, 4}}, 0.9f, 0.8f);
  crossing.animal({{4, 4}, {20, 24}});
  AssemblySettings two = two_animals();
  two.keep_partial = true;
  EXPECT_EQ(animal_cells(assemble_scene(crossing, complete_graph(2), 2, two)),
            (std::set<std::vector<int>>{{4, 4, 20, 24}}));
  two.keep_partial = false;
  EXPECT_TRUE(assemble_scene(crossing, complete_graph(2), 2, two).animals.empty());
}

TEST(Assembly, WeakCandidatesAreNeverLinked) {
  Scene scene(32, 40, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}});
  scene.peak(0, {24, 30}, 0.005f);  // below min_confidence: no candidate at all
  scene.peak(1, {26, 34}, 0.05f);   // a candidate, but below pcutoff (0.1)
  scene.peak(2, {28, 30}, 0.9f);
  scene.limb(0, {24, 30}, {26, 34});
  scene.limb(1, {24, 30}, {28, 30});
  scene.limb(2, {26, 34}, {28, 30});
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), {});
  EXPECT_EQ(found[0].size(), 1u);
  EXPECT_EQ(found[1].size(), 2u);
  AssemblySettings settings = two_animals();
  settings.min_links = 1;  // a linked body and tail would be an animal
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, settings);
  EXPECT_EQ(animal_cells(result), (std::set<std::vector<int>>{{4, 4, 8, 8, 12, 4}}));
}

TEST(Assembly, LinkBelowMinAffinityIsDropped) {
  Scene scene(16, 16, 2, 1);
  scene.peak(0, {2, 2}, 0.9f);
  scene.peak(1, {12, 2}, 0.9f);
  scene.limb(0, {2, 2}, {12, 2}, 0.04f);      // affinity 0.04
  AssemblySettings settings = two_animals();  // one animal would take the best, unlinked
  settings.min_links = 1;
  EXPECT_TRUE(assemble_scene(scene, complete_graph(2), 2, settings).animals.empty());
  settings.min_affinity = 0.03;
  const Assemblies linked = assemble_scene(scene, complete_graph(2), 2, settings);
  ASSERT_EQ(linked.animals.size(), 1u);
  EXPECT_NEAR(linked.animals[0].affinity(), 0.04, 1e-6);
}

TEST(Assembly, MoreAnimalsThanMaxIndividualsKeepsTheMostConfident) {
  // As in DeepLabCut, each edge links only the max_individuals most confident candidates of each
  // bodypart: the least confident animal is never linked, whatever its PAF.
  Scene scene(40, 48, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}}, 0.5f, 1.0f);
  scene.animal({{4, 30}, {8, 34}, {12, 30}}, 0.8f, 0.7f);
  scene.animal({{28, 16}, {32, 20}, {36, 16}}, 0.7f, 0.9f);
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, two_animals());
  const std::set<std::vector<int>> expected{{4, 30, 8, 34, 12, 30}, {28, 16, 32, 20, 36, 16}};
  EXPECT_EQ(animal_cells(result), expected);
  // Best first: the higher total affinity.
  ASSERT_EQ(result.animals.size(), 2u);
  EXPECT_DOUBLE_EQ(result.animals[0].keypoints[0].y, pixel(28));
  EXPECT_GT(result.animals[0].affinity_sum, result.animals[1].affinity_sum);
}

TEST(Assembly, OneAnimalTakesTheBestCandidateOfEachBodypart) {
  Scene scene(32, 40, 3, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}}, 0.6f);
  scene.peak(1, {24, 34}, 0.95f);  // no limb at all, but the most confident
  AssemblySettings settings;
  settings.max_individuals = 1;
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, settings);
  EXPECT_EQ(animal_cells(result), (std::set<std::vector<int>>{{4, 4, 24, 34, 12, 4}}));
}

TEST(Assembly, UniqueBodypartsFormTheSingleAssembly) {
  // Three bodyparts per animal, then two unique ones (a feeder and a lever).
  Scene scene(32, 40, 5, 3);
  scene.animal({{4, 4}, {8, 8}, {12, 4}});
  scene.peak(3, {20, 10}, 0.6f);
  scene.peak(3, {28, 30}, 0.85f);
  scene.peak(4, {28, 8}, 0.08f);  // at or below pcutoff: left out
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, two_animals());
  EXPECT_EQ(animal_cells(result), (std::set<std::vector<int>>{{4, 4, 8, 8, 12, 4}}));
  ASSERT_TRUE(result.single.has_value());
  const Assembly& single = *result.single;
  ASSERT_EQ(single.keypoints.size(), 2u);
  EXPECT_DOUBLE_EQ(single.keypoints[0].x, pixel(30));
  EXPECT_DOUBLE_EQ(single.keypoints[0].y, pixel(28));
  EXPECT_NEAR(single.keypoints[0].likelihood, 0.85, 1e-6);
  EXPECT_EQ(single.candidate[1], -1);
  EXPECT_TRUE(std::isnan(single.keypoints[1].x));
}

TEST(Assembly, EmptyMapsGiveNothing) {
  const Scene scene(16, 16, 4, 3);
  const Assemblies result = assemble_scene(scene, complete_graph(3), 3, two_animals());
  EXPECT_TRUE(result.animals.empty());
  EXPECT_FALSE(result.single.has_value());
  const Scene no_cells(0, 0, 4, 3);
  EXPECT_TRUE(assemble_scene(no_cells, complete_graph(3), 3, two_animals()).animals.empty());
}

TEST(Assembly, InputsThatDisagreeAreErrors) {
  const Scene scene(16, 16, 3, 3);
  MapAssemblySettings settings;
  const MapStack scores = scene.score_maps(), locref = scene.locref_maps();
  const PafGraph graph = complete_graph(3);
  const Scene other_grid(16, 20, 3, 3);
  expect_error([&] { assemble_maps(scores, locref, other_grid.paf_maps(), graph, 3, settings); },
               "part affinity fields are 16 rows by 20 columns but score maps are 16 rows by 16 "
               "columns: the maps disagree in size");
  expect_error(
      [&] {
        assemble_maps(scores, other_grid.locref_maps(), scene.paf_maps(), graph, 3, settings);
      },
      "location refinement maps are 16 rows by 20 columns");
  const Scene two_edges(16, 16, 3, 2);
  expect_error([&] { assemble_maps(scores, locref, two_edges.paf_maps(), graph, 3, settings); },
               "a graph of 3 edges needs 6 channels (x, y each), found 4");
  expect_error(
      [&] {
        assemble_maps(scores, locref, scene.paf_maps(), {{0, 1}, {1, 2}, {1, 3}}, 3, settings);
      },
      "PAF graph edge 2 (1, 3) names bodypart 3, but there are 3 multi-animal bodyparts");
  const MapStack short_scores{std::span<const float>(scene.scores).first(10), 3, 16, 16};
  expect_error([&] { assemble_maps(short_scores, locref, scene.paf_maps(), graph, 3, settings); },
               "score maps: 3 channels of 16 rows by 16 columns need 768 values (found 10)");
  const MapStack one_locref{std::span<const float>(scene.locref).first(3 * 256), 3, 16, 16};
  expect_error([&] { assemble_maps(scores, one_locref, scene.paf_maps(), graph, 3, settings); },
               "3 bodyparts need 6 channels (dx, dy each), found 3");
  expect_error([&] { assemble_maps(scores, locref, scene.paf_maps(), graph, 4, settings); },
               "4 multi-animal bodyparts asked for, but the score maps have 3 bodyparts");
  settings.assembly.max_individuals = 0;
  expect_error([&] { assemble_maps(scores, locref, scene.paf_maps(), graph, 3, settings); },
               "topktoretain (the number of animals) must be at least 1 (found 0)");
}

TEST(Assembly, CostsThatDoNotFitTheCandidatesAreErrors) {
  Scene scene(16, 16, 2, 1);
  scene.peak(0, {2, 2}, 0.9f);
  scene.peak(1, {12, 2}, 0.9f);
  const Candidates found = find_candidates(scene.score_maps(), scene.locref_maps(), {});
  expect_error(
      [&] {
        assemble(found, {}, {{0, 1}}, 2, {});
      },
      "0 edge costs for a graph of 1 edges");
  EdgeCosts wrong;
  wrong.sources = 2;
  wrong.targets = 1;
  wrong.affinity.assign(2, 0.5);
  wrong.length.assign(2, 1.0);
  expect_error(
      [&] {
        assemble(found, {wrong}, {{0, 1}}, 2, {});
      },
      "edge 0 (0, 1): costs of 2 x 1 candidates, but the bodyparts have 1 and 1");
}

}  // namespace
}  // namespace labpose::pipeline
