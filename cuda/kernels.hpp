// Host launchers of the CUDA backend's own kernels, callable from plain C++ (the .cpp files of the
// backend). Each launcher `<name>` queues kernel `<name>_kernel` on `stream` and reports a failed
// launch as a labpose::Error; the arithmetic per element is in layout_math.hpp and op_math.hpp.
// Pointers are device memory; tensors are NHWC unless a comment says otherwise.
// Nothing here allocates: callers pass scratch buffers sized by the *_count functions.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/data_type.hpp"
#include "cuda/layout_math.hpp"
#include "cuda/op_math.hpp"

namespace labpose::cuda::kernels {

// ---- layout.cu: conversions --------------------------------------------------------------------
// x: (N, C, P) floats in NCHW order -> y: the same tensor in NHWC order, stored as `to` (also
// KCRS -> KRSC filters, narrowed for a bf16 convolution on the way).
void nchw_to_nhwc(const float* x, DataType to, void* y, std::int64_t batch, std::int64_t channels,
                  std::int64_t plane, cudaStream_t stream);
// x: NHWC values of type `from` -> y: NCHW floats (also KRSC -> KCRS filter gradients).
void nhwc_to_nchw(DataType from, const void* x, float* y, std::int64_t batch, std::int64_t channels,
                  std::int64_t plane, cudaStream_t stream);
/// dst: (N, C, dst_h, dst_w) = src: (N, C, src_h, src_w) shifted (explicit padding or cropping).
void window_copy(DataType type, const void* src, void* dst, std::int64_t batch,
                 const WindowCopy& geometry, cudaStream_t stream);
/// dst[i] = pixels[i] widened to float (8-bit values 0-255, as uploaded).
void widen_pixels(const std::uint8_t* pixels, float* dst, std::int64_t count, cudaStream_t stream);
/// dst[i] = src[i] converted between fp32, fp16 and bf16 (round to nearest even).
void convert(DataType from, const void* src, DataType to, void* dst, std::int64_t count,
             cudaStream_t stream);

// ---- peaks.cu: score-map peaks ------------------------------------------------------------------
/// The values per (image, bodypart) of a peak: nets::Backend::kPeakValues (peaks.cpp checks).
constexpr std::int64_t kPeakValues = 4;
/// Backend::find_peaks: score (N, P, Q, J) and locref (N, P, Q, 2J), NHWC -> peaks (N, J, 4).
void find_peaks(const float* score, const float* locref, float* peaks, std::int64_t batch,
                std::int64_t joints, std::int64_t cells, cudaStream_t stream);

// ---- elementwise.cu: activations, pooling, epilogues, channel reductions ------------------------
// `type` is the element type of every image tensor of a call (fp32, or bf16 for the activations
// of a net training in bf16); per-channel values (bias, gamma, statistics, sums) are floats.
void fill(DataType type, void* data, std::int64_t count, float value, cudaStream_t stream);
void relu_forward(DataType type, const void* x, void* y, std::int64_t count, float cap,
                  cudaStream_t stream);
void relu_backward(DataType type, const void* dy, const void* y, void* dx, std::int64_t count,
                   float cap, cudaStream_t stream);
void add(DataType type, const void* a, const void* b, void* y, std::int64_t count,
         cudaStream_t stream);
/// y[p, c] = x[p, c] * scale[c] + shift[c] over `pixels` rows of `channels`; scale, shift: (C)
/// device arrays; x and y may have different element types.
void channel_affine(DataType x_type, const void* x, DataType y_type, void* y, const float* scale,
                    const float* shift, std::int64_t pixels, std::int64_t channels,
                    cudaStream_t stream);
/// In place on y (pixels, K): y = after(before(y + bias) + residual) (op_math.hpp fused_output);
/// bias: (K) floats, residual: like y or null; activations < 0 mean none.
void bias_activation(DataType type, void* y, const float* bias, const void* residual,
                     std::int64_t pixels, std::int64_t channels, float before, float after,
                     cudaStream_t stream);
// x: (N, C, H, W) -> y: (N, C, P, Q)
void max_pool_forward(DataType type, const void* x, void* y, const PoolShape& shape,
                      cudaStream_t stream);
// dy: (N, C, P, Q), x: (N, C, H, W) -> dx: (N, C, H, W), without atomics (each dx gathers).
void max_pool_backward(DataType type, const void* dy, const void* x, void* dx,
                       const PoolShape& shape, cudaStream_t stream);

/// Doubles of scratch the channel reductions below need for `rows` x `channels`.
std::int64_t channel_reduction_scratch_count(std::int64_t rows, std::int64_t channels);
/// dbias[c] = sum over rows of dy[row, c]; dy: (rows, C) with rows = N x P x Q.
void bias_gradient(DataType type, const void* dy, float* dbias, std::int64_t rows,
                   std::int64_t channels, double* scratch, cudaStream_t stream);
/// Batch-norm gradient with constant statistics (frozen layers): dx = dy gamma inverse,
/// dgamma = sum dy (x - mean) inverse, dbeta = sum dy, with inverse = 1 / sqrt(var + eps) (C);
/// x, dy, dx: (rows, C); dx may be dy.
void batch_norm_frozen_backward(DataType type, const void* dy, const void* x, const float* gamma,
                                const float* mean, const float* inverse, void* dx, float* dgamma,
                                float* dbeta, std::int64_t rows, std::int64_t channels,
                                double* scratch, cudaStream_t stream);
/// The per-channel mean and biased variance of x: (rows, C) (sums in double).
void batch_norm_statistics(DataType type, const void* x, float* mean, float* variance,
                           std::int64_t rows, std::int64_t channels, double* scratch,
                           cudaStream_t stream);
/// dgamma = sum dy (x - mean) inverse, dbeta = sum dy per channel; x, dy: (rows, C).
void batch_norm_gradient_sums(DataType type, const void* dy, const void* x, const float* mean,
                              const float* inverse, float* dgamma, float* dbeta, std::int64_t rows,
                              std::int64_t channels, double* scratch, cudaStream_t stream);
/// dx of batch norm with statistics over `count` values per channel given the sums of dy * xhat
/// and dy over all of them (op_math.hpp batch_norm_input_gradient); x, dy, dx: (rows, C).
void batch_norm_backward_data(DataType type, const void* dy, const void* x, const float* gamma,
                              const float* mean, const float* inverse, const float* sum_dy_xhat,
                              const float* sum_dy, float count, void* dx, std::int64_t rows,
                              std::int64_t channels, cudaStream_t stream);
/// scale, shift (C) of batch norm as an affine map (op_math.hpp batch_norm_affine), from gamma,
/// beta, the mean and the biased variance.
void batch_norm_affine(const float* gamma, const float* beta, const float* mean,
                       const float* variance, float epsilon, float* scale, float* shift,
                       std::int64_t channels, cudaStream_t stream);
/// PyTorch's update of the running statistics from a batch's mean and biased variance over
/// `count` values per channel (the variance enters unbiased).
void update_running_statistics(const float* mean, const float* variance, float* running_mean,
                               float* running_var, std::int64_t count, float momentum,
                               std::int64_t channels, cudaStream_t stream);
/// out[c] = 1 / sqrt(variance[c] + epsilon) (what cuDNN's batch norm saves).
void inverse_std(const float* variance, float* out, std::int64_t channels, float epsilon,
                 cudaStream_t stream);
/// variance[c] from cuDNN's saved 1 / sqrt(variance + epsilon).
void variance_from_inverse_std(const float* inverse, float* variance, std::int64_t channels,
                               float epsilon, cudaStream_t stream);

// ---- training.cu: losses and optimizer steps
// -----------------------------------------------------
/// Doubles of `partials` the loss sums write; the host adds them in order.
std::int64_t loss_partial_count(std::int64_t count);
/// *out = the partials added in order (as the host adds them), as a float, on the device.
void sum_partials(const double* partials, std::int64_t count, float* out, cudaStream_t stream);
void sigmoid_cross_entropy_forward(const float* logits, const float* targets, const float* weights,
                                   std::int64_t count, double* partials, cudaStream_t stream);
void sigmoid_cross_entropy_backward(const float* logits, const float* targets, const float* weights,
                                    float scale, float* dlogits, std::int64_t count,
                                    cudaStream_t stream);
void huber_forward(const float* predictions, const float* targets, const float* weights,
                   float delta, std::int64_t count, double* partials, cudaStream_t stream);
void huber_backward(const float* predictions, const float* targets, const float* weights,
                    float delta, float scale, float* dpredictions, std::int64_t count,
                    cudaStream_t stream);
void sgd_step(float* parameters, const float* gradients, float* velocity, std::int64_t count,
              float learning_rate, float momentum, float weight_decay, cudaStream_t stream);
void adam_step(float* parameters, const float* gradients, float* first, float* second,
               std::int64_t count, const AdamStep& step, cudaStream_t stream);

}  // namespace labpose::cuda::kernels
