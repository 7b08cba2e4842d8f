#include "nets/cpu/winograd.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "nets/cpu/avx512_lanes.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/kernel_switch.hpp"
#include "nets/cpu/value_formats.hpp"

namespace labpose::nets::cpu {
namespace {

constexpr int kPoints = 16;            // the transformed 4×4 tile
constexpr std::int64_t kRows = 14;     // tiles per matrix-product kernel call (28 accumulators)
constexpr std::int64_t kColumns = 32;  // output channels per kernel call (two vectors of 16)
// Bytes of transformed inputs one block keeps: within the per-core cache beside the weights.
constexpr std::int64_t kBlockBytes = 384 * 1024;

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

// How each element type is read, written and multiplied: bf16 (16-bit patterns, a pair of
// channels per dot-product lane) or fp32 (one channel per fused multiply-add).
template <typename T>
struct Kind;

template <>
struct Kind<std::uint16_t> {
  static constexpr std::int64_t kStep = 2;  // input channels per weight vector lane
  LABPOSE_AVX512_KERNEL static __m512 load(const std::uint16_t* p) {
    const __m256i half = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(half), 16));
  }
  LABPOSE_AVX512_KERNEL static void store(std::uint16_t* p, __m512 v) {
    const __m256bh h = _mm512_cvtneps_pbh(v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), reinterpret_cast<const __m256i&>(h));
  }
  // The channel pair at v, in every lane.
  LABPOSE_AVX512_KERNEL static __m512i broadcast(const std::uint16_t* v) {
    std::int32_t pair = 0;
    std::memcpy(&pair, v, sizeof pair);
    return _mm512_set1_epi32(pair);
  }
  LABPOSE_AVX512_KERNEL static __m512 multiply_add(__m512 acc, __m512i x, __m512i w) {
    return _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(x), reinterpret_cast<__m512bh>(w));
  }
  static std::uint16_t from_float(float value) { return bf16_bits(value); }
};

template <>
struct Kind<float> {
  static constexpr std::int64_t kStep = 1;
  LABPOSE_AVX512_KERNEL static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  LABPOSE_AVX512_KERNEL static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  LABPOSE_AVX512_KERNEL static __m512i broadcast(const float* v) {
    return _mm512_castps_si512(_mm512_set1_ps(*v));
  }
  LABPOSE_AVX512_KERNEL static __m512 multiply_add(__m512 acc, __m512i x, __m512i w) {
    return _mm512_fmadd_ps(_mm512_castsi512_ps(x), _mm512_castsi512_ps(w), acc);
  }
  static float from_float(float value) { return value; }
};

// Bᵀ d B over 4 vectors in place: rows (0, 1, 2, 3) → (d0 − d2, d1 + d2, d2 − d1, d1 − d3).
LABPOSE_AVX512_KERNEL inline void input_1d(__m512& d0, __m512& d1, __m512& d2, __m512& d3) {
  const __m512 t0 = _mm512_sub_ps(d0, d2), t1 = _mm512_add_ps(d1, d2);
  const __m512 t2 = _mm512_sub_ps(d2, d1), t3 = _mm512_sub_ps(d1, d3);
  d0 = t0;
  d1 = t1;
  d2 = t2;
  d3 = t3;
}

// sums[t][0..31] = Σ_c v[t][c] · u[c][0..31] for kRows tiles: v is kRows rows of `channels`
// values (`row_stride` apart), u the weights of 32 output channels, kStep input channels per lane
// ([C/kStep][32][kStep]): 128 bytes per step either way.
template <typename T>
LABPOSE_AVX512_KERNEL void multiply(const T* v, std::int64_t row_stride, const T* u,
                                    std::int64_t channels, float* sums) {
  using K = Kind<T>;
  __m512 acc[kRows][2];
  for (auto& row : acc) row[0] = row[1] = _mm512_setzero_ps();
  for (std::int64_t c = 0; c < channels; c += K::kStep) {
    const __m512i w0 = _mm512_loadu_si512(u);
    const __m512i w1 = _mm512_loadu_si512(u + 16 * K::kStep);
    u += kColumns * K::kStep;
#pragma GCC unroll 14
    for (std::int64_t t = 0; t < kRows; ++t) {
      const __m512i x = K::broadcast(v + t * row_stride + c);
      acc[t][0] = K::multiply_add(acc[t][0], x, w0);
      acc[t][1] = K::multiply_add(acc[t][1], x, w1);
    }
  }
  for (std::int64_t t = 0; t < kRows; ++t) {
    _mm512_storeu_ps(sums + t * kColumns, acc[t][0]);
    _mm512_storeu_ps(sums + t * kColumns + 16, acc[t][1]);
  }
}

