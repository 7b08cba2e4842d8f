#include "nets/cpu/winograd.hpp"

// GCC 12 reports the intrinsics' own deliberately undefined vectors (`__Y = __Y`) as
// maybe-uninitialized where they are inlined; the warning's location is in this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "nets/cpu/backend.hpp"

#define LABPOSE_BF16_KERNEL __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512bf16")))

namespace labpose::nets::cpu {
namespace {

constexpr int kPoints = 16;            // the transformed 4×4 tile
constexpr std::int64_t kRows = 14;     // tiles per matrix-product kernel call (28 accumulators)
constexpr std::int64_t kColumns = 32;  // output channels per kernel call (two vectors of 16)
// Bytes of transformed inputs one block keeps: within the per-core cache beside the weights.
constexpr std::int64_t kBlockBytes = 384 * 1024;

// `value` rounded to the nearest bf16 (ties to even), as its 16 bits.
std::uint16_t to_bf16(float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fffU + ((bits >> 16) & 1U);
  return static_cast<std::uint16_t>(bits >> 16);
}

// G g Gᵀ for one 3×3 filter g (row-major): the 16 transformed weights, row-major 4×4.
std::array<float, kPoints> transform_filter(const float* g) {
  // G = [[1, 0, 0], [1/2, 1/2, 1/2], [1/2, -1/2, 1/2], [0, 0, 1]]
  constexpr double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  double gg[4][3] = {};
  for (int a = 0; a < 4; ++a) {
    for (int s = 0; s < 3; ++s) {
      for (int r = 0; r < 3; ++r) gg[a][s] += G[a][r] * g[r * 3 + s];
    }
  }
  std::array<float, kPoints> u{};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      double sum = 0;
      for (int s = 0; s < 3; ++s) sum += gg[a][s] * G[b][s];
      u[static_cast<std::size_t>(a * 4 + b)] = static_cast<float>(sum);
    }
  }
  return u;
}

LABPOSE_BF16_KERNEL inline __m512 load_bf16(const std::uint16_t* p) {
  const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
}

LABPOSE_BF16_KERNEL inline void store_bf16(std::uint16_t* p, __m512 v) {
  const __m256bh h = _mm512_cvtneps_pbh(v);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<const __m256i&>(h));
}

// Bᵀ d B over 4 vectors in place: rows (0, 1, 2, 3) → (d0 − d2, d1 + d2, d2 − d1, d1 − d3).
LABPOSE_BF16_KERNEL inline void input_1d(__m512& d0, __m512& d1, __m512& d2, __m512& d3) {
  const __m512 t0 = _mm512_sub_ps(d0, d2), t1 = _mm512_add_ps(d1, d2);
  const __m512 t2 = _mm512_sub_ps(d2, d1), t3 = _mm512_sub_ps(d1, d3);
  d0 = t0;
  d1 = t1;
  d2 = t2;
  d3 = t3;
}

LABPOSE_BF16_KERNEL inline __m512 activate(__m512 v, float cap) {
  if (cap < 0) return v;
  v = _mm512_max_ps(v, _mm512_setzero_ps());
  return cap > 0 ? _mm512_min_ps(v, _mm512_set1_ps(cap)) : v;
}

// sums[t][0..31] = Σ_c v[t][c] · u[c][0..31] for kRows tiles: v is kRows rows of `channels` bf16
// (`row_stride` apart), u the weights of 32 output channels in channel pairs ([C/2][32][2]).
LABPOSE_BF16_KERNEL void multiply(const std::uint16_t* v, std::int64_t row_stride,
                                  const std::uint16_t* u, std::int64_t channels, float* sums) {
  __m512 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < channels; c += 2) {
    const auto w0 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(u));
    const auto w1 = reinterpret_cast<__m512bh>(_mm512_loadu_si512(u + 32));
    u += 64;
