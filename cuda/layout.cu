// Layout kernels of the CUDA backend: NCHW <-> NHWC (host copies, filter reorders), window copies
// (explicit asymmetric padding and cropping around cuDNN convolutions), 8-bit pixels widened to
// float, and precision conversions.
// The index arithmetic is in layout_math.hpp (tested on the CPU).
#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

namespace labpose::cuda::kernels {
namespace {

template <typename Out>
__global__ void nchw_to_nhwc_kernel(const float* x, Out* y, std::int64_t count,
                                    std::int64_t channels, std::int64_t plane) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    y[i] = from_float<Out>(x[nchw_index_of_nhwc(i, channels, plane)]);
}

template <typename In>
__global__ void nhwc_to_nchw_kernel(const In* x, float* y, std::int64_t count,
                                    std::int64_t channels, std::int64_t plane) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    y[i] = to_float(x[nhwc_index_of_nchw(i, channels, plane)]);
}

template <typename T>
__global__ void window_copy_kernel(const T* src, T* dst, std::int64_t count, WindowCopy geometry) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t source = window_source_index(i, geometry);
    dst[i] = source < 0 ? from_float<T>(0.0F) : src[source];
  }
}

__global__ void widen_pixels_kernel(const std::uint8_t* pixels, float* dst, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dst[i] = static_cast<float>(pixels[i]);
}

template <typename From, typename To>
__global__ void convert_kernel(const From* src, To* dst, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dst[i] = from_float<To>(to_float(src[i]));
}

}  // namespace

void nchw_to_nhwc(const float* x, DataType to, void* y, std::int64_t batch, std::int64_t channels,
                  std::int64_t plane, cudaStream_t stream) {
  const std::int64_t count = batch * channels * plane;
  if (count == 0) return;
  with_type(to, [&](auto zero) {
    using Out = decltype(zero);
    nchw_to_nhwc_kernel<Out><<<blocks_for(count), kThreads, 0, stream>>>(x, static_cast<Out*>(y),
                                                                         count, channels, plane);
  });
  check_kernel_launch("nchw_to_nhwc");
}

void nhwc_to_nchw(DataType from, const void* x, float* y, std::int64_t batch, std::int64_t channels,
                  std::int64_t plane, cudaStream_t stream) {
  const std::int64_t count = batch * channels * plane;
  if (count == 0) return;
  with_type(from, [&](auto zero) {
    using In = decltype(zero);
    nhwc_to_nchw_kernel<In><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<const In*>(x),
                                                                        y, count, channels, plane);
  });
  check_kernel_launch("nhwc_to_nchw");
}

void window_copy(DataType type, const void* src, void* dst, std::int64_t batch,
                 const WindowCopy& geometry, cudaStream_t stream) {
  const std::int64_t count = batch * geometry.dst_h * geometry.dst_w * geometry.channels;
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    window_copy_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(src), static_cast<T*>(dst), count, geometry);
  });
  check_kernel_launch("window_copy");
}

void widen_pixels(const std::uint8_t* pixels, float* dst, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  widen_pixels_kernel<<<blocks_for(count), kThreads, 0, stream>>>(pixels, dst, count);
  check_kernel_launch("widen_pixels");
}

void convert(DataType from, const void* src, DataType to, void* dst, std::int64_t count,
             cudaStream_t stream) {
  if (count == 0) return;
  with_type(from, [&](auto from_zero) {
    with_type(to, [&](auto to_zero) {
      using From = decltype(from_zero);
      using To = decltype(to_zero);
      convert_kernel<From, To><<<blocks_for(count), kThreads, 0, stream>>>(
          static_cast<const From*>(src), static_cast<To*>(dst), count);
    });
  });
  check_kernel_launch("convert");
}

}  // namespace labpose::cuda::kernels
