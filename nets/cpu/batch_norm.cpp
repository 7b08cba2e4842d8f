// CPU batch normalization on oneDNN (NHWC); running statistics are updated here, as PyTorch does.
// The pieces of batch norm over several ranks (statistics, gradient sums, the gradient from the
// ranks' totals) are OpenMP loops: oneDNN has no such primitives.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "nets/cpu/bf16_channel_loops.hpp"
#include "nets/cpu/dnnl_state.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/cpu/elements.hpp"

namespace labpose::nets::cpu {
namespace {

using namespace dnnl;

struct NormEntry : CacheEntry {
  primitive run;
  memory data, other, diff_data, scale, shift, mean, variance, diff_scale, diff_shift;
};

std::string key_of(const char* op, const Tensor& x, float epsilon) {
  return fmt::format("{}|{}|{}|{}", op, x.shape().text(), epsilon, elements_key({&x}));
}

// oneDNN's batch norm reads and writes one element type: the layers' values and gradients of a
// net, all fp32 or all bf16 (Backend::allocate_activation).
void check_elements(const char* op, std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (t->element() != (*tensors.begin())->element()) {
      throw Error(fmt::format("internal error: {} got tensors of different element types ({})", op,
                              elements_key(tensors)),
                  "this is a bug in labpose, not in your data; please report it");
    }
  }
}

memory::desc channel_desc(const Shape& x) {
  return memory::desc({x.c()}, memory::data_type::f32, memory::format_tag::a);
}

// Batch normalization forward: with `training`, oneDNN computes the batch mean and variance into
// `mean`/`variance`; otherwise it reads them (running statistics).
void normalization_forward(CpuBackend::State& s, bool training, const Tensor& x,
                           const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                           const Tensor& variance, float epsilon, Tensor& y) {
  const char* op = training ? "batch_norm_forward_training" : "batch_norm_forward_inference";
  check_shape(op, "y", y.shape(), x.shape());
  check_elements(op, {&x, &y});
  with_dnnl_errors(op, x.shape().text(), [&] {
    auto& e = s.cached<NormEntry>(key_of(op, x, epsilon), [&] {
      auto entry = std::make_unique<NormEntry>();
      auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
      if (!training) flags = flags | normalization_flags::use_global_stats;
      const auto pd = batch_norm_forward_pd(
          s.engine, training ? prop_kind::forward_training : prop_kind::forward_inference,
          desc_of(x), epsilon, flags);
      entry->run = batch_normalization_forward(pd);
      for (memory* m : {&entry->data, &entry->other}) {
        *m = memory(desc_of(x), s.engine, DNNL_MEMORY_NONE);
      }
      for (memory* m : {&entry->scale, &entry->shift, &entry->mean, &entry->variance}) {
        *m = memory(channel_desc(x.shape()), s.engine, DNNL_MEMORY_NONE);
      }
      return entry;
    });
    bind(e.data, x);
    bind(e.other, y);
    bind(e.scale, gamma);
    bind(e.shift, beta);
    bind(e.mean, mean);
    bind(e.variance, variance);
    e.run.execute(s.stream, {{DNNL_ARG_SRC, e.data},
                             {DNNL_ARG_DST, e.other},
                             {DNNL_ARG_SCALE, e.scale},
                             {DNNL_ARG_SHIFT, e.shift},
                             {DNNL_ARG_MEAN, e.mean},
                             {DNNL_ARG_VARIANCE, e.variance}});
    s.stream.wait();
  });
}

// 1 / sqrt(variance + epsilon), per channel.
std::vector<double> inverse_std(const Tensor& variance, float epsilon) {
  std::vector<double> inverse(static_cast<std::size_t>(variance.elements()));
  for (std::size_t c = 0; c < inverse.size(); ++c)
    inverse[c] = 1.0 / std::sqrt(double{variance.data()[c]} + epsilon);
  return inverse;
}

std::int64_t pixels_of(const Shape& s) {
  return s.n() * s.h() * s.w();
}

// Batch norm of bf16 values is labpose's own loops (bf16_channel_loops.hpp): oneDNN's reads and
// writes the values more often than they need, and is a generic loop where C is not a multiple of
// 16 (EfficientNet-Lite's 24 and 40: 18 ms against 3 for its fp32 kernel).
// y = (x - mean) / sqrt(variance + epsilon) · gamma + beta on bf16 values.
void normalize_bf16(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& mean,
                    const Tensor& variance, float epsilon, Tensor& y) {
  const std::vector<double> inverse = inverse_std(variance, epsilon);
  std::vector<float> scale(inverse.size()), offset(inverse.size());
  for (std::size_t c = 0; c < inverse.size(); ++c) {
    const double k = gamma.data()[c] * inverse[c];
    scale[c] = static_cast<float>(k);
    offset[c] = static_cast<float>(beta.data()[c] - k * mean.data()[c]);
  }
  bf16_channel_affine(bf16_bits_of(x), bf16_bits_of(y), pixels_of(x.shape()), x.shape().c(),
                      scale.data(), offset.data());
}

}  // namespace

