// The CPU backend's own depthwise convolution in bf16 (a CPU with AVX-512 and bf16 units; skipped,
// saying why, elsewhere): every filter size, stride and dilation it computes against the
// reference convolution, within the bound its rounding gives, on widths that are not whole spans,
// channel counts that are not whole vectors and uneven padding; which convolutions plans give it;
// and a plan that takes it against the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "devices/devices.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/depthwise.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::nets {
namespace {
using testing::conv_op;
using testing::from_nhwc;
using testing::loaded;
using testing::one_op;
using testing::random_values;
using testing::relative_l2_error;
using testing::run_plan;
using testing::stored;
using testing::to_nhwc;

constexpr double kUnitRoundOff = 1.0 / 256.0;  // bf16: 8 significant bits, rounding to nearest

struct Case {
  int filter, stride, dilation;
  std::int64_t channels;
  ConvGeometry geometry;  // the padding; the rest is set from the fields above
};

std::string name_of(const Case& c) {
  return std::to_string(c.filter) + "x" + std::to_string(c.filter) + " stride " +
         std::to_string(c.stride) + " dilation " + std::to_string(c.dilation) + ", " +
         std::to_string(c.channels) + " channels, pads " + std::to_string(c.geometry.pad_top) +
         "/" + std::to_string(c.geometry.pad_left) + "/" + std::to_string(c.geometry.pad_bottom) +
         "/" + std::to_string(c.geometry.pad_right);
}

// Every filter, stride and dilation; 40 channels (two vectors and half of one) and 8; padding as
// PyTorch's symmetric "same" and TensorFlow's uneven one for stride 2 (none before, the rest
// after).
std::vector<Case> cases() {
  std::vector<Case> result;
  for (const int filter : {3, 5}) {
    for (const int stride : {1, 2}) {
      for (const int dilation : {1, 2}) {
        const int reach = (filter - 1) * dilation;
        ConvGeometry g = ConvGeometry::symmetric(stride, reach / 2, dilation,
                                                 40);  // groups set below
        if (stride == 2 && dilation == 1) {
          g.pad_top = g.pad_left = 0;
          g.pad_bottom = g.pad_right = reach - 1;
        }
        result.push_back({filter, stride, dilation, 40, g});
      }
    }
  }
  result.push_back({3, 1, 1, 8, ConvGeometry::symmetric(1, 1)});
  result.push_back({5, 1, 1, 16, ConvGeometry::symmetric(1, 2)});
  return result;
}

// For every output, |bias| + Σ |x| |w| over its window: what the fp32 sums' rounding scales.
std::vector<double> magnitudes(const FusedOp& op, const std::vector<float>& x, const Shape& in,
                               const Shape& out) {
  const ConvGeometry& g = op.geometry;
  const std::int64_t r = op.weight_shape[2];
  std::vector<double> result(static_cast<std::size_t>(out.elements()));
  for (std::int64_t n = 0; n < out.n(); ++n) {
    for (std::int64_t c = 0; c < out.c(); ++c) {
      for (std::int64_t oy = 0; oy < out.h(); ++oy) {
        for (std::int64_t ox = 0; ox < out.w(); ++ox) {
          double sum = std::abs(op.bias[static_cast<std::size_t>(c)]);
          for (std::int64_t i = 0; i < r; ++i) {
            for (std::int64_t j = 0; j < r; ++j) {
              const std::int64_t iy = oy * g.stride_h - g.pad_top + i * g.dilation_h;
              const std::int64_t ix = ox * g.stride_w - g.pad_left + j * g.dilation_w;
              if (iy < 0 || iy >= in.h() || ix < 0 || ix >= in.w()) continue;
              sum += std::abs(
                  x[static_cast<std::size_t>(((n * in.c() + c) * in.h() + iy) * in.w() + ix)] *
                  op.weights[static_cast<std::size_t>((c * r + i) * r + j)]);
            }
          }
          result[static_cast<std::size_t>(((n * out.c() + c) * out.h() + oy) * out.w() + ox)] = sum;
        }
      }
    }
  }
  return result;
}

void expect_within_bound(const Case& c, float activation, float activation_after) {
  SCOPED_TRACE(name_of(c));
  using T = std::uint16_t;  // bf16
  const PlanPrecision precision = PlanPrecision::bf16;
  ConvGeometry g = c.geometry;
  g.stride_h = g.stride_w = c.stride;
  g.dilation_h = g.dilation_w = c.dilation;
  g.groups = static_cast<int>(c.channels);
  // 53 columns: two whole spans of 24 outputs and part of a third at stride 1.
  const Shape input{2, c.channels, 9, 53};
  FusedOp op = conv_op(FusedOp::Kind::conv, Shape{c.channels, 1, c.filter, c.filter}, g, 17);
  op.activation = activation;
  op.activation_after_residual = activation_after;
  ASSERT_TRUE(cpu::depthwise_runs(op.weight_shape, g, precision,
                                  {cpu::cpu_has_avx512(), cpu::cpu_has_bf16()}));
  // Inputs that are values of the type already, as a plan's activations are.
  std::vector<float> x = random_values(input.elements(), 29, 2.0);
  for (float& value : x) value = loaded(stored(value, T{}));
  ref::RefBackend ref;
  const std::vector<float> expected = run_plan(ref, one_op(op), input, x)[0];
  const Shape output = conv2d_output_shape(input, op.weight_shape, g);
  ASSERT_EQ(static_cast<std::int64_t>(expected.size()), output.elements());

  const std::vector<T> x_nhwc = to_nhwc<T>(x, input);
  std::vector<T> y_nhwc(static_cast<std::size_t>(output.elements()), stored(-1e30F, T{}));
  const cpu::DepthwiseConv conv(op.weights, op.weight_shape, op.bias, input, output, g, activation,
                                activation_after, precision, 2);
  conv.run(x_nhwc.data(), y_nhwc.data());
  const std::vector<float> actual = from_nhwc(y_nhwc, output);

  // fp32 sums of at most 26 terms (each rounding by 2⁻²⁴ of the magnitude), the kernel's and the
  // reference's, then the output rounded to bf16 once (2⁻⁸ of its value). The activations only
  // clamp.
  const std::vector<double> sums = magnitudes(op, x, input, output);
  const double arithmetic = 2 * (c.filter * c.filter + 1) * std::ldexp(1.0, -24);
  const double out = kUnitRoundOff;
  double worst = 0.0;
  for (std::size_t at = 0; at < expected.size(); ++at) {
    const double allowed =
        arithmetic * sums[at] * (1 + out) + out * std::abs(double{expected[at]}) + 1e-12;
    worst = std::max(worst, std::abs(double{actual[at]} - double{expected[at]}) / allowed);
  }
  EXPECT_LE(worst, 1.0) << "the worst output's error, in units of its bound";
  EXPECT_GT(worst, 0.1) << "the bound should be near the errors seen, or it tests nothing";
  EXPECT_LT(relative_l2_error(actual, expected), 2 * kUnitRoundOff);
  std::cout << name_of(c) << ": worst error " << worst << " of its bound\n";
}

TEST(Depthwise, Bf16AgreesWithTheReferenceWithinItsRoundOffBound) {
  if (!cpu::cpu_has_bf16() || !cpu::cpu_has_avx512()) {
    GTEST_SKIP() << "this CPU has no AVX-512 bf16 units (oneDNN uses " << cpu::cpu_instructions()
                 << "): bf16 plans use oneDNN's depthwise kernels or none here";
  }
  for (const Case& c : cases()) expect_within_bound(c, 6.0F, -1.0F);
  expect_within_bound(cases()[5], -1.0F, -1.0F);
  expect_within_bound(cases()[1], 0.0F, 6.0F);
}

TEST(Depthwise, TakesBf16Depthwise3x3And5x5ButNot3x3AtStride2OnAmxCpus) {
  const cpu::DepthwiseUnits avx512_bf16{true, true, true}, avx512{true, false, true}, avx2{};
  const cpu::DepthwiseUnits without_amx{true, true, false};
  const auto dw = [](std::int64_t filter, int stride, int dilation) {
    return std::pair{Shape{96, 1, filter, filter},
                     ConvGeometry::symmetric(stride, static_cast<int>(filter / 2), dilation, 96)};
  };
  const auto takes = [](const std::pair<Shape, ConvGeometry>& layer,
                        const cpu::DepthwiseUnits& units,
                        PlanPrecision precision = PlanPrecision::bf16) {
    return cpu::depthwise_applies(layer.first, layer.second, precision, units);
  };
  EXPECT_TRUE(takes(dw(3, 1, 1), avx512_bf16));
  EXPECT_TRUE(takes(dw(3, 1, 2), avx512_bf16));
  EXPECT_TRUE(takes(dw(5, 1, 2), avx512_bf16));
  EXPECT_TRUE(takes(dw(5, 2, 1), avx512_bf16));
  EXPECT_FALSE(takes(dw(3, 2, 1), avx512_bf16)) << "oneDNN's is as fast";
  EXPECT_TRUE(
      cpu::depthwise_runs(dw(3, 2, 1).first, dw(3, 2, 1).second, PlanPrecision::bf16, avx512_bf16));
  EXPECT_FALSE(takes(dw(7, 1, 1), avx512_bf16));
  EXPECT_FALSE(takes(dw(3, 1, 3), avx512_bf16));
  EXPECT_FALSE(takes({Shape{96, 2, 3, 3}, ConvGeometry::symmetric(1, 1, 1, 48)}, avx512_bf16))
      << "two channels per group";
  EXPECT_FALSE(takes({Shape{96, 96, 3, 3}, ConvGeometry::symmetric(1, 1)}, avx512_bf16)) << "dense";
  auto unequal = dw(3, 1, 1);
  unequal.second.stride_w = 2;
  EXPECT_FALSE(takes(unequal, avx512_bf16));
  EXPECT_FALSE(takes(dw(3, 1, 1), without_amx)) << "oneDNN's is faster on a Zen 5 EPYC";
  EXPECT_TRUE(
      cpu::depthwise_runs(dw(3, 1, 1).first, dw(3, 1, 1).second, PlanPrecision::bf16, without_amx));
  EXPECT_FALSE(takes(dw(3, 1, 1), avx512)) << "rounding to bf16 needs AVX-512 BF16";
  EXPECT_FALSE(takes(dw(3, 1, 1), avx2)) << "AVX-512 only";
  EXPECT_FALSE(takes(dw(3, 1, 1), avx512_bf16, PlanPrecision::fp32)) << "oneDNN's is as fast";
  EXPECT_FALSE(takes(dw(3, 1, 1), avx512_bf16, PlanPrecision::int8));
}

// An inverted residual's middle as a bf16 plan sees it: a 1×1 expansion, depthwise 5×5 dilated,
// 3×3, and 3×3 at stride 2 (left to oneDNN), then a 1×1 projection, against the reference. With
// LABPOSE_DEPTHWISE=1, so that a CPU without AMX takes the kernel too.
TEST(Depthwise, Bf16PlansTakeItForTheirDepthwiseLayers) {
  const labpose::testing::ScopedEnvironment everywhere("LABPOSE_DEPTHWISE", "1");
  if (!cpu::depthwise_planned(Shape{40, 1, 3, 3}, ConvGeometry::symmetric(1, 1, 1, 40),
                              PlanPrecision::bf16)) {
    GTEST_SKIP() << "this CPU has no AVX-512 bf16 units (oneDNN uses " << cpu::cpu_instructions()
                 << ")";
  }
  ref::RefBackend ref;
  const auto conv = [](const char* name, const Shape& w, const ConvGeometry& g, int input) {
    FusedOp op = conv_op(FusedOp::Kind::conv, w, g, static_cast<std::uint64_t>(61 + input));
    op.name = name;
    op.input = input;
    op.activation = 6.0F;
    return op;
  };
  FusedGraph graph;
  graph.ops = {conv("expand", {40, 8, 1, 1}, ConvGeometry::symmetric(1, 0), -1),
               conv("dilated 5x5", {40, 1, 5, 5}, ConvGeometry::symmetric(1, 4, 2, 40), 0),
               conv("3x3", {40, 1, 3, 3}, ConvGeometry::symmetric(1, 1, 1, 40), 1),
               conv("3x3 stride 2", {40, 1, 3, 3}, ConvGeometry::symmetric(2, 1, 1, 40), 2),
               conv("project", {8, 40, 1, 1}, ConvGeometry::symmetric(1, 0), 3)};
  graph.ops.back().activation = -1.0F;
  graph.outputs = {4};
  graph.output_names = {"y"};
  const Shape input{2, 8, 17, 30};
  const auto x = random_values(input.elements(), 47, 1.0);
  const auto expected = run_plan(ref, graph, input, x);
  const auto backend = devices::make_backend("cpu", PlanPrecision::bf16);
  const std::int64_t made = cpu::depthwise_convolutions_made();
  const auto actual = run_plan(*backend, graph, input, x);
  EXPECT_EQ(cpu::depthwise_convolutions_made() - made, 2) << "the two stride-1 layers";
  EXPECT_LT(relative_l2_error(actual[0], expected[0]), 8 * kUnitRoundOff);
}

TEST(Depthwise, TheEnvironmentChoosesWherePlansTakeIt) {
  const Shape weights{40, 1, 3, 3};
  const ConvGeometry g = ConvGeometry::symmetric(1, 1, 1, 40);
  const bool runs = cpu::depthwise_runs(weights, g, PlanPrecision::bf16,
                                        {cpu::cpu_has_avx512(), cpu::cpu_has_bf16(), true});
  {
    const labpose::testing::ScopedEnvironment unset("LABPOSE_DEPTHWISE", nullptr);
    EXPECT_EQ(cpu::depthwise_planned(weights, g, PlanPrecision::bf16), runs && cpu::cpu_has_amx());
  }
  {
    const labpose::testing::ScopedEnvironment everywhere("LABPOSE_DEPTHWISE", "1");
    EXPECT_EQ(cpu::depthwise_planned(weights, g, PlanPrecision::bf16), runs);
  }
  const labpose::testing::ScopedEnvironment off("LABPOSE_DEPTHWISE", "0");
  EXPECT_FALSE(cpu::depthwise_planned(weights, g, PlanPrecision::bf16));
}

}  // namespace
}  // namespace labpose::nets
