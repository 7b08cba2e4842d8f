// Multi-animal training targets on hand-made keypoints with answers worked out by hand: disks and
// location refinement against the single-animal build_targets(), overlaps (the last animal wins),
// PAF bands along horizontal, vertical and diagonal limbs, crossing limbs, missing ends, unique
// bodyparts, identity channels, weights, errors, and a round trip through the assembly library.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/assembly/graph.hpp"
#include "pipeline/assembly/maps.hpp"
#include "pipeline/training/multi_loss_weights.hpp"
#include "pipeline/training/multi_targets.hpp"
#include "pipeline/training/targets.hpp"

namespace labpose::pipeline {
namespace {
using ::testing::Each;
using ::testing::HasSubstr;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kStdev = 7.2801;

// Owning arrays for one crop's targets, sized from the layout.
struct Targets {
  MultiTargetLayout layout;
  std::vector<float> score, score_weights, locref, locref_weights, pafs, paf_weights, identity,
      identity_weights;

  explicit Targets(MultiTargetLayout l)
      : layout(std::move(l)),
        score(layout.score_values()),
        score_weights(layout.score_values()),
        locref(layout.locref_values()),
        locref_weights(layout.locref_values()),
        pafs(layout.paf_values()),
        paf_weights(layout.paf_values()),
        identity(layout.identity_values()),
        identity_weights(layout.identity_values()) {}

