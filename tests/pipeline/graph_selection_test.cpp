// DeepLabCut's choice of the PAF graph and its purity measure, on hand-made detections with known
// answers: nearest-neighbour pairing, purity and misses, edge separabilities (the ROC area of
// perfectly separated, identical and inverted affinities), the graphs tried, and a graph whose
// misleading edge swaps animals losing to the spanning tree without it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/evaluation/assembly_purity.hpp"
#include "pipeline/evaluation/graph_selection.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr double kNaN = std::nan("");

KeypointPrediction at(double x, double y) {
  return {x, y, 1.0};
}

// Two labeled animals of three bodyparts (A, B, C), far apart.
LabeledAnimals two_animals() {
  return {{at(10, 10), at(20, 10), at(10, 20)}, {at(100, 100), at(110, 100), at(100, 110)}};
}

Assembly animal_of(std::vector<KeypointPrediction> keypoints) {
  Assembly a;
  a.keypoints = std::move(keypoints);
  a.candidate.assign(a.keypoints.size(), 0);
  return a;
}

// Candidates at the labeled keypoints: bodypart j's candidate i is animal i's.
Candidates candidates_at(const LabeledAnimals& animals) {
  Candidates candidates(animals.front().size());
  for (std::size_t j = 0; j < candidates.size(); ++j) {
    for (const auto& animal : animals) {
      candidates[j].push_back({static_cast<int>(j), 0, 0, animal[j].x, animal[j].y, 0.9});
    }
  }
  return candidates;
}

// 2 x 2 costs of one edge: `within` on the diagonal (pairs of one animal), `between` elsewhere.
EdgeCosts costs_of(double within, double between) {
  EdgeCosts costs;
  costs.sources = costs.targets = 2;
  costs.affinity = {within, between, between, within};
  costs.length = {1, 1, 1, 1};
  return costs;
}

TEST(AssemblyPurity, ClosestNeighborsTakeTheNearestFreeReference) {
  // Query 0 is nearest reference 0; query 1 is nearer still to reference 0, so takes it first and
  // query 0 falls back on its second nearest.
  const std::vector<Point2> queries{{0, 0}, {1, 0}, {50, 50}};
  const std::vector<Point2> references{{1.2, 0}, {-3, 0}};
  EXPECT_THAT(closest_neighbors(queries, references), ElementsAre(1, 0, -1));
  EXPECT_THAT(closest_neighbors(queries, {}), ElementsAre(-1, -1, -1));
  // With k = 1, a query whose nearest is taken gets nothing.
  EXPECT_THAT(closest_neighbors(queries, references, 1), ElementsAre(-1, 0, -1));
}

