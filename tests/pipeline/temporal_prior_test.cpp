// The temporal prior of video assembly: which candidates belong to which animal of the previous
// frame, that a limb's field joining two animals no longer joins them where the animals' own
// limbs are nearly as strong, and that an animal whose strongest link comes first cannot take a
// neighbour's joints by a weaker one.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

// The prior's weakening of `costs` by the owners of `candidates` among the animals `previous`.
void weaken(std::vector<EdgeCosts>& costs, const PafGraph& graph, const std::vector<int>& edges,
            const Candidates& candidates, int multi_bodyparts,
            const std::vector<Assembly>& previous, const TemporalPrior& prior) {
  weaken_links_across_animals(costs, graph, edges, multi_bodyparts,
                              previous_owners(candidates, multi_bodyparts, previous, prior), prior);
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
  weaken(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous, on());
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
  EXPECT_THROW(weaken(scene.costs, scene.graph, {2}, scene.candidates, 2, scene.previous, on()),
               Error);
}

TEST(TemporalPrior, CrossingLimbsOfTheFieldAreWeakened) {
  TwoAnimals scene;
  const Assemblies before =
      assemble(scene.candidates, scene.costs, scene.graph, 2, two_individuals());
  EXPECT_EQ(animals_by_x(before), (std::set<std::pair<double, double>>{{12, 62}, {62, 12}}));
  weaken(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous, on());
  EXPECT_EQ(scene.costs[0].affinity, (std::vector<double>{0.5, 0.45, 0.45, 0.5}));
  const Assemblies after =
      assemble(scene.candidates, scene.costs, scene.graph, 2, two_individuals());
  EXPECT_EQ(animals_by_x(after), (std::set<std::pair<double, double>>{{12, 12}, {62, 62}}));
}

TEST(TemporalPrior, OffOrWithoutAPreviousFrameChangesNothing) {
  TwoAnimals scene;
  const std::vector<double> affinity = scene.costs[0].affinity;
  weaken(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous, TemporalPrior{});
  EXPECT_EQ(scene.costs[0].affinity, affinity);
  weaken(scene.costs, scene.graph, {0}, scene.candidates, 2, {}, on());
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
  weaken(scene.costs, scene.graph, {0}, scene.candidates, 2, scene.previous, on());
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
  EXPECT_THROW(weaken(misfit.costs, misfit.graph, {0}, misfit.candidates, 2, misfit.previous, on()),
               Error);
  TwoAnimals two_edges;
  two_edges.graph.push_back({0, 1});
  EXPECT_THROW(weaken(two_edges.costs, two_edges.graph, {0, 1}, two_edges.candidates, 2,
                      two_edges.previous, on()),
               Error);
  TwoAnimals few_owners;  // the owners of one bodypart for two
  EXPECT_THROW(weaken_links_across_animals(few_owners.costs, few_owners.graph, {0}, 2,
                                           PreviousOwners{{0, 1}}, on()),
               Error);
}

