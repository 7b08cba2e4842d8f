// The CPU backend in bf16 (a CPU with bf16 units; every test skips, saying why, elsewhere):
// inference plans (each kind of fused op against the reference within the bound that bf16's unit
// round-off u = 2^-8 gives, whole networks against the fp32 plan), the mixed-precision training
// convolutions in all directions within the same bound (and a layer's training step equal to the
// separate ops), and how the precision is chosen and refused.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "devices/precision_speed.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"
#include "nets/models/models.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::absolute;
using testing::conv_op;
using testing::download;
using testing::one_op;
using testing::random_values;
using testing::relative_l2_error;
using testing::run_plan;
using testing::upload;

constexpr double kUnitRoundOff = 1.0 / 256.0;  // bf16: 8 significant bits, rounding to nearest

#define LABPOSE_SKIP_WITHOUT_BF16()                                                         \
  do {                                                                                      \
    if (!cpu::cpu_has_bf16())                                                               \
      GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << cpu::cpu_instructions() \
                   << "): bf16 plans are refused here, which PrecisionIsChosenAndRefused "  \
                      "checks";                                                             \
  } while (false)

// A convolution reading the network's input in bf16 and writing its fp32 output: the input and
// the weights are each rounded once (relative error u), products and sums are fp32, so
// |bf16 - exact| <= (2u + u^2) * sum |x| |w| (+ fp32's own rounding, far below).
void expect_within_conv_bound(const FusedOp& op, const Shape& input) {
  ref::RefBackend ref;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  const auto x = random_values(input.elements(), 7, 2.0);
  const auto expected = run_plan(ref, one_op(op), input, x)[0];
  const auto actual = run_plan(*bf16, one_op(op), input, x)[0];
  FusedOp magnitudes = op;  // sum |x| |w| per output: the same op on absolute values, no bias
  magnitudes.weights = absolute(op.weights);
  magnitudes.bias.assign(op.bias.size(), 0.0F);
  magnitudes.activation = magnitudes.activation_after_residual = -1.0F;
  const auto bound = run_plan(ref, one_op(magnitudes), input, absolute(x))[0];
  ASSERT_EQ(actual.size(), expected.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double allowed = (2.0 + kUnitRoundOff) * kUnitRoundOff * bound[i] + 1e-5;
    worst = std::max(worst, std::abs(double{actual[i]} - double{expected[i]}) / allowed);
  }
  EXPECT_LE(worst, 1.0) << "the worst output's error, in units of its bound";
  EXPECT_GT(relative_l2_error(actual, expected), 0.0) << "computed in bf16, not in fp32";
}

TEST(Bf16Plan, ConvolutionsWithinTheRoundOffBound) {
  LABPOSE_SKIP_WITHOUT_BF16();
  for (const testing::ConvolutionCase& c : testing::convolution_cases()) {
    SCOPED_TRACE(c.name);
    expect_within_conv_bound(c.op, c.input);
  }
}

TEST(Bf16Plan, NormalizeAndMaxPoolRoundTheirOutputsOnce) {
  LABPOSE_SKIP_WITHOUT_BF16();
  ref::RefBackend ref;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  const Shape input{2, 3, 11, 9};
  const auto x = random_values(input.elements(), 11, 200.0);
  FusedOp normalize;
  normalize.kind = FusedOp::Kind::normalize;
  normalize.name = "normalize";
  normalize.scale = {0.017F, 0.0175F, 0.0174F};
  normalize.shift = {-2.1F, -2.03F, -1.8F};
  FusedOp pool;
  pool.kind = FusedOp::Kind::max_pool;
  pool.name = "pool";
  for (const FusedOp& op : {normalize, pool}) {
    SCOPED_TRACE(op.name);
    const auto expected = run_plan(ref, one_op(op), input, x)[0];
    const auto actual = run_plan(*bf16, one_op(op), input, x)[0];
    EXPECT_TRUE(testing::close(actual, expected, kUnitRoundOff, 1e-6));
  }
}

// Residual sums and activations after them, with a value read twice: the error of a chain is no
// longer one rounding, so relative to the outputs' size.
TEST(Bf16Plan, ResidualChainsAgreeWithTheReference) {
  LABPOSE_SKIP_WITHOUT_BF16();
  ref::RefBackend ref;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  FusedGraph graph;
  FusedOp first = conv_op(FusedOp::Kind::conv, {16, 8, 3, 3}, ConvGeometry::symmetric(1, 1), 21);
  first.activation = 6.0F;
  FusedOp second = conv_op(FusedOp::Kind::conv, {16, 16, 1, 1}, ConvGeometry::symmetric(1, 0), 22);
  second.name = "second";
  second.input = 0;
  second.residual = 0;
  second.activation_after_residual = 0.0F;
  FusedOp third = conv_op(FusedOp::Kind::conv, {4, 16, 3, 3}, ConvGeometry::symmetric(1, 1), 23);
  third.name = "third";
  third.input = 1;
  graph.ops = {first, second, third};
  graph.outputs = {1, 2};
  graph.output_names = {"features", "maps"};
  const Shape input{2, 8, 12, 10};
  const auto x = random_values(input.elements(), 24, 1.0);
  const auto expected = run_plan(ref, graph, input, x);
  const auto actual = run_plan(*bf16, graph, input, x);
  for (std::size_t k = 0; k < 2; ++k)
    EXPECT_LT(relative_l2_error(actual[k], expected[k]), 8 * kUnitRoundOff) << "output " << k;
}

