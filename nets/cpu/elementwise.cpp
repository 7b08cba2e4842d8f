// CPU ReLU, addition, per-channel affine maps and score-map peaks (OpenMP loops; memory-bound), and
// max pooling on oneDNN (the backward re-runs the forward for the argmax workspace rather than
// keeping state).
#include <fmt/core.h>

#include "core/error.hpp"
#include "nets/cpu/dnnl_state.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/peaks.hpp"

namespace labpose::nets::cpu {

void CpuBackend::relu_forward(const Tensor& x, Tensor& y, float cap) {
  check_shape("relu_forward", "y", y.shape(), x.shape());
  const float* in = x.data();
  float* out = y.data();
  const std::int64_t count = x.elements();
  const float upper = cap > 0.0F ? cap : std::numeric_limits<float>::infinity();
  // Written without branches so that the loop vectorizes: a branch per element mispredicts on
  // activations that are half negative and costs several times the memory traffic.
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const float positive = in[i] < 0.0F ? 0.0F : in[i];  // NaN stays NaN, as in PyTorch
    out[i] = positive > upper ? upper : positive;
  }
}

void CpuBackend::relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) {
  check_shape("relu_backward", "dx", dx.shape(), y.shape());
  const float* gradient = dy.data();
  const float* out = y.data();
  float* result = dx.data();
  const std::int64_t count = y.elements();
  const float upper = cap > 0.0F ? cap : std::numeric_limits<float>::infinity();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) {
    const float value = out[i], incoming = gradient[i];  // both read: a select, not a branch
    result[i] = ((value > 0.0F) & (value < upper)) ? incoming : 0.0F;
  }
}

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  check_shape("add", "b", b.shape(), a.shape());
  check_shape("add", "y", y.shape(), a.shape());
  LABPOSE_ASSERT(a.layout() == b.layout() && a.layout() == y.layout());
  const float* left = a.data();
  const float* right = b.data();
  float* out = y.data();
  const std::int64_t count = a.elements();
#pragma omp parallel for simd schedule(static)
  for (std::int64_t i = 0; i < count; ++i) out[i] = left[i] + right[i];
}

void CpuBackend::channel_affine(const Tensor& x, const std::vector<float>& scale,
                                const std::vector<float>& shift, Tensor& y) {
  check_shape("channel_affine", "y", y.shape(), x.shape());
  const Shape& s = x.shape();
  LABPOSE_ASSERT(static_cast<std::int64_t>(scale.size()) == s.c() && shift.size() == scale.size());
  LABPOSE_ASSERT(x.layout() == Layout::nhwc && y.layout() == Layout::nhwc);
  const std::int64_t pixels = s.n() * s.h() * s.w(), channels = s.c();
  const float* in = x.data();
  float* out = y.data();
  const float* a = scale.data();
  const float* b = shift.data();
#pragma omp parallel for schedule(static)
  for (std::int64_t p = 0; p < pixels; ++p) {
    for (std::int64_t c = 0; c < channels; ++c)
      out[p * channels + c] = in[p * channels + c] * a[c] + b[c];
  }
}

namespace {

using namespace dnnl;

struct PoolEntry : CacheEntry {
  pooling_forward forward;
  pooling_backward backward;
  memory src, dst, workspace, diff_dst, diff_src, scratch_dst;
};

std::string pool_key(const char* op, const Shape& x, const PoolGeometry& g) {
  return fmt::format("{}|{}|k{}x{}s{}x{}p{},{},{},{}", op, x.text(), g.kernel_h, g.kernel_w,
                     g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right);
}

}  // namespace

void CpuBackend::max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& g) {
  check_shape("max_pool_forward", "y", y.shape(), max_pool_output_shape(x.shape(), g));
  State& s = state();
  with_dnnl_errors("max_pool_forward", x.shape().text(), [&] {
    auto& e = s.cached<PoolEntry>(pool_key("pool_forward", x.shape(), g), [&] {
      auto entry = std::make_unique<PoolEntry>();
      const auto pd = max_pool_forward_pd(s.engine, prop_kind::forward_inference, desc_of(x),
                                          desc_of(y), pool_window(g));
      entry->forward = pooling_forward(pd);
      entry->src = memory(desc_of(x), s.engine, DNNL_MEMORY_NONE);
      entry->dst = memory(desc_of(y), s.engine, DNNL_MEMORY_NONE);
      return entry;
    });
    bind(e.src, x);
    bind(e.dst, y);
    e.forward.execute(s.stream, {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_DST, e.dst}});
    s.stream.wait();
  });
}

void CpuBackend::max_pool_backward(const Tensor& dy, const Tensor& x, Tensor& dx,
                                   const PoolGeometry& g) {
  check_shape("max_pool_backward", "dy", dy.shape(), max_pool_output_shape(x.shape(), g));
  check_shape("max_pool_backward", "dx", dx.shape(), x.shape());
  State& s = state();
  with_dnnl_errors("max_pool_backward", x.shape().text(), [&] {
    auto& e = s.cached<PoolEntry>(pool_key("pool_backward", x.shape(), g), [&] {
      auto entry = std::make_unique<PoolEntry>();
      const auto hint = max_pool_forward_pd(s.engine, prop_kind::forward_training, desc_of(x),
                                            desc_of(dy), pool_window(g));
      const auto pd =
          max_pool_backward_pd(s.engine, desc_of(dx), desc_of(dy), pool_window(g), hint);
      entry->forward = pooling_forward(hint);
      entry->backward = pooling_backward(pd);
      entry->src = memory(desc_of(x), s.engine, DNNL_MEMORY_NONE);
      entry->scratch_dst = memory(desc_of(dy), s.engine);
      entry->workspace = memory(hint.workspace_desc(), s.engine);
      entry->diff_dst = memory(desc_of(dy), s.engine, DNNL_MEMORY_NONE);
      entry->diff_src = memory(desc_of(dx), s.engine, DNNL_MEMORY_NONE);
      return entry;
    });
    bind(e.src, x);
    bind(e.diff_dst, dy);
    bind(e.diff_src, dx);
    e.forward.execute(
        s.stream,
        {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_DST, e.scratch_dst}, {DNNL_ARG_WORKSPACE, e.workspace}});
    e.backward.execute(s.stream, {{DNNL_ARG_DIFF_DST, e.diff_dst},
                                  {DNNL_ARG_DIFF_SRC, e.diff_src},
                                  {DNNL_ARG_WORKSPACE, e.workspace}});
    s.stream.wait();
  });
}

void CpuBackend::find_peaks(const Tensor& score, const Tensor& locref, Tensor& peaks) {
  find_peaks_on_host(score, locref, peaks, true);
}

}  // namespace labpose::nets::cpu
