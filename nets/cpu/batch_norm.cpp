// CPU batch normalization on oneDNN (NHWC); running statistics are updated here, as PyTorch does.
#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/cpu/dnnl_state.hpp"

namespace labpose::nets::cpu {
namespace {

using namespace dnnl;

struct NormEntry : CacheEntry {
  primitive run;
  memory data, other, diff_data, scale, shift, mean, variance, diff_scale, diff_shift;
};

std::string key_of(const char* op, const Shape& shape, float epsilon) {
  return fmt::format("{}|{}|{}", op, shape.text(), epsilon);
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
  with_dnnl_errors(op, x.shape().text(), [&] {
    auto& e = s.cached<NormEntry>(key_of(op, x.shape(), epsilon), [&] {
      auto entry = std::make_unique<NormEntry>();
      auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
      if (!training) flags = flags | normalization_flags::use_global_stats;
      batch_normalization_forward::primitive_desc pd(
          batch_normalization_forward::desc(
              training ? prop_kind::forward_training : prop_kind::forward_inference, desc_of(x),
              epsilon, flags),
          s.engine);
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

}  // namespace

void CpuBackend::batch_norm_forward_inference(const Tensor& x, const Tensor& gamma,
                                              const Tensor& beta, const Tensor& running_mean,
                                              const Tensor& running_var, float epsilon, Tensor& y) {
  normalization_forward(state(), false, x, gamma, beta, running_mean, running_var, epsilon, y);
}

void CpuBackend::batch_norm_forward_training(const Tensor& x, const Tensor& gamma,
                                             const Tensor& beta, float epsilon, float momentum,
                                             Tensor& y, Tensor& saved_mean, Tensor& saved_variance,
                                             Tensor& running_mean, Tensor& running_var) {
  normalization_forward(state(), true, x, gamma, beta, saved_mean, saved_variance, epsilon, y);
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
  State& s = state();
  with_dnnl_errors("batch_norm_backward", x.shape().text(), [&] {
    auto& e = s.cached<NormEntry>(
        key_of(constant_statistics ? "bn_backward_global" : "bn_backward", x.shape(), epsilon),
        [&] {
          auto entry = std::make_unique<NormEntry>();
          auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
          if (constant_statistics) flags = flags | normalization_flags::use_global_stats;
          batch_normalization_forward::primitive_desc hint(
              batch_normalization_forward::desc(prop_kind::forward_training, desc_of(x), epsilon,
                                                flags),
              s.engine);
          batch_normalization_backward::primitive_desc pd(
              batch_normalization_backward::desc(prop_kind::backward, desc_of(x), desc_of(x),
                                                 epsilon, flags),
              s.engine, hint);
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
    // oneDNN 2.6 wants a SHIFT argument with use_shift even though the gradient does not read it.
    bind(e.shift, gamma);
    bind(e.mean, mean);
    bind(e.variance, variance);
    bind(e.diff_scale, dgamma);
    bind(e.diff_shift, dbeta);
    e.run.execute(s.stream, {{DNNL_ARG_SRC, e.data},
                             {DNNL_ARG_DIFF_DST, e.other},
                             {DNNL_ARG_SCALE, e.scale},
                             {DNNL_ARG_SHIFT, e.shift},
                             {DNNL_ARG_MEAN, e.mean},
                             {DNNL_ARG_VARIANCE, e.variance},
                             {DNNL_ARG_DIFF_SRC, e.diff_data},
                             {DNNL_ARG_DIFF_SCALE, e.diff_scale},
                             {DNNL_ARG_DIFF_SHIFT, e.diff_shift}});
    s.stream.wait();
  });
}

}  // namespace labpose::nets::cpu