template <typename T>
struct Block {
  const T* x;
  T* y;
  std::int64_t h, w, channels, outputs, out_h, out_w;
  int pad_top, pad_left, dilation;
  float activation, activation_after;
};

// The transformed inputs of one tile into v (16 points, `point_stride` apart, 16 channels each).
template <typename T>
LABPOSE_AVX512_KERNEL void transform_input(const Block<T>& b, std::int32_t n, std::int32_t oy,
                                           std::int32_t ox, T* v, std::int64_t point_stride) {
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
        d[a][e] = row_in[a] && column_in[e]
                      ? Kind<T>::load(b.x + base + a * step_y + e * step_x + c)
                      : _mm512_setzero_ps();
      }
    }
    for (int e = 0; e < 4; ++e) input_1d(d[0][e], d[1][e], d[2][e], d[3][e]);
    for (int a = 0; a < 4; ++a) input_1d(d[a][0], d[a][1], d[a][2], d[a][3]);
    for (int a = 0; a < 4; ++a) {
      for (int e = 0; e < 4; ++e) Kind<T>::store(v + (a * 4 + e) * point_stride + c, d[a][e]);
    }
  }
}

// Aᵀ m A for one tile and 16 output channels (m: the 16 points' sums, `point_stride` apart),
// plus the bias and activations, into the tile's output pixels that exist.
template <typename T>
LABPOSE_AVX512_KERNEL void transform_output(const Block<T>& b, std::int32_t n, std::int32_t oy,
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
      Kind<T>::store(b.y + ((n * b.out_h + y) * b.out_w + x) * b.outputs + k, value);
    }
  }
}

std::atomic<std::int64_t> made{0};  // WinogradConv objects made

}  // namespace

std::int64_t winograd_convolutions_made() {
  return made.load();
}

WinogradUnits cpu_winograd_units() {
  return {cpu_has_bf16(), cpu_has_avx512(), cpu_has_amx()};
}

bool winograd_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision) {
  static const WinogradUnits units = cpu_winograd_units();
  return winograd_applies(weights, g, precision, units);
}

bool winograd_runs(const Shape& weights, const ConvGeometry& g, PlanPrecision precision) {
  static const WinogradUnits units = [] {
    WinogradUnits here = cpu_winograd_units();
    here.amx = false;
    return here;
  }();
  return winograd_applies(weights, g, precision, units);
}

bool winograd_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                      const WinogradUnits& units) {
  const bool instructions = precision == PlanPrecision::bf16   ? units.bf16 && !units.amx
                            : precision == PlanPrecision::fp32 ? units.avx512
                                                               : false;
  return weights.rank() == 4 && weights[2] == 3 && weights[3] == 3 && g.groups == 1 &&
         g.stride_h == 1 && g.stride_w == 1 && g.dilation_h == g.dilation_w &&
         weights[0] % kColumns == 0 && weights[1] % 16 == 0 && weights[0] >= 64 &&
         weights[1] >= 64 && instructions;
}

bool winograd_enabled() {
  static const bool enabled = switched_on("LABPOSE_WINOGRAD");
  return enabled;
}

