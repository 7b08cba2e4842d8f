// The plans' first step (nets/cpu/pixel_normalization.hpp): every value of every type as the
// per-pixel formula gives it, on channel counts and pixel counts that do not fill whole blocks or
// vectors, with ties and saturation where the types round.
#include "nets/cpu/pixel_normalization.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "nets/cpu/elements.hpp"

namespace labpose::nets {
namespace {
using cpu::NormalizedType;
using cpu::PixelNormalization;

// The pixels, and what each type holds for them.
struct Expected {
  std::vector<float> f32;
  std::vector<std::uint16_t> bf16;
  std::vector<std::int8_t> s8;
};

Expected per_pixel(const std::vector<float>& x, const std::vector<float>& scale,
                   const std::vector<float>& shift, float step) {
  Expected e;
  const std::size_t channels = scale.size();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float y = x[i] * scale[i % channels] + shift[i % channels];
    e.f32.push_back(y);
    e.bf16.push_back(cpu::bf16_bits(y));
    e.s8.push_back(
        static_cast<std::int8_t>(std::clamp(std::nearbyint(y * (1.0F / step)), -128.0F, 127.0F)));
  }
  return e;
}

void expect_as_per_pixel(const std::vector<float>& x, const std::vector<float>& scale,
                         const std::vector<float>& shift, float step) {
  const Expected e = per_pixel(x, scale, shift, step);
  const auto pixels = static_cast<std::int64_t>(x.size() / scale.size());
  std::vector<float> f32(x.size() + 1, -7.0F);  // one more: nothing is written past the end
  PixelNormalization(scale, shift, NormalizedType::f32, step).run(x.data(), f32.data(), pixels);
  std::vector<std::uint16_t> bf16(x.size() + 1, 7);
  PixelNormalization(scale, shift, NormalizedType::bf16, step).run(x.data(), bf16.data(), pixels);
  std::vector<std::int8_t> s8(x.size() + 1, 7);
  PixelNormalization(scale, shift, NormalizedType::s8, step).run(x.data(), s8.data(), pixels);
  for (std::size_t i = 0; i < x.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "value " << i << " of " << x.size() << ": " << x[i]);
    ASSERT_EQ(f32[i], e.f32[i]);  // the same product and sum: bit for bit
    ASSERT_EQ(bf16[i], e.bf16[i]);
    ASSERT_EQ(s8[i], e.s8[i]);
  }
  EXPECT_EQ(f32.back(), -7.0F);
  EXPECT_EQ(bf16.back(), 7);
  EXPECT_EQ(s8.back(), 7);
}

TEST(PixelNormalization, EveryTypeHoldsWhatThePerPixelFormulaGives) {
  for (const std::size_t channels : {1U, 3U, 4U, 5U}) {
    std::vector<float> scale, shift;
    for (std::size_t c = 0; c < channels; ++c) {
      scale.push_back(0.0172F * static_cast<float>(c + 1));
      shift.push_back(-2.1F + 0.37F * static_cast<float>(c));
    }
    for (const std::int64_t pixels : {1, 15, 16, 17, 255, 256, 257, 1000, 640 * 3 + 7}) {
      SCOPED_TRACE(testing::Message() << channels << " channels, " << pixels << " pixels");
      std::vector<float> x(static_cast<std::size_t>(pixels) * channels);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 37) % 256);
      expect_as_per_pixel(x, scale, shift, 0.0313F);
    }
  }
}

TEST(PixelNormalization, TiesRoundToEvenAndInt8Saturates) {
  // With scale 1 and shift 0: int8 steps of 1 and of 0.5; bf16 ties (1 + 2^-8 lies halfway between
  // two bf16 values), large values both ways.
  std::vector<float> x = {0.5F,   -0.5F,  1.5F,        2.5F,        -2.5F,
                          126.5F, 127.5F, 128.0F,      -128.5F,     -129.0F,
                          1e9F,   -1e9F,  1.00390625F, 1.01171875F, -1.00390625F,
                          0.0F,   -0.0F,  3.0e38F,     -3.0e38F,    63.75F};
  for (const float step : {1.0F, 0.5F}) {
    SCOPED_TRACE(step);
    expect_as_per_pixel(x, {1.0F}, {0.0F}, step);
  }
}

}  // namespace
}  // namespace labpose::nets