// The pose networks, batch norm folded, against the fp32 plan on the same weights; with and
// without the input normalization (then the plan converts its input to bf16 itself); and a
// multi-animal network, with its PAF and identity channels.
TEST(Bf16Plan, PoseNetworksAgreeWithFp32) {
  LABPOSE_SKIP_WITHOUT_BF16();
  const auto fp32 = devices::make_backend("cpu");
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  EXPECT_EQ(bf16->plan_precision(), PlanPrecision::bf16);
  EXPECT_NE(bf16->description().find("inference plans in bf16"), std::string::npos);
  const std::vector<std::pair<const char*, MultiAnimalHeads>> networks = {
      {"mobilenet_v2_0.35", {}},
      {"efficientnet_lite0", {}},
      {"resnet_50", {}},
      {"efficientnet_lite0", {3, 6}}};  // three identities, six limbs
  for (const auto& [architecture, heads] : networks) {
    SCOPED_TRACE(std::string(architecture) + (heads.limbs > 0 ? ", multi-animal" : ""));
    auto net = build_pose_net(*fp32, {architecture, 4, true}, heads);
    initialize_pose_net(*net, 31);
    const Shape input{2, 3, 64, 80};
    for (const bool normalized : {true, false}) {
      SCOPED_TRACE(normalized ? "normalized input" : "raw input");
      const FusedGraph graph = net->fuse(normalized);
      const auto pixels = random_values(input.elements(), 32, normalized ? 127.0 : 1.0);
      const auto expected = run_plan(*fp32, graph, input, pixels);
      const auto actual = run_plan(*bf16, graph, input, pixels);
      ASSERT_EQ(actual.size(), expected.size());
      for (std::size_t k = 0; k < actual.size(); ++k)
        EXPECT_LT(relative_l2_error(actual[k], expected[k]), 4e-2) << "output " << k;
    }
  }
}

// The mixed-precision training convolutions: each reads bf16 copies of its two operands and sums
// in fp32, so each result is within (2u + u^2) * sum |a| |b| of the exact one, the sum over the
// same terms (the reference on absolute values gives it).
TEST(Bf16Training, ConvolutionsInAllDirectionsWithinTheRoundOffBound) {
  LABPOSE_SKIP_WITHOUT_BF16();
  ref::RefBackend ref;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  EXPECT_EQ(bf16->training_precision(), PlanPrecision::bf16);
  struct Case {
    const char* name;
    testing::Convolution convolution;
  };
  ConvGeometry head = ConvGeometry::symmetric(2, 1);
  head.output_pad_h = head.output_pad_w = 1;
  const Case cases[] = {
      {"3x3", {false, {2, 8, 9, 11}, {12, 8, 3, 3}, ConvGeometry::symmetric(1, 1)}},
      {"1x1 stride 2", {false, {2, 8, 9, 11}, {6, 8, 1, 1}, ConvGeometry::symmetric(2, 0)}},
      {"depthwise dilated",
       {false, {2, 8, 9, 11}, {8, 1, 3, 3}, ConvGeometry::symmetric(1, 2, 2, 8)}},
      {"transposed stride 2", {true, {2, 8, 5, 6}, {8, 4, 3, 3}, head}},
  };
  std::uint64_t seed = 40;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    using testing::ConvolutionRun;
    const testing::ConvolutionOperands v = testing::random_operands(c.convolution, seed);
    const testing::ConvolutionOperands magnitudes{
        absolute(v.x), absolute(v.w), std::vector<float>(v.b.size(), 0.0F), absolute(v.dy)};
    const auto expected = run_convolution(ref, c.convolution, v, ConvolutionRun::separate_ops);
    const auto bounds =
        run_convolution(ref, c.convolution, magnitudes, ConvolutionRun::separate_ops);
    const auto actual = run_convolution(*bf16, c.convolution, v, ConvolutionRun::separate_ops);
    for (std::size_t r = 0; r < 4; ++r) {
      SCOPED_TRACE(testing::ConvolutionResults::name(r));
      const auto &a = actual.results[r], &e = expected.results[r], &bound = bounds.results[r];
      double worst = 0.0;
      for (std::size_t i = 0; i < a.size(); ++i) {
        const double allowed = (2.0 + kUnitRoundOff) * kUnitRoundOff * bound[i] + 1e-5;
        worst = std::max(worst, std::abs(double{a[i]} - double{e[i]}) / allowed);
      }
      EXPECT_LE(worst, 1.0) << "the worst result's error, in units of its bound";
      if (r < 3) {
        EXPECT_GT(relative_l2_error(a, e), 0.0) << "computed in bf16";
      }
    }
  }
}

