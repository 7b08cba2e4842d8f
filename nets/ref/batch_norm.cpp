// Reference batch normalization (PyTorch's formulas, in double).
#include <cmath>
#include <vector>

#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {
namespace {

// Calls visit(c, i) for every element index i of channel c of an NCHW tensor.
template <typename Visit>
void for_each_in_channels(const Shape& s, Visit visit) {
  const std::int64_t plane = s.h() * s.w();
  for (std::int64_t n = 0; n < s.n(); ++n) {
    for (std::int64_t c = 0; c < s.c(); ++c) {
      for (std::int64_t i = 0; i < plane; ++i) visit(c, (n * s.c() + c) * plane + i);
    }
  }
}

}  // namespace

void RefBackend::batch_norm_forward_inference(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, const Tensor& running_mean,
                                              const Tensor& running_var, float epsilon, Tensor& y) {
  check_shape("batch_norm_forward_inference", "y", y.shape(), x.shape());
  for_each_in_channels(x.shape(), [&](std::int64_t c, std::int64_t i) {
    const double inv_std = 1.0 / std::sqrt(double{running_var.data()[c]} + epsilon);
    y.data()[i] = static_cast<float>((x.data()[i] - double{running_mean.data()[c]}) * inv_std *
                                         gamma.data()[c] +
                                     beta.data()[c]);
  });
}

void RefBackend::batch_norm_forward_training(const Tensor& x, const Tensor& gamma,
                                             const Tensor& beta, float epsilon, float momentum,
                                             Tensor& y, Tensor& saved_mean, Tensor& saved_variance,
                                             Tensor& running_mean, Tensor& running_var) {
  check_shape("batch_norm_forward_training", "y", y.shape(), x.shape());
  const Shape& s = x.shape();
  const auto channels = static_cast<std::size_t>(s.c());
  const double count = static_cast<double>(s.n() * s.h() * s.w());
  std::vector<double> sum(channels, 0.0), squares(channels, 0.0);
  for_each_in_channels(
      s, [&](std::int64_t c, std::int64_t i) { sum[static_cast<std::size_t>(c)] += x.data()[i]; });
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const double d = x.data()[i] - sum[static_cast<std::size_t>(c)] / count;
    squares[static_cast<std::size_t>(c)] += d * d;
  });
  for (std::size_t c = 0; c < channels; ++c) {
    const double mean = sum[c] / count, variance = squares[c] / count;
    saved_mean.data()[c] = static_cast<float>(mean);
    saved_variance.data()[c] = static_cast<float>(variance);
    const double unbiased = count > 1 ? squares[c] / (count - 1) : variance;
    running_mean.data()[c] =
        static_cast<float>((1.0 - momentum) * running_mean.data()[c] + momentum * mean);
    running_var.data()[c] =
        static_cast<float>((1.0 - momentum) * running_var.data()[c] + momentum * unbiased);
  }
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const auto k = static_cast<std::size_t>(c);
    const double inv_std = 1.0 / std::sqrt(squares[k] / count + epsilon);
    y.data()[i] = static_cast<float>((x.data()[i] - sum[k] / count) * inv_std * gamma.data()[c] +
                                     beta.data()[c]);
  });
}

void RefBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     bool constant_statistics, Tensor& dx, Tensor& dgamma,
                                     Tensor& dbeta) {
  check_shape("batch_norm_backward", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward", "dx", dx.shape(), x.shape());
  const Shape& s = x.shape();
  const auto channels = static_cast<std::size_t>(s.c());
  const double count = static_cast<double>(s.n() * s.h() * s.w());
  std::vector<double> inv_std(channels), sum_dy(channels, 0.0), sum_dy_xhat(channels, 0.0);
  for (std::size_t c = 0; c < channels; ++c)
    inv_std[c] = 1.0 / std::sqrt(double{variance.data()[c]} + epsilon);
  const auto xhat = [&](std::int64_t c, std::int64_t i) {
    return (x.data()[i] - double{mean.data()[c]}) * inv_std[static_cast<std::size_t>(c)];
  };
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    sum_dy[static_cast<std::size_t>(c)] += dy.data()[i];
    sum_dy_xhat[static_cast<std::size_t>(c)] += dy.data()[i] * xhat(c, i);
  });
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const auto k = static_cast<std::size_t>(c);
    const double scale = gamma.data()[c] * inv_std[k];
    dx.data()[i] = static_cast<float>(
        constant_statistics
            ? dy.data()[i] * scale
            : scale * (dy.data()[i] - sum_dy[k] / count - xhat(c, i) * sum_dy_xhat[k] / count));
  });
  for (std::size_t c = 0; c < channels; ++c) {
    dgamma.data()[c] = static_cast<float>(sum_dy_xhat[c]);
    dbeta.data()[c] = static_cast<float>(sum_dy[c]);
  }
}

}  // namespace labpose::nets::ref
