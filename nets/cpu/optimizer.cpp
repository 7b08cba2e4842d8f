// CPU optimizer steps (OpenMP, float arithmetic) with PyTorch's semantics.
#include <cmath>

#include "nets/cpu/backend.hpp"

namespace labpose::nets::cpu {

void CpuBackend::sgd_step(Tensor& parameters, const Tensor& gradients, Tensor& velocity,
                          const SgdSettings& s) {
  check_shape("sgd_step", "gradients", gradients.shape(), parameters.shape());
  check_shape("sgd_step", "velocity", velocity.shape(), parameters.shape());
  float* p = parameters.data();
  const float* g = gradients.data();
  float* v = velocity.data();
  const std::int64_t count = parameters.elements();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    v[i] = s.momentum * v[i] + (g[i] + s.weight_decay * p[i]);
    p[i] -= s.learning_rate * v[i];
  }
}

void CpuBackend::adam_step(Tensor& parameters, const Tensor& gradients, Tensor& first_moment,
                           Tensor& second_moment, const AdamSettings& s, std::int64_t step) {
  check_shape("adam_step", "gradients", gradients.shape(), parameters.shape());
  float* p = parameters.data();
  const float* g = gradients.data();
  float* m = first_moment.data();
  float* v = second_moment.data();
  const float correction1 =
      static_cast<float>(1.0 - std::pow(double{s.beta1}, static_cast<double>(step)));
  const float sqrt_correction2 =
      static_cast<float>(std::sqrt(1.0 - std::pow(double{s.beta2}, static_cast<double>(step))));
  const float step_size = s.learning_rate / correction1;
  const float decay = s.decoupled ? 1.0F - s.learning_rate * s.weight_decay : 1.0F;
  const float l2 = s.decoupled ? 0.0F : s.weight_decay;
  const std::int64_t count = parameters.elements();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const float gradient = g[i] + l2 * p[i];
    m[i] = s.beta1 * m[i] + (1.0F - s.beta1) * gradient;
    v[i] = s.beta2 * v[i] + (1.0F - s.beta2) * gradient * gradient;
    p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(v[i]) / sqrt_correction2 + s.epsilon);
  }
}

}  // namespace labpose::nets::cpu
