// The per-element arithmetic of the CUDA backend's own kernels (ReLU, fused convolution epilogue,
// max pooling, losses, optimizer steps, batch-norm helpers), as __host__ __device__ functions: the
// kernels call them per element and the CPU unit tests check them against the reference backend.
// No parallel structure here (reductions and launches are in the .cu files).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

namespace labpose::cuda {

// ---- activations ---------------------------------------------------------------------------
/// max(x, 0), capped at `cap` when cap > 0 (ReLU6: cap 6); NaN becomes 0 as in the reference.
__host__ __device__ inline float relu_value(float x, float cap) {
  float v = x > 0.0F ? x : 0.0F;
  if (cap > 0.0F && v > cap) v = cap;
  return v;
}

/// dy where the output y passed (0 < y < cap, or y > 0 without a cap), else 0.
__host__ __device__ inline float relu_gradient(float dy, float y, float cap) {
  return (y > 0.0F && (cap <= 0.0F || y < cap)) ? dy : 0.0F;
}

/// A fused op's activation: < 0 none, 0 ReLU, > 0 ReLU capped there (FusedOp::activation).
__host__ __device__ inline float fused_activation(float x, float activation) {
  return activation < 0.0F ? x : relu_value(x, activation);
}

/// The epilogue of a fused convolution: after(before(convolution + bias) + residual), the order
/// of the generic plan (conv with bias, ReLU, add, ReLU).
__host__ __device__ inline float fused_output(float convolution, float bias, bool has_residual,
                                              float residual, float before, float after) {
  float v = fused_activation(convolution + bias, before);
  if (has_residual) v = v + residual;
  return fused_activation(v, after);
}

// ---- max pooling (NHWC) ----------------------------------------------------------------------
struct PoolShape {
  std::int64_t batch = 0, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  int kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
};

/// The NHWC index of the first maximum (row-major within the window, strictly greater replaces) of
/// window (n, p, q) of channel c; -1 when the window holds no input pixel. Padding never wins.
/// `load(index)` reads one input element as float.
template <typename Load>
__host__ __device__ inline std::int64_t pool_window_argmax(const Load& load, const PoolShape& s,
                                                           std::int64_t n, std::int64_t c,
                                                           std::int64_t p, std::int64_t q) {
  std::int64_t best = -1;
  float best_value = 0.0F;
  for (int r = 0; r < s.kernel_h; ++r) {
    const std::int64_t h = p * s.stride_h - s.pad_top + r;
    if (h < 0 || h >= s.in_h) continue;
    for (int t = 0; t < s.kernel_w; ++t) {
      const std::int64_t w = q * s.stride_w - s.pad_left + t;
      if (w < 0 || w >= s.in_w) continue;
      const std::int64_t index = ((n * s.in_h + h) * s.in_w + w) * s.channels + c;
      const float value = load(index);
      if (best < 0 || value > best_value) {
        best = index;
        best_value = value;
      }
    }
  }
  return best;
}

/// pool_window_argmax for output element `i` of y (N, P, Q, C) (NHWC): the forward kernel's body.
template <typename Load>
__host__ __device__ inline std::int64_t pool_output_argmax(const Load& load, const PoolShape& s,
                                                           std::int64_t i) {
  const std::int64_t pixel = i / s.channels, c = i - pixel * s.channels;
  const std::int64_t row = pixel / s.out_w, q = pixel - row * s.out_w;
  const std::int64_t n = row / s.out_h, p = row - n * s.out_h;
  return pool_window_argmax(load, s, n, c, p, q);
}

struct IndexRange {
  std::int64_t begin = 0, end = 0;
};

/// The output positions [begin, end) whose pooling window (size `kernel`, `stride`, padding
/// `pad_before`) covers input position `h`, among `outputs` positions.
__host__ __device__ inline IndexRange windows_covering(std::int64_t h, int kernel, int stride,
                                                       int pad_before, std::int64_t outputs) {
  // Window p covers p * stride - pad_before + [0, kernel).
  const std::int64_t low = h + pad_before - kernel + 1;
  IndexRange range;
  range.begin = low <= 0 ? 0 : (low + stride - 1) / stride;
  range.end = (h + pad_before) / stride + 1;
  if (range.end > outputs) range.end = outputs;
  if (range.begin > range.end) range.begin = range.end;
  return range;
}

/// dx at NHWC input index `i`: the sum of dy over the windows whose first maximum is i, added in
/// window order (as the reference does). dy and x are read through `load_dy`/`load_x`.
template <typename LoadDy, typename LoadX>
__host__ __device__ inline float max_pool_input_gradient(const LoadDy& load_dy, const LoadX& load_x,
                                                         const PoolShape& s, std::int64_t i) {
  const std::int64_t pixel = i / s.channels, c = i - pixel * s.channels;
  const std::int64_t row = pixel / s.in_w, w = pixel - row * s.in_w;
  const std::int64_t n = row / s.in_h, h = row - n * s.in_h;
  const IndexRange rows = windows_covering(h, s.kernel_h, s.stride_h, s.pad_top, s.out_h);
  const IndexRange columns = windows_covering(w, s.kernel_w, s.stride_w, s.pad_left, s.out_w);
  float sum = 0.0F;
  for (std::int64_t p = rows.begin; p < rows.end; ++p) {
    for (std::int64_t q = columns.begin; q < columns.end; ++q) {
      if (pool_window_argmax(load_x, s, n, c, p, q) == i)
        sum += load_dy(((n * s.out_h + p) * s.out_w + q) * s.channels + c);
    }
  }
  return sum;
}

// ---- score-map peaks (find_peaks) ---------------------------------------------------------------
/// A cell of a score map that may be its first maximum; cell -1: none (every value seen was NaN).
struct PeakCandidate {
  float value = 0.0F;
  std::int64_t cell = -1;
};

/// Whether `challenger` takes `holder`'s place under the first-maximum rule, in any order of
/// comparison: a greater value, or an equal one at an earlier cell; NaN and nothing never do.
__host__ __device__ inline bool peak_replaces(const PeakCandidate& challenger,
                                              const PeakCandidate& holder) {
  if (challenger.cell < 0 || challenger.value != challenger.value) return false;
  if (holder.cell < 0) return true;
  return challenger.value > holder.value ||
         (challenger.value == holder.value && challenger.cell < holder.cell);
}

/// Thread `thread` of `threads`' candidate: cells thread, thread + threads, ... of a map of `cells`
/// values read by `load(cell)`, in increasing order.
template <typename Load>
__host__ __device__ inline PeakCandidate thread_peak(const Load& load, std::int64_t cells,
                                                     int thread, int threads) {
  PeakCandidate best;
  for (std::int64_t cell = thread; cell < cells; cell += threads) {
    const PeakCandidate candidate{load(cell), cell};
    if (peak_replaces(candidate, best)) best = candidate;
  }
  return best;
}

/// The map's first maximum from the reduction of its candidates and its first value: a NaN first
/// cell is never replaced in the sequential rule, so it stays.
__host__ __device__ inline std::int64_t peak_cell(const PeakCandidate& reduced, float first_value) {
  return first_value != first_value || reduced.cell < 0 ? 0 : reduced.cell;
}

// ---- losses ------------------------------------------------------------------------------------
/// Binary cross-entropy of sigmoid(x) against t, in the overflow-free form.
__host__ __device__ inline double sigmoid_cross_entropy_term(double x, double t) {
  return fmax(x, 0.0) - x * t + log1p(exp(-fabs(x)));
}

__host__ __device__ inline float sigmoid_cross_entropy_gradient(float x, float t, float weight,
                                                                float scale) {
  const float sigmoid = 1.0F / (1.0F + expf(-x));
  return scale * weight * (sigmoid - t);
}

/// d^2/2 for |d| <= delta, else delta (|d| - delta/2).
__host__ __device__ inline double huber_term(double difference, double delta) {
  const double d = fabs(difference);
  return d <= delta ? 0.5 * d * d : delta * (d - 0.5 * delta);
}

__host__ __device__ inline float huber_gradient(float difference, float weight, float delta,
                                                float scale) {
  const float clamped = fminf(fmaxf(difference, -delta), delta);
  return scale * weight * clamped;
}

// ---- optimizers (PyTorch semantics, float arithmetic as the CPU backend) -----------------------
/// SGD with momentum (dampening 0) and L2 weight decay added to the gradient.
__host__ __device__ inline void sgd_update(float& parameter, float& velocity, float gradient,
                                           float learning_rate, float momentum,
                                           float weight_decay) {
  velocity = momentum * velocity + (gradient + weight_decay * parameter);
  parameter -= learning_rate * velocity;
}

/// Per-step constants of Adam, computed once on the host (bias corrections in double).
struct AdamStep {
  float beta1 = 0.9F, beta2 = 0.999F, epsilon = 1e-8F;
  float step_size = 0.0F;         // learning_rate / (1 - beta1^step)
  float sqrt_correction2 = 0.0F;  // sqrt(1 - beta2^step)
  float decay = 1.0F;             // 1 - learning_rate * weight_decay for AdamW, else 1
  float l2 = 0.0F;                // weight_decay for Adam, else 0
};

__host__ __device__ inline void adam_update(float& parameter, float& first, float& second,
                                            float gradient, const AdamStep& s) {
  const float g = gradient + s.l2 * parameter;
  first = s.beta1 * first + (1.0F - s.beta1) * g;
  second = s.beta2 * second + (1.0F - s.beta2) * g * g;
  parameter =
      parameter * s.decay - s.step_size * first / (sqrtf(second) / s.sqrt_correction2 + s.epsilon);
}

// ---- batch normalization helpers ------------------------------------------------------------
/// 1 / sqrt(variance + epsilon): the statistic cuDNN's batch norm saves and reads.
__host__ __device__ inline float inverse_std(float variance, float epsilon) {
  return static_cast<float>(1.0 / sqrt(static_cast<double>(variance) + epsilon));
}

/// The biased batch variance back from cuDNN's saved 1 / sqrt(variance + epsilon).
__host__ __device__ inline float variance_from_inverse_std(float inverse, float epsilon) {
  const double v = static_cast<double>(inverse);
  return static_cast<float>(1.0 / (v * v) - epsilon);
}

/// Batch norm of one channel as an affine map, y = x * scale + shift, from gamma, beta and the
/// statistics (mean, biased variance): scale = gamma / sqrt(variance + eps), shift = beta - mean *
/// scale. The bf16 training ops normalize this way (one read and one write of the values).
struct ChannelAffine {
  float scale = 1.0F, shift = 0.0F;
};
__host__ __device__ inline ChannelAffine batch_norm_affine(float gamma, float beta, float mean,
                                                           float variance, float epsilon) {
  const double scale = gamma / sqrt(static_cast<double>(variance) + epsilon);
  return {static_cast<float>(scale), static_cast<float>(beta - mean * scale)};
}

/// The unbiased variance of `count` values from their biased one (itself for a single value).
__host__ __device__ inline double unbiased_variance(double biased, double count) {
  return count > 1.0 ? biased * count / (count - 1.0) : biased;
}

/// A running statistic after a training step, as PyTorch updates it: (1 - momentum) * running +
/// momentum * batch.
__host__ __device__ inline float running_statistic(float running, double batch, float momentum) {
  return static_cast<float>((1.0 - momentum) * running + momentum * batch);
}

/// dx of batch norm with batch statistics over `count` values per channel (this rank's and the
/// other ranks'), from the sums of dy and dy * xhat over all of them.
__host__ __device__ inline float batch_norm_input_gradient(float dy, float x, float mean,
                                                           float inverse, float gamma, float sum_dy,
                                                           float sum_dy_xhat, float count) {
  const float scale = gamma * inverse;
  return scale * dy - scale * (sum_dy / count) -
         (x - mean) * (scale * inverse * sum_dy_xhat / count);
}

}  // namespace labpose::cuda
