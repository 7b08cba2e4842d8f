// The CPU backend's bf16 Winograd F(2×2, 3×3) convolution (a CPU with bf16 units; skipped, saying
// why, elsewhere) against the reference convolution, within the bound that bf16's unit round-off
// gives for its transformed operands, on odd sizes, dilation 2, uneven padding and several blocks
// of tiles; and which convolutions it takes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "nets/cpu/backend.hpp"
#include "nets/cpu/winograd.hpp"
#include "nets/ref/backend.hpp"
#include "tests/nets/plan_test_support.hpp"

namespace labpose::nets {
namespace {
using testing::conv_op;
using testing::one_op;
using testing::random_values;
using testing::relative_l2_error;
using testing::run_plan;

constexpr double kUnitRoundOff = 1.0 / 256.0;  // bf16: 8 significant bits, rounding to nearest

// The textbook matrices (Lavin and Gray): input Bᵀ d B, filter G g Gᵀ, output Aᵀ m A.
constexpr double kB[4][4] = {{1, 0, 0, 0}, {0, 1, -1, 1}, {-1, 1, 1, 0}, {0, 0, 0, -1}};
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kA[4][2] = {{1, 0}, {1, 1}, {1, -1}, {0, -1}};

std::uint16_t bf16_bits(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffU + ((bits >> 16) & 1U);
  return static_cast<std::uint16_t>(bits >> 16);
}

float from_bf16(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float value = 0;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

struct Case {
  const char* name;
  std::int64_t n, c, h, w, k;
  ConvGeometry geometry;
  float activation;
};

// For every output, Σ over the 16 points ξ of |a_ξ| Σ_c |V_ξc| |U_ξc|: the sum whose terms bf16
// rounds (V and U once each, relative u), so |Winograd − exact| ≤ (2u + u²) × it.
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
            for (int s = 0; s < 3; ++s) sum += kG[a][r] * g[r * 3 + s] * kG[b][s];
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
                for (int q = 0; q < 4; ++q) sum += kB[p][a] * tile[p][q] * kB[q][b];
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

void expect_within_winograd_bound(const Case& c) {
  SCOPED_TRACE(c.name);
  const Shape input{c.n, c.c, c.h, c.w};
  FusedOp op = conv_op(FusedOp::Kind::conv, Shape{c.k, c.c, 3, 3}, c.geometry, 5);
  op.activation = c.activation;
  ASSERT_TRUE(cpu::winograd_applies(op.weight_shape, op.geometry));
  // Inputs that are bf16 values already, as a bf16 plan's activations are.
  std::vector<float> x = random_values(input.elements(), 9, 2.0);
  for (float& value : x) value = from_bf16(bf16_bits(value));
  ref::RefBackend ref;
  const std::vector<float> expected = run_plan(ref, one_op(op), input, x)[0];
  const std::int64_t out_h =
      conv_output_size(c.h, 3, 1, c.geometry.pad_top, c.geometry.pad_bottom, c.geometry.dilation_h);
  const std::int64_t out_w =
      conv_output_size(c.w, 3, 1, c.geometry.pad_left, c.geometry.pad_right, c.geometry.dilation_w);
  const Shape output{c.n, c.k, out_h, out_w};
  ASSERT_EQ(static_cast<std::int64_t>(expected.size()), output.elements());

  std::vector<std::uint16_t> x_nhwc(static_cast<std::size_t>(input.elements()));
  for (std::int64_t n = 0; n < c.n; ++n) {
    for (std::int64_t ch = 0; ch < c.c; ++ch) {
      for (std::int64_t p = 0; p < c.h * c.w; ++p) {
        x_nhwc[static_cast<std::size_t>((n * c.h * c.w + p) * c.c + ch)] =
            bf16_bits(x[static_cast<std::size_t>((n * c.c + ch) * c.h * c.w + p)]);
      }
    }
  }
  std::vector<std::uint16_t> y_nhwc(static_cast<std::size_t>(output.elements()), 0xffffU);
  cpu::WinogradConv conv(op.weights, op.weight_shape, op.bias, Shape{c.n, c.c, c.h, c.w}, output,
                         op.geometry, op.activation, -1.0F, 2);
  const auto scratch = allocate_host_storage(conv.scratch_bytes());
  conv.run(x_nhwc.data(), y_nhwc.data(), scratch->data());

  const std::vector<double> magnitudes = winograd_magnitudes(c, x, op.weights, output);
  const double u = kUnitRoundOff;
  const double sums = static_cast<double>(c.c + 8) * std::ldexp(1.0, -24);  // fp32 accumulation
  std::vector<float> actual(expected.size());
  double worst = 0.0;
  for (std::int64_t n = 0; n < c.n; ++n) {
    for (std::int64_t k = 0; k < c.k; ++k) {
      for (std::int64_t p = 0; p < out_h * out_w; ++p) {
        const auto at = static_cast<std::size_t>((n * c.k + k) * out_h * out_w + p);
        actual[at] = from_bf16(y_nhwc[static_cast<std::size_t>((n * out_h * out_w + p) * c.k + k)]);
        // The transformed operands' rounding, the fp32 sums, then the output's own rounding.
        const double allowed = ((2 * u + u * u + sums) * magnitudes[at]) * (1 + u) +
                               u * std::abs(double{expected[at]}) + 1e-6;
        worst = std::max(worst, std::abs(double{actual[at]} - double{expected[at]}) / allowed);
      }
    }
  }
  EXPECT_LE(worst, 1.0) << "the worst output's error, in units of its bound";
  EXPECT_GT(worst, 0.01) << "the bound should be near the errors seen, or it tests nothing";
  EXPECT_LT(relative_l2_error(actual, expected), 0.02);
}

#define LABPOSE_SKIP_WITHOUT_BF16()                                                         \
  do {                                                                                      \
    if (!cpu::cpu_has_bf16())                                                               \
      GTEST_SKIP() << "this CPU has no bf16 units (oneDNN uses " << cpu::cpu_instructions() \
                   << "): the Winograd convolution is bf16 only";                           \
  } while (false)

TEST(Bf16Winograd, AgreesWithTheReferenceWithinItsRoundOffBound) {
  LABPOSE_SKIP_WITHOUT_BF16();
  ConvGeometry uneven;  // pads 0 and 2 down, 1 and 0 across
  uneven.pad_top = 0;
  uneven.pad_bottom = 2;
  uneven.pad_left = 1;
  uneven.pad_right = 0;
  const Case cases[] = {
      {"odd sizes, ReLU", 2, 64, 13, 11, 64, ConvGeometry::symmetric(1, 1), 0.0F},
      {"dilation 2, 80 in, 96 out, ReLU6", 1, 80, 12, 9, 96, ConvGeometry::symmetric(1, 2, 2),
       6.0F},
      {"several blocks of tiles, no activation", 2, 64, 40, 36, 64, ConvGeometry::symmetric(1, 1),
       -1.0F},
      {"uneven padding", 1, 64, 10, 7, 64, uneven, 0.0F},
  };
  for (const Case& c : cases) expect_within_winograd_bound(c);
}

TEST(Bf16Winograd, TakesOnlyDense3x3Stride1Convolutions) {
  LABPOSE_SKIP_WITHOUT_BF16();
  const ConvGeometry plain = ConvGeometry::symmetric(1, 1);
  EXPECT_TRUE(cpu::winograd_applies(Shape{64, 64, 3, 3}, plain));
  EXPECT_TRUE(cpu::winograd_applies(Shape{512, 512, 3, 3}, ConvGeometry::symmetric(1, 2, 2)));
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 64, 3, 3}, ConvGeometry::symmetric(2, 1)));
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 64, 1, 1}, ConvGeometry::symmetric(1, 0)));
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 1, 3, 3}, ConvGeometry::symmetric(1, 1, 1, 64)));
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 48, 3, 3}, plain));  // C not a multiple of 16
  EXPECT_FALSE(cpu::winograd_applies(Shape{80, 64, 3, 3}, plain));  // K not a multiple of 32
  EXPECT_FALSE(cpu::winograd_applies(Shape{32, 32, 3, 3}, plain));  // too narrow to gain
  ConvGeometry unequal = plain;
  unequal.dilation_w = 2;
  EXPECT_FALSE(cpu::winograd_applies(Shape{64, 64, 3, 3}, unequal));
}

}  // namespace
}  // namespace labpose::nets
