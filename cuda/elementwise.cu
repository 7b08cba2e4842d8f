// Elementwise and pooling kernels of the CUDA backend (ReLU, add, per-channel affine maps, the
// fused convolution epilogue, max pooling forward and backward) and its per-channel reductions
// (bias gradients, batch-norm statistics and gradient sums). Per-element arithmetic is in
// op_math.hpp (tested on the CPU); reductions accumulate in double in a fixed order, so results do
// not change from run to run.
#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

namespace labpose::cuda::kernels {
namespace {

template <typename T>
__global__ void fill_kernel(T* data, std::int64_t count, float value) {
  const T v = from_float<T>(value);
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) data[i] = v;
}

template <typename T>
__global__ void relu_forward_kernel(const T* x, T* y, std::int64_t count, float cap) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    y[i] = from_float<T>(relu_value(to_float(x[i]), cap));
}

template <typename T>
__global__ void relu_backward_kernel(const T* dy, const T* y, T* dx, std::int64_t count,
                                     float cap) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dx[i] = from_float<T>(relu_gradient(to_float(dy[i]), to_float(y[i]), cap));
}

template <typename T>
__global__ void add_kernel(const T* a, const T* b, T* y, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    y[i] = from_float<T>(to_float(a[i]) + to_float(b[i]));
}

template <typename In, typename Out>
__global__ void channel_affine_kernel(const In* x, Out* y, const float* scale, const float* shift,
                                      std::int64_t count, std::int64_t channels) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t c = i % channels;
    y[i] = from_float<Out>(to_float(x[i]) * scale[c] + shift[c]);
  }
}

template <typename T>
__global__ void bias_activation_kernel(T* y, const float* bias, const T* residual,
                                       std::int64_t count, std::int64_t channels, float before,
                                       float after) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const float b = bias != nullptr ? bias[i % channels] : 0.0F;
    const float r = residual != nullptr ? to_float(residual[i]) : 0.0F;
    y[i] = from_float<T>(fused_output(to_float(y[i]), b, residual != nullptr, r, before, after));
  }
}

template <typename T>
__global__ void max_pool_forward_kernel(const T* x, T* y, std::int64_t count, PoolShape s) {
  const Loader<T> load{x};
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t best = pool_output_argmax(load, s, i);
    y[i] = best < 0 ? from_float<T>(0.0F) : x[best];
  }
}

template <typename T>
__global__ void max_pool_backward_kernel(const T* dy, const T* x, T* dx, std::int64_t count,
                                         PoolShape s) {
  const Loader<T> load_dy{dy}, load_x{x};
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dx[i] = from_float<T>(max_pool_input_gradient(load_dy, load_x, s, i));
}

// ---- per-channel reductions over (rows, C)
// ------------------------------------------------------- Blocks of 32 channels x 8 rows; block row
// b of the grid sums rows b*8 + ty, stepping by 8 x slices, then its 8 rows are added in order into
// partials (slice, 2, C); a second kernel adds the slices in order. Each term functor adds one
// row's contribution to two sums (a, b).
constexpr int kColumns = 32, kRows = 8, kMaxSlices = 128;

std::int64_t slices_for(std::int64_t rows) {
  const std::int64_t slices = (rows + kRows - 1) / kRows;
  return slices < 1 ? 1 : (slices > kMaxSlices ? kMaxSlices : slices);
}

template <typename Terms>
__global__ void channel_sums_kernel(Terms terms, std::int64_t rows, std::int64_t channels,
                                    double* partials) {
  __shared__ double sums_a[kRows][kColumns], sums_b[kRows][kColumns];
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * kColumns + threadIdx.x;
  double a = 0.0, b = 0.0;
  if (c < channels) {
    for (std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kRows + threadIdx.y; row < rows;
         row += static_cast<std::int64_t>(kRows) * gridDim.y)
      terms(row, c, a, b);
  }
  sums_a[threadIdx.y][threadIdx.x] = a;
  sums_b[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    double total_a = 0.0, total_b = 0.0;
    for (int k = 0; k < kRows; ++k) {
      total_a += sums_a[k][threadIdx.x];
      total_b += sums_b[k][threadIdx.x];
    }
    partials[(static_cast<std::int64_t>(blockIdx.y) * 2) * channels + c] = total_a;
    partials[(static_cast<std::int64_t>(blockIdx.y) * 2 + 1) * channels + c] = total_b;
  }
}

