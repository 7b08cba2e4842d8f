// The temporal prior of video assembly: which candidates belong to which animal of the previous
// frame, and that a limb's field joining two animals no longer joins them where the animals' own
// limbs are nearly as strong.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/temporal_prior.hpp"

namespace labpose::pipeline {
namespace {

// The previous frame's animal with keypoints at `points` (NaN x: absent).
Assembly animal_at(const std::vector<std::pair<double, double>>& points) {
  Assembly animal;
  for (const auto& [x, y] : points) {
    KeypointPrediction keypoint;
    keypoint.x = x;
    keypoint.y = y;
    keypoint.likelihood = std::isnan(x) ? 0.0 : 0.9;
    animal.keypoints.push_back(keypoint);
    animal.candidate.push_back(-1);
  }
  return animal;
}

Candidate candidate_at(int bodypart, double x, double y) {
  Candidate c;
  c.bodypart = bodypart;
  c.x = x;
  c.y = y;
  c.confidence = 0.9;
  return c;
}

TemporalPrior on() {
  TemporalPrior prior;
  prior.enabled = true;
  return prior;
}

// Two animals of two bodyparts, 50 px apart; each moved 2 px since the previous frame.
struct TwoAnimals {
  std::vector<Assembly> previous{animal_at({{10, 10}, {10, 50}}), animal_at({{60, 10}, {60, 50}})};
  Candidates candidates{{candidate_at(0, 12, 10), candidate_at(0, 62, 10)},
                        {candidate_at(1, 12, 52), candidate_at(1, 62, 52)}};
  PafGraph graph{{0, 1}};
  // The field favours the crossing limbs (source 0 to target 1, source 1 to target 0).
  std::vector<EdgeCosts> costs{{2, 2, {0.5, 0.9, 0.9, 0.5}, {5, 6, 6, 5}}};
};

AssemblySettings two_individuals() {
  AssemblySettings settings;
  settings.max_individuals = 2;
  settings.min_links = 1;
  settings.max_overlap = 0.0;  // the two crossed animals share one box
  return settings;
}

std::set<std::pair<double, double>> animals_by_x(const Assemblies& found) {
  std::set<std::pair<double, double>> out;  // (x of bodypart 0, x of bodypart 1) per animal
  for (const Assembly& a : found.animals) out.insert({a.keypoints[0].x, a.keypoints[1].x});
  return out;
}

TEST(TemporalPrior, CandidatesBelongToTheAnimalTheyFollow) {
  const TwoAnimals scene;
  const auto owners = previous_owners(scene.candidates, 2, scene.previous, on());
  EXPECT_EQ(owners, (std::vector<std::vector<int>>{{0, 1}, {0, 1}}));
}

TEST(TemporalPrior, EdgesNotInUseAreLeftAlone) {
  // An analysis keeps the costs of the edges in use only: here edge 1 is not, and its costs are
  // empty although both its bodyparts have candidates.
  TwoAnimals scene;
  scene.graph.push_back({0, 1});
  scene.costs.push_back(EdgeCosts{});
  weaken_links_across_animals(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous,
                              on());
  EXPECT_EQ(scene.costs[0].affinity, (std::vector<double>{0.5, 0.45, 0.45, 0.5}));
  EXPECT_TRUE(scene.costs[1].affinity.empty());
  ImageDetections detections;
  detections.candidates = scene.candidates;
  detections.costs = scene.costs;
  MapAssemblySettings settings;
  settings.assembly = two_individuals();
  settings.temporal = on();
  EXPECT_EQ(animals_by_x(assemble_after(detections, scene.graph, {0}, 2, settings, scene.previous)),
            (std::set<std::pair<double, double>>{{12, 12}, {62, 62}}));
  EXPECT_THROW(weaken_links_across_animals(scene.costs, scene.graph, {2}, scene.candidates, 2,
                                           scene.previous, on()),
               Error);
}

TEST(TemporalPrior, CrossingLimbsOfTheFieldAreWeakened) {
  TwoAnimals scene;
  const Assemblies before =
      assemble(scene.candidates, scene.costs, scene.graph, 2, two_individuals());
  EXPECT_EQ(animals_by_x(before), (std::set<std::pair<double, double>>{{12, 62}, {62, 12}}));
  weaken_links_across_animals(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous,
                              on());
  EXPECT_EQ(scene.costs[0].affinity, (std::vector<double>{0.5, 0.45, 0.45, 0.5}));
  const Assemblies after =
      assemble(scene.candidates, scene.costs, scene.graph, 2, two_individuals());
  EXPECT_EQ(animals_by_x(after), (std::set<std::pair<double, double>>{{12, 12}, {62, 62}}));
}

TEST(TemporalPrior, OffOrWithoutAPreviousFrameChangesNothing) {
  TwoAnimals scene;
  const std::vector<double> affinity = scene.costs[0].affinity;
  weaken_links_across_animals(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous,
                              TemporalPrior{});
  EXPECT_EQ(scene.costs[0].affinity, affinity);
  weaken_links_across_animals(scene.costs, scene.graph, {0}, scene.candidates, 2, {}, on());
  EXPECT_EQ(scene.costs[0].affinity, affinity);
}

TEST(TemporalPrior, DoubtfulCandidatesBelongToNoAnimal) {
  TwoAnimals scene;
  // Halfway between the two animals: not clearly nearer to one.
  scene.candidates[0] = {candidate_at(0, 35, 10)};
  // Two candidates near animal 0's keypoint: neither clearly its nearest.
  scene.candidates[1] = {candidate_at(1, 11, 50), candidate_at(1, 11.5, 50)};
  EXPECT_EQ(previous_owners(scene.candidates, 2, scene.previous, on()),
            (std::vector<std::vector<int>>{{-1}, {-1, -1}}));
}

TEST(TemporalPrior, ACandidateFurtherThanMaxShiftBelongsToNoAnimal) {
  TwoAnimals scene;
  scene.candidates[0] = {candidate_at(0, 60, 35)};  // 25 px from animal 1's; its size is 40 px
  EXPECT_EQ(previous_owners(scene.candidates, 2, scene.previous, on())[0], std::vector<int>{-1});
  TemporalPrior further = on();
  further.max_shift = 0.7;  // 28 px
  EXPECT_EQ(previous_owners(scene.candidates, 2, scene.previous, further)[0], std::vector<int>{1});
}

TEST(TemporalPrior, AMistakeOfThePreviousFrameIsNotKept) {
  TwoAnimals scene;
  // The previous frame crossed the two animals; this frame's field clearly says otherwise.
  scene.previous = {animal_at({{10, 10}, {60, 50}}), animal_at({{60, 10}, {10, 50}})};
  scene.costs[0].affinity = {0.9, 0.1, 0.1, 0.9};
  weaken_links_across_animals(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous,
                              on());
  EXPECT_EQ(scene.costs[0].affinity, (std::vector<double>{0.45, 0.1, 0.1, 0.45}));
  const Assemblies found =
      assemble(scene.candidates, scene.costs, scene.graph, 2, two_individuals());
  EXPECT_EQ(animals_by_x(found), (std::set<std::pair<double, double>>{{12, 12}, {62, 62}}));
}

TEST(TemporalPrior, AssembleAfterUsesThePriorOnlyWhenAsked) {
  const TwoAnimals scene;
  ImageDetections detections;
  detections.candidates = scene.candidates;
  detections.costs = scene.costs;
  MapAssemblySettings settings;
  settings.assembly = two_individuals();
  const auto crossed = std::set<std::pair<double, double>>{{12, 62}, {62, 12}};
  const auto kept = std::set<std::pair<double, double>>{{12, 12}, {62, 62}};
  EXPECT_EQ(animals_by_x(assemble_after(detections, scene.graph, {0}, 2, settings, scene.previous)),
            crossed);
  settings.temporal.enabled = true;
  EXPECT_EQ(animals_by_x(assemble_after(detections, scene.graph, {0}, 2, settings, {})), crossed);
  EXPECT_EQ(animals_by_x(assemble_after(detections, scene.graph, {0}, 2, settings, scene.previous)),
            kept);
  EXPECT_EQ(detections.costs[0].affinity, scene.costs[0].affinity);  // the detections unchanged
}

TEST(TemporalPrior, InputsThatDisagreeAreErrors) {
  TwoAnimals scene;
  scene.previous[0].keypoints.pop_back();
  EXPECT_THROW(previous_owners(scene.candidates, 2, scene.previous, on()), Error);
  EXPECT_THROW(previous_owners(scene.candidates, 3, {}, on()), Error);
  TwoAnimals misfit;
  misfit.costs[0] = {3, 2, std::vector<double>(6, 0.5), std::vector<double>(6, 5.0)};
  EXPECT_THROW(weaken_links_across_animals(misfit.costs, misfit.graph, {0}, misfit.candidates, 2,
                                           misfit.previous, on()),
               Error);
  TwoAnimals two_edges;
  two_edges.graph.push_back({0, 1});
  EXPECT_THROW(weaken_links_across_animals(two_edges.costs, two_edges.graph, {0, 1},
                                           two_edges.candidates, 2, two_edges.previous, on()),
               Error);
}

}  // namespace
}  // namespace labpose::pipeline
