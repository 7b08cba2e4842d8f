// CUDA losses (sums computed per block in double, added on the host in order) and optimizer steps
// (PyTorch's SGD with momentum, Adam and AdamW, float arithmetic as the CPU backend).
#include <fmt/core.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.hpp"
#include "cuda/kernels.hpp"
#include "cuda/runtime_check.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

using nets::Tensor;
using State = CudaBackend::State;

// Runs `queue_partials(partials)` and returns the sum of the partials it wrote, in order.
template <typename Queue>
double sum_partials(State& s, std::int64_t count, const std::string& context,
                    const Queue& queue_partials) {
  const std::int64_t partial_count = kernels::loss_partial_count(count);
  const std::size_t bytes = static_cast<std::size_t>(partial_count) * sizeof(double);
  const auto partials = s.scratch(bytes);
  auto* device = reinterpret_cast<double*>(partials->data());
  queue_partials(device);
  void* staging = s.staging_for(bytes, context);
  LABPOSE_CUDA_CHECK(cudaMemcpyAsync(staging, device, bytes, cudaMemcpyDeviceToHost, s.queue()),
                     context);
  s.staging_queued(context);
  LABPOSE_CUDA_CHECK(cudaStreamSynchronize(s.queue()), context);
  std::vector<double> values(static_cast<std::size_t>(partial_count));
  std::memcpy(values.data(), staging, bytes);
  double total = 0.0;
  for (double v : values) total += v;
  return total;
}

// Runs `queue_partials(partials)` and leaves the sum of the partials in sums[at], on the device.
template <typename Queue>
void sum_partials_to(State& s, std::int64_t count, Tensor& sums, std::int64_t at,
                     const Queue& queue_partials) {
  LABPOSE_ASSERT(at >= 0 && at < sums.elements());
  const std::int64_t partial_count = kernels::loss_partial_count(count);
  const auto partials = s.scratch(static_cast<std::size_t>(partial_count) * sizeof(double));
  auto* device = reinterpret_cast<double*>(partials->data());
  queue_partials(device);
  kernels::sum_partials(device, partial_count, device_data(sums) + at, s.queue());
}

}  // namespace

void CudaBackend::sigmoid_cross_entropy_sum(const Tensor& logits, const Tensor& targets,
                                            const Tensor& weights, Tensor& sums, std::int64_t at) {
  check_shape("sigmoid_cross_entropy_sum", "targets", targets.shape(), logits.shape());
  check_shape("sigmoid_cross_entropy_sum", "weights", weights.shape(), logits.shape());
  State& s = state();
  s.activate();
  sum_partials_to(s, logits.elements(), sums, at, [&](double* partials) {
    kernels::sigmoid_cross_entropy_forward(device_data(logits), device_data(targets),
                                           device_data(weights), logits.elements(), partials,
                                           s.queue());
  });
}

void CudaBackend::huber_sum(const Tensor& predictions, const Tensor& targets, const Tensor& weights,
                            float delta, Tensor& sums, std::int64_t at) {
  check_shape("huber_sum", "targets", targets.shape(), predictions.shape());
  check_shape("huber_sum", "weights", weights.shape(), predictions.shape());
  State& s = state();
  s.activate();
  sum_partials_to(s, predictions.elements(), sums, at, [&](double* partials) {
    kernels::huber_forward(device_data(predictions), device_data(targets), device_data(weights),
                           delta, predictions.elements(), partials, s.queue());
  });
}

double CudaBackend::sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                                  const Tensor& weights) {
  check_shape("sigmoid_cross_entropy_forward", "targets", targets.shape(), logits.shape());
  check_shape("sigmoid_cross_entropy_forward", "weights", weights.shape(), logits.shape());
  State& s = state();
  s.activate();
  const std::string context =
      fmt::format("sigmoid_cross_entropy_forward ({})", logits.shape().text());
  return sum_partials(s, logits.elements(), context, [&](double* partials) {
    kernels::sigmoid_cross_entropy_forward(device_data(logits), device_data(targets),
                                           device_data(weights), logits.elements(), partials,
                                           s.queue());
  });
}

void CudaBackend::sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                                 const Tensor& weights, float scale,
                                                 Tensor& dlogits) {
  check_shape("sigmoid_cross_entropy_backward", "dlogits", dlogits.shape(), logits.shape());
  State& s = state();
  s.activate();
  kernels::sigmoid_cross_entropy_backward(device_data(logits), device_data(targets),
                                          device_data(weights), scale, device_data(dlogits),
                                          logits.elements(), s.queue());
}

double CudaBackend::huber_forward(const Tensor& predictions, const Tensor& targets,
                                  const Tensor& weights, float delta) {
  check_shape("huber_forward", "targets", targets.shape(), predictions.shape());
  check_shape("huber_forward", "weights", weights.shape(), predictions.shape());
  State& s = state();
  s.activate();
  const std::string context = fmt::format("huber_forward ({})", predictions.shape().text());
  return sum_partials(s, predictions.elements(), context, [&](double* partials) {
    kernels::huber_forward(device_data(predictions), device_data(targets), device_data(weights),
                           delta, predictions.elements(), partials, s.queue());
  });
}

void CudaBackend::huber_backward(const Tensor& predictions, const Tensor& targets,
                                 const Tensor& weights, float delta, float scale,
                                 Tensor& dpredictions) {
  check_shape("huber_backward", "dpredictions", dpredictions.shape(), predictions.shape());
  State& s = state();
  s.activate();
  kernels::huber_backward(device_data(predictions), device_data(targets), device_data(weights),
                          delta, scale, device_data(dpredictions), predictions.elements(),
                          s.queue());
}

void CudaBackend::sgd_step(Tensor& parameters, const Tensor& gradients, Tensor& velocity,
                           const nets::SgdSettings& settings) {
  check_shape("sgd_step", "gradients", gradients.shape(), parameters.shape());
  check_shape("sgd_step", "velocity", velocity.shape(), parameters.shape());
  State& s = state();
  s.activate();
  kernels::sgd_step(device_data(parameters), device_data(gradients), device_data(velocity),
                    parameters.elements(), settings.learning_rate, settings.momentum,
                    settings.weight_decay, s.queue());
}

void CudaBackend::adam_step(Tensor& parameters, const Tensor& gradients, Tensor& first_moment,
                            Tensor& second_moment, const nets::AdamSettings& settings,
                            std::int64_t step) {
  check_shape("adam_step", "gradients", gradients.shape(), parameters.shape());
  check_shape("adam_step", "first_moment", first_moment.shape(), parameters.shape());
  check_shape("adam_step", "second_moment", second_moment.shape(), parameters.shape());
  State& s = state();
  s.activate();
  AdamStep constants;
  constants.beta1 = settings.beta1;
  constants.beta2 = settings.beta2;
  constants.epsilon = settings.epsilon;
  const double steps = static_cast<double>(step);
  constants.step_size = static_cast<float>(
      settings.learning_rate / (1.0 - std::pow(static_cast<double>(settings.beta1), steps)));
  constants.sqrt_correction2 =
      static_cast<float>(std::sqrt(1.0 - std::pow(static_cast<double>(settings.beta2), steps)));
  constants.decay =
      settings.decoupled ? 1.0F - settings.learning_rate * settings.weight_decay : 1.0F;
  constants.l2 = settings.decoupled ? 0.0F : settings.weight_decay;
  kernels::adam_step(device_data(parameters), device_data(gradients), device_data(first_moment),
                     device_data(second_moment), parameters.elements(), constants, s.queue());
}

}  // namespace labpose::cuda