__global__ void channel_sums_finish_kernel(const double* partials, std::int64_t slices,
                                           std::int64_t channels, float* first, float* second) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride()) {
    double a = 0.0, b = 0.0;
    for (std::int64_t s = 0; s < slices; ++s) {
      a += partials[(s * 2) * channels + c];
      b += partials[(s * 2 + 1) * channels + c];
    }
    if (first != nullptr) first[c] = static_cast<float>(a);
    if (second != nullptr) second[c] = static_cast<float>(b);
  }
}

template <typename Terms>
void channel_sums(const Terms& terms, std::int64_t rows, std::int64_t channels, double* partials,
                  cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((channels + kColumns - 1) / kColumns),
                  static_cast<unsigned>(slices_for(rows)));
  channel_sums_kernel<<<grid, dim3(kColumns, kRows), 0, stream>>>(terms, rows, channels, partials);
  check_kernel_launch("channel_sums");
}

void channel_sums_finish(const double* partials, std::int64_t rows, std::int64_t channels,
                         float* first, float* second, cudaStream_t stream) {
  channel_sums_finish_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(
      partials, slices_for(rows), channels, first, second);
  check_kernel_launch("channel_sums_finish");
}

template <typename T>
struct BiasTerms {
  const T* dy;
  std::int64_t channels;
  __device__ void operator()(std::int64_t row, std::int64_t c, double& a, double&) const {
    a += to_float(dy[row * channels + c]);
  }
};

template <typename T>
struct FrozenNormTerms {
  const T *dy, *x;
  const float *mean, *inverse;
  std::int64_t channels;
  __device__ void operator()(std::int64_t row, std::int64_t c, double& a, double& b) const {
    const float gradient = to_float(dy[row * channels + c]);
    const float normalized = (to_float(x[row * channels + c]) - mean[c]) * inverse[c];
    a += gradient;
    b += static_cast<double>(gradient) * normalized;
  }
};

template <typename T>
struct MomentTerms {
  const T* x;
  std::int64_t channels;
  __device__ void operator()(std::int64_t row, std::int64_t c, double& a, double& b) const {
    const double v = to_float(x[row * channels + c]);
    a += v;
    b += v * v;
  }
};

__global__ void moments_finish_kernel(const double* partials, std::int64_t slices,
                                      std::int64_t rows, std::int64_t channels, float* mean,
                                      float* variance) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride()) {
    double a = 0.0, b = 0.0;
    for (std::int64_t s = 0; s < slices; ++s) {
      a += partials[(s * 2) * channels + c];
      b += partials[(s * 2 + 1) * channels + c];
    }
    const double m = a / static_cast<double>(rows);
    const double v = b / static_cast<double>(rows) - m * m;
    mean[c] = static_cast<float>(m);
    variance[c] = static_cast<float>(v > 0.0 ? v : 0.0);
  }
}

template <typename T>
__global__ void batch_norm_backward_data_kernel(const T* dy, const T* x, const float* gamma,
                                                const float* mean, const float* inverse,
                                                const float* sum_dy_xhat, const float* sum_dy,
                                                float count, T* dx, std::int64_t total,
                                                std::int64_t channels) {
  for (std::int64_t i = first_index(); i < total; i += grid_stride()) {
    const std::int64_t c = i % channels;
    dx[i] = from_float<T>(batch_norm_input_gradient(to_float(dy[i]), to_float(x[i]), mean[c],
                                                    inverse[c], gamma[c], sum_dy[c], sum_dy_xhat[c],
                                                    count));
  }
}

template <typename T>
__global__ void batch_norm_frozen_backward_kernel(const T* dy, const float* gamma,
                                                  const float* inverse, T* dx, std::int64_t count,
                                                  std::int64_t channels) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    const std::int64_t c = i % channels;
    dx[i] = from_float<T>(to_float(dy[i]) * (gamma[c] * inverse[c]));
  }
}