TEST(AssemblyPurity, PerfectSwappedAndMissingAnimals) {
  const LabeledAnimals labeled = two_animals();
  const ImagePurity perfect = image_purity(labeled, {animal_of(labeled[0]), animal_of(labeled[1])});
  EXPECT_DOUBLE_EQ(perfect.purity, 1.0);
  EXPECT_DOUBLE_EQ(perfect.miss, 0.0);
  EXPECT_EQ(perfect.animals, 2);
  EXPECT_EQ(perfect.whole_animals, 2);
  // Bodypart C swapped between the two predicted animals: each has 2 of 3 from its animal.
  const ImagePurity swapped =
      image_purity(labeled, {animal_of({labeled[0][0], labeled[0][1], labeled[1][2]}),
                             animal_of({labeled[1][0], labeled[1][1], labeled[0][2]})});
  EXPECT_DOUBLE_EQ(swapped.purity, 4.0 / 6.0);
  EXPECT_EQ(swapped.whole_animals, 0);
  // One animal found, without its C: 2 of 6 keypoints assembled.
  const ImagePurity partial =
      image_purity(labeled, {animal_of({labeled[1][0], labeled[1][1], at(kNaN, kNaN)})});
  EXPECT_DOUBLE_EQ(partial.miss, 4.0 / 6.0);
  EXPECT_DOUBLE_EQ(partial.purity, 1.0);
  EXPECT_EQ(partial.whole_animals, 1);
  const ImagePurity nothing = image_purity(labeled, {});
  EXPECT_DOUBLE_EQ(nothing.miss, 1.0);
  EXPECT_TRUE(std::isnan(nothing.purity));
  // One labeled animal: not scored.
  const ImagePurity lone = image_purity({labeled[0]}, {animal_of(labeled[0])});
  EXPECT_TRUE(std::isnan(lone.miss));
  const PurityScores mean = mean_purity({perfect, swapped, nothing, lone});
  EXPECT_EQ(mean.images, 3);
  EXPECT_DOUBLE_EQ(mean.miss, 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(mean.purity, (1.0 + 4.0 / 6.0) / 2);
  EXPECT_DOUBLE_EQ(mean.whole_animals, 2.0 / 4.0);
}

TEST(GraphSelection, SeparabilityIsTheRocArea) {
  const LabeledAnimals labeled = two_animals();
  ImageDetections image{
      candidates_at(labeled), {costs_of(0.9, 0.1), costs_of(0.5, 0.5), costs_of(0.1, 0.9)}, {}};
  const PafGraph graph = complete_graph(3);
  const auto scores = edge_separability({image, image}, {labeled, labeled}, {0}, graph);
  ASSERT_EQ(scores.size(), 3u);
  ASSERT_TRUE(scores[0] && scores[1] && scores[2]);
  EXPECT_DOUBLE_EQ(*scores[0], 1.0);
  EXPECT_DOUBLE_EQ(*scores[1], 0.5);
  EXPECT_DOUBLE_EQ(*scores[2], 0.0);
  // No training image: no within pair on any edge.
  const auto none = edge_separability({image}, {labeled}, {}, graph);
  EXPECT_FALSE(none[0] || none[1] || none[2]);
  // One animal and one candidate per bodypart: no between pair, so NaN, and one graph of every
  // edge.
  EdgeCosts one;
  one.sources = one.targets = 1;
  one.affinity = one.length = {0.9};
  const ImageDetections alone{candidates_at({labeled[0]}), {one, one, one}, {}};
  const auto lone = edge_separability({alone}, {{labeled[0]}}, {0}, graph);
  ASSERT_TRUE(lone[0].has_value());
  EXPECT_TRUE(std::isnan(*lone[0]));
  const auto tried = graphs_to_try(graph, lone);
  EXPECT_THAT(tried, ElementsAre(ElementsAre(0, 1, 2)));
}

TEST(GraphSelection, TreeFirstThenTheBestEdgesAtLinspaceSizes) {
  // Four bodyparts, six edges (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
  const PafGraph graph = complete_graph(4);
  const std::vector<std::optional<double>> scores{0.9, 0.2, 0.8, 0.95, 0.1, 0.5};
  // Kruskal, best first: (1,2) 0.95, (0,1) 0.9, (0,3) 0.8 span the four; the rest by score.
  EXPECT_THAT(graphs_to_try(graph, scores),
              ElementsAre(ElementsAre(3, 0, 2), ElementsAre(3, 0, 2, 5), ElementsAre(3, 0, 2, 5, 1),
                          ElementsAre(3, 0, 2, 5, 1, 4)));
  // With two graphs asked for: the tree and the whole graph.
  EXPECT_THAT(graphs_to_try(graph, scores, 2),
              ElementsAre(ElementsAre(3, 0, 2), ElementsAre(3, 0, 2, 5, 1, 4)));
  // An edge never seen within one animal is not tried.
  std::vector<std::optional<double>> unseen = scores;
  unseen[3].reset();
  EXPECT_THAT(graphs_to_try(graph, unseen, 1), ElementsAre(ElementsAre(0, 2, 5)));
}

TEST(GraphSelection, AMisleadingEdgeIsLeftOut) {
  // Edge (B, C) links across animals more strongly than within: with it, the assembly swaps
  // bodyparts between the animals; the spanning tree of (A, B) and (A, C) keeps them apart.
  const LabeledAnimals labeled = two_animals();
  const ImageDetections image{
      candidates_at(labeled), {costs_of(0.9, 0.1), costs_of(0.8, 0.1), costs_of(0.05, 0.95)}, {}};
  AssemblySettings settings;
  settings.max_individuals = 2;
  const GraphSelection selection =
      select_graph({image, image}, {labeled, labeled}, {0}, complete_graph(3), 3, settings);
  ASSERT_EQ(selection.trials.size(), 2u);
  EXPECT_THAT(selection.trials[0].edges, ElementsAre(0, 1));
  EXPECT_THAT(selection.trials[1].edges, ElementsAre(0, 1, 2));
  EXPECT_EQ(selection.best, 0u);
  EXPECT_DOUBLE_EQ(selection.trials[0].scores.purity, 1.0);
  EXPECT_DOUBLE_EQ(selection.trials[0].scores.miss, 0.0);
  EXPECT_EQ(selection.trials[0].scores.images, 2);
  const PurityScores& full = selection.trials[1].scores;
  EXPECT_LT((1 - full.miss) * full.purity, 1.0);
}

TEST(GraphSelection, AGraphThatAssembledNothingNeverWins) {
  const auto trial = [](double miss, double purity) {
    GraphTrial made;
    made.scores.miss = miss;
    made.scores.purity = purity;
    return made;
  };
  // numpy.argmax would take the first: a graph with every keypoint missed.
  EXPECT_EQ(best_trial({trial(1.0, kNaN), trial(0.107, 0.787), trial(0.1, 0.78)}), 1u);
  EXPECT_EQ(best_trial({trial(0.0, 0.9), trial(0.0, 0.95), trial(0.0, 0.95)}), 1u) << "first best";
  EXPECT_EQ(best_trial({trial(kNaN, kNaN), trial(1.0, kNaN)}), 0u) << "all NaN: the first";
}

TEST(GraphSelection, InputsThatDisagreeAreErrors) {
  const LabeledAnimals labeled = two_animals();
  const ImageDetections image{candidates_at(labeled), {costs_of(0.9, 0.1)}, {}};
  try {
    select_graph({image}, {labeled}, {0}, complete_graph(3), 3, AssemblySettings{});
    FAIL() << "costs of one edge for a graph of three were accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("costs of 1 edges, the graph has 3"));
  }
  EXPECT_THROW(
      select_graph({image, image}, {labeled}, {0}, complete_graph(2), 3, AssemblySettings{}),
      Error);
}

}  // namespace
}  // namespace labpose::pipeline