  MultiTargetMaps maps() {
    return {score, score_weights, locref,   locref_weights,
            pafs,  paf_weights,   identity, identity_weights};
  }
  void build(const std::vector<std::vector<CropPoint>>& animals,
             const std::vector<CropPoint>& unique = {}, const MultiTargetSettings& settings = {}) {
    build_multi_targets(animals, unique, layout, settings, maps());
  }
  std::size_t at(int channel, int row, int col) const {
    return (static_cast<std::size_t>(channel) * static_cast<std::size_t>(layout.height) +
            static_cast<std::size_t>(row)) *
               static_cast<std::size_t>(layout.width) +
           static_cast<std::size_t>(col);
  }
  float s(int channel, int row, int col) const { return score[at(channel, row, col)]; }
  float dx(int part, int row, int col) const { return locref[at(2 * part, row, col)]; }
  float dy(int part, int row, int col) const { return locref[at(2 * part + 1, row, col)]; }
  float paf_x(int edge, int row, int col) const { return pafs[at(2 * edge, row, col)]; }
  float paf_y(int edge, int row, int col) const { return pafs[at(2 * edge + 1, row, col)]; }
  float id(int channel, int row, int col) const { return identity[at(channel, row, col)]; }
  // The channel's values, (H, W).
  std::vector<float> plane_of(const std::vector<float>& maps, int channel) const {
    const auto first = maps.begin() + static_cast<std::ptrdiff_t>(at(channel, 0, 0));
    return {first, first + static_cast<std::ptrdiff_t>(layout.plane())};
  }
};

MultiTargetLayout layout_of(int multi, int unique, PafGraph graph, int height = 12, int width = 16,
                            int identity = 0) {
  MultiTargetLayout layout;
  layout.multi_bodyparts = multi;
  layout.unique_bodyparts = unique;
  layout.identity_channels = identity;
  layout.graph = std::move(graph);
  layout.height = height;
  layout.width = width;
  return layout;
}

// The single-animal targets of one animal's keypoints.
struct SingleTargets {
  std::vector<float> score, locref, locref_weights;
};
SingleTargets single_targets(const std::vector<CropPoint>& points, int height, int width,
                             double radius) {
  std::vector<double> x, y;
  for (const CropPoint& p : points) {
    x.push_back(p.x);
    y.push_back(p.y);
  }
  const auto joints = static_cast<int>(points.size());
  const std::size_t plane = static_cast<std::size_t>(height) * static_cast<std::size_t>(width);
  SingleTargets t{std::vector<float>(points.size() * plane),
                  std::vector<float>(2 * points.size() * plane),
                  std::vector<float>(2 * points.size() * plane)};
  build_targets(x.data(), y.data(), joints, height, width, TargetSettings{8, radius, kStdev},
                t.score.data(), t.locref.data(), t.locref_weights.data());
  return t;
}

TEST(MultiTargets, OneAnimalMatchesTheSingleAnimalTargets) {
  const std::vector<CropPoint> animal = {{37.5, 41.25}, {90.0, 60.0}, {kNaN, kNaN}, {3.0, 92.5}};
  Targets t(layout_of(4, 0, complete_graph(4)));
  MultiTargetSettings settings;
  settings.scale = 0.8;  // radius 13.6 px
  settings.weigh_only_present_joints = true;
  t.build({animal}, {}, settings);
  const SingleTargets oracle = single_targets(animal, 12, 16, 17.0 * 0.8);
  EXPECT_EQ(t.score, oracle.score);
  EXPECT_EQ(t.locref, oracle.locref);
  EXPECT_EQ(t.locref_weights, oracle.locref_weights);
  EXPECT_EQ(t.s(0, 5, 4), 1.0F);  // centre (36, 44), 3.1 px from (37.5, 41.25)
  EXPECT_FLOAT_EQ(t.dx(0, 5, 4), static_cast<float>(1.5 / kStdev));
  EXPECT_FLOAT_EQ(t.dy(0, 5, 4), static_cast<float>(-2.75 / kStdev));
  EXPECT_THAT(t.plane_of(t.score, 2), Each(0.0F));  // the missing bodypart: negatives only

  // DeepLabCut's multi-animal default: locref weights 1 everywhere, targets unchanged.
  settings.weigh_only_present_joints = false;
  t.build({animal}, {}, settings);
  EXPECT_EQ(t.locref, oracle.locref);
  EXPECT_THAT(t.locref_weights, Each(1.0F));
  EXPECT_THAT(t.score_weights, Each(1.0F));
  EXPECT_THAT(t.paf_weights, Each(1.0F));
}

TEST(MultiTargets, TwoAnimalsFarApartEachKeepTheirOwnDisks) {
  const std::vector<CropPoint> left = {{20.0, 20.0}, {28.0, 68.0}};
  const std::vector<CropPoint> right = {{108.0, 76.0}, {kNaN, kNaN}};
  Targets t(layout_of(2, 0, {}));
  MultiTargetSettings settings;
  settings.weigh_only_present_joints = true;
  t.build({left, right}, {}, settings);
  const SingleTargets a = single_targets(left, 12, 16, 17.0);
  const SingleTargets b = single_targets(right, 12, 16, 17.0);
  for (std::size_t i = 0; i < t.score.size(); ++i) {
    ASSERT_EQ(t.score[i], std::max(a.score[i], b.score[i])) << i;
  }
  for (std::size_t i = 0; i < t.locref.size(); ++i) {
    ASSERT_EQ(t.locref[i], a.locref[i] + b.locref[i]) << i;  // the disks do not meet
    ASSERT_EQ(t.locref_weights[i], std::max(a.locref_weights[i], b.locref_weights[i])) << i;
  }
  // Cell (row 9, col 13), centre (108, 76): the right animal's keypoint, offset 0.
  EXPECT_EQ(t.s(0, 9, 13), 1.0F);
  EXPECT_EQ(t.s(0, 2, 2), 1.0F);  // centre (20, 20)
  EXPECT_EQ(t.s(0, 5, 8), 0.0F);
}

TEST(MultiTargets, WhereDisksOverlapTheLastAnimalsLocrefWins) {
  // Bodypart 0 of two animals 16 px apart; radius 17.
  const std::vector<CropPoint> first = {{40.0, 40.0}};
  const std::vector<CropPoint> second = {{56.0, 40.0}};
  Targets t(layout_of(1, 0, {}));
  t.build({first, second});
  // Cell (row 4, col 5), centre (44, 36): 5.7 px from the first animal, 12.6 px from the second.
  EXPECT_EQ(t.s(0, 4, 5), 1.0F);
  EXPECT_FLOAT_EQ(t.dx(0, 4, 5), static_cast<float>(12.0 / kStdev));
  EXPECT_FLOAT_EQ(t.dy(0, 4, 5), static_cast<float>(4.0 / kStdev));
  // Cell (row 4, col 3), centre (28, 36): inside the first animal's disk only.
  EXPECT_FLOAT_EQ(t.dx(0, 4, 3), static_cast<float>(12.0 / kStdev));
  EXPECT_FLOAT_EQ(t.dy(0, 4, 3), static_cast<float>(4.0 / kStdev));
  // Cell (row 4, col 8), centre (68, 36): the second animal's only.
  EXPECT_FLOAT_EQ(t.dx(0, 4, 8), static_cast<float>(-12.0 / kStdev));

  // In the other order the first animal, now last, wins the shared cell.
  t.build({second, first});
  EXPECT_FLOAT_EQ(t.dx(0, 4, 5), static_cast<float>(-4.0 / kStdev));
  EXPECT_FLOAT_EQ(t.dy(0, 4, 5), static_cast<float>(4.0 / kStdev));
  EXPECT_FLOAT_EQ(t.dx(0, 4, 3), static_cast<float>(12.0 / kStdev));
}

TEST(MultiTargets, HorizontalLimbFadesAcrossItsBand) {
  // From (36, 52) to (100, 52): row 6 (y 52) is on the limb, columns 4 (x 36) to 12 (x 100).
  const std::vector<CropPoint> limb = {{36.0, 52.0}, {100.0, 52.0}};
  Targets t(layout_of(2, 0, complete_graph(2)));
  t.build({limb});
  const float expected_by_row[12] = {0, 0, 0, 0, 0.2F, 0.6F, 1, 0.6F, 0.2F, 0, 0, 0};
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 16; ++c) {
      const float expected = (c >= 4 && c <= 12) ? expected_by_row[r] : 0.0F;
      ASSERT_NEAR(t.paf_x(0, r, c), expected, 1e-6) << r << "," << c;
      ASSERT_EQ(t.paf_y(0, r, c), 0.0F) << r << "," << c;
    }
  }
  EXPECT_THAT(t.paf_weights, Each(1.0F));

