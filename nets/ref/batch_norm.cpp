// Reference batch normalization (PyTorch's formulas, in double).
#include <cmath>
#include <vector>

#include "core/error.hpp"
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

// Per channel: the mean and the biased variance, in double (two passes).
struct Moments {
  std::vector<double> mean, variance;
};

Moments moments_of(const Tensor& x) {
  const Shape& s = x.shape();
  const auto channels = static_cast<std::size_t>(s.c());
  const double count = static_cast<double>(s.n() * s.h() * s.w());
  Moments m{std::vector<double>(channels, 0.0), std::vector<double>(channels, 0.0)};
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    m.mean[static_cast<std::size_t>(c)] += x.data()[i];
  });
  for (double& v : m.mean) v /= count;
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const double d = x.data()[i] - m.mean[static_cast<std::size_t>(c)];
    m.variance[static_cast<std::size_t>(c)] += d * d;
  });
  for (double& v : m.variance) v /= count;
  return m;
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
  const double count = static_cast<double>(s.n() * s.h() * s.w());
  const Moments m = moments_of(x);
  for (std::size_t c = 0; c < m.mean.size(); ++c) {
    saved_mean.data()[c] = static_cast<float>(m.mean[c]);
    saved_variance.data()[c] = static_cast<float>(m.variance[c]);
    const double unbiased = count > 1 ? m.variance[c] * count / (count - 1) : m.variance[c];
    running_mean.data()[c] =
        static_cast<float>((1.0 - momentum) * running_mean.data()[c] + momentum * m.mean[c]);
    running_var.data()[c] =
        static_cast<float>((1.0 - momentum) * running_var.data()[c] + momentum * unbiased);
  }
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const auto k = static_cast<std::size_t>(c);
    const double inv_std = 1.0 / std::sqrt(m.variance[k] + epsilon);
    y.data()[i] =
        static_cast<float>((x.data()[i] - m.mean[k]) * inv_std * gamma.data()[c] + beta.data()[c]);
  });
}

namespace {

std::vector<double> inverse_stds(const Tensor& variance, float epsilon) {
  std::vector<double> inverse(static_cast<std::size_t>(variance.elements()));
  for (std::size_t c = 0; c < inverse.size(); ++c)
    inverse[c] = 1.0 / std::sqrt(double{variance.data()[c]} + epsilon);
  return inverse;
}

// The per-channel sums of a batch norm's gradient: sum(dy) and sum(dy * xhat).
struct GradientSums {
  std::vector<double> inv_std, dy, dy_xhat;
};

GradientSums gradient_sums(const Tensor& dy, const Tensor& x, const Tensor& mean,
                           const Tensor& variance, float epsilon) {
  const Shape& s = x.shape();
  const auto channels = static_cast<std::size_t>(s.c());
  GradientSums sums{inverse_stds(variance, epsilon), std::vector<double>(channels, 0.0),
                    std::vector<double>(channels, 0.0)};
  for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
    const auto k = static_cast<std::size_t>(c);
    sums.dy[k] += dy.data()[i];
    sums.dy_xhat[k] += dy.data()[i] * (x.data()[i] - double{mean.data()[c]}) * sums.inv_std[k];
  });
  return sums;
}

// dgamma = sum(dy * xhat), dbeta = sum(dy).
void store_sums(const GradientSums& sums, Tensor& dgamma, Tensor& dbeta) {
  for (std::size_t c = 0; c < sums.dy.size(); ++c) {
    dgamma.data()[c] = static_cast<float>(sums.dy_xhat[c]);
    dbeta.data()[c] = static_cast<float>(sums.dy[c]);
  }
}

// dx with batch statistics from `count` values per channel whose gradient sums are `dy_sum` and
// `dy_xhat_sum`.
void statistics_gradient(const Tensor& dy, const Tensor& x, const Tensor& gamma, const Tensor& mean,
                         const std::vector<double>& inv_std, const std::vector<double>& dy_sum,
                         const std::vector<double>& dy_xhat_sum, double count, Tensor& dx) {
  for_each_in_channels(x.shape(), [&](std::int64_t c, std::int64_t i) {
    const auto k = static_cast<std::size_t>(c);
    const double xhat = (x.data()[i] - double{mean.data()[c]}) * inv_std[k];
    dx.data()[i] =
        static_cast<float>(gamma.data()[c] * inv_std[k] *
                           (dy.data()[i] - dy_sum[k] / count - xhat * dy_xhat_sum[k] / count));
  });
}

}  // namespace

void RefBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     bool constant_statistics, Tensor& dx, Tensor& dgamma,
                                     Tensor& dbeta) {
  check_shape("batch_norm_backward", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward", "dx", dx.shape(), x.shape());
  const Shape& s = x.shape();
  const GradientSums sums = gradient_sums(dy, x, mean, variance, epsilon);
  if (constant_statistics) {
    for_each_in_channels(s, [&](std::int64_t c, std::int64_t i) {
      dx.data()[i] = static_cast<float>(dy.data()[i] * gamma.data()[c] *
                                        sums.inv_std[static_cast<std::size_t>(c)]);
    });
  } else {
    statistics_gradient(dy, x, gamma, mean, sums.inv_std, sums.dy, sums.dy_xhat,
                        static_cast<double>(s.n() * s.h() * s.w()), dx);
  }
  store_sums(sums, dgamma, dbeta);
}

void RefBackend::batch_norm_statistics(const Tensor& x, Tensor& mean, Tensor& variance) {
  check_shape("batch_norm_statistics", "mean", mean.shape(), Shape{x.shape().c()});
  check_shape("batch_norm_statistics", "variance", variance.shape(), Shape{x.shape().c()});
  const Moments m = moments_of(x);
  for (std::size_t c = 0; c < m.mean.size(); ++c) {
    mean.data()[c] = static_cast<float>(m.mean[c]);
    variance.data()[c] = static_cast<float>(m.variance[c]);
  }
}

void RefBackend::batch_norm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                            const Tensor& variance, float epsilon, Tensor& dgamma,
                                            Tensor& dbeta) {
  check_shape("batch_norm_backward_reduce", "dy", dy.shape(), x.shape());
  const GradientSums sums = gradient_sums(dy, x, mean, variance, epsilon);
  store_sums(sums, dgamma, dbeta);
}

void RefBackend::batch_norm_backward_data(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                          const Tensor& mean, const Tensor& variance, float epsilon,
                                          const Tensor& sum_dy_xhat, const Tensor& sum_dy,
                                          std::int64_t count, Tensor& dx) {
  check_shape("batch_norm_backward_data", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward_data", "dx", dx.shape(), x.shape());
  LABPOSE_ASSERT(count > 0);
  const auto channels = static_cast<std::size_t>(x.shape().c());
  const std::vector<double> inv_std = inverse_stds(variance, epsilon);
  const std::vector<double> dy_sum(sum_dy.data(), sum_dy.data() + channels),
      dy_xhat_sum(sum_dy_xhat.data(), sum_dy_xhat.data() + channels);
  statistics_gradient(dy, x, gamma, mean, inv_std, dy_sum, dy_xhat_sum, static_cast<double>(count),
                      dx);
}

}  // namespace labpose::nets::ref