#pragma GCC unroll 14
    for (std::int64_t t = 0; t < kRows; ++t) {
      std::int32_t pair = 0;
      std::memcpy(&pair, v + t * row_stride + c, sizeof pair);
      const auto b = reinterpret_cast<__m512bh>(_mm512_set1_epi32(pair));
      acc[t][0] = _mm512_dpbf16_ps(acc[t][0], b, w0);
      acc[t][1] = _mm512_dpbf16_ps(acc[t][1], b, w1);
    }
  }
  for (std::int64_t t = 0; t < kRows; ++t) {
    _mm512_storeu_ps(sums + t * kColumns, acc[t][0]);
    _mm512_storeu_ps(sums + t * kColumns + 16, acc[t][1]);
  }
}

struct Block {
  const std::uint16_t* x;
  std::uint16_t* y;
  std::int64_t h, w, channels, outputs, out_h, out_w;
  int pad_top, pad_left, dilation;
  float activation, activation_after;
};

// The transformed inputs of one tile into v (16 points, `point_stride` apart, 16 channels each).
LABPOSE_BF16_KERNEL void transform_input(const Block& b, std::int32_t n, std::int32_t oy,
                                         std::int32_t ox, std::uint16_t* v,
                                         std::int64_t point_stride) {
  const std::int64_t y0 = oy - b.pad_top, x0 = ox - b.pad_left;
  bool row_in[4], column_in[4];
  for (int a = 0; a < 4; ++a) {
    const std::int64_t iy = y0 + a * b.dilation, ix = x0 + a * b.dilation;
    row_in[a] = iy >= 0 && iy < b.h;
    column_in[a] = ix >= 0 && ix < b.w;
  }
  const std::int64_t base = ((n * b.h + y0) * b.w + x0) * b.channels;
  const std::int64_t step_y = b.dilation * b.w * b.channels, step_x = b.dilation * b.channels;
  for (std::int64_t c = 0; c < b.channels; c += 16) {
    __m512 d[4][4];
    for (int a = 0; a < 4; ++a) {
      for (int e = 0; e < 4; ++e) {
        d[a][e] = row_in[a] && column_in[e] ? load_bf16(b.x + base + a * step_y + e * step_x + c)
                                            : _mm512_setzero_ps();
      }
    }
    for (int e = 0; e < 4; ++e) input_1d(d[0][e], d[1][e], d[2][e], d[3][e]);
    for (int a = 0; a < 4; ++a) input_1d(d[a][0], d[a][1], d[a][2], d[a][3]);
    for (int a = 0; a < 4; ++a) {
      for (int e = 0; e < 4; ++e) store_bf16(v + (a * 4 + e) * point_stride + c, d[a][e]);
    }
  }
}

// Aᵀ m A for one tile and 16 output channels (m: the 16 points' sums, `point_stride` apart),
// plus the bias and activations, into the tile's output pixels that exist.
LABPOSE_BF16_KERNEL void transform_output(const Block& b, std::int32_t n, std::int32_t oy,
                                          std::int32_t ox, const float* m,
                                          std::int64_t point_stride, const float* bias,
                                          std::int64_t k) {
  __m512 s[2][4];
  for (int e = 0; e < 4; ++e) {
    const __m512 m0 = _mm512_loadu_ps(m + (0 * 4 + e) * point_stride);
    const __m512 m1 = _mm512_loadu_ps(m + (1 * 4 + e) * point_stride);
    const __m512 m2 = _mm512_loadu_ps(m + (2 * 4 + e) * point_stride);
    const __m512 m3 = _mm512_loadu_ps(m + (3 * 4 + e) * point_stride);
    s[0][e] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
    s[1][e] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
  }
  const __m512 beta = _mm512_loadu_ps(bias + k);
  for (int i = 0; i < 2; ++i) {
    const std::int64_t y = oy + i * b.dilation;
    if (y >= b.out_h) continue;
    const __m512 out[2] = {_mm512_add_ps(_mm512_add_ps(s[i][0], s[i][1]), s[i][2]),
                           _mm512_sub_ps(_mm512_sub_ps(s[i][1], s[i][2]), s[i][3])};
    for (int j = 0; j < 2; ++j) {
      const std::int64_t x = ox + j * b.dilation;
      if (x >= b.out_w) continue;
      const __m512 value =
          activate(activate(_mm512_add_ps(out[j], beta), b.activation), b.activation_after);
      store_bf16(b.y + ((n * b.out_h + y) * b.out_w + x) * b.outputs + k, value);
    }
  }
}