// In mixed precision a layer's training step (conv*_forward_training, then conv*_backward with what
// it saved) computes what the separate ops compute, bit for bit: the saved copy of x and the shared
// copy of dy are the conversions the separate ops make. The backward reads the copy the forward
// saved (x is overwritten in between to see it). The conformance suite checks the step against ref
// on every backend.
TEST(Bf16Training, LayerStepConvertsXOnceAndDyOnce) {
  LABPOSE_SKIP_WITHOUT_BF16();
  using testing::ConvolutionRun;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  for (const bool transposed : {false, true}) {
    SCOPED_TRACE(transposed ? "transposed" : "convolution");
    ConvGeometry g = ConvGeometry::symmetric(transposed ? 2 : 1, 1);
    if (transposed) g.output_pad_h = g.output_pad_w = 1;
    const testing::Convolution c{
        transposed, {2, 8, 9, 11}, transposed ? Shape{8, 4, 3, 3} : Shape{12, 8, 3, 3}, g};
    std::uint64_t seed = 90;
    const testing::ConvolutionOperands v = testing::random_operands(c, seed);
    const auto separate = run_convolution(*bf16, c, v, ConvolutionRun::separate_ops);
    const auto step = run_convolution(*bf16, c, v, ConvolutionRun::layer_step_x_overwritten);
    EXPECT_TRUE(step.saved) << "the forward keeps its bf16 copy of x";
    ASSERT_EQ(step.results.size(), separate.results.size());
    for (std::size_t r = 0; r < step.results.size(); ++r)  // x overwritten: the copy was read
      EXPECT_EQ(step.results[r], separate.results[r]) << testing::ConvolutionResults::name(r);
  }
}

// A depthwise layer whose weight gradient is labpose's own fp32 loop (5x5, dilated) keeps no bf16
// copy of x, which nothing would read; one whose weight gradient is oneDNN's (3x3) keeps it. The
// step computes what the separate ops compute either way.
TEST(Bf16Training, DepthwiseLayersKeepACopyOfXOnlyForOneDnnsGradient) {
  LABPOSE_SKIP_WITHOUT_BF16();
  using testing::ConvolutionRun;
  const auto bf16 = devices::make_backend("cpu", PlanPrecision::bf16);
  struct Case {
    const char* name;
    Shape w;
    ConvGeometry geometry;
    bool keeps_copy;
  };
  const Case cases[] = {
      {"5x5", {16, 1, 5, 5}, ConvGeometry::symmetric(1, 2, 1, 16), false},
      {"3x3 dilated", {16, 1, 3, 3}, ConvGeometry::symmetric(1, 2, 2, 16), false},
      {"3x3", {16, 1, 3, 3}, ConvGeometry::symmetric(2, 1, 1, 16), true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const testing::Convolution convolution{false, {2, 16, 13, 10}, c.w, c.geometry};
    std::uint64_t seed = 95;
    const testing::ConvolutionOperands v = testing::random_operands(convolution, seed);
    const auto separate = run_convolution(*bf16, convolution, v, ConvolutionRun::separate_ops);
    const auto step = run_convolution(*bf16, convolution, v, ConvolutionRun::layer_step);
    EXPECT_EQ(step.saved, c.keeps_copy);
    ASSERT_EQ(step.results.size(), separate.results.size());
    for (std::size_t r = 0; r < step.results.size(); ++r)
      EXPECT_EQ(step.results[r], separate.results[r]) << testing::ConvolutionResults::name(r);
  }
}

TEST(Bf16Plan, PrecisionIsChosenAndRefused) {
  // auto: bf16 only where the CPU has bf16 units and they are clearly faster than fp32.
  const PlanPrecision automatic = devices::automatic_cpu_precision();
  if (!cpu::cpu_has_bf16()) {
    EXPECT_EQ(automatic, PlanPrecision::fp32);
  }
  EXPECT_TRUE(automatic == PlanPrecision::fp32 || automatic == PlanPrecision::bf16);
  EXPECT_EQ(devices::make_backend("cpu", PlanPrecision::automatic)->plan_precision(), automatic);
  EXPECT_EQ(devices::make_backend("cpu")->plan_precision(), PlanPrecision::fp32);
  EXPECT_EQ(devices::make_backend("ref", PlanPrecision::automatic)->plan_precision(),
            PlanPrecision::fp32);
  EXPECT_THROW(devices::make_backend("ref", PlanPrecision::bf16), UsageError);
  EXPECT_THROW(devices::make_backend("cpu", PlanPrecision::fp16), UsageError);
  if (!cpu::cpu_has_bf16()) {
    try {
      devices::make_backend("cpu", PlanPrecision::bf16);
      ADD_FAILURE() << "bf16 made on a CPU without bf16 units";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("this CPU has no bf16 units"), std::string::npos)
          << error.what();
      EXPECT_NE(error.hint().find("never emulated"), std::string::npos) << error.hint();
    }
  }
  EXPECT_EQ(devices::parse_plan_precision("auto"), PlanPrecision::automatic);
  EXPECT_THROW(devices::parse_plan_precision("int4"), UsageError);
}

}  // namespace
}  // namespace labpose::nets
