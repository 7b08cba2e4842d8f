// Reference backend: host memory in logical NCHW order, so host copies are plain copies.
#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "nets/ref/backend.hpp"

namespace labpose::nets::ref {

Tensor RefBackend::allocate(const Shape& shape) {
  return Tensor(allocate_host_storage(static_cast<std::size_t>(shape.elements()) * sizeof(float)),
                0, shape, shape.rank() == 4 ? Layout::nchw : Layout::flat);
}

Tensor RefBackend::allocate_flat(std::int64_t count) {
  return Tensor(allocate_host_storage(static_cast<std::size_t>(count) * sizeof(float)), 0,
                Shape{count}, Layout::flat);
}

void RefBackend::copy_from_host(const float* host, Tensor& t) {
  std::memcpy(t.data(), host, static_cast<std::size_t>(t.elements()) * sizeof(float));
}

void RefBackend::copy_pixels_from_host(const std::uint8_t* pixels, Tensor& t) {
  const Shape& s = t.shape();
  LABPOSE_ASSERT(s.rank() == 4);
  const std::int64_t plane = s.h() * s.w();
  float* out = t.data();
  for (std::int64_t n = 0; n < s.n(); ++n) {
    for (std::int64_t c = 0; c < s.c(); ++c) {
      for (std::int64_t i = 0; i < plane; ++i)
        out[(n * s.c() + c) * plane + i] = pixels[(n * plane + i) * s.c() + c];
    }
  }
}

void RefBackend::copy_to_host(const Tensor& t, float* host) {
  std::memcpy(host, t.data(), static_cast<std::size_t>(t.elements()) * sizeof(float));
}

void RefBackend::copy(const Tensor& src, Tensor& dst) {
  check_shape("copy", "dst", dst.shape(), src.shape());
  if (src.data() != dst.data()) {
    std::memmove(dst.data(), src.data(), static_cast<std::size_t>(src.elements()) * sizeof(float));
  }
}

void RefBackend::fill(Tensor& t, float value) {
  std::fill(t.data(), t.data() + t.elements(), value);
}

}  // namespace labpose::nets::ref