void CpuBackend::batch_norm_forward_inference(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, const Tensor& running_mean,
                                              const Tensor& running_var, float epsilon, Tensor& y) {
  check_shape("batch_norm_forward_inference", "y", y.shape(), x.shape());
  check_elements("batch_norm_forward_inference", {&x, &y});
  if (all_bf16({&x})) {
    normalize_bf16(x, gamma, beta, running_mean, running_var, epsilon, y);
    return;
  }
  normalization_forward(state(), false, x, gamma, beta, running_mean, running_var, epsilon, y);
}

void CpuBackend::batch_norm_forward_training(const Tensor& x, const Tensor& gamma,
                                             const Tensor& beta, float epsilon, float momentum,
                                             Tensor& y, Tensor& saved_mean, Tensor& saved_variance,
                                             Tensor& running_mean, Tensor& running_var) {
  check_shape("batch_norm_forward_training", "y", y.shape(), x.shape());
  check_elements("batch_norm_forward_training", {&x, &y});
  if (all_bf16({&x})) {
    batch_norm_statistics(x, saved_mean, saved_variance);
    normalize_bf16(x, gamma, beta, saved_mean, saved_variance, epsilon, y);
  } else {
    normalization_forward(state(), true, x, gamma, beta, saved_mean, saved_variance, epsilon, y);
  }
  const double count = static_cast<double>(x.shape().n() * x.shape().h() * x.shape().w());
  const double unbias = count > 1 ? count / (count - 1) : 1.0;
  for (std::int64_t c = 0; c < x.shape().c(); ++c) {
    running_mean.data()[c] = static_cast<float>((1.0 - momentum) * running_mean.data()[c] +
                                                double{momentum} * saved_mean.data()[c]);
    running_var.data()[c] =
        static_cast<float>((1.0 - momentum) * running_var.data()[c] +
                           double{momentum} * saved_variance.data()[c] * unbias);
  }
}

void CpuBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                     const Tensor& mean, const Tensor& variance, float epsilon,
                                     bool constant_statistics, Tensor& dx, Tensor& dgamma,
                                     Tensor& dbeta) {
  check_shape("batch_norm_backward", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward", "dx", dx.shape(), x.shape());
  check_elements("batch_norm_backward", {&x, &dy, &dx});
  if (all_bf16({&x})) {
    batch_norm_backward_reduce(dy, x, mean, variance, epsilon, dgamma, dbeta);
    const std::int64_t count = pixels_of(x.shape());
    if (!constant_statistics) {
      batch_norm_backward_data(dy, x, gamma, mean, variance, epsilon, dgamma, dbeta, count, dx);
      return;
    }
    // Constant statistics: dx = gamma / sqrt(variance + epsilon) · dy.
    const std::vector<double> inverse = inverse_std(variance, epsilon);
    std::vector<float> scale(inverse.size()), zero(inverse.size(), 0.0F);
    for (std::size_t c = 0; c < inverse.size(); ++c)
      scale[c] = static_cast<float>(gamma.data()[c] * inverse[c]);
    bf16_norm_gradient(bf16_bits_of(x), bf16_bits_of(dy), bf16_bits_of(dx), count, x.shape().c(),
                       scale.data(), zero.data(), mean.data(), zero.data());
    return;
  }
  State& s = state();
  with_dnnl_errors("batch_norm_backward", x.shape().text(), [&] {
    auto& e = s.cached<NormEntry>(
        key_of(constant_statistics ? "bn_backward_global" : "bn_backward", x, epsilon), [&] {
          auto entry = std::make_unique<NormEntry>();
          auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
          if (constant_statistics) flags = flags | normalization_flags::use_global_stats;
          const auto hint = batch_norm_forward_pd(s.engine, prop_kind::forward_training, desc_of(x),
                                                  epsilon, flags);
          const auto pd = batch_norm_backward_pd(s.engine, desc_of(x), epsilon, flags, hint);
          entry->run = batch_normalization_backward(pd);
          for (memory* m : {&entry->data, &entry->other, &entry->diff_data}) {
            *m = memory(desc_of(x), s.engine, DNNL_MEMORY_NONE);
          }
          for (memory* m : {&entry->scale, &entry->shift, &entry->mean, &entry->variance,
                            &entry->diff_scale, &entry->diff_shift}) {
            *m = memory(channel_desc(x.shape()), s.engine, DNNL_MEMORY_NONE);
          }
          return entry;
        });
    bind(e.data, x);
    bind(e.other, dy);
    bind(e.diff_data, dx);
    bind(e.scale, gamma);
    bind(e.mean, mean);
    bind(e.variance, variance);
    bind(e.diff_scale, dgamma);
    bind(e.diff_shift, dbeta);
    Args args{{DNNL_ARG_SRC, e.data},
              {DNNL_ARG_DIFF_DST, e.other},
              {DNNL_ARG_SCALE, e.scale},
              {DNNL_ARG_MEAN, e.mean},
              {DNNL_ARG_VARIANCE, e.variance},
              {DNNL_ARG_DIFF_SRC, e.diff_data},
              {DNNL_ARG_DIFF_SCALE, e.diff_scale},
              {DNNL_ARG_DIFF_SHIFT, e.diff_shift}};
    if (kBatchNormBackwardTakesShift) {
      bind(e.shift, gamma);  // not read
      args.emplace(DNNL_ARG_SHIFT, e.shift);
    }
    e.run.execute(s.stream, args);
    s.stream.wait();
  });
}

namespace {

// Per-channel sums over the pixels of an NHWC tensor: terms(p, c, a, b) adds pixel p's part of
// channel c to the sums a and b. Each thread sums its pixels; the threads' sums are added in thread
// order, so the result does not change from run to run.
template <typename Terms>
void channel_sums(std::int64_t pixels, std::int64_t channels, const Terms& terms,
                  std::vector<double>& a, std::vector<double>& b) {
  const auto width = static_cast<std::size_t>(channels);
  const int threads = omp_get_max_threads();
  std::vector<double> partial(static_cast<std::size_t>(threads) * 2 * width, 0.0);
#pragma omp parallel num_threads(threads)
  {
    double* sums_a = partial.data() + static_cast<std::size_t>(omp_get_thread_num()) * 2 * width;
    double* sums_b = sums_a + width;
#pragma omp for schedule(static)
    for (std::int64_t p = 0; p < pixels; ++p) {
      for (std::int64_t c = 0; c < channels; ++c) terms(p, c, sums_a[c], sums_b[c]);
    }
  }
  a.assign(width, 0.0);
  b.assign(width, 0.0);
  for (int t = 0; t < threads; ++t) {
    const double* sums_a = partial.data() + static_cast<std::size_t>(t) * 2 * width;
    for (std::size_t c = 0; c < width; ++c) {
      a[c] += sums_a[c];
      b[c] += sums_a[width + c];
    }
  }
}

}  // namespace

void CpuBackend::batch_norm_statistics(const Tensor& x, Tensor& mean, Tensor& variance) {
  const Shape& s = x.shape();
  check_shape("batch_norm_statistics", "mean", mean.shape(), Shape{s.c()});
  check_shape("batch_norm_statistics", "variance", variance.shape(), Shape{s.c()});
  const std::int64_t pixels = s.n() * s.h() * s.w(), channels = s.c();
  if (all_bf16({&x})) {
    // Shifted by the first pixel's values, so that the variance keeps its digits.
    const auto width = static_cast<std::size_t>(channels);
    std::vector<float> shift(width);
    for (std::size_t c = 0; c < width && pixels > 0; ++c) shift[c] = bf16_value(bf16_bits_of(x)[c]);
    std::vector<double> sums(width), squares(width);
    bf16_channel_moments(bf16_bits_of(x), pixels, channels, shift.data(), sums.data(),
                         squares.data());
    for (std::size_t c = 0; c < width; ++c) {
      const double offset = sums[c] / static_cast<double>(pixels);
      mean.data()[c] = static_cast<float>(shift[c] + offset);
      variance.data()[c] = static_cast<float>(
          std::max(0.0, squares[c] / static_cast<double>(pixels) - offset * offset));
    }
    return;
  }
  std::vector<double> sum, unused, squares;
  const float* in = x.data();
  channel_sums(
      pixels, channels,
      [&](std::int64_t p, std::int64_t c, double& a, double&) { a += in[p * channels + c]; }, sum,
      unused);
  for (double& v : sum) v /= static_cast<double>(pixels);
  channel_sums(
      pixels, channels,
      [&](std::int64_t p, std::int64_t c, double& a, double&) {
        const double d = in[p * channels + c] - sum[static_cast<std::size_t>(c)];
        a += d * d;
      },
      squares, unused);
  for (std::size_t c = 0; c < sum.size(); ++c) {
    mean.data()[c] = static_cast<float>(sum[c]);
    variance.data()[c] = static_cast<float>(squares[c] / static_cast<double>(pixels));
  }
}

void CpuBackend::batch_norm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                            const Tensor& variance, float epsilon, Tensor& dgamma,
                                            Tensor& dbeta) {
  check_shape("batch_norm_backward_reduce", "dy", dy.shape(), x.shape());
  check_elements("batch_norm_backward_reduce", {&x, &dy});
  const Shape& s = x.shape();
  const std::int64_t channels = s.c();
  const std::vector<double> inverse = inverse_std(variance, epsilon);
  const float* average = mean.data();
  if (all_bf16({&x, &dy})) {
    const auto width = static_cast<std::size_t>(channels);
    std::vector<double> sum_dy(width), sum_dy_centered(width);
    bf16_gradient_sums(bf16_bits_of(x), bf16_bits_of(dy), pixels_of(s), channels, average,
                       sum_dy.data(), sum_dy_centered.data());
    for (std::size_t c = 0; c < width; ++c) {
      dgamma.data()[c] = static_cast<float>(sum_dy_centered[c] * inverse[c]);
      dbeta.data()[c] = static_cast<float>(sum_dy[c]);
    }
    return;
  }
  std::vector<double> dy_xhat, dy_sum;
  const float *in = x.data(), *gradient = dy.data();
  channel_sums(
      pixels_of(s), channels,
      [&](std::int64_t p, std::int64_t c, double& a, double& b) {
        const std::int64_t i = p * channels + c;
        const double incoming = gradient[i];
        a += incoming * (in[i] - average[c]) * inverse[static_cast<std::size_t>(c)];
        b += incoming;
      },
      dy_xhat, dy_sum);
  for (std::size_t c = 0; c < dy_sum.size(); ++c) {
    dgamma.data()[c] = static_cast<float>(dy_xhat[c]);
    dbeta.data()[c] = static_cast<float>(dy_sum[c]);
  }
}

