// The CPU backend's Winograd F(2×2, 3×3) convolution in bf16 (a CPU with bf16 units) and fp32 (a
// CPU with AVX-512), each skipped, saying why, elsewhere: against the reference convolution,
// within the bound that rounding gives for its transformed operands, on odd sizes, dilation 2,
// uneven padding and several blocks of tiles; and which convolutions it takes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <type_traits>
#include <vector>

#include "devices/devices.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/value_formats.hpp"
#include "nets/cpu/winograd.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

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

// The textbook matrices (Lavin and Gray): input Bᵀ d B, filter G g Gᵀ, output Aᵀ m A.
constexpr double kB[4][4] = {{1, 0, 0, 0}, {0, 1, -1, 1}, {-1, 1, 1, 0}, {0, 0, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kA[4][2] = {{1, 0}, {1, 1}, {1, -1}, {0, -1}};

struct Case {
  const char* name;
  std::int64_t n, c, h, w, k;
  ConvGeometry geometry;
  float activation;
};

// For every output, Σ over the 16 points ξ of |a_ξ| Σ_c |V|_ξc |U|_ξc, where |V| and |U| are the
// transforms with every term taken absolute (Σ|B||d||B|, Σ|G||g||G|): the sum whose terms are
// rounded. bf16 rounds V and U once each (relative u = 2⁻⁸); the fp32 arithmetic of the
// transforms (a few roundings each) and of the sums over C channels adds (C + 16) 2⁻²⁴ of it.
std::vector<double> winograd_magnitudes(const Case& c, const std::vector<float>& x,
                                        const std::vector<float>& weights, const Shape& out) {
  const int d = c.geometry.dilation_h;
  std::vector<double> u(static_cast<std::size_t>(c.k * c.c * 16));
  for (std::int64_t k = 0; k < c.k; ++k) {
    for (std::int64_t ch = 0; ch < c.c; ++ch) {
      const float* g = weights.data() + (k * c.c + ch) * 9;
      for (int a = 0; a < 4; ++a) {
        for (int b = 0; b < 4; ++b) {
          double sum = 0;
          for (int r = 0; r < 3; ++r) {
            for (int s = 0; s < 3; ++s) sum += std::abs(kG[a][r] * g[r * 3 + s] * kG[b][s]);
          }
          u[static_cast<std::size_t>((k * c.c + ch) * 16 + a * 4 + b)] = std::abs(sum);
        }
      }
    }
  }
  std::vector<double> result(static_cast<std::size_t>(out.elements()));
  std::vector<double> v(static_cast<std::size_t>(c.c * 16));
  for (std::int64_t n = 0; n < c.n; ++n) {
    for (std::int64_t oy = 0; oy < out.h(); ++oy) {
      for (std::int64_t ox = 0; ox < out.w(); ++ox) {
        // The tile holding (oy, ox): its first output and the output's place in it.
        const std::int64_t i = (oy / d) % 2, j = (ox / d) % 2;
        const std::int64_t y0 = oy - i * d - c.geometry.pad_top;
        const std::int64_t x0 = ox - j * d - c.geometry.pad_left;
        for (std::int64_t ch = 0; ch < c.c; ++ch) {
          double tile[4][4];
          for (int a = 0; a < 4; ++a) {
            for (int b = 0; b < 4; ++b) {
              const std::int64_t iy = y0 + a * d, ix = x0 + b * d;
              tile[a][b] = iy >= 0 && iy < c.h && ix >= 0 && ix < c.w
                               ? x[static_cast<std::size_t>(((n * c.c + ch) * c.h + iy) * c.w + ix)]
                               : 0.0;
            }
          }
          for (int a = 0; a < 4; ++a) {
            for (int b = 0; b < 4; ++b) {
              double sum = 0;
              for (int p = 0; p < 4; ++p) {
                for (int q = 0; q < 4; ++q) sum += std::abs(kB[p][a] * tile[p][q] * kB[q][b]);
              }
              v[static_cast<std::size_t>(ch * 16 + a * 4 + b)] = std::abs(sum);
            }
          }
        }
        for (std::int64_t k = 0; k < c.k; ++k) {
          double total = 0;
          for (int a = 0; a < 4; ++a) {
            for (int b = 0; b < 4; ++b) {
              const double coefficient = std::abs(kA[a][i] * kA[b][j]);
              if (coefficient == 0) continue;
              for (std::int64_t ch = 0; ch < c.c; ++ch) {
                total += v[static_cast<std::size_t>(ch * 16 + a * 4 + b)] *
                         u[static_cast<std::size_t>((k * c.c + ch) * 16 + a * 4 + b)];
              }
            }
          }
          result[static_cast<std::size_t>(((n * c.k + k) * out.h() + oy) * out.w() + ox)] = total;
        }
      }
    }
  }
  return result;
}

template <typename T>
void expect_within_winograd_bound(const Case& c) {
  SCOPED_TRACE(c.name);
  constexpr bool bf16 = std::is_same_v<T, std::uint16_t>;
  const PlanPrecision precision = bf16 ? PlanPrecision::bf16 : PlanPrecision::fp32;
  const Shape input{c.n, c.c, c.h, c.w};
  FusedOp op = conv_op(FusedOp::Kind::conv, Shape{c.k, c.c, 3, 3}, c.geometry, 5);
  op.activation = c.activation;
  // A layer the kernel takes; on an AMX CPU plans leave bf16 layers to oneDNN's AMX kernels, but
  // the kernel runs there all the same and is checked.
  ASSERT_TRUE(cpu::winograd_runs(op.weight_shape, op.geometry, precision));
  // Inputs that are values of the type already, as a plan's activations are.
  std::vector<float> x = random_values(input.elements(), 9, 2.0);
  for (float& value : x) value = loaded(stored(value, T{}));
  ref::RefBackend ref;
  const std::vector<float> expected = run_plan(ref, one_op(op), input, x)[0];
  const std::int64_t out_h =
      conv_output_size(c.h, 3, 1, c.geometry.pad_top, c.geometry.pad_bottom, c.geometry.dilation_h);
  const std::int64_t out_w =
      conv_output_size(c.w, 3, 1, c.geometry.pad_left, c.geometry.pad_right, c.geometry.dilation_w);
  const Shape output{c.n, c.k, out_h, out_w};
  ASSERT_EQ(static_cast<std::int64_t>(expected.size()), output.elements());

  const std::vector<T> x_nhwc = to_nhwc<T>(x, input);
  std::vector<T> y_nhwc(static_cast<std::size_t>(output.elements()), stored(-1e30F, T{}));
  cpu::WinogradConv conv(op.weights, op.weight_shape, op.bias, Shape{c.n, c.c, c.h, c.w}, output,
                         op.geometry, op.activation, -1.0F, precision, 2);
  const auto scratch = allocate_host_storage(conv.scratch_bytes());
  conv.run(x_nhwc.data(), y_nhwc.data(), scratch->data());

  const std::vector<double> magnitudes = winograd_magnitudes(c, x, op.weights, output);
  const double fp32 = std::ldexp(1.0, -24);
  const double u = bf16 ? kUnitRoundOff : 0.0;     // rounding V and U; fp32 does not
  const double out = bf16 ? kUnitRoundOff : fp32;  // rounding the output
  const double arithmetic = static_cast<double>(c.c + 16) * fp32;
  const std::vector<float> actual = from_nhwc(y_nhwc, output);
  double worst = 0.0;
  for (std::size_t at = 0; at < expected.size(); ++at) {
    const double allowed = ((2 * u + u * u + arithmetic) * magnitudes[at]) * (1 + out) +
                           out * std::abs(double{expected[at]}) + 1e-12;
    worst = std::max(worst, std::abs(double{actual[at]} - double{expected[at]}) / allowed);
  }
  EXPECT_LE(worst, 1.0) << "the worst output's error, in units of its bound";
  if (bf16) {
    EXPECT_GT(worst, 0.005) << "the bound should be near the errors seen, or it tests nothing";
    EXPECT_LT(relative_l2_error(actual, expected), 0.02);
  } else {
    EXPECT_LT(relative_l2_error(actual, expected), 1e-5);
  }
  std::cout << c.name << ": worst error " << worst << " of its bound\n";
}

// Partial tiles, dilation 2 with widths that are not multiples of 16 and 32, several blocks of
// tiles, uneven padding; ReLU, ReLU6 and none.
std::vector<Case> cases() {
  ConvGeometry uneven;  // pads 0 and 2 down, 1 and 0 across
  uneven.pad_top = 0;
  uneven.pad_bottom = 2;
  uneven.pad_left = 1;
  uneven.pad_right = 0;
  return {
      {"odd sizes, ReLU", 2, 64, 13, 11, 64, ConvGeometry::symmetric(1, 1), 0.0F},
      {"dilation 2, 80 in, 96 out, ReLU6", 1, 80, 12, 9, 96, ConvGeometry::symmetric(1, 2, 2),
       6.0F},
      {"several blocks of tiles, no activation", 2, 64, 40, 36, 64, ConvGeometry::symmetric(1, 1),
       -1.0F},
      {"uneven padding", 1, 64, 10, 7, 64, uneven, 0.0F},
  };
}

TEST(Winograd, Bf16AgreesWithTheReferenceWithinItsRoundOffBound) {
  if (!cpu::cpu_has_bf16()) {
    GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << cpu::cpu_instructions()
                 << "): no bf16 plans here";
  }
  for (const Case& c : cases()) expect_within_winograd_bound<std::uint16_t>(c);
}

TEST(Winograd, Fp32AgreesWithTheReferenceWithinItsRoundOffBound) {
  if (!cpu::cpu_has_avx512()) {
    GTEST_SKIP() << "this CPU has no AVX-512 (oneDNN uses " << cpu::cpu_instructions()
                 << "): fp32 plans use oneDNN's direct convolutions here";
  }
  for (const Case& c : cases()) expect_within_winograd_bound<float>(c);
}

// The 3×3 layers that plans compute by Winograd (plain and dilated, between a first and a last
// layer that oneDNN computes), in bf16 and fp32 plans, against the reference.
TEST(Winograd, PlansTakeItForTheir3x3LayersInBf16AndFp32) {
  if (!cpu::winograd_enabled()) GTEST_SKIP() << "LABPOSE_WINOGRAD=0 turns the Winograd path off";
  ref::RefBackend ref;
  // Convolution `name` reading value `input`, then `activation`.
  const auto conv = [](const char* name, const Shape& w, const ConvGeometry& g, int input,
                       float activation) {
    FusedOp op = conv_op(FusedOp::Kind::conv, w, g, static_cast<std::uint64_t>(41 + input));
    op.name = name;
    op.input = input;
    op.activation = activation;
    return op;
  };
  FusedGraph graph;
  graph.ops = {conv("first", {64, 8, 1, 1}, ConvGeometry::symmetric(1, 0), -1, 0.0F),
               conv("second", {64, 64, 3, 3}, ConvGeometry::symmetric(1, 1), 0, 0.0F),
               conv("third", {96, 64, 3, 3}, ConvGeometry::symmetric(1, 2, 2), 1, 6.0F),
               conv("last", {8, 96, 1, 1}, ConvGeometry::symmetric(1, 0), 2, -1.0F)};
  graph.outputs = {3};
  graph.output_names = {"y"};
  const Shape input{2, 8, 15, 13};
  const auto x = random_values(input.elements(), 45, 1.0);
  const auto expected = run_plan(ref, graph, input, x);
  for (const PlanPrecision precision : {PlanPrecision::bf16, PlanPrecision::fp32}) {
    SCOPED_TRACE(precision_name(precision));
    if (!cpu::winograd_applies(Shape{64, 64, 3, 3}, ConvGeometry::symmetric(1, 1), precision)) {
      std::cout << "not checked here: " << precision_name(precision) << " (oneDNN uses "
                << cpu::cpu_instructions() << ")\n";
      continue;
    }
    const auto backend = devices::make_backend("cpu", precision);
    const std::int64_t made = cpu::winograd_convolutions_made();
    const auto actual = run_plan(*backend, graph, input, x);
    EXPECT_EQ(cpu::winograd_convolutions_made() - made, 2) << "the two 3x3 layers by Winograd";
    const double error = relative_l2_error(actual[0], expected[0]);
    EXPECT_LT(error, precision == PlanPrecision::bf16 ? 8 * kUnitRoundOff : 1e-5);
  }
}

TEST(Winograd, TakesOnlyDense3x3Stride1ConvolutionsInBf16AndFp32) {
  const ConvGeometry plain = ConvGeometry::symmetric(1, 1);
  for (const PlanPrecision precision : {PlanPrecision::bf16, PlanPrecision::fp32}) {
    SCOPED_TRACE(precision_name(precision));
    const bool here = precision == PlanPrecision::bf16 ? cpu::cpu_has_bf16() && !cpu::cpu_has_amx()
                                                       : cpu::cpu_has_avx512();
    const auto takes = [&](const Shape& w, const ConvGeometry& g) {
      return cpu::winograd_applies(w, g, precision);
    };
    EXPECT_EQ(takes(Shape{64, 64, 3, 3}, plain), here) << "only where the CPU has the instructions";
    EXPECT_EQ(takes(Shape{512, 512, 3, 3}, ConvGeometry::symmetric(1, 2, 2)), here);
    EXPECT_FALSE(takes(Shape{64, 64, 3, 3}, ConvGeometry::symmetric(2, 1)));
    EXPECT_FALSE(takes(Shape{64, 64, 1, 1}, ConvGeometry::symmetric(1, 0)));
    EXPECT_FALSE(takes(Shape{64, 1, 3, 3}, ConvGeometry::symmetric(1, 1, 1, 64)));
    EXPECT_FALSE(takes(Shape{64, 48, 3, 3}, plain));  // C not a multiple of 16
    EXPECT_FALSE(takes(Shape{80, 64, 3, 3}, plain));  // K not a multiple of 32
    EXPECT_FALSE(takes(Shape{32, 32, 3, 3}, plain));  // too narrow to gain
    ConvGeometry unequal = plain;
    unequal.dilation_w = 2;
    EXPECT_FALSE(takes(Shape{64, 64, 3, 3}, unequal));
  }
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 64, 3, 3}, plain, PlanPrecision::int8));
}

TEST(Winograd, LeavesBf16ToTheMatrixUnitsOfAnAmxCpu) {
  const Shape w{256, 256, 3, 3};
  const ConvGeometry plain = ConvGeometry::symmetric(1, 1);
  const cpu::WinogradUnits avx512_bf16{true, true, false}, amx{true, true, true}, avx2{};
  EXPECT_TRUE(cpu::winograd_applies(w, plain, PlanPrecision::bf16, avx512_bf16));
  EXPECT_FALSE(cpu::winograd_applies(w, plain, PlanPrecision::bf16, amx)) << "oneDNN's AMX kernels";
  EXPECT_TRUE(cpu::winograd_applies(w, plain, PlanPrecision::fp32, amx)) << "fp32 has no AMX";
  EXPECT_FALSE(cpu::winograd_applies(w, plain, PlanPrecision::fp32, avx2));
  EXPECT_FALSE(cpu::winograd_applies(w, plain, PlanPrecision::int8, amx));
}

}  // namespace
}  // namespace labpose::nets
