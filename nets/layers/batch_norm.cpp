// BatchNorm2d: batch statistics in training (saved for backward), running statistics otherwise.
#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/layer.hpp"

namespace labpose::nets {

BatchNorm2d::BatchNorm2d(std::string name, int channels, float epsilon, float momentum)
    : Layer(std::move(name)), channels_(channels), epsilon_(epsilon), momentum_(momentum) {}

std::vector<Parameter> BatchNorm2d::declare_parameters() const {
  const Shape shape{channels_};
  return {{name() + ".weight", shape, true, {}, {}},
          {name() + ".bias", shape, true, {}, {}},
          {name() + ".running_mean", shape, false, {}, {}},
          {name() + ".running_var", shape, false, {}, {}}};
}

void BatchNorm2d::bind_parameters(const std::vector<Parameter*>& parameters) {
  gamma_ = parameters.at(0);
  beta_ = parameters.at(1);
  running_mean_ = parameters.at(2);
  running_var_ = parameters.at(3);
}

Shape BatchNorm2d::output_shape(const std::vector<Shape>& inputs) const {
  if (inputs.size() != 1 || inputs[0].rank() != 4 || inputs[0].c() != channels_) {
    throw Error(fmt::format("{}: expects (N, {}, H, W), got {}", name(), channels_,
                            inputs.empty() ? std::string("nothing") : inputs[0].text()));
  }
  return inputs[0];
}

void BatchNorm2d::prepare(Backend& backend, const std::vector<Shape>&) {
  if (saved_mean_.empty()) {
    saved_mean_ = backend.allocate(Shape{channels_});
    saved_variance_ = backend.allocate(Shape{channels_});
  }
}

void BatchNorm2d::forward(Backend& backend, const std::vector<const Tensor*>& inputs,
                          Tensor& output, bool training) {
  last_forward_used_batch_statistics_ = training && !frozen_;
  if (last_forward_used_batch_statistics_) {
    backend.batch_norm_forward_training(*inputs[0], gamma_->value, beta_->value, epsilon_,
                                        momentum_, output, saved_mean_, saved_variance_,
                                        running_mean_->value, running_var_->value);
  } else {
    backend.batch_norm_forward_inference(*inputs[0], gamma_->value, beta_->value,
                                         running_mean_->value, running_var_->value, epsilon_,
                                         output);
  }
}

void BatchNorm2d::backward(Backend& backend, const std::vector<const Tensor*>& inputs,
                           const Tensor&, const Tensor& doutput,
                           const std::vector<Tensor*>& dinputs) {
  LABPOSE_ASSERT(dinputs[0] != nullptr);  // a batch norm never sits directly on the network input
  if (last_forward_used_batch_statistics_) {
    backend.batch_norm_backward(doutput, *inputs[0], gamma_->value, saved_mean_, saved_variance_,
                                epsilon_, false, *dinputs[0], gamma_->gradient, beta_->gradient);
  } else {
    backend.batch_norm_backward(doutput, *inputs[0], gamma_->value, running_mean_->value,
                                running_var_->value, epsilon_, true, *dinputs[0], gamma_->gradient,
                                beta_->gradient);
  }
}

}  // namespace labpose::nets
