// The CPU backend's int8 plans (a CPU with VNNI; the plan tests skip, saying why, elsewhere): how
// values are stored (u8 after a ReLU, s8 otherwise, tied through residual sums and max-pools), the
// per-channel weight steps, each kind of convolution against the reference within the bound that
// rounding its input and weights to their steps gives, chains and whole pose networks against the
// fp32 plan after a calibration, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/value_formats.hpp"
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
using dt = dnnl::memory::data_type;

#define LABPOSE_SKIP_WITHOUT_INT8()                                                             \
  do {                                                                                          \
    if (!cpu::cpu_has_int8())                                                                   \
      GTEST_SKIP() << "this CPU has no VNNI (oneDNN uses " << cpu::cpu_instructions()           \
                   << "): int8 plans are refused here, which the CLI test checks with the ISA " \
                      "lowered";                                                                \
  } while (false)

FusedOp named(FusedOp op, const char* name, int input, int residual = -1) {
  op.name = name;
  op.input = input;
  op.residual = residual;
  return op;
}

// The ranges of `graph` measured in fp32 on `values`, as a calibration would.
ActivationRanges calibrate(const FusedGraph& graph, const Shape& input,
                           const std::vector<float>& values) {
  const auto fp32 = devices::make_backend("cpu");
  RangeObserver observer(*fp32, graph);
  observer.observe(upload(*fp32, input, values));
  EXPECT_EQ(observer.images(), input.n());
  return observer.ranges();
}

TEST(Int8Formats, UnsignedAfterAReluTiedThroughResidualsAndPools) {
  const FusedOp conv = conv_op(FusedOp::Kind::conv, {4, 4, 3, 3}, ConvGeometry::symmetric(1, 1), 1);
  FusedOp normalize;
  normalize.kind = FusedOp::Kind::normalize;
  FusedOp pool;
  pool.kind = FusedOp::Kind::max_pool;
  FusedGraph graph;
  graph.ops.push_back(named(normalize, "normalize", -1));  // 0: s8
  FusedOp relu = named(conv, "relu", 0);                   // 1: u8, but tied to 3 below
  relu.activation = 0.0F;
  graph.ops.push_back(relu);
  graph.ops.push_back(named(pool, "pool", 1));           // 2: as 1
  FusedOp linear_sum = named(conv, "linear sum", 2, 1);  // 3: s8 (no ReLU after the sum)
  graph.ops.push_back(linear_sum);
  FusedOp relu6 = named(conv, "relu6", 3);  // 4: u8
  relu6.activation = 6.0F;
  graph.ops.push_back(relu6);
  FusedOp relu_sum = named(conv, "relu sum", 4, 4);  // 5: u8, as its residual
  relu_sum.activation_after_residual = 0.0F;
  graph.ops.push_back(relu_sum);
  graph.ops.push_back(named(conv, "head", 5));  // 6: an output, fp32
  graph.outputs = {6};
  graph.output_names = {"maps"};

  EXPECT_THROW(cpu::value_formats(graph, PlanPrecision::int8), Error) << "no calibration";
  graph.ranges.input = 2.0F;
  graph.ranges.values = {1.27F, 5.1F, 5.1F, 2.54F, 6.0F, 7.65F, 9.0F};
  const auto formats = cpu::value_formats(graph, PlanPrecision::int8);
  const dt expected[] = {dt::s8, dt::s8, dt::s8, dt::s8, dt::u8, dt::u8, dt::f32};
  for (std::size_t i = 0; i < formats.size(); ++i)
    EXPECT_EQ(formats[i].type, expected[i]) << graph.ops[i].name;
  EXPECT_FLOAT_EQ(formats[0].scale, 1.27F / 127);
  EXPECT_FLOAT_EQ(formats[1].scale, 5.1F / 127) << "signed: the residual of a signed sum";
  EXPECT_FLOAT_EQ(formats[2].scale, formats[1].scale) << "a max-pool keeps its input's steps";
  EXPECT_FLOAT_EQ(formats[4].scale, 6.0F / 255);
  EXPECT_FLOAT_EQ(formats[6].scale, 1.0F);
  EXPECT_FLOAT_EQ(cpu::input_format(graph, PlanPrecision::int8).scale, 2.0F / 127);

  const auto bf16 = cpu::value_formats(graph, PlanPrecision::bf16);
  EXPECT_EQ(bf16[3].type, dt::bf16);
  EXPECT_EQ(bf16[6].type, dt::f32);
}

