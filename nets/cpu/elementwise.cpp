// CPU ReLU, addition, per-channel affine maps and score-map peaks (OpenMP loops; memory-bound), and
// max pooling on oneDNN (the backward re-runs the forward for the argmax workspace rather than
// keeping state).
#include <fmt/core.h>
#include <omp.h>

#include "core/error.hpp"
#include "nets/cpu/dnnl_state.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/cpu/elements.hpp"
#include "nets/cpu/thread_shares.hpp"
#include "nets/peaks.hpp"

namespace labpose::nets::cpu {

namespace {

// The loops of the layers' bf16 values (a net training in bf16), on the 16 bits themselves where
// they can be: a bf16 ReLU is a compare of integers (positive bf16 order as their bits do), with no
// conversion. Compiled for AVX-512, AVX2 and the baseline, chosen when the program loads.
LABPOSE_CLONES void relu_bf16(const std::int16_t* in, std::int16_t* out, std::int64_t count,
                              std::int16_t upper) {
#pragma omp simd
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int16_t value = in[i];
    const bool nan = static_cast<std::int16_t>(value & 0x7fff) > 0x7f80;  // NaN stays NaN
    const std::int16_t clamped = value < 0 ? std::int16_t{0} : value > upper ? upper : value;
    out[i] = nan ? value : clamped;
  }
}

LABPOSE_CLONES void relu_backward_bf16(const std::int16_t* gradient, const std::int16_t* out,
                                       std::int16_t* result, std::int64_t count,
                                       std::int16_t upper) {
#pragma omp simd
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int16_t value = out[i], incoming = gradient[i];  // NaN: above upper, so 0
    result[i] = ((value > 0) & (value < upper)) ? incoming : std::int16_t{0};
  }
}

LABPOSE_CLONES void add_bf16(const std::uint16_t* left, const std::uint16_t* right,
                             std::uint16_t* out, std::int64_t count) {
#pragma omp simd
  for (std::int64_t i = 0; i < count; ++i)
    out[i] = bf16_bits(bf16_value(left[i]) + bf16_value(right[i]));
}

// The bits of the bf16 value an fp32 cap clamps to: +inf for none.
std::int16_t bf16_cap(float cap) {
  return static_cast<std::int16_t>(
      bf16_bits(cap > 0.0F ? cap : std::numeric_limits<float>::infinity()));
}

}  // namespace

void CpuBackend::relu_forward(const Tensor& x, Tensor& y, float cap) {
  check_shape("relu_forward", "y", y.shape(), x.shape());
  const std::int64_t count = x.elements();
  if (all_bf16({&x, &y})) {
    const auto* in = static_cast<const std::int16_t*>(x.raw());
    auto* out = static_cast<std::int16_t*>(y.raw());
    const std::int16_t upper = bf16_cap(cap);
    in_thread_shares(count, [&](std::int64_t, std::int64_t first, std::int64_t n) {
      relu_bf16(in + first, out + first, n, upper);
    });
    return;
  }
  const float upper = cap > 0.0F ? cap : std::numeric_limits<float>::infinity();
  // Written without branches so that the loop vectorizes: a branch per element mispredicts on
  // activations that are half negative and costs several times the memory traffic.
  with_elements(x, [&](auto in) {
    with_elements(y, [&](auto out) {
#pragma omp parallel for simd schedule(static)
      for (std::int64_t i = 0; i < count; ++i) {
        const float value = in.get(i);
        const float positive = value < 0.0F ? 0.0F : value;  // NaN stays NaN, as in PyTorch
        out.set(i, positive > upper ? upper : positive);
      }
    });
  });
}

