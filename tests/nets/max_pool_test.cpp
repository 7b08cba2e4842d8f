// Max pooling of bf16 plans (nets/cpu/max_pool.hpp): every window's maximum as a loop over the
// window gives it (negative values, zeros of both signs, infinities), on windows cut by the
// padding and sizes the stride does not divide; and a bf16 plan that pools with it against the
// reference backend.
#include "nets/cpu/max_pool.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

namespace labpose::nets {
namespace {

// The maximum of each window, NHWC, compared as the bf16 values.
std::vector<std::uint16_t> per_window(const std::vector<std::uint16_t>& x, const Shape& in,
                                      const Shape& out, const PoolGeometry& g) {
  std::vector<std::uint16_t> y(static_cast<std::size_t>(out.elements()));
  for (std::int64_t n = 0; n < out.n(); ++n) {
    for (std::int64_t oy = 0; oy < out.h(); ++oy) {
      for (std::int64_t ox = 0; ox < out.w(); ++ox) {
        for (std::int64_t c = 0; c < out.c(); ++c) {
          bool any = false;
          std::uint16_t best = 0;
          for (std::int64_t i = 0; i < g.kernel_h; ++i) {
            for (std::int64_t j = 0; j < g.kernel_w; ++j) {
              const std::int64_t iy = oy * g.stride_h - g.pad_top + i;
              const std::int64_t ix = ox * g.stride_w - g.pad_left + j;
              if (iy < 0 || iy >= in.h() || ix < 0 || ix >= in.w()) continue;
              const std::uint16_t v =
                  x[static_cast<std::size_t>(((n * in.h() + iy) * in.w() + ix) * in.c() + c)];
              if (!any || testing::from_bf16(v) > testing::from_bf16(best)) best = v;
              any = true;
            }
          }
          y[static_cast<std::size_t>(((n * out.h() + oy) * out.w() + ox) * out.c() + c)] = best;
        }
      }
    }
  }
  return y;
}

struct Geometry {
  const char* name;
  PoolGeometry g;
};

TEST(OwnMaxPool, WindowsHoldTheirLargestValue) {
  std::vector<std::uint16_t> values;
  std::mt19937 random(5);
  std::normal_distribution<float> normal(0.0F, 3.0F);
  for (int k = 0; k < 200; ++k) values.push_back(cpu::bf16_bits(normal(random)));
  for (const float special : {0.0F, -0.0F, std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), -1e-30F, 1e-30F, -3e38F})
    values.push_back(cpu::bf16_bits(special));
  const std::vector<Geometry> geometries = {
      {"3x3 stride 2 pad 1 (resnet)", {3, 3, 2, 2, 1, 1, 1, 1}},
      {"2x2 stride 2", {2, 2, 2, 2, 0, 0, 0, 0}},
      {"3x3 stride 1 pad 1", {3, 3, 1, 1, 1, 1, 1, 1}},
      {"3x2 stride 2x1, padded above and left only", {3, 2, 2, 1, 2, 1, 0, 0}}};
  for (const Geometry& geometry : geometries) {
    for (const std::int64_t channels : {1, 5, 64, 70}) {
      SCOPED_TRACE(::testing::Message() << geometry.name << ", " << channels << " channels");
      const Shape in{2, channels, 9, 12};
      const Shape out = max_pool_output_shape(in, geometry.g);
      std::vector<std::uint16_t> x(static_cast<std::size_t>(in.elements()));
      for (std::uint16_t& v : x) v = values[random() % values.size()];
      std::vector<std::uint16_t> y(static_cast<std::size_t>(out.elements()) + 1, 7);
      cpu::max_pool_bf16(x.data(), y.data(), in, out, geometry.g);
      const std::vector<std::uint16_t> expected = per_window(x, in, out, geometry.g);
      for (std::size_t i = 0; i < expected.size(); ++i) {
        if (testing::from_bf16(y[i]) == 0 && testing::from_bf16(expected[i]) == 0) continue;  // ±0
        ASSERT_EQ(y[i], expected[i]) << "output value " << i;
      }
      EXPECT_EQ(y.back(), 7) << "written past the end";
    }
  }
}

TEST(OwnMaxPool, Bf16PlansPoolWithItAndGiveTheReferenceOutputs) {
  if (!cpu::cpu_has_bf16()) GTEST_SKIP() << "this CPU has no bf16 instructions";
  FusedGraph graph;
  FusedOp features =
      testing::conv_op(FusedOp::Kind::conv, {40, 3, 7, 7}, ConvGeometry::symmetric(2, 3), 81);
  graph.ops.push_back(features);  // no ReLU: negative values reach the pool
  FusedOp pool;
  pool.kind = FusedOp::Kind::max_pool;
  pool.name = "pool";
  pool.input = 0;
  graph.ops.push_back(pool);
  FusedOp after =
      testing::conv_op(FusedOp::Kind::conv, {8, 40, 1, 1}, ConvGeometry::symmetric(1, 0), 82);
  after.input = 1;
  graph.ops.push_back(after);
  graph.outputs = {2};
  graph.output_names = {"maps"};
  const Shape input{2, 3, 29, 35};
  const auto x = testing::random_values(input.elements(), 83);
  ref::RefBackend ref;
  const auto expected = testing::run_plan(ref, graph, input, x);
  cpu::CpuBackend backend(PlanPrecision::bf16);
  const std::int64_t before = cpu::own_max_pools_made();
  const auto actual = testing::run_plan(backend, graph, input, x);
  EXPECT_EQ(cpu::own_max_pools_made() - before, cpu::own_max_pool_enabled() ? 1 : 0);
  ASSERT_EQ(actual.size(), 1u);
  EXPECT_LT(testing::relative_l2_error(actual[0], expected[0]), 2e-2);
}

TEST(OwnMaxPool, APositiveNanWinsItsWindowsAndANegativeOneLoses) {
  const Shape in{1, 2, 3, 3};
  const PoolGeometry g{3, 3, 1, 1, 1, 1, 1, 1};
  const Shape out = max_pool_output_shape(in, g);
  // Channel 0: 1..9 with a positive NaN at the centre; channel 1: -1..-9 with a negative NaN there.
  std::vector<std::uint16_t> x(18);
  for (int p = 0; p < 9; ++p) {
    x[static_cast<std::size_t>(2 * p)] = cpu::bf16_bits(static_cast<float>(p + 1));
    x[static_cast<std::size_t>(2 * p + 1)] = cpu::bf16_bits(-static_cast<float>(p + 1));
  }
  x[8] = 0x7fc0;  // pixel 4, channel 0
  x[9] = 0xffc0;  // pixel 4, channel 1
  std::vector<std::uint16_t> y(static_cast<std::size_t>(out.elements()));
  cpu::max_pool_bf16(x.data(), y.data(), in, out, g);
  for (int p = 0; p < 9; ++p) {
    SCOPED_TRACE(p);
    EXPECT_EQ(y[static_cast<std::size_t>(2 * p)], 0x7fc0) << "every window holds the centre";
    EXPECT_FALSE(std::isnan(testing::from_bf16(y[static_cast<std::size_t>(2 * p + 1)])));
  }
  EXPECT_EQ(testing::from_bf16(y[1]), -1.0F);  // the corner window: -1, -2, -4 and the NaN
}

}  // namespace
}  // namespace labpose::nets
