// Reference losses: sigmoid cross-entropy and Huber, weighted sums and their gradients.
#include <algorithm>
#include <cmath>

#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {

double RefBackend::sigmoid_cross_entropy_forward(const Tensor& logits, const Tensor& targets,
                                                 const Tensor& weights) {
  check_shape("sigmoid_cross_entropy_forward", "targets", targets.shape(), logits.shape());
  check_shape("sigmoid_cross_entropy_forward", "weights", weights.shape(), logits.shape());
  double total = 0.0;
  for (std::int64_t i = 0; i < logits.elements(); ++i) {
    const double x = logits.data()[i], t = targets.data()[i];
    total += weights.data()[i] * (std::max(x, 0.0) - x * t + std::log1p(std::exp(-std::abs(x))));
  }
  return total;
}

void RefBackend::sigmoid_cross_entropy_backward(const Tensor& logits, const Tensor& targets,
                                                const Tensor& weights, float scale,
                                                Tensor& dlogits) {
  check_shape("sigmoid_cross_entropy_backward", "dlogits", dlogits.shape(), logits.shape());
  for (std::int64_t i = 0; i < logits.elements(); ++i) {
    const double sigmoid = 1.0 / (1.0 + std::exp(-double{logits.data()[i]}));
    dlogits.data()[i] =
        static_cast<float>(scale * weights.data()[i] * (sigmoid - targets.data()[i]));
  }
}

double RefBackend::huber_forward(const Tensor& predictions, const Tensor& targets,
                                 const Tensor& weights, float delta) {
  check_shape("huber_forward", "targets", targets.shape(), predictions.shape());
  check_shape("huber_forward", "weights", weights.shape(), predictions.shape());
  double total = 0.0;
  for (std::int64_t i = 0; i < predictions.elements(); ++i) {
    const double d = std::abs(double{predictions.data()[i]} - targets.data()[i]);
    total += weights.data()[i] * (d <= delta ? 0.5 * d * d : delta * (d - 0.5 * delta));
  }
  return total;
}

void RefBackend::huber_backward(const Tensor& predictions, const Tensor& targets,
                                const Tensor& weights, float delta, float scale,
                                Tensor& dpredictions) {
  check_shape("huber_backward", "dpredictions", dpredictions.shape(), predictions.shape());
  for (std::int64_t i = 0; i < predictions.elements(); ++i) {
    const double d = std::clamp(double{predictions.data()[i]} - targets.data()[i], -double{delta},
                                double{delta});
    dpredictions.data()[i] = static_cast<float>(scale * weights.data()[i] * d);
  }
}

}  // namespace labpose::nets::ref