__global__ void batch_norm_affine_kernel(const float* gamma, const float* beta, const float* mean,
                                         const float* variance, float epsilon, float* scale,
                                         float* shift, std::int64_t channels) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride()) {
    const ChannelAffine affine =
        ::labpose::cuda::batch_norm_affine(gamma[c], beta[c], mean[c], variance[c], epsilon);
    scale[c] = affine.scale;
    shift[c] = affine.shift;
  }
}

__global__ void update_running_statistics_kernel(const float* mean, const float* variance,
                                                 float* running_mean, float* running_var,
                                                 double count, float momentum,
                                                 std::int64_t channels) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride()) {
    running_mean[c] = running_statistic(running_mean[c], mean[c], momentum);
    running_var[c] =
        running_statistic(running_var[c], unbiased_variance(variance[c], count), momentum);
  }
}

__global__ void inverse_std_kernel(const float* variance, float* out, std::int64_t channels,
                                   float epsilon) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride())
    out[c] = ::labpose::cuda::inverse_std(variance[c], epsilon);
}

__global__ void variance_from_inverse_std_kernel(const float* inverse, float* variance,
                                                 std::int64_t channels, float epsilon) {
  for (std::int64_t c = first_index(); c < channels; c += grid_stride())
    variance[c] = ::labpose::cuda::variance_from_inverse_std(inverse[c], epsilon);
}

}  // namespace

void fill(DataType type, void* data, std::int64_t count, float value, cudaStream_t stream) {
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    fill_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(static_cast<T*>(data), count, value);
  });
  check_kernel_launch("fill");
}

void relu_forward(DataType type, const void* x, void* y, std::int64_t count, float cap,
                  cudaStream_t stream) {
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    relu_forward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), count, cap);
  });
  check_kernel_launch("relu_forward");
}

void relu_backward(DataType type, const void* dy, const void* y, void* dx, std::int64_t count,
                   float cap, cudaStream_t stream) {
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    relu_backward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(y), static_cast<T*>(dx), count, cap);
  });
  check_kernel_launch("relu_backward");
}

void add(DataType type, const void* a, const void* b, void* y, std::int64_t count,
         cudaStream_t stream) {
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    add_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(y), count);
  });
  check_kernel_launch("add");
}

void channel_affine(DataType x_type, const void* x, DataType y_type, void* y, const float* scale,
                    const float* shift, std::int64_t pixels, std::int64_t channels,
                    cudaStream_t stream) {
  const std::int64_t count = pixels * channels;
  if (count == 0) return;
  with_type(x_type, [&](auto x_zero) {
    with_type(y_type, [&](auto y_zero) {
      using In = decltype(x_zero);
      using Out = decltype(y_zero);
      channel_affine_kernel<In, Out><<<blocks_for(count), kThreads, 0, stream>>>(
          static_cast<const In*>(x), static_cast<Out*>(y), scale, shift, count, channels);
    });
  });
  check_kernel_launch("channel_affine");
}

void bias_activation(DataType type, void* y, const float* bias, const void* residual,
                     std::int64_t pixels, std::int64_t channels, float before, float after,
                     cudaStream_t stream) {
  const std::int64_t count = pixels * channels;
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    bias_activation_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<T*>(y), bias, static_cast<const T*>(residual), count, channels, before, after);
  });
  check_kernel_launch("bias_activation");
}

void max_pool_forward(DataType type, const void* x, void* y, const PoolShape& shape,
                      cudaStream_t stream) {
  const std::int64_t count = shape.batch * shape.out_h * shape.out_w * shape.channels;
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    max_pool_forward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<T*>(y), count, shape);
  });
  check_kernel_launch("max_pool_forward");
}

void max_pool_backward(DataType type, const void* dy, const void* x, void* dx,
                       const PoolShape& shape, cudaStream_t stream) {
  const std::int64_t count = shape.batch * shape.in_h * shape.in_w * shape.channels;
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    max_pool_backward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<T*>(dx), count, shape);
  });
  check_kernel_launch("max_pool_backward");
}

std::int64_t channel_reduction_scratch_count(std::int64_t rows, std::int64_t channels) {
  return 2 * slices_for(rows) * channels;
}

void bias_gradient(DataType type, const void* dy, float* dbias, std::int64_t rows,
                   std::int64_t channels, double* scratch, cudaStream_t stream) {
  if (channels == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    channel_sums(BiasTerms<T>{static_cast<const T*>(dy), channels}, rows, channels, scratch,
                 stream);
  });
  channel_sums_finish(scratch, rows, channels, dbias, nullptr, stream);
}

