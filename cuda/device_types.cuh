// Device-side helpers shared by the .cu files: the launch shape of elementwise kernels, float
// conversions of the storage types (fp32, fp16, bf16) and dispatch from DataType to a C++ type.
// Included only by .cu files.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "cuda/data_type.hpp"
#include "cuda/runtime_check.hpp"

namespace labpose::cuda::kernels {

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `count` elements (never 0: callers skip empty work).
inline unsigned blocks_for(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > (1 << 20) ? (1 << 20) : blocks));
}

/// The first index of this thread and the stride of a grid-stride loop.
__device__ inline std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

__device__ inline float to_float(float v) {
  return v;
}
__device__ inline float to_float(__half v) {
  return __half2float(v);
}
__device__ inline float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) {
  return v;
}
template <>
__device__ inline __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// Reads element i of a T array as float (the `load` of the op_math.hpp templates).
template <typename T>
struct Loader {
  const T* data;
  __device__ float operator()(std::int64_t i) const { return to_float(data[i]); }
};

/// Calls f(T{}) with the C++ type of `type`.
template <typename F>
void with_type(DataType type, F&& f) {
  switch (type) {
    case DataType::f32:
      f(float{});
      break;
    case DataType::f16:
      f(__half{});
      break;
    case DataType::bf16:
      f(__nv_bfloat16{});
      break;
  }
}

}  // namespace labpose::cuda::kernels