WinogradConv::WinogradConv(const std::vector<float>& weights, const Shape& weight_shape,
                           const std::vector<float>& bias, const Shape& input, const Shape& output,
                           const ConvGeometry& g, float activation, float activation_after,
                           PlanPrecision precision, int threads)
    : input_(input),
      output_(output),
      channels_(weight_shape[1]),
      outputs_(weight_shape[0]),
      pad_top_(g.pad_top),
      pad_left_(g.pad_left),
      dilation_(g.dilation_h),
      activation_(activation),
      activation_after_(activation_after),
      bf16_(precision == PlanPrecision::bf16),
      bias_(bias) {
  LABPOSE_ASSERT(winograd_runs(weight_shape, g, precision));
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
  const std::int64_t element = bf16_ ? 2 : 4;
  block_tiles_ =
      kRows * std::max<std::int64_t>(1, kBlockBytes / (kPoints * kRows * channels_ * element));
  const std::int64_t needed =
      kRows * ((static_cast<std::int64_t>(tiles_.size()) + kRows - 1) / kRows);
  block_tiles_ = std::min(block_tiles_, needed);
  weights_ =
      allocate_host_storage(static_cast<std::size_t>(kPoints * outputs_ * channels_ * element));
  if (bf16_) {
    transform_weights(weights, reinterpret_cast<std::uint16_t*>(weights_->data()));
  } else {
    transform_weights(weights, weights_->data());
  }
  threads_ = std::max(threads, 1);
  per_thread_bytes_ = static_cast<std::size_t>(kPoints * block_tiles_ * channels_ * element) +
                      static_cast<std::size_t>(kPoints * kRows * kColumns) * sizeof(float);
  ++made;
}

// The transformed weights as the kernel reads them: point, 32-channel block of outputs, input
// channels kStep at a time, output channel, the step's channels.
template <typename T>
void WinogradConv::transform_weights(const std::vector<float>& weights, T* u) const {
  constexpr std::int64_t step = Kind<T>::kStep;
  const std::int64_t steps = channels_ / step, column_blocks = outputs_ / kColumns;
  for (std::int64_t k = 0; k < outputs_; ++k) {
    for (std::int64_t c = 0; c < channels_; ++c) {
      const auto t = transform_filter(weights.data() + (k * channels_ + c) * 9);
      for (int point = 0; point < kPoints; ++point) {
        const std::int64_t block = point * column_blocks + k / kColumns;
        const std::int64_t at =
            ((block * steps + c / step) * kColumns + k % kColumns) * step + c % step;
        u[at] = Kind<T>::from_float(t[static_cast<std::size_t>(point)]);
      }
    }
  }
}

void WinogradConv::run(const void* x, void* y, void* scratch) const {
  if (bf16_) {
    run_typed(static_cast<const std::uint16_t*>(x), static_cast<std::uint16_t*>(y), scratch);
  } else {
    run_typed(static_cast<const float*>(x), static_cast<float*>(y), scratch);
  }
}

template <typename T>
void WinogradConv::run_typed(const T* x, T* y, void* scratch) const {
  const auto blocks =
      static_cast<std::int64_t>((tiles_.size() + static_cast<std::size_t>(block_tiles_) - 1) /
                                static_cast<std::size_t>(block_tiles_));
  auto* const bytes = static_cast<unsigned char*>(scratch);
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (std::int64_t block = 0; block < blocks; ++block) {
    const auto thread = static_cast<std::size_t>(omp_get_thread_num());
    run_block(x, y, static_cast<std::size_t>(block * block_tiles_),
              reinterpret_cast<T*>(bytes + thread * per_thread_bytes_));
  }
}

template <typename T>
LABPOSE_AVX512_KERNEL void WinogradConv::run_block(const T* x, T* y, std::size_t first,
                                                   T* scratch) const {
  const Block<T> b{x,         y,           input_.h(),       input_.w(), channels_,
                   outputs_,  output_.h(), output_.w(),      pad_top_,   pad_left_,
                   dilation_, activation_, activation_after_};
  const std::size_t count = std::min(tiles_.size() - first, static_cast<std::size_t>(block_tiles_));
  // This block's transformed inputs: [point][tile][channel]; tiles past `count` are zero.
  T* v = scratch;
  auto* sums = reinterpret_cast<float*>(v + kPoints * block_tiles_ * channels_);
  const std::int64_t point_stride = block_tiles_ * channels_;
  const std::int64_t rows = kRows * ((static_cast<std::int64_t>(count) + kRows - 1) / kRows);
  for (std::int64_t t = 0; t < rows; ++t) {
    if (t < static_cast<std::int64_t>(count)) {
      const Tile& tile = tiles_[first + static_cast<std::size_t>(t)];
      transform_input(b, tile.n, tile.y, tile.x, v + t * channels_, point_stride);
    } else {
      for (int point = 0; point < kPoints; ++point)
        std::fill_n(v + point * point_stride + t * channels_, channels_, T{0});
    }
  }
  const T* u = reinterpret_cast<const T*>(weights_->data());
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
