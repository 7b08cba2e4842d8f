// BatchNorm2d: batch statistics in training (saved for backward), running statistics otherwise;
// with ranks, the statistics and the gradient's sums of the whole batch over the ranks.
#include <fmt/core.h>

#include <algorithm>

#include "core/error.hpp"
#include "nets/communicator.hpp"
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
  if (last_forward_used_batch_statistics_ && ranks_ != nullptr) {
    forward_across_ranks(backend, *inputs[0], output);
  } else if (last_forward_used_batch_statistics_) {
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
  if (last_forward_used_batch_statistics_ && ranks_ != nullptr) {
    backward_across_ranks(backend, *inputs[0], doutput, *dinputs[0]);
  } else if (last_forward_used_batch_statistics_) {
    backend.batch_norm_backward(doutput, *inputs[0], gamma_->value, saved_mean_, saved_variance_,
                                epsilon_, false, *dinputs[0], gamma_->gradient, beta_->gradient);
  } else {
    backend.batch_norm_backward(doutput, *inputs[0], gamma_->value, running_mean_->value,
                                running_var_->value, epsilon_, true, *dinputs[0], gamma_->gradient,
                                beta_->gradient);
  }
}

// This rank's mean and variance become sums (count * mean, count * (variance + mean^2), count),
// added up over the ranks in double, and back the whole batch's mean and biased variance; the
// running statistics take the unbiased variance of the whole batch, as one process would.
void BatchNorm2d::forward_across_ranks(Backend& backend, const Tensor& x, Tensor& output) {
  backend.batch_norm_statistics(x, saved_mean_, saved_variance_);
  const auto channels = static_cast<std::size_t>(channels_);
  std::vector<float> mean(channels), variance(channels), running_mean(channels),
      running_var(channels);
  backend.copy_to_host(saved_mean_, mean.data());
  backend.copy_to_host(saved_variance_, variance.data());
  const double count = static_cast<double>(x.shape().n() * x.shape().h() * x.shape().w());
  std::vector<double> sums(2 * channels + 1);
  for (std::size_t c = 0; c < channels; ++c) {
    sums[c] = count * mean[c];
    sums[channels + c] = count * (double{variance[c]} + double{mean[c]} * mean[c]);
  }
  sums[2 * channels] = count;
  ranks_->all_reduce(sums, ReduceOp::sum);
  const double total = sums[2 * channels];
  ranks_count_ = static_cast<std::int64_t>(total);
  backend.copy_to_host(running_mean_->value, running_mean.data());
  backend.copy_to_host(running_var_->value, running_var.data());
  for (std::size_t c = 0; c < channels; ++c) {
    const double m = sums[c] / total;
    const double v = std::max(sums[channels + c] / total - m * m, 0.0);
    mean[c] = static_cast<float>(m);
    variance[c] = static_cast<float>(v);
    const double unbiased = total > 1 ? v * total / (total - 1) : v;
    running_mean[c] = static_cast<float>((1.0 - momentum_) * running_mean[c] + momentum_ * m);
    running_var[c] = static_cast<float>((1.0 - momentum_) * running_var[c] + momentum_ * unbiased);
  }
  backend.copy_from_host(mean.data(), saved_mean_);
  backend.copy_from_host(variance.data(), saved_variance_);
  backend.copy_from_host(running_mean.data(), running_mean_->value);
  backend.copy_from_host(running_var.data(), running_var_->value);
  backend.batch_norm_forward_inference(x, gamma_->value, beta_->value, saved_mean_, saved_variance_,
                                       epsilon_, output);
}

// gamma's and beta's gradients are this rank's sums (the gradient exchange averages them); dx
// needs the sums over all ranks.
void BatchNorm2d::backward_across_ranks(Backend& backend, const Tensor& x, const Tensor& doutput,
                                        Tensor& dx) {
  backend.batch_norm_backward_reduce(doutput, x, saved_mean_, saved_variance_, epsilon_,
                                     gamma_->gradient, beta_->gradient);
  const auto channels = static_cast<std::size_t>(channels_);
  std::vector<float> dy_xhat(channels), dy(channels);
  backend.copy_to_host(gamma_->gradient, dy_xhat.data());
  backend.copy_to_host(beta_->gradient, dy.data());
  std::vector<double> sums(2 * channels);
  std::copy(dy_xhat.begin(), dy_xhat.end(), sums.begin());
  std::copy(dy.begin(), dy.end(), sums.begin() + static_cast<std::ptrdiff_t>(channels));
  ranks_->all_reduce(sums, ReduceOp::sum);
  for (std::size_t c = 0; c < channels; ++c) {
    dy_xhat[c] = static_cast<float>(sums[c]);
    dy[c] = static_cast<float>(sums[channels + c]);
  }
  if (total_dy_.empty()) {
    total_dy_xhat_ = backend.allocate(Shape{channels_});
    total_dy_ = backend.allocate(Shape{channels_});
  }
  backend.copy_from_host(dy_xhat.data(), total_dy_xhat_);
  backend.copy_from_host(dy.data(), total_dy_);
  backend.batch_norm_backward_data(doutput, x, gamma_->value, saved_mean_, saved_variance_,
                                   epsilon_, total_dy_xhat_, total_dy_, ranks_count_, dx);
}

}  // namespace labpose::nets