void batch_norm_statistics(DataType type, const void* x, float* mean, float* variance,
                           std::int64_t rows, std::int64_t channels, double* scratch,
                           cudaStream_t stream) {
  if (channels == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    channel_sums(MomentTerms<T>{static_cast<const T*>(x), channels}, rows, channels, scratch,
                 stream);
  });
  moments_finish_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(
      scratch, slices_for(rows), rows, channels, mean, variance);
  check_kernel_launch("batch_norm_statistics");
}

void batch_norm_gradient_sums(DataType type, const void* dy, const void* x, const float* mean,
                              const float* inverse, float* dgamma, float* dbeta, std::int64_t rows,
                              std::int64_t channels, double* scratch, cudaStream_t stream) {
  if (channels == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    channel_sums(FrozenNormTerms<T>{static_cast<const T*>(dy), static_cast<const T*>(x), mean,
                                    inverse, channels},
                 rows, channels, scratch, stream);
  });
  channel_sums_finish(scratch, rows, channels, dbeta, dgamma, stream);
}

void batch_norm_backward_data(DataType type, const void* dy, const void* x, const float* gamma,
                              const float* mean, const float* inverse, const float* sum_dy_xhat,
                              const float* sum_dy, float count, void* dx, std::int64_t rows,
                              std::int64_t channels, cudaStream_t stream) {
  const std::int64_t total = rows * channels;
  if (total == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_backward_data_kernel<T><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), gamma, mean, inverse, sum_dy_xhat,
        sum_dy, count, static_cast<T*>(dx), total, channels);
  });
  check_kernel_launch("batch_norm_backward_data");
}

void batch_norm_frozen_backward(DataType type, const void* dy, const void* x, const float* gamma,
                                const float* mean, const float* inverse, void* dx, float* dgamma,
                                float* dbeta, std::int64_t rows, std::int64_t channels,
                                double* scratch, cudaStream_t stream) {
  if (channels == 0) return;
  // The sums read dy before dx (which may be dy itself) is written.
  batch_norm_gradient_sums(type, dy, x, mean, inverse, dgamma, dbeta, rows, channels, scratch,
                           stream);
  const std::int64_t count = rows * channels;
  if (count == 0) return;
  with_type(type, [&](auto zero) {
    using T = decltype(zero);
    batch_norm_frozen_backward_kernel<T><<<blocks_for(count), kThreads, 0, stream>>>(
        static_cast<const T*>(dy), gamma, inverse, static_cast<T*>(dx), count, channels);
  });
  check_kernel_launch("batch_norm_frozen_backward");
}

void batch_norm_affine(const float* gamma, const float* beta, const float* mean,
                       const float* variance, float epsilon, float* scale, float* shift,
                       std::int64_t channels, cudaStream_t stream) {
  if (channels == 0) return;
  batch_norm_affine_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(
      gamma, beta, mean, variance, epsilon, scale, shift, channels);
  check_kernel_launch("batch_norm_affine");
}

void update_running_statistics(const float* mean, const float* variance, float* running_mean,
                               float* running_var, std::int64_t count, float momentum,
                               std::int64_t channels, cudaStream_t stream) {
  if (channels == 0) return;
  update_running_statistics_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(
      mean, variance, running_mean, running_var, static_cast<double>(count), momentum, channels);
  check_kernel_launch("update_running_statistics");
}

void inverse_std(const float* variance, float* out, std::int64_t channels, float epsilon,
                 cudaStream_t stream) {
  if (channels == 0) return;
  inverse_std_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(variance, out, channels,
                                                                    epsilon);
  check_kernel_launch("inverse_std");
}

void variance_from_inverse_std(const float* inverse, float* variance, std::int64_t channels,
                               float epsilon, cudaStream_t stream) {
  if (channels == 0) return;
  variance_from_inverse_std_kernel<<<blocks_for(channels), kThreads, 0, stream>>>(
      inverse, variance, channels, epsilon);
  check_kernel_launch("variance_from_inverse_std");
}

}  // namespace labpose::cuda::kernels