void CpuBackend::batch_norm_backward_data(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                          const Tensor& mean, const Tensor& variance, float epsilon,
                                          const Tensor& sum_dy_xhat, const Tensor& sum_dy,
                                          std::int64_t count, Tensor& dx) {
  check_shape("batch_norm_backward_data", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward_data", "dx", dx.shape(), x.shape());
  check_elements("batch_norm_backward_data", {&x, &dy, &dx});
  LABPOSE_ASSERT(count > 0);
  const Shape& s = x.shape();
  const std::int64_t pixels = s.n() * s.h() * s.w(), channels = s.c();
  const std::vector<double> inverse = inverse_std(variance, epsilon);
  // dx = scale * dy - shift - (x - mean) * slope, per channel.
  std::vector<float> scale(inverse.size()), shift(inverse.size()), slope(inverse.size());
  for (std::size_t c = 0; c < inverse.size(); ++c) {
    const double k = gamma.data()[c] * inverse[c];
    scale[c] = static_cast<float>(k);
    shift[c] = static_cast<float>(k * sum_dy.data()[c] / static_cast<double>(count));
    slope[c] =
        static_cast<float>(k * inverse[c] * sum_dy_xhat.data()[c] / static_cast<double>(count));
  }
  const float* average = mean.data();
  if (all_bf16({&x, &dy, &dx})) {
    bf16_norm_gradient(bf16_bits_of(x), bf16_bits_of(dy), bf16_bits_of(dx), pixels, channels,
                       scale.data(), shift.data(), average, slope.data());
    return;
  }
  const float *a = scale.data(), *b = shift.data(), *k = slope.data();
  const float *in = x.data(), *gradient = dy.data();
  float* out = dx.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pixels; ++p) {
    for (std::int64_t c = 0; c < channels; ++c) {
      const std::int64_t i = p * channels + c;
      out[i] = a[c] * gradient[i] - b[c] - (in[i] - average[c]) * k[c];
    }
  }
}

}  // namespace labpose::nets::cpu