std::atomic<std::int64_t> made{0};  // WinogradConv objects made

}  // namespace

std::int64_t winograd_convolutions_made() {
  return made.load();
}

bool winograd_applies(const Shape& weights, const ConvGeometry& g) {
  return weights.rank() == 4 && weights[2] == 3 && weights[3] == 3 && g.groups == 1 &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == g.dilation_w &&
         weights[0] % kColumns == 0 && weights[1] % 16 == 0 && weights[0] >= 64 &&
         weights[1] >= 64 && cpu_has_bf16();
}

bool winograd_enabled() {
  static const bool enabled = [] {
    const char* value = std::getenv("LABPOSE_WINOGRAD");
    return value == nullptr || std::string(value) != "0";
  }();
  return enabled;
}

WinogradConv::WinogradConv(const std::vector<float>& weights, const Shape& weight_shape,
                           const std::vector<float>& bias, const Shape& input, const Shape& output,
                           const ConvGeometry& g, float activation, float activation_after,
                           int threads)
    : input_(input),
      output_(output),
      channels_(weight_shape[1]),
      outputs_(weight_shape[0]),
      pad_top_(g.pad_top),
      pad_left_(g.pad_left),
      dilation_(g.dilation_h),
      activation_(activation),
      activation_after_(activation_after),
      bias_(bias) {
  LABPOSE_ASSERT(winograd_applies(weight_shape, g));
  LABPOSE_ASSERT(input.c() == channels_ && output.c() == outputs_ && input.n() == output.n());
  LABPOSE_ASSERT(static_cast<std::int64_t>(bias.size()) == outputs_ &&
                 static_cast<std::int64_t>(weights.size()) == weight_shape.elements());
  // Tiles: per frame, per phase of the dilation (the outputs whose row and column are p and q
  // modulo it), 2×2 blocks of that phase's outputs.
  const std::int64_t d = dilation_;
  for (std::int64_t n = 0; n < output.n(); ++n) {
    for (std::int64_t p = 0; p < d; ++p) {
      for (std::int64_t q = 0; q < d; ++q) {
        for (std::int64_t y = p; y < output.h(); y += 2 * d) {
          for (std::int64_t x = q; x < output.w(); x += 2 * d) {
            tiles_.push_back({static_cast<std::int32_t>(n), static_cast<std::int32_t>(y),
                              static_cast<std::int32_t>(x)});
          }
        }
      }
    }
  }
  const std::int64_t point_bytes = kRows * channels_ * 2;
  block_tiles_ = kRows * std::max<std::int64_t>(1, kBlockBytes / (kPoints * point_bytes));
  const std::int64_t needed =
      kRows * ((static_cast<std::int64_t>(tiles_.size()) + kRows - 1) / kRows);
  block_tiles_ = std::min(block_tiles_, needed);

  // Transformed weights as the kernel reads them: point, 32-channel block of outputs, input
  // channel pair, output channel, the pair's two.
  const std::int64_t pairs = channels_ / 2, column_blocks = outputs_ / kColumns;
  weights_ = allocate_host_storage(static_cast<std::size_t>(kPoints * outputs_ * channels_) * 2);
  auto* u = reinterpret_cast<std::uint16_t*>(weights_->data());
  for (std::int64_t k = 0; k < outputs_; ++k) {
    for (std::int64_t c = 0; c < channels_; ++c) {
      const auto t = transform_filter(weights.data() + (k * channels_ + c) * 9);
      for (int point = 0; point < kPoints; ++point) {
        const std::int64_t block = point * column_blocks + k / kColumns;
        const std::int64_t at = ((block * pairs + c / 2) * kColumns + k % kColumns) * 2 + c % 2;
        u[at] = to_bf16(t[static_cast<std::size_t>(point)]);
      }
    }
  }
  threads_ = std::max(threads, 1);
  per_thread_bytes_ = static_cast<std::size_t>(kPoints * block_tiles_ * channels_) * 2 +
                      static_cast<std::size_t>(kPoints * kRows * kColumns) * sizeof(float);
  ++made;
}