  // weigh_only_present_joints: weights on the band only (rows 4 to 8, columns 4 to 12).
  MultiTargetSettings settings;
  settings.weigh_only_present_joints = true;
  t.build({limb}, {}, settings);
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 16; ++c) {
      const float expected = (r >= 4 && r <= 8 && c >= 4 && c <= 12) ? 1.0F : 0.0F;
      ASSERT_EQ(t.paf_weights[t.at(0, r, c)], expected) << r << "," << c;
      ASSERT_EQ(t.paf_weights[t.at(1, r, c)], expected) << r << "," << c;
    }
  }
}

TEST(MultiTargets, ScaleWidensTheBandAsDeepLabCutDoes) {
  // scale 0.5: DeepLabCut's distance * scale / pafwidth reaches 40 px; the disks shrink to 8.5 px.
  const std::vector<CropPoint> limb = {{36.0, 52.0}, {100.0, 52.0}};
  Targets t(layout_of(2, 0, complete_graph(2)));
  MultiTargetSettings settings;
  settings.scale = 0.5;
  t.build({limb}, {}, settings);
  EXPECT_NEAR(t.paf_x(0, 6, 8), 1.0F, 1e-6);   // on the limb
  EXPECT_NEAR(t.paf_x(0, 2, 8), 0.2F, 1e-6);   // 32 px away: 1 - 32 * 0.5 / 20
  EXPECT_NEAR(t.paf_x(0, 10, 8), 0.2F, 1e-6);  // 32 px below
  EXPECT_EQ(t.paf_x(0, 0, 8), 0.0F);           // 48 px: outside
  EXPECT_EQ(t.s(0, 5, 4), 1.0F);               // (36, 44): 8 px from (36, 52), within 8.5
  EXPECT_EQ(t.s(0, 4, 4), 0.0F);               // (36, 36): 16 px, within 17 but not 8.5
}

TEST(MultiTargets, VerticalLimbPointsFromSourceToTarget) {
  // Source (60, 92) below target (60, 28): the unit vector is (0, -1). Column 7 (x 60) is on the
  // limb; rows 3 (y 28) to 11 (y 92).
  const std::vector<CropPoint> limb = {{60.0, 92.0}, {60.0, 28.0}};
  Targets t(layout_of(2, 0, complete_graph(2)));
  t.build({limb});
  const float expected_by_col[16] = {0, 0, 0, 0, 0, 0.2F, 0.6F, 1, 0.6F, 0.2F, 0, 0, 0, 0, 0, 0};
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 16; ++c) {
      const float expected = (r >= 3 && r <= 11) ? -expected_by_col[c] : 0.0F;
      ASSERT_NEAR(t.paf_y(0, r, c), expected, 1e-6) << r << "," << c;
      ASSERT_EQ(t.paf_x(0, r, c), 0.0F) << r << "," << c;
    }
  }
}

