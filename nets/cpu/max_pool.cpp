#include "nets/cpu/max_pool.hpp"

#include <atomic>
#include <cstdint>

#include "core/error.hpp"
#include "nets/cpu/kernel_switch.hpp"
#include "nets/cpu/thread_shares.hpp"

namespace labpose::nets::cpu {
namespace {

std::atomic<std::int64_t> made{0};

struct Rows {
  const std::int16_t* x;  // bf16 bit patterns
  std::int16_t* y;
  std::int64_t channels, h, w, out_h, out_w;
  PoolGeometry g;
};

LABPOSE_INLINE std::int64_t at_least(std::int64_t a, std::int64_t b) {
  return a > b ? a : b;
}
LABPOSE_INLINE std::int64_t at_most(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

// A bf16 pattern as a 16-bit integer that orders as its value (negative values' magnitude bits
// flipped); applied twice it gives the pattern back.
LABPOSE_INLINE std::int16_t key(std::int16_t v) {
  return static_cast<std::int16_t>(v ^ ((v >> 15) & 0x7fff));
}

// Output rows [first, first + count) (row = image · out_h + output row).
LABPOSE_CLONES void pool_rows(const Rows& r, std::int64_t first, std::int64_t count) {
  const std::int16_t* x = r.x;
  std::int16_t* y = r.y;
  const std::int64_t channels = r.channels;
  for (std::int64_t row = first; row < first + count; ++row) {
    const std::int64_t n = row / r.out_h, oy = row % r.out_h;
    const std::int64_t top = oy * r.g.stride_h - r.g.pad_top;
    const std::int64_t y0 = at_least(top, 0), y1 = at_most(top + r.g.kernel_h, r.h);
    for (std::int64_t ox = 0; ox < r.out_w; ++ox) {
      const std::int64_t left = ox * r.g.stride_w - r.g.pad_left;
      const std::int64_t x0 = at_least(left, 0), x1 = at_most(left + r.g.kernel_w, r.w);
      std::int16_t* out = y + ((n * r.out_h + oy) * r.out_w + ox) * channels;
      const std::int16_t* corner = x + ((n * r.h + y0) * r.w + x0) * channels;
      for (std::int64_t c = 0; c < channels; ++c) out[c] = key(corner[c]);
      for (std::int64_t iy = y0; iy < y1; ++iy) {
        for (std::int64_t ix = iy == y0 ? x0 + 1 : x0; ix < x1; ++ix) {
          const std::int16_t* in = x + ((n * r.h + iy) * r.w + ix) * channels;
          for (std::int64_t c = 0; c < channels; ++c) {
            const std::int16_t v = key(in[c]);
            out[c] = v > out[c] ? v : out[c];
          }
        }
      }
      for (std::int64_t c = 0; c < channels; ++c) out[c] = key(out[c]);
    }
  }
}

}  // namespace

void max_pool_bf16(const std::uint16_t* x, std::uint16_t* y, const Shape& in, const Shape& out,
                   const PoolGeometry& g) {
  LABPOSE_ASSERT(max_pool_output_shape(in, g) == out);
  LABPOSE_ASSERT(max_pool_bf16_applies(g));
  const Rows r{reinterpret_cast<const std::int16_t*>(x),
               reinterpret_cast<std::int16_t*>(y),
               in.c(),
               in.h(),
               in.w(),
               out.h(),
               out.w(),
               g};
  in_thread_shares(out.n() * out.h(), [&](std::int64_t, std::int64_t first, std::int64_t count) {
    pool_rows(r, first, count);
  });
}

bool max_pool_bf16_applies(const PoolGeometry& g) {
  return g.pad_top < g.kernel_h && g.pad_bottom < g.kernel_h && g.pad_left < g.kernel_w &&
         g.pad_right < g.kernel_w;
}

bool own_max_pool_enabled() {
  static const bool enabled = switched_on("LABPOSE_MAX_POOL");
  return enabled;
}

std::int64_t own_max_pools_made() {
  return made.load();
}

void count_own_max_pool() {
  ++made;
}

}  // namespace labpose::nets::cpu
