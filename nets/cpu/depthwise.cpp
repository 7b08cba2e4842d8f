#include "nets/cpu/depthwise.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "nets/cpu/avx512_lanes.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/cpu/kernel_switch.hpp"

namespace labpose::nets::cpu {
namespace {

constexpr int kSpan = 24;  // outputs of a row per call: 24 accumulators, the filter row, the input

std::atomic<std::int64_t> made{0};  // DepthwiseConv objects made

std::int64_t rounded_to_lanes(std::int64_t channels) {
  return (channels + 15) / 16 * 16;
}

// Output row `row` for the 16 channels from c on (`lanes` of them), outputs ox0 .. ox0 + kSpan - 1
// that exist. For each filter row, the inputs under those outputs are read left to right; each
// is widened once and added, times the filter's tap, into every output whose window holds it
// (fully unrolled: the tap and output of each input are known when compiled).
template <int R, int S, int D>
LABPOSE_AVX512_KERNEL void span_kernel(const DepthwiseConv::Rows& r, std::int64_t n,
                                       std::int64_t oy, std::int64_t ox0, std::int64_t c,
                                       __mmask16 lanes) {
  constexpr int inputs = (kSpan - 1) * S + (R - 1) * D + 1;
  const std::int64_t stride = rounded_to_lanes(r.channels);
  const std::int64_t ix0 = ox0 * S - r.pad_left;
  __m512 acc[kSpan];
  const __m512 bias = _mm512_loadu_ps(r.bias + c);
#pragma GCC unroll 32
  for (int o = 0; o < kSpan; ++o) acc[o] = bias;
  const auto* x = static_cast<const std::uint16_t*>(r.x);
  for (int i = 0; i < R; ++i) {
    const std::int64_t iy = oy * S - r.pad_top + i * D;
    if (iy < 0 || iy >= r.h) continue;
    __m512 tap[static_cast<std::size_t>(R)];  // this filter row's
#pragma GCC unroll 8
    for (int j = 0; j < R; ++j) tap[j] = _mm512_loadu_ps(r.taps + (i * R + j) * stride + c);
    const std::uint16_t* row = x + (n * r.h + iy) * r.w * r.channels + c;
#pragma GCC unroll 128
    for (int e = 0; e < inputs; ++e) {
      const std::int64_t ix = ix0 + e;
      if (ix < 0 || ix >= r.w) continue;
      const __m512 v = load_lanes(row + ix * r.channels, lanes);
#pragma GCC unroll 8
      for (int j = 0; j < R; ++j) {
        const int t = e - j * D;  // S · (the output's place in the span)
        if (t < 0 || t % S != 0 || t / S >= kSpan) continue;
        acc[t / S] = _mm512_fmadd_ps(v, tap[j], acc[t / S]);
      }
    }
  }
  std::uint16_t* y =
      static_cast<std::uint16_t*>(r.y) + ((n * r.out_h + oy) * r.out_w + ox0) * r.channels + c;
  const int count = static_cast<int>(std::min<std::int64_t>(kSpan, r.out_w - ox0));
#pragma GCC unroll 32
  for (int o = 0; o < kSpan; ++o) {
    if (o >= count) break;
    store_lanes(y + o * r.channels, activate(activate(acc[o], r.activation), r.activation_after),
                lanes);
  }
}

template <int R, int S, int D>
void row_kernel(const DepthwiseConv::Rows& r, std::int64_t row) {
  const std::int64_t n = row / r.out_h, oy = row % r.out_h;
  for (std::int64_t ox0 = 0; ox0 < r.out_w; ox0 += kSpan) {
    for (std::int64_t c = 0; c < r.channels; c += 16)
      span_kernel<R, S, D>(r, n, oy, ox0, c, lanes_of(r.channels - c));
  }
}

DepthwiseConv::RowKernel kernel_for(int r, int s, int d) {
  const int key = (r == 5 ? 4 : 0) + (s == 2 ? 2 : 0) + (d == 2 ? 1 : 0);
  switch (key) {
    case 0:
      return row_kernel<3, 1, 1>;
    case 1:
      return row_kernel<3, 1, 2>;
    case 2:
      return row_kernel<3, 2, 1>;
    case 3:
      return row_kernel<3, 2, 2>;
    case 4:
      return row_kernel<5, 1, 1>;
    case 5:
      return row_kernel<5, 1, 2>;
    case 6:
      return row_kernel<5, 2, 1>;
    default:
      return row_kernel<5, 2, 2>;
  }
}

}  // namespace

bool depthwise_runs(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                    const DepthwiseUnits& units) {
  const auto one_of = [](std::int64_t v) { return v == 1 || v == 2; };
  return precision == PlanPrecision::bf16 && units.avx512 && units.bf16 && weights.rank() == 4 &&
         weights[1] == 1 && g.groups == weights[0] && weights[2] == weights[3] &&
         (weights[2] == 3 || weights[2] == 5) && g.stride_h == g.stride_w && one_of(g.stride_h) &&
         g.dilation_h == g.dilation_w && one_of(g.dilation_h);
}

bool depthwise_applies(const Shape& weights, const ConvGeometry& g, PlanPrecision precision,
                       const DepthwiseUnits& units) {
  return units.amx && depthwise_runs(weights, g, precision, units) &&
         !(weights[2] == 3 && g.stride_h == 2);
}

bool depthwise_planned(const Shape& weights, const ConvGeometry& g, PlanPrecision precision) {
  constexpr const char* kVariable = "LABPOSE_DEPTHWISE";
  if (!switched_on(kVariable)) return false;
  // With 1, every CPU where it runs counts as one where it was measured faster.
  const char* value = std::getenv(kVariable);
  const bool everywhere = value != nullptr && std::string_view(value) == "1";
  static const DepthwiseUnits cpu{cpu_has_avx512(), cpu_has_bf16(), cpu_has_amx()};
  const DepthwiseUnits units{cpu.avx512, cpu.bf16, cpu.amx || everywhere};
  return depthwise_applies(weights, g, precision, units);
}

std::int64_t depthwise_convolutions_made() {
  return made.load();
}

DepthwiseConv::DepthwiseConv(const std::vector<float>& weights, const Shape& weight_shape,
                             const std::vector<float>& bias, const Shape& input,
                             const Shape& output, const ConvGeometry& g, float activation,
                             float activation_after, PlanPrecision precision, int threads)
    : threads_(std::max(threads, 1)) {
  LABPOSE_ASSERT(depthwise_runs(weight_shape, g, precision, {cpu_has_avx512(), cpu_has_bf16()}));
  const std::int64_t channels = weight_shape[0], taps = weight_shape[2] * weight_shape[3];
  LABPOSE_ASSERT(input.c() == channels && output.c() == channels && input.n() == output.n());
  LABPOSE_ASSERT(static_cast<std::int64_t>(bias.size()) == channels &&
                 static_cast<std::int64_t>(weights.size()) == channels * taps);
  // The taps as the kernel reads them: per tap, the channels, padded to whole vectors with 0.
  const std::int64_t stride = rounded_to_lanes(channels);
  taps_.assign(static_cast<std::size_t>(taps * stride), 0.0F);
  for (std::int64_t c = 0; c < channels; ++c) {
    for (std::int64_t t = 0; t < taps; ++t)
      taps_[static_cast<std::size_t>(t * stride + c)] =
          weights[static_cast<std::size_t>(c * taps + t)];
  }
  bias_.assign(static_cast<std::size_t>(stride), 0.0F);
  std::copy(bias.begin(), bias.end(), bias_.begin());
  rows_ = {nullptr,          nullptr,      input.h(),   input.w(),  channels,
           output.h(),       output.w(),   g.pad_top,   g.pad_left, activation,
           activation_after, taps_.data(), bias_.data()};
  row_count_ = output.n() * output.h();
  const int r = static_cast<int>(weight_shape[2]);
  kernel_ = kernel_for(r, g.stride_h, g.dilation_h);
  ++made;
}

void DepthwiseConv::run(const void* x, void* y) const {
  Rows rows = rows_;
  rows.x = x;
  rows.y = y;
  const RowKernel kernel = kernel_;
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (std::int64_t row = 0; row < row_count_; ++row) kernel(rows, row);
}

}  // namespace labpose::nets::cpu
