// CPU losses (OpenMP reductions in double): the same formulas as the reference backend. The tensors
// may be NHWC; sums and elementwise gradients do not depend on the order.
#include <algorithm>
#include <cmath>

#include "nets/cpu/backend.hpp"

namespace labpose::nets::cpu {

double CpuBackend::sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                                 const Tensor& weights) {
  check_shape("sigmoid_cross_entropy_forward", "targets", targets.shape(), logits.shape());
  check_shape("sigmoid_cross_entropy_forward", "weights", weights.shape(), logits.shape());
  const float *x = logits.data(), *t = targets.data(), *w = weights.data();
  double total = 0.0;
  const std::int64_t count = logits.elements();
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const double v = x[i];
    total += w[i] * (std::max(v, 0.0) - v * t[i] + std::log1p(std::exp(-std::abs(v))));
  }
  return total;
}

void CpuBackend::sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                                const Tensor& weights, float scale,
                                                Tensor& dlogits) {
  check_shape("sigmoid_cross_entropy_backward", "dlogits", dlogits.shape(), logits.shape());
  const float *x = logits.data(), *t = targets.data(), *w = weights.data();
  float* d = dlogits.data();
  const std::int64_t count = logits.elements();
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const float sigmoid = 1.0F / (1.0F + std::exp(-x[i]));
    d[i] = scale * w[i] * (sigmoid - t[i]);
  }
}

double CpuBackend::huber_forward(const Tensor& predictions, const Tensor& targets,
                                 const Tensor& weights, float delta) {
  check_shape("huber_forward", "targets", targets.shape(), predictions.shape());
  check_shape("huber_forward", "weights", weights.shape(), predictions.shape());
  const float *p = predictions.data(), *t = targets.data(), *w = weights.data();
  double total = 0.0;
  const std::int64_t count = predictions.elements();
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const double d = std::abs(double{p[i]} - t[i]);
    total += w[i] * (d <= delta ? 0.5 * d * d : delta * (d - 0.5 * delta));
  }
  return total;
}

void CpuBackend::huber_backward(const Tensor& predictions, const Tensor& targets,
                                const Tensor& weights, float delta, float scale,
                                Tensor& dpredictions) {
  check_shape("huber_backward", "dpredictions", dpredictions.shape(), predictions.shape());
  const float *p = predictions.data(), *t = targets.data(), *w = weights.data();
  float* d = dpredictions.data();
  const std::int64_t count = predictions.elements();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i)
    d[i] = scale * w[i] * std::clamp(p[i] - t[i], -delta, delta);
}

}  // namespace labpose::nets::cpu
