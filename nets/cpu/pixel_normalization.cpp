// Built with -ffp-contract=off (nets/CMakeLists.txt): the AVX-512 clone would otherwise fuse the
// product and the sum into one rounding, and write other values than the AVX2 and baseline ones.
#include "nets/cpu/pixel_normalization.hpp"

#include <cstdint>
#include <type_traits>

#include "core/error.hpp"
#include "nets/cpu/elements.hpp"
#include "nets/cpu/thread_shares.hpp"

namespace labpose::nets::cpu {
namespace {

// A block: 256 pixels, whose scales and shifts (2 × 256 · channels floats) stay in the L1 cache.
constexpr std::int64_t kBlockPixels = 256;

// The values of blocks [first, first + count) and how to convert them.
struct Run {
  const float* x;
  void* y;
  const float* scale;  // a block's worth
  const float* shift;
  std::int64_t block;  // values per block: kBlockPixels · channels
  std::int64_t values;
  float per_step;  // s8: 1 / the step
};

// v as Out: fp32, bf16 bits, or int8 steps.
template <typename Out>
LABPOSE_INLINE Out converted(float v, float per_step) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else if constexpr (std::is_same_v<Out, std::uint16_t>) {
    return bf16_bits(v);
  } else {
    float q = v * per_step;
    q = q < -128.0F ? -128.0F : q;  // the forms of vmaxps and vminps
    q = q > 127.0F ? 127.0F : q;
    q = q == q ? q : 0.0F;  // NaN
    // Rounded to nearest, ties to even, as nearbyint does: |q| <= 128 keeps no fraction bit once
    // 1.5 · 2^23 is added.
    constexpr float kRound = 12582912.0F;
    q = (q + kRound) - kRound;
    return static_cast<std::int8_t>(static_cast<int>(q));
  }
}

template <typename Out>
LABPOSE_INLINE void blocks(const Run& r, std::int64_t first, std::int64_t count) {
  for (std::int64_t b = first; b < first + count; ++b) {
    const std::int64_t start = b * r.block;
    const std::int64_t n = r.values - start < r.block ? r.values - start : r.block;
    const float* in = r.x + start;
    Out* out = static_cast<Out*>(r.y) + start;
    const float *scale = r.scale, *shift = r.shift;
    const float per_step = r.per_step;
#pragma omp simd
    for (std::int64_t j = 0; j < n; ++j)
      out[j] = converted<Out>(in[j] * scale[j] + shift[j], per_step);
  }
}

LABPOSE_CLONES void f32_blocks(const Run& r, std::int64_t first, std::int64_t count) {
  blocks<float>(r, first, count);
}

LABPOSE_CLONES void bf16_blocks(const Run& r, std::int64_t first, std::int64_t count) {
  blocks<std::uint16_t>(r, first, count);
}

LABPOSE_CLONES void s8_blocks(const Run& r, std::int64_t first, std::int64_t count) {
  blocks<std::int8_t>(r, first, count);
}

}  // namespace

PixelNormalization::PixelNormalization(const std::vector<float>& scale,
                                       const std::vector<float>& shift, NormalizedType type,
                                       float step)
    : channels_(static_cast<std::int64_t>(scale.size())), type_(type), per_step_(1.0F / step) {
  LABPOSE_ASSERT(!scale.empty() && scale.size() == shift.size() && step > 0);
  for (std::int64_t p = 0; p < kBlockPixels; ++p) {
    scale_.insert(scale_.end(), scale.begin(), scale.end());
    shift_.insert(shift_.end(), shift.begin(), shift.end());
  }
}

void PixelNormalization::run(const float* x, void* y, std::int64_t pixels) const {
  const Run r{
      x, y, scale_.data(), shift_.data(), kBlockPixels * channels_, pixels * channels_, per_step_};
  const std::int64_t count = (pixels + kBlockPixels - 1) / kBlockPixels;
  in_thread_shares(count, [&](std::int64_t, std::int64_t first, std::int64_t n) {
    switch (type_) {
      case NormalizedType::f32:
        f32_blocks(r, first, n);
        break;
      case NormalizedType::bf16:
        bf16_blocks(r, first, n);
        break;
      case NormalizedType::s8:
        s8_blocks(r, first, n);
        break;
    }
  });
}

}  // namespace labpose::nets::cpu