TEST(MultiTargets, DiagonalLimbStopsAtItsEnds) {
  // From (36, 36) to (100, 100): unit vector (1, 1) / sqrt(2). A 16 x 16 grid.
  const std::vector<CropPoint> limb = {{36.0, 36.0}, {100.0, 100.0}};
  Targets t(layout_of(2, 0, complete_graph(2), 16, 16));
  t.build({limb});
  const float unit = static_cast<float>(1.0 / std::sqrt(2.0));
  EXPECT_NEAR(t.paf_x(0, 4, 4), unit, 1e-6);  // (36, 36), the source itself
  EXPECT_NEAR(t.paf_y(0, 4, 4), unit, 1e-6);
  EXPECT_NEAR(t.paf_x(0, 11, 12), unit * (1 - 8 / std::sqrt(2.0) / 20), 1e-6);  // (100, 92)
  // (44, 36): 8 / sqrt(2) = 5.66 px off the line: 1 - 5.66 / 20 = 0.717.
  EXPECT_NEAR(t.paf_x(0, 4, 5), unit * (1 - 8 / std::sqrt(2.0) / 20), 1e-6);
  EXPECT_NEAR(t.paf_y(0, 4, 5), unit * (1 - 8 / std::sqrt(2.0) / 20), 1e-6);
  // (60, 36): 16.97 px off: 0.151. (68, 36): 22.6 px: outside.
  EXPECT_NEAR(t.paf_x(0, 4, 7), unit * (1 - 24 / std::sqrt(2.0) / 20), 1e-6);
  EXPECT_EQ(t.paf_x(0, 4, 8), 0.0F);
  // (36, 28): within the width but before the source along the limb.
  EXPECT_EQ(t.paf_x(0, 3, 4), 0.0F);
  EXPECT_EQ(t.paf_y(0, 3, 4), 0.0F);
  // (108, 108): past the target.
  EXPECT_EQ(t.paf_x(0, 13, 13), 0.0F);
  EXPECT_NEAR(t.paf_x(0, 12, 12), unit, 1e-6);  // (100, 100), the target itself
}

TEST(MultiTargets, CrossingLimbsTakeTheLastAnimalsField) {
  // Animal 0 horizontal along y 52 from x 36 to 100; animal 1 vertical along x 68 from y 20 to 84.
  const std::vector<CropPoint> horizontal = {{36.0, 52.0}, {100.0, 52.0}};
  const std::vector<CropPoint> vertical = {{68.0, 20.0}, {68.0, 84.0}};
  Targets t(layout_of(2, 0, complete_graph(2)));
  t.build({horizontal, vertical});
  // (68, 52), the crossing: the vertical limb's (0, 1), not an average.
  EXPECT_EQ(t.paf_x(0, 6, 8), 0.0F);
  EXPECT_NEAR(t.paf_y(0, 6, 8), 1.0F, 1e-6);
  // (60, 52): on the horizontal limb, 8 px from the vertical one: (0, 0.6), the last animal's.
  EXPECT_EQ(t.paf_x(0, 6, 7), 0.0F);
  EXPECT_NEAR(t.paf_y(0, 6, 7), 0.6F, 1e-6);
  // (36, 52): the horizontal limb's alone.
  EXPECT_NEAR(t.paf_x(0, 6, 4), 1.0F, 1e-6);

  t.build({vertical, horizontal});
  EXPECT_NEAR(t.paf_x(0, 6, 8), 1.0F, 1e-6);
  EXPECT_EQ(t.paf_y(0, 6, 8), 0.0F);
  EXPECT_NEAR(t.paf_x(0, 6, 7), 1.0F, 1e-6);
  EXPECT_EQ(t.paf_y(0, 6, 7), 0.0F);
  EXPECT_NEAR(t.paf_y(0, 2, 8), 1.0F, 1e-6);  // (68, 20): the vertical limb's alone
}

