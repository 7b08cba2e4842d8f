// Loss and optimizer kernels of the CUDA backend. Loss sums are computed per block in double and
// added in block order (on the host, or by sum_partials on the device), so they do not change
// from run to run; gradients and optimizer
// steps are elementwise. Per-element arithmetic is in op_math.hpp (tested on the CPU).
#include "cuda/device_types.cuh"
#include "cuda/kernels.hpp"

namespace labpose::cuda::kernels {
namespace {

constexpr std::int64_t kMaxLossBlocks = 1024;

// Adds the block's per-thread sums (blockDim.x == kThreads) and writes the total to partials.
__device__ void write_block_sum(double value, double* partials) {
  __shared__ double sums[kThreads];
  sums[threadIdx.x] = value;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sums[0];
}

__global__ void sigmoid_cross_entropy_forward_kernel(const float* logits, const float* targets,
                                                     const float* weights, std::int64_t count,
                                                     double* partials) {
  double sum = 0.0;
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    sum += weights[i] * sigmoid_cross_entropy_term(logits[i], targets[i]);
  write_block_sum(sum, partials);
}

__global__ void sigmoid_cross_entropy_backward_kernel(const float* logits, const float* targets,
                                                      const float* weights, float scale,
                                                      float* dlogits, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dlogits[i] = sigmoid_cross_entropy_gradient(logits[i], targets[i], weights[i], scale);
}

__global__ void huber_forward_kernel(const float* predictions, const float* targets,
                                     const float* weights, float delta, std::int64_t count,
                                     double* partials) {
  double sum = 0.0;
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    sum += weights[i] * huber_term(static_cast<double>(predictions[i]) - targets[i], delta);
  }
  write_block_sum(sum, partials);
}

// One thread: the order of the additions is the host's, so the sum is the same.
__global__ void sum_partials_kernel(const double* partials, std::int64_t count, float* out) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i) sum += partials[i];
  *out = static_cast<float>(sum);
}

__global__ void huber_backward_kernel(const float* predictions, const float* targets,
                                      const float* weights, float delta, float scale,
                                      float* dpredictions, std::int64_t count) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    dpredictions[i] = huber_gradient(predictions[i] - targets[i], weights[i], delta, scale);
}

__global__ void sgd_step_kernel(float* parameters, const float* gradients, float* velocity,
                                std::int64_t count, float learning_rate, float momentum,
                                float weight_decay) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    sgd_update(parameters[i], velocity[i], gradients[i], learning_rate, momentum, weight_decay);
}

__global__ void adam_step_kernel(float* parameters, const float* gradients, float* first,
                                 float* second, std::int64_t count, AdamStep step) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride())
    adam_update(parameters[i], first[i], second[i], gradients[i], step);
}

}  // namespace

std::int64_t loss_partial_count(std::int64_t count) {
  const std::int64_t blocks = (count + kThreads - 1) / kThreads;
  return blocks < 1 ? 1 : (blocks > kMaxLossBlocks ? kMaxLossBlocks : blocks);
}

void sum_partials(const double* partials, std::int64_t count, float* out, cudaStream_t stream) {
  sum_partials_kernel<<<1, 1, 0, stream>>>(partials, count, out);
  check_kernel_launch("sum_partials");
}

void sigmoid_cross_entropy_forward(const float* logits, const float* targets, const float* weights,
                                   std::int64_t count, double* partials, cudaStream_t stream) {
  sigmoid_cross_entropy_forward_kernel<<<static_cast<unsigned>(loss_partial_count(count)), kThreads,
                                         0, stream>>>(logits, targets, weights, count, partials);
  check_kernel_launch("sigmoid_cross_entropy_forward");
}

void sigmoid_cross_entropy_backward(const float* logits, const float* targets, const float* weights,
                                    float scale, float* dlogits, std::int64_t count,
                                    cudaStream_t stream) {
  if (count == 0) return;
  sigmoid_cross_entropy_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      logits, targets, weights, scale, dlogits, count);
  check_kernel_launch("sigmoid_cross_entropy_backward");
}

void huber_forward(const float* predictions, const float* targets, const float* weights,
                   float delta, std::int64_t count, double* partials, cudaStream_t stream) {
  huber_forward_kernel<<<static_cast<unsigned>(loss_partial_count(count)), kThreads, 0, stream>>>(
      predictions, targets, weights, delta, count, partials);
  check_kernel_launch("huber_forward");
}

void huber_backward(const float* predictions, const float* targets, const float* weights,
                    float delta, float scale, float* dpredictions, std::int64_t count,
                    cudaStream_t stream) {
  if (count == 0) return;
  huber_backward_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      predictions, targets, weights, delta, scale, dpredictions, count);
  check_kernel_launch("huber_backward");
}

void sgd_step(float* parameters, const float* gradients, float* velocity, std::int64_t count,
              float learning_rate, float momentum, float weight_decay, cudaStream_t stream) {
  if (count == 0) return;
  sgd_step_kernel<<<blocks_for(count), kThreads, 0, stream>>>(
      parameters, gradients, velocity, count, learning_rate, momentum, weight_decay);
  check_kernel_launch("sgd_step");
}

void adam_step(float* parameters, const float* gradients, float* first, float* second,
               std::int64_t count, const AdamStep& step, cudaStream_t stream) {
  if (count == 0) return;
  adam_step_kernel<<<blocks_for(count), kThreads, 0, stream>>>(parameters, gradients, first, second,
                                                               count, step);
  check_kernel_launch("adam_step");
}

}  // namespace labpose::cuda::kernels