void WinogradConv::run(const std::uint16_t* x, std::uint16_t* y, void* scratch) const {
  const auto blocks =
      static_cast<std::int64_t>((tiles_.size() + static_cast<std::size_t>(block_tiles_) - 1) /
                                static_cast<std::size_t>(block_tiles_));
  auto* const bytes = static_cast<unsigned char*>(scratch);
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (std::int64_t block = 0; block < blocks; ++block) {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    run_block(x, y, static_cast<std::size_t>(block * block_tiles_),
              reinterpret_cast<std::uint16_t*>(bytes + thread * per_thread_bytes_));
  }
}

LABPOSE_BF16_KERNEL void WinogradConv::run_block(const std::uint16_t* x, std::uint16_t* y,
                                                 std::size_t first, std::uint16_t* scratch) const {
  const Block b{x,         y,           input_.h(),       input_.w(), channels_,
                outputs_,  output_.h(), output_.w(),      pad_top_,   pad_left_,
                dilation_, activation_, activation_after_};
  const std::size_t count = std::min(tiles_.size() - first, static_cast<std::size_t>(block_tiles_));
  // This block's transformed inputs: [point][tile][channel]; tiles past `count` are zero.
  std::uint16_t* v = scratch;
  auto* sums = reinterpret_cast<float*>(v + kPoints * block_tiles_ * channels_);
  const std::int64_t point_stride = block_tiles_ * channels_;
  const std::int64_t rows = kRows * ((static_cast<std::int64_t>(count) + kRows - 1) / kRows);
  for (std::int64_t t = 0; t < rows; ++t) {
    if (t < static_cast<std::int64_t>(count)) {
      const Tile& tile = tiles_[first + static_cast<std::size_t>(t)];
      transform_input(b, tile.n, tile.y, tile.x, v + t * channels_, point_stride);
    } else {
      for (int point = 0; point < kPoints; ++point)
        std::fill_n(v + point * point_stride + t * channels_, channels_, std::uint16_t{0});
    }
  }
  const auto* u = reinterpret_cast<const std::uint16_t*>(weights_->data());
  const std::int64_t column_blocks = outputs_ / kColumns;
  for (std::int64_t column = 0; column < column_blocks; ++column) {
    for (std::int64_t row = 0; row < rows; row += kRows) {
      for (int point = 0; point < kPoints; ++point) {
        multiply(v + point * point_stride + row * channels_, channels_,
                 u + (point * column_blocks + column) * channels_ * kColumns, channels_,
                 sums + point * kRows * kColumns);
      }
      const std::int64_t last =
          std::min<std::int64_t>(row + kRows, static_cast<std::int64_t>(count));
      for (std::int64_t t = row; t < last; ++t) {
        const Tile& tile = tiles_[first + static_cast<std::size_t>(t)];
        for (std::int64_t half = 0; half < kColumns; half += 16) {
          transform_output(b, tile.n, tile.y, tile.x, sums + (t - row) * kColumns + half,
                           kRows * kColumns, bias_.data(), column * kColumns + half);
        }
      }
    }
  }
}

}  // namespace labpose::nets::cpu