void CpuBackend::relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) {
  check_shape("relu_backward", "dx", dx.shape(), y.shape());
  const std::int64_t count = y.elements();
  if (all_bf16({&dy, &y, &dx})) {
    const auto* gradient = static_cast<const std::int16_t*>(dy.raw());
    const auto* out = static_cast<const std::int16_t*>(y.raw());
    auto* result = static_cast<std::int16_t*>(dx.raw());
    const std::int16_t upper = bf16_cap(cap);
    in_thread_shares(count, [&](std::int64_t, std::int64_t first, std::int64_t n) {
      relu_backward_bf16(gradient + first, out + first, result + first, n, upper);
    });
    return;
  }
  const float upper = cap > 0.0F ? cap : std::numeric_limits<float>::infinity();
  with_elements(dy, [&](auto gradient) {
    with_elements(y, [&](auto out) {
      with_elements(dx, [&](auto result) {
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < count; ++i) {
          const float value = out.get(i), incoming = gradient.get(i);  // a select, not a branch
          result.set(i, ((value > 0.0F) & (value < upper)) ? incoming : 0.0F);
        }
      });
    });
  });
}

void CpuBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  check_shape("add", "b", b.shape(), a.shape());
  check_shape("add", "y", y.shape(), a.shape());
  LABPOSE_ASSERT(a.layout() == b.layout() && a.layout() == y.layout());
  const std::int64_t count = a.elements();
  if (all_bf16({&a, &b, &y})) {
    const auto* left = static_cast<const std::uint16_t*>(a.raw());
    const auto* right = static_cast<const std::uint16_t*>(b.raw());
    auto* out = static_cast<std::uint16_t*>(y.raw());
    in_thread_shares(count, [&](std::int64_t, std::int64_t first, std::int64_t n) {
      add_bf16(left + first, right + first, out + first, n);
    });
    return;
  }
  with_elements(a, [&](auto left) {
    with_elements(b, [&](auto right) {
      with_elements(y, [&](auto out) {
#pragma omp parallel for simd schedule(static)
        for (std::int64_t i = 0; i < count; ++i) out.set(i, left.get(i) + right.get(i));
      });
    });
  });
}

void CpuBackend::channel_affine(const Tensor& x, const std::vector<float>& scale,
                                const std::vector<float>& shift, Tensor& y) {
  check_shape("channel_affine", "y", y.shape(), x.shape());
  const Shape& s = x.shape();
  LABPOSE_ASSERT(static_cast<std::int64_t>(scale.size()) == s.c() && shift.size() == scale.size());
  LABPOSE_ASSERT(x.layout() == Layout::nhwc && y.layout() == Layout::nhwc);
  const std::int64_t pixels = s.n() * s.h() * s.w(), channels = s.c();
  const float* a = scale.data();
  const float* b = shift.data();
  with_elements(x, [&](auto in) {
    with_elements(y, [&](auto out) {
#pragma omp parallel for schedule(static)
      for (std::int64_t p = 0; p < pixels; ++p) {
        for (std::int64_t c = 0; c < channels; ++c)
          out.set(p * channels + c, in.get(p * channels + c) * a[c] + b[c]);
      }
    });
  });
}

namespace {

using namespace dnnl;

struct PoolEntry : CacheEntry {
  pooling_forward forward;
  pooling_backward backward;
  memory src, dst, workspace, diff_dst, diff_src, scratch_dst;
};

std::string pool_key(const char* op, const Shape& x, const PoolGeometry& g,
                     const std::string& elements) {
  return fmt::format("{}|{}|k{}x{}s{}x{}p{},{},{},{}|{}", op, x.text(), g.kernel_h, g.kernel_w,
                     g.stride_h, g.stride_w, g.pad_top, g.pad_left, g.pad_bottom, g.pad_right,
                     elements);
}

}  // namespace

void CpuBackend::max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& g) {
  check_shape("max_pool_forward", "y", y.shape(), max_pool_output_shape(x.shape(), g));
  State& s = state();
  with_dnnl_errors("max_pool_forward", x.shape().text(), [&] {
    auto& e =
        s.cached<PoolEntry>(pool_key("pool_forward", x.shape(), g, elements_key({&x, &y})), [&] {
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
    auto& e = s.cached<PoolEntry>(
        pool_key("pool_backward", x.shape(), g, elements_key({&x, &dy, &dx})), [&] {
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