TEST(MultiTargets, AMissingOrCoincidentEndDrawsNoLimb) {
  // Edges (0,1), (0,2), (1,2). Animal 0 misses bodypart 2; animal 1 has bodyparts 0 and 1 at the
  // same place.
  const std::vector<CropPoint> missing = {{20.0, 20.0}, {100.0, 20.0}, {kNaN, kNaN}};
  const std::vector<CropPoint> coincident = {{60.0, 76.0}, {60.0, 76.0}, {100.0, 76.0}};
  Targets t(layout_of(3, 0, complete_graph(3)));
  t.build({missing, coincident});
  EXPECT_NEAR(t.paf_x(0, 2, 8), 1.0F, 1e-6);   // animal 0's edge (0, 1) at (68, 20)
  EXPECT_EQ(t.paf_x(0, 9, 7), 0.0F);           // animal 1's edge (0, 1): no direction
  EXPECT_NEAR(t.paf_x(1, 9, 10), 1.0F, 1e-6);  // edge (0, 2): animal 1's at (84, 76)
  EXPECT_EQ(t.paf_x(1, 2, 8), 0.0F);           // but not animal 0's, which misses bodypart 2
  EXPECT_THAT(t.plane_of(t.pafs, 3), Each(0.0F));
  EXPECT_NEAR(t.paf_x(2, 9, 10), 1.0F, 1e-6);  // edge (1, 2) of animal 1
  EXPECT_EQ(t.paf_x(2, 2, 12), 0.0F);          // animal 0 has no bodypart 2

  Targets alone(layout_of(3, 0, complete_graph(3)));
  alone.build({missing});
  for (int e = 1; e < 3; ++e) {
    EXPECT_THAT(alone.plane_of(alone.pafs, 2 * e), Each(0.0F)) << e;
    EXPECT_THAT(alone.plane_of(alone.pafs, 2 * e + 1), Each(0.0F)) << e;
  }
}

TEST(MultiTargets, UniqueBodypartsFollowTheMultiAnimalOnes) {
  // Two multi-animal bodyparts and one unique (channel 2, locref channels 4 and 5).
  Targets t(layout_of(2, 1, complete_graph(2)));
  t.build({{{20.0, 20.0}, {kNaN, kNaN}}}, {{100.0, 68.0}});
  const SingleTargets oracle = single_targets({{100.0, 68.0}}, 12, 16, 17.0);
  EXPECT_EQ(t.plane_of(t.score, 2), oracle.score);
  EXPECT_EQ(t.plane_of(t.locref, 4), t.plane_of(oracle.locref, 0));
  EXPECT_EQ(t.plane_of(t.locref, 5), t.plane_of(oracle.locref, 1));
  EXPECT_EQ(t.s(2, 8, 12), 1.0F);  // centre (100, 68)
  EXPECT_EQ(t.s(0, 8, 12), 0.0F);
  EXPECT_THAT(t.pafs, Each(0.0F));  // unique bodyparts have no edges

  // No unique keypoints given: the channel has negatives only.
  t.build({{{20.0, 20.0}, {kNaN, kNaN}}});
  EXPECT_THAT(t.plane_of(t.score, 2), Each(0.0F));
  EXPECT_EQ(t.s(0, 2, 2), 1.0F);
}

TEST(MultiTargets, IdentityChannelsCoverEachIndividualsDisks) {
  const std::vector<CropPoint> first = {{20.0, 20.0}, {44.0, 20.0}};
  const std::vector<CropPoint> second = {{kNaN, kNaN}, {100.0, 76.0}};
  Targets t(layout_of(2, 0, complete_graph(2), 12, 16, 3));
  t.build({first, second});
  const SingleTargets a = single_targets(first, 12, 16, 17.0);
  const SingleTargets b = single_targets(second, 12, 16, 17.0);
  for (int r = 0; r < 12; ++r) {
    for (int c = 0; c < 16; ++c) {
      const std::size_t i = static_cast<std::size_t>(r * 16 + c);
      ASSERT_EQ(t.id(0, r, c), std::max(a.score[i], a.score[192 + i])) << r << "," << c;
      ASSERT_EQ(t.id(1, r, c), b.score[192 + i]) << r << "," << c;
    }
  }
  EXPECT_EQ(t.id(0, 2, 4), 1.0F);  // (36, 20): between the first animal's keypoints
  EXPECT_EQ(t.id(1, 9, 12), 1.0F);
  EXPECT_EQ(t.id(1, 2, 2), 0.0F);
  EXPECT_THAT(t.plane_of(t.identity, 2), Each(0.0F));  // the third individual is absent
  EXPECT_THAT(t.identity_weights, Each(1.0F));
}

