// Index arithmetic of the CUDA backend's layout conversions, as __host__ __device__ functions: the
// kernels call them per element and the CPU unit tests (tests/cuda/device_math_test.cpp) check them
// against the reference backend. NHWC (channels innermost) is the backend's layout; filters in
// PyTorch's (K, C/g, R, S) order convert to cuDNN's (K, R, S, C/g) with the same functions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace labpose::cuda {

/// For a tensor of `count` = N x C x P elements with P = H x W pixels per image: the NCHW index of
/// the element stored at NHWC index `i`.
__host__ __device__ inline std::int64_t nchw_index_of_nhwc(std::int64_t i, std::int64_t channels,
                                                           std::int64_t plane) {
  const std::int64_t pixel = i / channels, c = i - pixel * channels;
  const std::int64_t n = pixel / plane, p = pixel - n * plane;
  return (n * channels + c) * plane + p;
}

/// The NHWC index of the element stored at NCHW index `i`.
__host__ __device__ inline std::int64_t nhwc_index_of_nchw(std::int64_t i, std::int64_t channels,
                                                           std::int64_t plane) {
  const std::int64_t row = i / plane, p = i - row * plane;  // row = n * C + c
  const std::int64_t n = row / channels, c = row - n * channels;
  return (n * plane + p) * channels + c;
}

/// A copy between NHWC tensors of the same N and C but different spatial sizes:
/// dst(n, h, w, c) = src(n, h + offset_h, w + offset_w, c), zero where that lies outside src.
/// Negative offsets pad (explicit asymmetric padding before a convolution), positive ones crop.
struct WindowCopy {
  std::int64_t channels = 0, src_h = 0, src_w = 0, dst_h = 0, dst_w = 0;
  std::int64_t offset_h = 0, offset_w = 0;
};

/// The src index that dst element `i` (NHWC) copies, or -1 for a zero.
__host__ __device__ inline std::int64_t window_source_index(std::int64_t i, const WindowCopy& g) {
  const std::int64_t pixel = i / g.channels, c = i - pixel * g.channels;
  const std::int64_t row = pixel / g.dst_w, w = pixel - row * g.dst_w;
  const std::int64_t n = row / g.dst_h, h = row - n * g.dst_h;
  const std::int64_t source_h = h + g.offset_h, source_w = w + g.offset_w;
  if (source_h < 0 || source_h >= g.src_h || source_w < 0 || source_w >= g.src_w) return -1;
  return ((n * g.src_h + source_h) * g.src_w + source_w) * g.channels + c;
}

}  // namespace labpose::cuda
