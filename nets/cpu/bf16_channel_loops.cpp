// Batch norm's per-channel loops over bf16 values (see the header).
#include "nets/cpu/bf16_channel_loops.hpp"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "nets/cpu/elements.hpp"
#include "nets/cpu/thread_shares.hpp"

namespace labpose::nets::cpu {
namespace {

// Pixels summed in fp32 before the sums go into doubles: short enough that fp32 loses nothing
// that matters (64 terms), long enough that the doubles cost nothing.
constexpr std::int64_t kRun = 64;

// A run of pixels starts with its fp32 sums at 0 and ends adding them into the doubles.
inline void start_run(float* run_a, float* run_b, std::int64_t channels) {
  std::fill(run_a, run_a + channels, 0.0F);
  std::fill(run_b, run_b + channels, 0.0F);
}
inline void end_run(const float* run_a, const float* run_b, double* a, double* b,
                    std::int64_t channels) {
  for (std::int64_t c = 0; c < channels; ++c) {
    a[c] += run_a[c];
    b[c] += run_b[c];
  }
}

LABPOSE_CLONES void moments_kernel(const std::uint16_t* x, std::int64_t pixels,
                                   std::int64_t channels, const float* shift, float* run_a,
                                   float* run_b, double* sum, double* squares) {
  for (std::int64_t first = 0; first < pixels; first += kRun) {
    start_run(run_a, run_b, channels);
    const std::int64_t last = std::min(pixels, first + kRun);
    for (std::int64_t p = first; p < last; ++p) {
      const std::uint16_t* row = x + p * channels;
#pragma omp simd
      for (std::int64_t c = 0; c < channels; ++c) {
        const float d = bf16_value(row[c]) - shift[c];
        run_a[c] += d;
        run_b[c] += d * d;
      }
    }
    end_run(run_a, run_b, sum, squares, channels);
  }
}

LABPOSE_CLONES void gradient_sums_kernel(const std::uint16_t* x, const std::uint16_t* dy,
                                         std::int64_t pixels, std::int64_t channels,
                                         const float* mean, float* run_a, float* run_b,
                                         double* sum_dy, double* sum_dy_centered) {
  for (std::int64_t first = 0; first < pixels; first += kRun) {
    start_run(run_a, run_b, channels);
    const std::int64_t last = std::min(pixels, first + kRun);
    for (std::int64_t p = first; p < last; ++p) {
      const std::uint16_t* x_row = x + p * channels;
      const std::uint16_t* dy_row = dy + p * channels;
#pragma omp simd
      for (std::int64_t c = 0; c < channels; ++c) {
        const float g = bf16_value(dy_row[c]);
        run_a[c] += g;
        run_b[c] += g * (bf16_value(x_row[c]) - mean[c]);
      }
    }
    end_run(run_a, run_b, sum_dy, sum_dy_centered, channels);
  }
}

LABPOSE_CLONES void affine_kernel(const std::uint16_t* x, std::uint16_t* y, std::int64_t pixels,
                                  std::int64_t channels, const float* scale, const float* offset) {
  for (std::int64_t p = 0; p < pixels; ++p) {
    const std::uint16_t* in = x + p * channels;
    std::uint16_t* out = y + p * channels;
#pragma omp simd
    for (std::int64_t c = 0; c < channels; ++c)
      out[c] = bf16_bits(bf16_value(in[c]) * scale[c] + offset[c]);
  }
}

LABPOSE_CLONES void norm_gradient_kernel(const std::uint16_t* x, const std::uint16_t* dy,
                                         std::uint16_t* dx, std::int64_t pixels,
                                         std::int64_t channels, const float* scale,
                                         const float* offset, const float* mean,
                                         const float* slope) {
  for (std::int64_t p = 0; p < pixels; ++p) {
    const std::int64_t row = p * channels;
#pragma omp simd
    for (std::int64_t c = 0; c < channels; ++c) {
      const float g = bf16_value(dy[row + c]), v = bf16_value(x[row + c]);
      dx[row + c] = bf16_bits(scale[c] * g - offset[c] - (v - mean[c]) * slope[c]);
    }
  }
}

// Two per-channel sums: each thread's share into its own doubles (and fp32 runs), then added in
// thread order into `a` and `b`.
template <typename Kernel>
void channel_sums(std::int64_t pixels, std::int64_t channels, double* a, double* b,
                  const Kernel& kernel) {
  const auto width = static_cast<std::size_t>(channels);
  const auto threads = static_cast<std::size_t>(omp_get_max_threads());
  std::vector<double> sums(threads * 2 * width, 0.0);
  std::vector<float> runs(threads * 2 * width, 0.0F);
  in_thread_shares(pixels, [&](std::int64_t thread, std::int64_t first, std::int64_t count) {
    const auto at = static_cast<std::size_t>(thread) * 2 * width;
    if (count > 0)
      kernel(first, count, runs.data() + at, runs.data() + at + width, sums.data() + at,
             sums.data() + at + width);
  });
  std::fill(a, a + channels, 0.0);
  std::fill(b, b + channels, 0.0);
  for (std::size_t t = 0; t < threads; ++t) {
    for (std::size_t c = 0; c < width; ++c) {
      a[c] += sums[t * 2 * width + c];
      b[c] += sums[t * 2 * width + width + c];
    }
  }
}

}  // namespace

void bf16_channel_moments(const std::uint16_t* x, std::int64_t pixels, std::int64_t channels,
                          const float* shift, double* sum, double* squares) {
  channel_sums(pixels, channels, sum, squares,
               [&](std::int64_t first, std::int64_t count, float* run_a, float* run_b, double* a,
                   double* b) {
                 moments_kernel(x + first * channels, count, channels, shift, run_a, run_b, a, b);
               });
}

void bf16_gradient_sums(const std::uint16_t* x, const std::uint16_t* dy, std::int64_t pixels,
                        std::int64_t channels, const float* mean, double* sum_dy,
                        double* sum_dy_centered) {
  channel_sums(pixels, channels, sum_dy, sum_dy_centered,
               [&](std::int64_t first, std::int64_t count, float* run_a, float* run_b, double* a,
                   double* b) {
                 gradient_sums_kernel(x + first * channels, dy + first * channels, count, channels,
                                      mean, run_a, run_b, a, b);
               });
}

void bf16_channel_affine(const std::uint16_t* x, std::uint16_t* y, std::int64_t pixels,
                         std::int64_t channels, const float* scale, const float* offset) {
  in_thread_shares(pixels, [&](std::int64_t, std::int64_t first, std::int64_t count) {
    affine_kernel(x + first * channels, y + first * channels, count, channels, scale, offset);
  });
}

void bf16_norm_gradient(const std::uint16_t* x, const std::uint16_t* dy, std::uint16_t* dx,
                        std::int64_t pixels, std::int64_t channels, const float* scale,
                        const float* offset, const float* mean, const float* slope) {
  in_thread_shares(pixels, [&](std::int64_t, std::int64_t first, std::int64_t count) {
    norm_gradient_kernel(x + first * channels, dy + first * channels, dx + first * channels, count,
                         channels, scale, offset, mean, slope);
  });
}

}  // namespace labpose::nets::cpu