TEST(Int8Formats, WeightStepsPerOutputChannel) {
  FusedOp conv = conv_op(FusedOp::Kind::conv, {3, 2, 1, 1}, ConvGeometry::symmetric(1, 0), 2);
  conv.weights = {0.5F, -1.27F, 0.1F, 0.2F, 0.0F, 0.0F};
  const auto steps = cpu::weight_scales(conv);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_FLOAT_EQ(steps[0], 1.27F / 127);
  EXPECT_FLOAT_EQ(steps[1], 0.2F / 127);
  EXPECT_GT(steps[2], 0.0F) << "an all-zero channel still has a step";

  // Transposed, 2 groups: weights (C = 4, K/g = 1, 1, 1); output channel k of group g = c / 2.
  ConvGeometry grouped = ConvGeometry::symmetric(1, 0, 1, 2);
  FusedOp transposed = conv_op(FusedOp::Kind::conv_transpose, {4, 1, 1, 1}, grouped, 3);
  transposed.weights = {0.1F, -0.3F, 2.54F, 0.2F};
  const auto transposed_steps = cpu::weight_scales(transposed);
  ASSERT_EQ(transposed_steps.size(), 2u);
  EXPECT_FLOAT_EQ(transposed_steps[0], 0.3F / 127);
  EXPECT_FLOAT_EQ(transposed_steps[1], 2.54F / 127);
}

// A convolution reading the network input in int8 and writing fp32: the input is rounded to its
// step s_x and each weight to its channel's step s_w[k] (errors at most half a step), sums are
// exact int32, so |int8 - exact| <= s_w[k]/2 sum|x| + s_x/2 sum|w| + s_x s_w[k]/4 taps.
void expect_within_quantization_bound(FusedOp op, const Shape& input) {
  ref::RefBackend ref;
  const auto int8 = devices::make_backend("cpu", PlanPrecision::int8);
  const auto x = random_values(input.elements(), 7, 2.0);
  FusedGraph graph = one_op(op);
  graph.ranges = calibrate(graph, input, x);
  const cpu::ValueFormat in = cpu::input_format(graph, PlanPrecision::int8);
  const std::vector<float> steps = cpu::weight_scales(op);
  const auto expected = run_plan(ref, graph, input, x)[0];
  const auto actual = run_plan(*int8, graph, input, x)[0];

  FusedOp linear = op;  // the same window sums, no bias or activation
  linear.bias.assign(op.bias.size(), 0.0F);
  linear.activation = linear.activation_after_residual = -1.0F;
  FusedOp input_sums = linear, weight_sums = linear, taps = linear;
  input_sums.weights.assign(op.weights.size(), 1.0F);  // sum |x| over each window
  weight_sums.weights = absolute(op.weights);          // sum |w| over each window
  taps.weights.assign(op.weights.size(), 1.0F);
  const std::vector<float> ones(x.size(), 1.0F);
  const auto sum_x = run_plan(ref, one_op(input_sums), input, absolute(x))[0];
  const auto sum_w = run_plan(ref, one_op(weight_sums), input, ones)[0];
  const auto count = run_plan(ref, one_op(taps), input, ones)[0];
  const Shape out = int8->compile(graph, input)->output_shapes()[0];
  const std::int64_t channels = out.c(), plane = out.h() * out.w();
  ASSERT_EQ(actual.size(), expected.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const auto k = static_cast<std::size_t>((static_cast<std::int64_t>(i) / plane) % channels);
    const double allowed = steps[k] / 2 * sum_x[i] + in.scale / 2 * sum_w[i] +
                           in.scale * steps[k] / 4 * count[i] + 1e-4;
    worst = std::max(worst, std::abs(double{actual[i]} - double{expected[i]}) / allowed);
  }
  EXPECT_LE(worst, 1.0) << "the worst output's error, in units of its bound";
  EXPECT_GT(relative_l2_error(actual, expected), 0.0) << "computed in int8, not in fp32";
}

TEST(Int8Plan, ConvolutionsWithinTheQuantizationBound) {
  LABPOSE_SKIP_WITHOUT_INT8();
  for (const testing::ConvolutionCase& c : testing::convolution_cases()) {
    SCOPED_TRACE(c.name);
    expect_within_quantization_bound(c.op, c.input);
  }
}

