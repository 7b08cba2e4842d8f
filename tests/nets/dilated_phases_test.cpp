// Dilated convolutions by phases (nets/cpu/dilated_phases.hpp): the split and merge of the
// phases on sizes that the dilation does not divide, which convolutions the plans take there, and
// plans with dilated convolutions against the reference backend, whichever way this CPU runs them.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "nets/cpu/backend.hpp"
#include "nets/cpu/dilated_phases.hpp"
#include "nets/fused_graph.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

namespace labpose::nets {
namespace {
using cpu::PhaseSplit;

TEST(DilatedPhases, SplitPadsWithZerosAndMergeUndoesIt) {
  for (const int dilation : {2, 3}) {
    SCOPED_TRACE(dilation);
    const PhaseSplit split{2, 5, 7, 3, dilation};
    // Each pixel holds (image, y, x, channel) in one 16-bit value.
    std::vector<std::uint16_t> image(static_cast<std::size_t>(2 * 5 * 7 * 3));
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint16_t>(i + 1);
    std::vector<std::uint16_t> phases(
        static_cast<std::size_t>(split.phase_images() * split.phase_height() * split.phase_width() *
                                 3),
        7777);
    cpu::split_into_phases(image.data(), phases.data(), split, sizeof(std::uint16_t));
    for (std::int64_t p = 0; p < split.phase_images(); ++p) {
      const std::int64_t a = p / 2 / dilation, b = p / 2 % dilation, n = p % 2;
      for (std::int64_t r = 0; r < split.phase_height(); ++r) {
        for (std::int64_t c = 0; c < split.phase_width(); ++c) {
          for (std::int64_t k = 0; k < 3; ++k) {
            const std::int64_t y = r * dilation + a, x = c * dilation + b;
            const auto at = static_cast<std::size_t>(
                ((p * split.phase_height() + r) * split.phase_width() + c) * 3 + k);
            const std::uint16_t expected =
                y < 5 && x < 7 ? image[static_cast<std::size_t>(((n * 5 + y) * 7 + x) * 3 + k)] : 0;
            ASSERT_EQ(phases[at], expected) << "phase " << p << " at " << r << ", " << c;
          }
        }
      }
    }
    std::vector<std::uint16_t> merged(image.size(), 0);
    cpu::merge_phases(phases.data(), merged.data(), split, sizeof(std::uint16_t));
    EXPECT_EQ(merged, image);
  }
}

TEST(DilatedPhases, WhichConvolutionsTakeThem) {
  const Shape dense{64, 32, 3, 3};
  const ConvGeometry dilated = ConvGeometry::symmetric(1, 2, 2);
  const auto bf16 = PlanPrecision::bf16;
  EXPECT_TRUE(cpu::phases_apply(dense, dilated, bf16, true, 2));
  EXPECT_TRUE(cpu::phases_apply({8, 4, 5, 5}, ConvGeometry::symmetric(1, 6, 3), bf16, true, 2));
  EXPECT_FALSE(cpu::phases_apply(dense, dilated, bf16, false, 2)) << "no AMX";
  EXPECT_FALSE(cpu::phases_apply(dense, dilated, bf16, true, 3)) << "oneDNN 3 runs brgconv";
  EXPECT_FALSE(cpu::phases_apply(dense, dilated, PlanPrecision::fp32, true, 2));
  EXPECT_FALSE(cpu::phases_apply(dense, dilated, PlanPrecision::int8, true, 2));
  EXPECT_FALSE(cpu::phases_apply(dense, ConvGeometry::symmetric(1, 1), bf16, true, 2));
  EXPECT_FALSE(
      cpu::phases_apply({64, 1, 3, 3}, ConvGeometry::symmetric(1, 2, 2, 64), bf16, true, 2))
      << "depthwise";
  EXPECT_FALSE(cpu::phases_apply(dense, ConvGeometry::symmetric(2, 2, 2), bf16, true, 2));
  EXPECT_FALSE(cpu::phases_apply(dense, ConvGeometry::symmetric(1, 1, 2), bf16, true, 2))
      << "a padding that changes the size";
  EXPECT_FALSE(cpu::phases_apply({64, 32, 2, 2}, ConvGeometry::symmetric(1, 1, 2), bf16, true, 2));
  const ConvGeometry phase = cpu::phase_geometry(ConvGeometry::symmetric(1, 6, 3));
  EXPECT_EQ(phase, ConvGeometry::symmetric(1, 2));
}

TEST(DilatedPhases, PlansWithDilatedConvolutionsGiveTheReferenceOutputs) {
  using testing::conv_op;
  struct Case {
    const char* name;
    Shape weights;
    ConvGeometry geometry;
    Shape input;
  };
  const std::vector<Case> cases = {
      {"3x3 dilation 2, sizes it divides",
       {40, 48, 3, 3},
       ConvGeometry::symmetric(1, 2, 2),
       Shape{2, 3, 8, 12}},
      {"3x3 dilation 2, odd sizes",
       {40, 48, 3, 3},
       ConvGeometry::symmetric(1, 2, 2),
       Shape{2, 3, 7, 11}},
      {"5x5 dilation 3", {16, 48, 5, 5}, ConvGeometry::symmetric(1, 6, 3), Shape{1, 3, 10, 8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    FusedGraph graph;
    FusedOp features =
        conv_op(FusedOp::Kind::conv, {48, 3, 3, 3}, ConvGeometry::symmetric(1, 1), 71);
    features.activation = 0.0F;
    graph.ops.push_back(features);
    FusedOp dilated = conv_op(FusedOp::Kind::conv, c.weights, c.geometry, 72);
    dilated.input = 0;
    dilated.activation = 0.0F;
    graph.ops.push_back(dilated);
    // A 1x1 convolution after it, as in resnet_50's blocks: a plan's outputs are fp32, the values
    // between its layers in the plan's precision.
    FusedOp after =
        conv_op(FusedOp::Kind::conv, {8, c.weights[0], 1, 1}, ConvGeometry::symmetric(1, 0), 74);
    after.input = 1;
    graph.ops.push_back(after);
    graph.outputs = {2};
    graph.output_names = {"maps"};
    const auto x = testing::random_values(c.input.elements(), 73);
    ref::RefBackend ref;
    const auto expected = testing::run_plan(ref, graph, c.input, x);
    std::vector<PlanPrecision> precisions{PlanPrecision::fp32};
    if (cpu::cpu_has_bf16()) precisions.push_back(PlanPrecision::bf16);
    for (const PlanPrecision precision : precisions) {
      SCOPED_TRACE(precision == PlanPrecision::bf16 ? "bf16" : "fp32");
      cpu::CpuBackend backend(precision);
      const std::int64_t before = cpu::convolutions_by_phases();
      const auto actual = testing::run_plan(backend, graph, c.input, x);
      const bool by_phases =
          cpu::phases_enabled() && cpu::phases_apply(c.weights, c.geometry, precision);
      EXPECT_EQ(cpu::convolutions_by_phases() - before, by_phases ? 1 : 0);
      ASSERT_EQ(actual.size(), 1u);
      EXPECT_LT(testing::relative_l2_error(actual[0], expected[0]),
                precision == PlanPrecision::bf16 ? 2e-2 : 1e-5);
    }
  }
}

}  // namespace
}  // namespace labpose::nets