// Two mice in one frame, four bodyparts (snout, left ear, right ear, tail base) and every pair an
// edge, as in the three-mice demo at frame 2316 of its test video: mouse A shows only its snout
// and left ear (the rest is under mouse B), mouse B shows all four. A's field points from its
// snout to where its hidden right ear is, which is where B's right ear lies (0.36), more than B's
// own snout-to-ear limb (0.17).
struct HiddenEars {
  std::vector<Assembly> previous;
  Candidates candidates{{candidate_at(0, 465, 166), candidate_at(0, 441, 195)},  // snouts: A, B
                        {candidate_at(1, 422, 167), candidate_at(1, 442, 233)},  // left ears: A, B
                        {candidate_at(2, 472, 209)},                             // right ear: B
                        {candidate_at(3, 507, 280)}};                            // tail base: B
  PafGraph graph{{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  std::vector<EdgeCosts> costs{{2, 2, {0.59, 0.17, 0.04, 0.19}, {5, 5, 5, 5}},
                               {2, 1, {0.36, 0.17}, {5, 5}},
                               {2, 1, {0.24, 0.32}, {9, 9}},
                               {2, 1, {0.19, 0.31}, {5, 5}},
                               {2, 1, {0.17, 0.43}, {9, 9}},
                               {1, 1, {0.54}, {9}}};
  constexpr static double kNone = std::numeric_limits<double>::quiet_NaN();

  HiddenEars() {
    previous = {animal_at({{464, 167}, {423, 169}, {kNone, kNone}, {kNone, kNone}}),
                animal_at({{440, 197}, {443, 235}, {470, 210}, {510, 280}})};
  }
  Assemblies assembled(const TemporalPrior& prior) const {
    ImageDetections detections;
    detections.candidates = candidates;
    detections.costs = costs;
    MapAssemblySettings settings;
    settings.assembly = two_individuals();
    settings.temporal = prior;
    return assemble_after(detections, graph, {0, 1, 2, 3, 4, 5}, 4, settings, previous);
  }
};

// Each animal as its keypoints' x, in bodypart order (NaN where absent), sorted.
std::set<std::vector<double>> animals_as_x(const Assemblies& found) {
  std::set<std::vector<double>> out;
  for (const Assembly& a : found.animals) {
    std::vector<double> xs;
    for (const auto& keypoint : a.keypoints) xs.push_back(std::isnan(keypoint.x) ? -1 : keypoint.x);
    out.insert(xs);
  }
  return out;
}

TEST(TemporalPrior, AnAnimalIsRebuiltFromItsOwnLinksBeforeANeighbourTakesItsJoints) {
  const HiddenEars scene;
  const std::set<std::vector<double>> right{{465, 422, -1, -1}, {441, 442, 472, 507}};
  // Each frame alone (DeepLabCut's way): A's strongest link comes first and A grows by its weaker
  // link into B's right ear, then B's tail base; B keeps its snout and left ear.
  EXPECT_EQ(animals_as_x(scene.assembled(TemporalPrior{})),
            (std::set<std::vector<double>>{{465, 422, 472, 507}, {441, 442, -1, -1}}));
  // Weakened only, the link across the two previous animals (0.18) still outweighs B's own (0.17)
  // where the snout-to-right-ear edge pairs its candidates.
  std::vector<EdgeCosts> weakened = scene.costs;
  weaken(weakened, scene.graph, {0, 1, 2, 3, 4, 5}, scene.candidates, 4, scene.previous, on());
  EXPECT_DOUBLE_EQ(weakened[1].affinity[0], 0.18);
  EXPECT_EQ(animals_as_x(assemble(scene.candidates, weakened, scene.graph, 4, two_individuals())),
            (std::set<std::vector<double>>{{465, 422, 472, 507}, {441, 442, -1, -1}}));
  // Held back as well: B is rebuilt from its own links first, and A keeps what it shows.
  EXPECT_EQ(animals_as_x(scene.assembled(on())), right);
  const PreviousOwners owners = previous_owners(scene.candidates, 4, scene.previous, on());
  EXPECT_EQ(owners, (PreviousOwners{{0, 1}, {0, 1}, {1}, {1}}));
  EXPECT_EQ(
      animals_as_x(assemble(scene.candidates, weakened, scene.graph, 4, two_individuals(), owners)),
      right);
}

TEST(TemporalPrior, HeldLinksStillMendAnAnimalTheFrameBeforeGotWrong) {
  // The previous frame joined A's head to B's right ear and tail base, and left B's head alone.
  HiddenEars scene;
  scene.previous = {animal_at({{464, 167}, {423, 169}, {470, 210}, {510, 280}}),
                    animal_at({{440, 197},
                               {443, 235},
                               {HiddenEars::kNone, HiddenEars::kNone},
                               {HiddenEars::kNone, HiddenEars::kNone}})};
  // Now A's field no longer reaches B's right ear or tail base.
  scene.costs[1].affinity = {0.10, 0.30};
  scene.costs[2].affinity = {0.05, 0.32};
  scene.costs[3].affinity = {0.05, 0.31};
  scene.costs[4].affinity = {0.05, 0.43};
  // B's own limbs cross the previous animals and are held; built without them, B's head and B's
  // back are two animals, one too many. Fused across the strongest held link, B is whole again.
  EXPECT_EQ(animals_as_x(scene.assembled(on())),
            (std::set<std::vector<double>>{{465, 422, -1, -1}, {441, 442, 472, 507}}));
}

TEST(TemporalPrior, OwnersThatDoNotFitTheCandidatesAreRefused) {
  const HiddenEars scene;
  EXPECT_THROW(assemble(scene.candidates, scene.costs, scene.graph, 4, two_individuals(),
                        PreviousOwners{{0, 1}, {0, 1}, {1}}),
               Error);
  EXPECT_THROW(assemble(scene.candidates, scene.costs, scene.graph, 4, two_individuals(),
                        PreviousOwners{{0, 1}, {0, 1}, {1}, {1, 0}}),
               Error);
}

}  // namespace
}  // namespace labpose::pipeline
