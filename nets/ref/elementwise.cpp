// Reference ReLU, max pooling, addition, per-channel affine maps and score-map peaks.
#include <limits>

#include "core/error.hpp"
#include "nets/peaks.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {

void RefBackend::relu_forward(const Tensor& x, Tensor& y, float cap) {
  check_shape("relu_forward", "y", y.shape(), x.shape());
  for (std::int64_t i = 0; i < x.elements(); ++i) {
    float v = x.data()[i] > 0.0F ? x.data()[i] : 0.0F;
    if (cap > 0.0F && v > cap) v = cap;
    y.data()[i] = v;
  }
}

void RefBackend::relu_backward(const Tensor& dy, const Tensor& y, Tensor& dx, float cap) {
  check_shape("relu_backward", "dx", dx.shape(), y.shape());
  for (std::int64_t i = 0; i < y.elements(); ++i) {
    const float v = y.data()[i];
    const bool passes = v > 0.0F && (cap <= 0.0F || v < cap);
    dx.data()[i] = passes ? dy.data()[i] : 0.0F;
  }
}

namespace {

// The flat NCHW index of the first maximum of window (n, c, p, q), or -1 for an empty window.
std::int64_t window_argmax(const Tensor& x, std::int64_t n, std::int64_t c, std::int64_t p,
                           std::int64_t q, const PoolGeometry& g) {
  const Shape& s = x.shape();
  std::int64_t best = -1;
  float best_value = -std::numeric_limits<float>::infinity();
  for (std::int64_t r = 0; r < g.kernel_h; ++r) {
    const std::int64_t h = p * g.stride_h - g.pad_top + r;
    if (h < 0 || h >= s.h()) continue;
    for (std::int64_t t = 0; t < g.kernel_w; ++t) {
      const std::int64_t w = q * g.stride_w - g.pad_left + t;
      if (w < 0 || w >= s.w()) continue;
      const std::int64_t index = ((n * s.c() + c) * s.h() + h) * s.w() + w;
      if (best < 0 || x.data()[index] > best_value) {
        best = index;
        best_value = x.data()[index];
      }
    }
  }
  return best;
}

}  // namespace

void RefBackend::max_pool_forward(const Tensor& x, Tensor& y, const PoolGeometry& g) {
  const Shape ys = max_pool_output_shape(x.shape(), g);
  check_shape("max_pool_forward", "y", y.shape(), ys);
  std::int64_t out = 0;
  for (std::int64_t n = 0; n < ys.n(); ++n) {
    for (std::int64_t c = 0; c < ys.c(); ++c) {
      for (std::int64_t p = 0; p < ys.h(); ++p) {
        for (std::int64_t q = 0; q < ys.w(); ++q) {
          const std::int64_t index = window_argmax(x, n, c, p, q, g);
          y.data()[out++] = index < 0 ? 0.0F : x.data()[index];
        }
      }
    }
  }
}

void RefBackend::max_pool_backward(const Tensor& dy, const Tensor& x, Tensor& dx,
                                   const PoolGeometry& g) {
  const Shape& ys = dy.shape();
  check_shape("max_pool_backward", "dy", ys, max_pool_output_shape(x.shape(), g));
  check_shape("max_pool_backward", "dx", dx.shape(), x.shape());
  fill(dx, 0.0F);
  std::int64_t out = 0;
  for (std::int64_t n = 0; n < ys.n(); ++n) {
    for (std::int64_t c = 0; c < ys.c(); ++c) {
      for (std::int64_t p = 0; p < ys.h(); ++p) {
        for (std::int64_t q = 0; q < ys.w(); ++q) {
          const std::int64_t index = window_argmax(x, n, c, p, q, g);
          if (index >= 0) dx.data()[index] += dy.data()[out];
          ++out;
        }
      }
    }
  }
}

void RefBackend::add(const Tensor& a, const Tensor& b, Tensor& y) {
  check_shape("add", "b", b.shape(), a.shape());
  check_shape("add", "y", y.shape(), a.shape());
  for (std::int64_t i = 0; i < a.elements(); ++i) y.data()[i] = a.data()[i] + b.data()[i];
}

void RefBackend::channel_affine(const Tensor& x, const std::vector<float>& scale,
                                const std::vector<float>& shift, Tensor& y) {
  check_shape("channel_affine", "y", y.shape(), x.shape());
  const Shape& s = x.shape();
  LABPOSE_ASSERT(static_cast<std::int64_t>(scale.size()) == s.c() && shift.size() == scale.size());
  const std::int64_t plane = s.h() * s.w();
  for (std::int64_t i = 0; i < s.elements(); ++i) {
    const auto c = static_cast<std::size_t>((i / plane) % s.c());
    y.data()[i] = x.data()[i] * scale[c] + shift[c];
  }
}

void RefBackend::find_peaks(const Tensor& score, const Tensor& locref, Tensor& peaks) {
  find_peaks_on_host(score, locref, peaks, false);
}

}  // namespace labpose::nets::ref