TEST(MultiTargets, PresentOnlyScoreWeightsNeedWeighPartPredictions) {
  Targets t(layout_of(2, 1, {}, 12, 16, 2));
  const std::vector<std::vector<CropPoint>> animals = {{{20.0, 20.0}, {kNaN, kNaN}}};
  MultiTargetSettings settings;
  settings.weigh_only_present_joints = true;
  t.build(animals, {{100.0, 68.0}}, settings);
  EXPECT_THAT(t.score_weights, Each(1.0F));  // DeepLabCut ignores them without the second key
  settings.weigh_part_predictions = true;
  t.build(animals, {{100.0, 68.0}}, settings);
  EXPECT_THAT(t.plane_of(t.score_weights, 0), Each(1.0F));
  EXPECT_THAT(t.plane_of(t.score_weights, 1), Each(0.0F));  // bodypart 1 is not in the crop
  EXPECT_THAT(t.plane_of(t.score_weights, 2), Each(1.0F));  // the unique bodypart is
  EXPECT_THAT(t.identity_weights, Each(0.0F));
}

TEST(MultiTargets, AnEmptyCropHasNegativesOnly) {
  Targets t(layout_of(3, 1, complete_graph(3), 12, 16, 2));
  std::fill(t.score.begin(), t.score.end(), 7.0F);  // every value is overwritten
  std::fill(t.pafs.begin(), t.pafs.end(), 7.0F);
  std::fill(t.locref_weights.begin(), t.locref_weights.end(), 7.0F);
  t.build({});
  EXPECT_THAT(t.score, Each(0.0F));
  EXPECT_THAT(t.locref, Each(0.0F));
  EXPECT_THAT(t.pafs, Each(0.0F));
  EXPECT_THAT(t.identity, Each(0.0F));
  EXPECT_THAT(t.locref_weights, Each(1.0F));
  EXPECT_THAT(t.paf_weights, Each(1.0F));

  MultiTargetSettings settings;
  settings.weigh_only_present_joints = true;
  settings.weigh_part_predictions = true;
  t.build({{{kNaN, kNaN}, {kNaN, kNaN}, {kNaN, kNaN}}}, {{kNaN, kNaN}}, settings);
  EXPECT_THAT(t.score, Each(0.0F));
  EXPECT_THAT(t.score_weights, Each(0.0F));
  EXPECT_THAT(t.locref_weights, Each(0.0F));
  EXPECT_THAT(t.paf_weights, Each(0.0F));
}

TEST(MultiTargets, KeypointsFarOutsideTheGridTouchNoCell) {
  // Off the grid by far more than a disk or a band; infinity counts as not visible.
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<CropPoint> far = {{-1e12, 40.0}, {4e11, 3e11}, {inf, 20.0}};
  Targets t(layout_of(3, 0, complete_graph(3)));
  t.build({far});
  EXPECT_THAT(t.score, Each(0.0F));
  EXPECT_THAT(t.locref, Each(0.0F));
  EXPECT_THAT(t.pafs, Each(0.0F));  // the limb (0, 1) passes far from the grid
  // A keypoint just off the crop's edge still reaches the cells within its disk.
  t.build({{{-4.0, 4.0}, {kNaN, kNaN}, {kNaN, kNaN}}});
  EXPECT_EQ(t.s(0, 0, 0), 1.0F);  // (4, 4) is 8 px away
  EXPECT_EQ(t.s(0, 0, 2), 0.0F);  // (20, 4) is 24 px away
}

