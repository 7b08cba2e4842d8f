// Reference optimizer steps with PyTorch's semantics.
#include <cmath>

#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {

void RefBackend::sgd_step(Tensor& parameters, const Tensor& gradients, Tensor& velocity,
                          const SgdSettings& s) {
  check_shape("sgd_step", "gradients", gradients.shape(), parameters.shape());
  check_shape("sgd_step", "velocity", velocity.shape(), parameters.shape());
  for (std::int64_t i = 0; i < parameters.elements(); ++i) {
    const double g = double{gradients.data()[i]} + double{s.weight_decay} * parameters.data()[i];
    const double v = double{s.momentum} * velocity.data()[i] + g;
    velocity.data()[i] = static_cast<float>(v);
    parameters.data()[i] = static_cast<float>(parameters.data()[i] - double{s.learning_rate} * v);
  }
}

void RefBackend::adam_step(Tensor& parameters, const Tensor& gradients, Tensor& first_moment,
                           Tensor& second_moment, const AdamSettings& s, std::int64_t step) {
  check_shape("adam_step", "gradients", gradients.shape(), parameters.shape());
  const double correction1 = 1.0 - std::pow(double{s.beta1}, static_cast<double>(step));
  const double correction2 = 1.0 - std::pow(double{s.beta2}, static_cast<double>(step));
  for (std::int64_t i = 0; i < parameters.elements(); ++i) {
    double p = parameters.data()[i], g = gradients.data()[i];
    if (s.decoupled) {
      p *= 1.0 - double{s.learning_rate} * s.weight_decay;
    } else {
      g += double{s.weight_decay} * p;
    }
    const double m = double{s.beta1} * first_moment.data()[i] + (1.0 - s.beta1) * g;
    const double v = double{s.beta2} * second_moment.data()[i] + (1.0 - s.beta2) * g * g;
    first_moment.data()[i] = static_cast<float>(m);
    second_moment.data()[i] = static_cast<float>(v);
    p -= double{s.learning_rate} / correction1 * m /
         (std::sqrt(v) / std::sqrt(correction2) + s.epsilon);
    parameters.data()[i] = static_cast<float>(p);
  }
}

}  // namespace labpose::nets::ref