// Normalization, ReLU6, max-pooling and residual sums in u8/s8 between layers, a value read twice
// and also an output: each stored value is off by at most half its step, which the layers after it
// carry on; the outputs stay within a few percent of fp32.
TEST(Int8Plan, ChainsWithResidualsAndPoolsAgreeWithFp32) {
  LABPOSE_SKIP_WITHOUT_INT8();
  const auto fp32 = devices::make_backend("cpu");
  const auto int8 = devices::make_backend("cpu", PlanPrecision::int8);
  FusedGraph graph;
  FusedOp normalize;
  normalize.kind = FusedOp::Kind::normalize;
  normalize.scale = {0.017F, 0.0175F, 0.0174F};
  normalize.shift = {-2.1F, -2.03F, -1.8F};
  graph.ops.push_back(named(normalize, "normalize", -1));
  FusedOp stem = conv_op(FusedOp::Kind::conv, {16, 3, 3, 3}, ConvGeometry::symmetric(2, 1), 21);
  stem.activation = 6.0F;
  graph.ops.push_back(named(stem, "stem", 0));
  FusedOp pool;
  pool.kind = FusedOp::Kind::max_pool;
  graph.ops.push_back(named(pool, "pool", 1));
  FusedOp branch = conv_op(FusedOp::Kind::conv, {16, 16, 3, 3}, ConvGeometry::symmetric(1, 1), 22);
  branch.activation = 0.0F;
  graph.ops.push_back(named(branch, "branch", 2));
  FusedOp sum = conv_op(FusedOp::Kind::conv, {16, 16, 1, 1}, ConvGeometry::symmetric(1, 0), 23);
  sum.activation_after_residual = 0.0F;
  graph.ops.push_back(named(sum, "sum", 3, 2));
  FusedOp linear = conv_op(FusedOp::Kind::conv, {16, 16, 1, 1}, ConvGeometry::symmetric(1, 0), 24);
  graph.ops.push_back(named(linear, "linear sum", 4, 4));
  graph.ops.push_back(named(
      conv_op(FusedOp::Kind::conv, {4, 16, 3, 3}, ConvGeometry::symmetric(1, 1), 25), "maps", 5));
  graph.outputs = {4, 6};
  graph.output_names = {"features", "maps"};
  const Shape input{2, 3, 40, 52};
  const auto pixels = random_values(input.elements(), 26, 127.0);
  std::vector<float> shifted = pixels;
  for (float& v : shifted) v += 128.0F;
  graph.ranges = calibrate(graph, input, shifted);
  const auto expected = run_plan(*fp32, graph, input, shifted);
  const auto actual = run_plan(*int8, graph, input, shifted);
  ASSERT_EQ(actual.size(), 2u);
  for (std::size_t k = 0; k < 2; ++k) {
    const double error = relative_l2_error(actual[k], expected[k]);
    EXPECT_LT(error, 0.03) << graph.output_names[k];
    EXPECT_GT(error, 0.0) << graph.output_names[k];
  }
}

// The pose networks, calibrated on one batch and run on another, against the fp32 plan.
TEST(Int8Plan, PoseNetworksAgreeWithFp32AfterCalibration) {
  LABPOSE_SKIP_WITHOUT_INT8();
  const auto fp32 = devices::make_backend("cpu");
  const auto int8 = devices::make_backend("cpu", PlanPrecision::int8);
  EXPECT_EQ(int8->plan_precision(), PlanPrecision::int8);
  EXPECT_EQ(int8->training_precision(), PlanPrecision::fp32) << "int8 is for inference only";
  for (const char* architecture : {"mobilenet_v2_0.35", "efficientnet_lite0", "resnet_50"}) {
    SCOPED_TRACE(architecture);
    auto net = build_pose_net(*fp32, {architecture, 4, true});
    initialize_pose_net(*net, 31);
    const Shape input{2, 3, 64, 80};
    std::vector<float> calibration = random_values(input.elements(), 32, 127.0);
    std::vector<float> pixels = random_values(input.elements(), 33, 127.0);
    for (float& v : calibration) v += 128.0F;
    for (float& v : pixels) v += 128.0F;
    const FusedGraph uncalibrated = net->fuse(true);
    EXPECT_THROW(int8->compile(uncalibrated, input), Error);
    net->set_activation_ranges(calibrate(uncalibrated, input, calibration));
    const FusedGraph graph = net->fuse(true);
    ASSERT_EQ(graph.ranges.values.size(), graph.ops.size());
    EXPECT_TRUE(net->fuse(false).ranges.empty()) << "measured with the normalization";
    const auto expected = run_plan(*fp32, graph, input, pixels);
    const auto actual = run_plan(*int8, graph, input, pixels);
    ASSERT_EQ(actual.size(), expected.size());
    for (std::size_t k = 0; k < actual.size(); ++k)
      EXPECT_LT(relative_l2_error(actual[k], expected[k]), 0.1) << "output " << k;
  }
}

TEST(Int8Plan, RefusedWhereTheCpuHasNoVnniAndOnGpus) {
  if (cpu::cpu_has_int8()) {
    EXPECT_EQ(devices::make_backend("cpu", PlanPrecision::int8)->plan_precision(),
              PlanPrecision::int8);
  } else {
    try {
      devices::make_backend("cpu", PlanPrecision::int8);
      ADD_FAILURE() << "int8 without VNNI";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find("this CPU has no VNNI"), std::string::npos);
    }
  }
  EXPECT_EQ(devices::parse_plan_precision("int8"), PlanPrecision::int8);
  EXPECT_THROW(devices::make_backend("ref", PlanPrecision::int8), UsageError);
}

}  // namespace
}  // namespace labpose::nets
