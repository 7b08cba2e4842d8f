// The per-channel loops of batch norm over the bf16 values between a net's layers (NHWC, C channels
// per pixel): moments, gradient sums, affine maps. Each runs over the threads' shares of the
// pixels, with fp32 sums over short runs of pixels added into doubles in thread order (the result
// does not change from run to run), vectorized over the channels and compiled for AVX-512, AVX2
// and the baseline. oneDNN 2.6's bf16 batch norm reads and writes more than these need, and is a
// generic loop where C is not a multiple of 16.
#pragma once

#include <cstdint>

namespace labpose::nets::cpu {

/// sum[c] = Σ (x - shift[c]) and squares[c] = Σ (x - shift[c])² over the pixels (shifted by a value
/// near the mean, so that the variance keeps its digits when the mean is large).
void bf16_channel_moments(const std::uint16_t* x, std::int64_t pixels, std::int64_t channels,
                          const float* shift, double* sum, double* squares);

/// sum_dy[c] = Σ dy and sum_dy_centered[c] = Σ dy · (x - mean[c]).
void bf16_gradient_sums(const std::uint16_t* x, const std::uint16_t* dy, std::int64_t pixels,
                        std::int64_t channels, const float* mean, double* sum_dy,
                        double* sum_dy_centered);

/// y = x · scale[c] + offset[c], rounded to bf16 (y may be x).
void bf16_channel_affine(const std::uint16_t* x, std::uint16_t* y, std::int64_t pixels,
                         std::int64_t channels, const float* scale, const float* offset);

/// dx = scale[c] · dy - offset[c] - (x - mean[c]) · slope[c], rounded to bf16.
void bf16_norm_gradient(const std::uint16_t* x, const std::uint16_t* dy, std::uint16_t* dx,
                        std::int64_t pixels, std::int64_t channels, const float* scale,
                        const float* offset, const float* mean, const float* slope);

}  // namespace labpose::nets::cpu
