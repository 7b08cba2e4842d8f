// CUDA batch normalization: cuDNN's spatial batch norm for inference, training (it updates the
// running statistics with the unbiased variance, as PyTorch does) and the gradient with batch
// statistics; cuDNN saves 1 / sqrt(variance + eps) where the interface keeps the biased variance,
// so small kernels convert between the two. The gradient with constant statistics (frozen layers)
// and the pieces of batch norm over several ranks are own kernels: cuDNN has none. Batch norm of
// bf16 activations (a net training in bf16) is own kernels too: statistics summed in double, then
// one affine map per channel (op_math.hpp batch_norm_affine).
#include <fmt/core.h>

#include "core/error.hpp"
#include "cuda/kernels.hpp"
#include "cuda/operands.hpp"
#include "cuda/state.hpp"

namespace labpose::cuda {
namespace {

using nets::Shape;
using nets::Tensor;
using State = CudaBackend::State;

struct NormEntry : CacheEntry {
  TensorDescriptor data, statistics;  // x (NHWC) and the (1, C, 1, 1) per-channel parameters
};

const NormEntry& norm_descriptors(State& s, const Shape& shape, const std::string& context) {
  return s.cached<NormEntry>(fmt::format("batch_norm|{}", shape.text()), [&] {
    auto entry = std::make_unique<NormEntry>();
    entry->data = make_tensor_descriptor(DataType::f32, shape, context);
    cudnnTensorDescriptor_t statistics = nullptr;
    LABPOSE_CUDNN_CHECK(cudnn().CreateTensorDescriptor(&statistics), context);
    entry->statistics.reset(statistics);
    LABPOSE_CUDNN_CHECK(
        cudnn().DeriveBNTensorDescriptor(statistics, entry->data.get(), CUDNN_BATCHNORM_SPATIAL),
        context);
    return entry;
  });
}

std::shared_ptr<nets::Storage> channel_scratch(State& s, const Shape& shape) {
  return s.scratch(static_cast<std::size_t>(shape.c()) * sizeof(float));
}

// Doubles of scratch for the per-channel reductions over x.
std::shared_ptr<nets::Storage> reduction_scratch(State& s, const Shape& shape) {
  return s.scratch(static_cast<std::size_t>(kernels::channel_reduction_scratch_count(
                       shape.n() * shape.h() * shape.w(), shape.c())) *
                   sizeof(double));
}

bool all_fp32(std::initializer_list<const Tensor*> tensors) {
  for (const Tensor* t : tensors) {
    if (data_type(*t) != DataType::f32) return false;
  }
  return true;
}

std::int64_t rows_of(const Shape& shape) {
  return shape.n() * shape.h() * shape.w();
}

// y = x * scale + shift per channel, with batch norm's scale and shift from gamma, beta and the
// statistics (mean, biased variance): the arithmetic of bf16 batch norm, forward.
void normalize(State& s, const Tensor& x, const Tensor& gamma, const Tensor& beta,
               const float* mean, const float* variance, float epsilon, Tensor& y) {
  const Shape& shape = x.shape();
  const auto affine = s.scratch(static_cast<std::size_t>(2 * shape.c()) * sizeof(float));
  float* scale = affine->data();
  float* shift = scale + shape.c();
  kernels::batch_norm_affine(device_data(gamma), device_data(beta), mean, variance, epsilon, scale,
                             shift, shape.c(), s.queue());
  kernels::channel_affine(data_type(x), device_bytes(x), data_type(y), device_bytes(y), scale,
                          shift, rows_of(shape), shape.c(), s.queue());
}

}  // namespace

void CudaBackend::batch_norm_forward_inference(const Tensor& x, const Tensor& gamma,
                                               const Tensor& beta, const Tensor& running_mean,
                                               const Tensor& running_var, float epsilon,
                                               Tensor& y) {
  check_shape("batch_norm_forward_inference", "y", y.shape(), x.shape());
  const std::string context = fmt::format("batch_norm_forward_inference ({})", x.shape().text());
  State& s = state();
  s.activate();
  if (!all_fp32({&x, &y})) {
    normalize(s, x, gamma, beta, device_data(running_mean), device_data(running_var), epsilon, y);
    return;
  }
  const NormEntry& e = norm_descriptors(s, x.shape(), context);
  const float one = 1.0F, zero = 0.0F;
  LABPOSE_CUDNN_CHECK(
      cudnn().BatchNormalizationForwardInference(
          s.cudnn.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, e.data.get(), device_data(x),
          e.data.get(), device_data(y), e.statistics.get(), device_data(gamma), device_data(beta),
          device_data(running_mean), device_data(running_var), epsilon),
      context);
}

void CudaBackend::batch_norm_forward_training(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, float epsilon, float momentum,
                                              Tensor& y, Tensor& saved_mean, Tensor& saved_variance,
                                              Tensor& running_mean, Tensor& running_var) {
  check_shape("batch_norm_forward_training", "y", y.shape(), x.shape());
  const std::string context = fmt::format("batch_norm_forward_training ({})", x.shape().text());
  State& s = state();
  s.activate();
  if (!all_fp32({&x, &y})) {
    const Shape& shape = x.shape();
    const auto scratch = reduction_scratch(s, shape);
    kernels::batch_norm_statistics(data_type(x), device_bytes(x), device_data(saved_mean),
                                   device_data(saved_variance), rows_of(shape), shape.c(),
                                   reinterpret_cast<double*>(scratch->data()), s.queue());
    kernels::update_running_statistics(device_data(saved_mean), device_data(saved_variance),
                                       device_data(running_mean), device_data(running_var),
                                       rows_of(shape), momentum, shape.c(), s.queue());
    normalize(s, x, gamma, beta, device_data(saved_mean), device_data(saved_variance), epsilon, y);
    return;
  }
  const NormEntry& e = norm_descriptors(s, x.shape(), context);
  const auto inverse = channel_scratch(s, x.shape());
  const float one = 1.0F, zero = 0.0F;
  LABPOSE_CUDNN_CHECK(
      cudnn().BatchNormalizationForwardTraining(
          s.cudnn.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, e.data.get(), device_data(x),
          e.data.get(), device_data(y), e.statistics.get(), device_data(gamma), device_data(beta),
          momentum, device_data(running_mean), device_data(running_var), epsilon,
          device_data(saved_mean), inverse->data()),
      context);
  kernels::variance_from_inverse_std(inverse->data(), device_data(saved_variance), x.shape().c(),
                                     epsilon, s.queue());
}

void CudaBackend::batch_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                      const Tensor& mean, const Tensor& variance, float epsilon,
                                      bool constant_statistics, Tensor& dx, Tensor& dgamma,
                                      Tensor& dbeta) {
  check_shape("batch_norm_backward", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward", "dx", dx.shape(), x.shape());
  const std::string context = fmt::format("batch_norm_backward ({})", x.shape().text());
  State& s = state();
  s.activate();
  const Shape& shape = x.shape();
  const auto inverse = channel_scratch(s, shape);
  kernels::inverse_std(device_data(variance), inverse->data(), shape.c(), epsilon, s.queue());
  const DataType type = data_type(x);
  if (constant_statistics || !all_fp32({&dy, &x, &dx})) {
    const InputAs gradient(s, dy, type);
    OutputAs input_gradient(s, dx, type);
    const auto scratch = reduction_scratch(s, shape);
    if (constant_statistics) {
      kernels::batch_norm_frozen_backward(
          type, gradient.data(), device_bytes(x), device_data(gamma), device_data(mean),
          inverse->data(), input_gradient.data(), device_data(dgamma), device_data(dbeta),
          rows_of(shape), shape.c(), reinterpret_cast<double*>(scratch->data()), s.queue());
    } else {
      // dgamma and dbeta are the sums of dy * xhat and dy the input gradient needs.
      kernels::batch_norm_gradient_sums(type, gradient.data(), device_bytes(x), device_data(mean),
                                        inverse->data(), device_data(dgamma), device_data(dbeta),
                                        rows_of(shape), shape.c(),
                                        reinterpret_cast<double*>(scratch->data()), s.queue());
      kernels::batch_norm_backward_data(type, gradient.data(), device_bytes(x), device_data(gamma),
                                        device_data(mean), inverse->data(), device_data(dgamma),
                                        device_data(dbeta), static_cast<float>(rows_of(shape)),
                                        input_gradient.data(), rows_of(shape), shape.c(),
                                        s.queue());
    }
    input_gradient.finish();
    return;
  }
  const NormEntry& e = norm_descriptors(s, shape, context);
  const float one = 1.0F, zero = 0.0F;
  LABPOSE_CUDNN_CHECK(
      cudnn().BatchNormalizationBackward(
          s.cudnn.get(), CUDNN_BATCHNORM_SPATIAL, &one, &zero, &one, &zero, e.data.get(),
          device_data(x), e.data.get(), device_data(dy), e.data.get(), device_data(dx),
          e.statistics.get(), device_data(gamma), device_data(dgamma), device_data(dbeta), epsilon,
          device_data(mean), inverse->data()),
      context);
}

void CudaBackend::batch_norm_statistics(const Tensor& x, Tensor& mean, Tensor& variance) {
  const Shape& shape = x.shape();
  check_shape("batch_norm_statistics", "mean", mean.shape(), Shape{shape.c()});
  check_shape("batch_norm_statistics", "variance", variance.shape(), Shape{shape.c()});
  State& s = state();
  s.activate();
  const auto scratch = reduction_scratch(s, shape);
  kernels::batch_norm_statistics(data_type(x), device_bytes(x), device_data(mean),
                                 device_data(variance), rows_of(shape), shape.c(),
                                 reinterpret_cast<double*>(scratch->data()), s.queue());
}

void CudaBackend::batch_norm_backward_reduce(const Tensor& dy, const Tensor& x, const Tensor& mean,
                                             const Tensor& variance, float epsilon, Tensor& dgamma,
                                             Tensor& dbeta) {
  check_shape("batch_norm_backward_reduce", "dy", dy.shape(), x.shape());
  State& s = state();
  s.activate();
  const Shape& shape = x.shape();
  const auto inverse = channel_scratch(s, shape);
  kernels::inverse_std(device_data(variance), inverse->data(), shape.c(), epsilon, s.queue());
  const auto scratch = reduction_scratch(s, shape);
  const InputAs gradient(s, dy, data_type(x));
  kernels::batch_norm_gradient_sums(data_type(x), gradient.data(), device_bytes(x),
                                    device_data(mean), inverse->data(), device_data(dgamma),
                                    device_data(dbeta), rows_of(shape), shape.c(),
                                    reinterpret_cast<double*>(scratch->data()), s.queue());
}

void CudaBackend::batch_norm_backward_data(const Tensor& dy, const Tensor& x, const Tensor& gamma,
                                           const Tensor& mean, const Tensor& variance,
                                           float epsilon, const Tensor& sum_dy_xhat,
                                           const Tensor& sum_dy, std::int64_t count, Tensor& dx) {
  check_shape("batch_norm_backward_data", "dy", dy.shape(), x.shape());
  check_shape("batch_norm_backward_data", "dx", dx.shape(), x.shape());
  LABPOSE_ASSERT(count > 0);
  State& s = state();
  s.activate();
  const Shape& shape = x.shape();
  const auto inverse = channel_scratch(s, shape);
  kernels::inverse_std(device_data(variance), inverse->data(), shape.c(), epsilon, s.queue());
  const DataType type = data_type(x);
  const InputAs gradient(s, dy, type);
  OutputAs input_gradient(s, dx, type);
  kernels::batch_norm_backward_data(type, gradient.data(), device_bytes(x), device_data(gamma),
                                    device_data(mean), inverse->data(), device_data(sum_dy_xhat),
                                    device_data(sum_dy), static_cast<float>(count),
                                    input_gradient.data(), rows_of(shape), shape.c(), s.queue());
  input_gradient.finish();
}

}  // namespace labpose::cuda