template <typename Build>
void expect_error(Build build, const std::vector<std::string>& parts) {
  try {
    build();
    FAIL() << "no error";
  } catch (const Error& error) {
    for (const std::string& part : parts) EXPECT_THAT(error.what(), HasSubstr(part));
  }
}

TEST(MultiTargets, BadInputsThrowNamingWhatIsWrong) {
  Targets t(layout_of(3, 1, complete_graph(3), 12, 16, 2));
  const std::vector<CropPoint> good = {{20.0, 20.0}, {30.0, 30.0}, {40.0, 40.0}};
  const std::vector<CropPoint> short_animal = {{20.0, 20.0}, {30.0, 30.0}};
  expect_error(
      [&] {
        t.build({good, short_animal});
      },
      {"animal 1 has 2 keypoints", "3 multi-animal bodyparts"});
  expect_error(
      [&] {
        t.build({good}, {{1.0, 1.0}, {2.0, 2.0}});
      },
      {"2 unique-bodypart keypoints", "1 unique bodyparts"});
  expect_error([&] { t.build({good, good, good}); }, {"3 animals", "2 identity channels"});

  Targets out_of_range(layout_of(3, 0, {{0, 1}, {1, 3}}));
  expect_error([&] { out_of_range.build({good}); }, {"edge 1", "bodypart 3", "3 multi-animal"});

  MultiTargetLayout flat = layout_of(3, 0, {}, 0, 16);
  std::vector<float> none;
  expect_error(
      [&] {
        build_multi_targets({}, {}, flat, {}, {none, none, none, none, none, none, none, none});
      },
      {"grid", "0 rows by 16 columns"});

  MultiTargetSettings no_width;
  no_width.pafwidth = 0;
  expect_error([&] { t.build({good}, {}, no_width); }, {"pafwidth", "positive"});

  MultiTargetMaps wrong = t.maps();
  wrong.pafs = wrong.pafs.first(10);
  expect_error([&] { build_multi_targets({}, {}, t.layout, {}, wrong); },
               {"pafs has 10 values", "1152", "6 channels of 12 rows by 16 columns"});
}

TEST(MultiTargets, AssemblyGivesTheAnimalsBack) {
  // Two animals of three bodyparts, fed to the assembly library as network output: score maps as
  // probabilities, location refinement, PAFs (complete graph).
  const std::vector<std::vector<CropPoint>> animals = {
      {{30.3, 28.6}, {77.9, 30.2}, {51.1, 70.4}},
      {{150.2, 101.7}, {196.6, 97.1}, {170.8, 140.9}},
  };
  const PafGraph graph = complete_graph(3);
  Targets t(layout_of(3, 0, graph, 24, 32));
  t.build(animals);

  MapAssemblySettings settings;
  settings.assembly.max_individuals = 2;
  const auto stack = [&](const std::vector<float>& values, int channels) {
    return MapStack{values, channels, 24, 32};
  };
  const Assemblies found =
      assemble_maps(stack(t.score, 3), stack(t.locref, 6), stack(t.pafs, 6), graph, 3, settings);
  ASSERT_EQ(found.animals.size(), 2U);
  for (const std::vector<CropPoint>& animal : animals) {
    // The assembly whose first keypoint is this animal's.
    const auto match = std::find_if(found.animals.begin(), found.animals.end(), [&](const auto& a) {
      return std::hypot(a.keypoints[0].x - animal[0].x, a.keypoints[0].y - animal[0].y) < 1.0;
    });
    ASSERT_NE(match, found.animals.end()) << animal[0].x;
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(match->keypoints[j].x, animal[j].x, 1.0) << j;
      EXPECT_NEAR(match->keypoints[j].y, animal[j].y, 1.0) << j;
    }
  }
}

TEST(MultiLossWeights, AreDeepLabCutsMultiAnimalDefaults) {
  const MultiLossWeights weights;
  EXPECT_EQ(weights.score, 1.0);
  EXPECT_EQ(weights.locref, 0.05);
  EXPECT_EQ(weights.paf, 0.1);
  EXPECT_TRUE(weights.locref_huber);
  EXPECT_FALSE(weights.paf_huber);
  EXPECT_EQ(MultiTargetSettings{}.pafwidth, kMultiPafWidth);
}

}  // namespace
}  // namespace labpose::pipeline
