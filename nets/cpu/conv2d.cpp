// CPU convolution and transposed convolution on oneDNN: NHWC activations, weights reordered from
// PyTorch's layout into the primitive's preferred one (and gradients back) on every call. In mixed
// precision (a bf16 CpuBackend) the kernels read bf16: the bf16 values between a net's layers as
// they are, fp32 operands (a net's input, weights, the outputs' gradients) converted on each call;
// they write the output tensor's own type (bf16 between layers, fp32 outputs), and fp32 gradients
// of weights and biases: master weights and optimizer state stay fp32.
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include "core/error.hpp"
#include "nets/cpu/dnnl_state.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/cpu/elements.hpp"
#include "nets/cpu/thread_shares.hpp"

namespace labpose::nets::cpu {
namespace {

using tag = memory::format_tag;
using dt = memory::data_type;
using namespace dnnl;

using Window = DnnlWindow;

memory::desc any_weights(const Shape& w, int groups, bool transposed, dt type) {
  if (!transposed)
    return memory::desc(dims_of_desc(conv_weights_desc(w, groups, tag::any)), type, tag::any);
  if (groups == 1) return memory::desc({w[1], w[0], w[2], w[3]}, type, tag::any);
  return memory::desc({groups, w[1], w[0] / groups, w[2], w[3]}, type, tag::any);
}

memory::desc user_weights(const Shape& w, int groups, bool transposed) {
  return transposed ? conv_transpose_weights_desc(w, groups)
                    : conv_weights_desc(w, groups, tag::oihw);
}

memory::desc bias_desc(std::int64_t channels) {
  return memory::desc({channels}, dt::f32, tag::a);
}

// A memory in the primitive's format, fed from (or drained to) a user memory by a reorder when the
// two differ. The primitive's copy is allocated on first use: a training forward that converts
// into the layer's SavedInput never needs its own.
struct Converted {
  memory user;
  memory::desc internal_desc;
  reorder to_internal, to_user;
  bool differs = false;

  Converted(const memory::desc& user_desc, const memory::desc& internal, const engine& eng)
      : user(user_desc, eng, DNNL_MEMORY_NONE),
        internal_desc(internal),
        differs(user_desc != internal),
        engine_(eng) {
    if (differs) {
      to_internal = reorder(reorder::primitive_desc(eng, user_desc, eng, internal));
      to_user = reorder(reorder::primitive_desc(eng, internal, eng, user_desc));
    }
  }
  /// The primitive's copy: the user memory itself when the formats agree.
  memory& internal() {
    if (!differs) return user;
    if (!buffer_) buffer_ = memory(internal_desc, engine_);
    return buffer_;
  }
  memory& in(stream& s) {
    if (differs) to_internal.execute(s, user, internal());
    return internal();
  }
  void out(stream& s) {
    if (differs) to_user.execute(s, internal(), user);
  }

 private:
  engine engine_;
  memory buffer_;
};

// A layer's input converted by its training forward, kept for its backward (see SavedInput).
struct ConvertedInput final : SavedInput {
  memory copy;
};

template <typename ForwardDesc>
ForwardDesc forward_desc(bool transposed, const memory::desc& src, const memory::desc& weights,
                         const memory::desc& bias, const memory::desc& dst, const Window& window);

struct ForwardEntry : CacheEntry {
  primitive run;
  memory bias, dst;
  std::unique_ptr<Converted> src, weights;
  bool has_bias = false;
};

struct BackwardDataEntry : CacheEntry {
  primitive run;
  memory diff_src;
  std::unique_ptr<Converted> diff_dst, weights;
};

struct BackwardWeightsEntry : CacheEntry {
  primitive run;
  memory diff_bias;
  std::unique_ptr<Converted> src, diff_dst, diff_weights;
  bool has_bias = false;
};

std::string shapes_text(const Tensor& a, const Tensor& b, const Tensor& c) {
  return fmt::format("{} {} -> {}", a.shape().text(), b.shape().text(), c.shape().text());
}

// The forward primitive description (training flavour; it also serves as the backward hint).
primitive_desc_base forward_pd(bool transposed, const engine& eng, const memory::desc& src,
                               const memory::desc& weights, const memory::desc& bias,
                               const memory::desc& dst, const Window& w) {
  if (transposed)
    return deconvolution_forward_pd(eng, prop_kind::forward_training, src, weights, bias, dst, w);
  return convolution_forward_pd(eng, prop_kind::forward_training, src, weights, bias, dst, w);
}

// Depthwise convolutions whose gradients oneDNN 2.6's depthwise kernel does not compute: it has
// the weight gradient of undilated 3x3 filters only, and no gradient of a dilated filter. The
// others fall back to a generic grouped kernel at a fifth of the forward's rate
// (EfficientNet-Lite's 5x5 layers and the dilated ones of its last stage took 20 % of a training
// step). So their weight gradient is the loop below, and a dilated one's data gradient is the
// forward of the flipped filter (stride 1).
bool depthwise(const Shape& x, const Shape& w, const ConvGeometry& g) {
  return g.groups > 1 && g.groups == x.c() && w[0] == g.groups && w[1] == 1;
}
bool dilated(const ConvGeometry& g) {
  return g.dilation_h > 1 || g.dilation_w > 1;
}
// Whether a convolution's weight gradient is the loop below (it reads x and dy in fp32, NHWC).
bool own_weight_gradient(bool transposed, const Tensor& x, const Shape& w, const Tensor& dy,
                         const ConvGeometry& g) {
  return !transposed && depthwise(x.shape(), w, g) && (dilated(g) || w[2] != 3 || w[3] != 3) &&
         x.layout() == Layout::nhwc && dy.layout() == Layout::nhwc;
}

// With `saved` (a training forward), x is converted into the layer's own copy, which its backward
// then reads instead of converting x again; a layer whose weight gradient is labpose's own loop
// (fp32) keeps none.
void forward(CpuBackend::State& state, dt compute, bool transposed, const Tensor& x,
             const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
             std::unique_ptr<SavedInput>* saved = nullptr) {
  const char* op = transposed ? "conv_transpose2d_forward" : "conv2d_forward";
  const Shape expected = transposed ? conv_transpose2d_output_shape(x.shape(), w.shape(), g)
                                    : conv2d_output_shape(x.shape(), w.shape(), g);
  check_shape(op, "y", y.shape(), expected);
  LABPOSE_ASSERT(w.layout() == Layout::flat);
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}", op, x.shape().text(), w.shape().text(), bias.empty(),
                  geometry_key(g), static_cast<int>(compute), elements_key({&x, &y}));
  with_dnnl_errors(op, shapes_text(x, w, y), [&] {
    auto& entry = state.cached<ForwardEntry>(key, [&] {
      auto e = std::make_unique<ForwardEntry>();
      const Window window =
          transposed ? transpose_window(g, x.shape(), w.shape(), y.shape()) : conv_window(g);
      e->has_bias = !bias.empty();
      const memory::desc bias_md = e->has_bias ? bias_desc(y.shape().c()) : memory::desc();
      auto pd = forward_pd(transposed, state.engine, desc_of(x, compute),
                           any_weights(w.shape(), g.groups, transposed, compute), bias_md,
                           desc_of(y), window);
      e->run = transposed ? primitive(deconvolution_forward::primitive_desc(pd.get()))
                          : primitive(convolution_forward::primitive_desc(pd.get()));
      e->src = std::make_unique<Converted>(desc_of(x), desc_of(x, compute), state.engine);
      e->dst = memory(desc_of(y), state.engine, DNNL_MEMORY_NONE);
      if (e->has_bias) e->bias = memory(bias_md, state.engine, DNNL_MEMORY_NONE);
      e->weights = std::make_unique<Converted>(user_weights(w.shape(), g.groups, transposed),
                                               pd.query_md(query::weights_md), state.engine);
      return e;
    });
    bind(entry.src->user, x);
    bind(entry.dst, y);
    bind(entry.weights->user, w);
    memory* src = nullptr;
    if (saved != nullptr && entry.src->differs &&
        !own_weight_gradient(transposed, x, w.shape(), y, g)) {
      auto* kept = dynamic_cast<ConvertedInput*>(saved->get());
      if (kept == nullptr || kept->copy.get_desc() != entry.src->internal_desc) {
        auto made = std::make_unique<ConvertedInput>();
        made->copy = memory(entry.src->internal_desc, state.engine);
        kept = made.get();
        *saved = std::move(made);
      }
      entry.src->to_internal.execute(state.stream, entry.src->user, kept->copy);
      src = &kept->copy;
    } else {
      if (saved != nullptr) saved->reset();  // x is read as it is
      src = &entry.src->in(state.stream);
    }
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, *src},
                                            {DNNL_ARG_WEIGHTS, entry.weights->in(state.stream)},
                                            {DNNL_ARG_DST, entry.dst}};
    if (entry.has_bias) {
      bind(entry.bias, bias);
      args[DNNL_ARG_BIAS] = entry.bias;
    }
    entry.run.execute(state.stream, args);
    state.stream.wait();
  });
}

// The data gradient of a stride-1 convolution is the forward convolution of dy with the filter
// turned by 180 degrees, padded by (R - 1)·dilation - pad on each side: defined where that is not
// negative.
std::optional<ConvGeometry> flipped_geometry(const Shape& w, const ConvGeometry& g) {
  if (g.stride_h != 1 || g.stride_w != 1) return std::nullopt;
  const int reach_h = static_cast<int>(w[2] - 1) * g.dilation_h;
  const int reach_w = static_cast<int>(w[3] - 1) * g.dilation_w;
  ConvGeometry flipped = g;
  flipped.pad_top = reach_h - g.pad_top;
  flipped.pad_bottom = reach_h - g.pad_bottom;
  flipped.pad_left = reach_w - g.pad_left;
  flipped.pad_right = reach_w - g.pad_right;
  if (std::min({flipped.pad_top, flipped.pad_bottom, flipped.pad_left, flipped.pad_right}) < 0)
    return std::nullopt;
  return flipped;
}

struct FlippedWeights : CacheEntry {
  Tensor w;
};

constexpr std::int64_t kChannelBlock = 16;

// One block of up to 16 channels of a depthwise weight gradient, NHWC x and dy: sums[tap][k] and
// bias_sums[k] accumulate dy times the input each tap reads. Compiled for AVX-512, AVX2 and the
// baseline, chosen when the program loads.
__attribute__((target_clones("avx512f", "avx2", "default"))) void depthwise_weight_block(
    const float* x, const float* dy, const Shape& xs, const Shape& ys, const Shape& w,
    const ConvGeometry& g, std::int64_t first, float* sums, float* bias_sums) {
  const std::int64_t channels = xs.c(), taps_w = w[3];
  for (std::int64_t n = 0; n < ys.n(); ++n) {
    for (std::int64_t oy = 0; oy < ys.h(); ++oy) {
      const float* dy_row = dy + ((n * ys.h() + oy) * ys.w()) * channels + first;
      // Summed in a local block first: added into bias_sums (which may alias) one element at a
      // time, the sum was a chain of scalar additions that took a third of the function's time.
      float row_sums[kChannelBlock] = {};
      for (std::int64_t ox = 0; ox < ys.w(); ++ox) {
        for (std::int64_t k = 0; k < kChannelBlock; ++k) row_sums[k] += dy_row[ox * channels + k];
      }
      for (std::int64_t k = 0; k < kChannelBlock; ++k) bias_sums[k] += row_sums[k];
      for (std::int64_t r = 0; r < w[2]; ++r) {
        const std::int64_t iy = oy * g.stride_h - g.pad_top + r * g.dilation_h;
        if (iy < 0 || iy >= xs.h()) continue;
        const float* x_row = x + ((n * xs.h() + iy) * xs.w()) * channels + first;
        for (std::int64_t s = 0; s < taps_w; ++s) {
          // The outputs whose tap s reads inside the row: ix = ox·stride - pad + s·dilation.
          const std::int64_t offset = s * g.dilation_w - g.pad_left;
          const std::int64_t begin = offset >= 0 ? 0 : (-offset + g.stride_w - 1) / g.stride_w;
          const std::int64_t last_ix = xs.w() - 1 - offset;  // of ox·stride
          const std::int64_t end = last_ix < 0 ? 0 : std::min(ys.w(), last_ix / g.stride_w + 1);
          // Four sums in flight, so that each multiply-add does not wait for the one before.
          float acc[4][kChannelBlock] = {};
          std::int64_t ox = begin;
          for (; ox + 4 <= end; ox += 4) {
            for (std::int64_t u = 0; u < 4; ++u) {
              const float* in = x_row + ((ox + u) * g.stride_w + offset) * channels;
              const float* grad = dy_row + (ox + u) * channels;
              for (std::int64_t k = 0; k < kChannelBlock; ++k) acc[u][k] += grad[k] * in[k];
            }
          }
          for (; ox < end; ++ox) {
            const float* in = x_row + (ox * g.stride_w + offset) * channels;
            const float* grad = dy_row + ox * channels;
            for (std::int64_t k = 0; k < kChannelBlock; ++k) acc[0][k] += grad[k] * in[k];
          }
          float* tap = sums + (r * taps_w + s) * kChannelBlock;
          for (std::int64_t k = 0; k < kChannelBlock; ++k)
            tap[k] += (acc[0][k] + acc[1][k]) + (acc[2][k] + acc[3][k]);
        }
      }
    }
  }
}

// What depthwise_weight_gradient keeps between calls of one shape: each thread's fp32 copies of
// one block's channels of x and dy (16 per pixel), and every block's sums.
struct DepthwiseGradientBuffers : CacheEntry {
  std::vector<float> gathered, sums;
};

// Channels [first, first + count) of every pixel of the NHWC tensor t, as floats, 16 per pixel in
// `out` (the channels past `count` keep what they held: each channel's sums read only its own).
LABPOSE_CLONES void gather_bf16_block(const std::uint16_t* in, std::int64_t channels,
                                      std::int64_t pixels, float* out) {
  for (std::int64_t p = 0; p < pixels; ++p) {
    for (std::int64_t k = 0; k < kChannelBlock; ++k)
      out[p * kChannelBlock + k] = bf16_value(in[p * channels + k]);
  }
}

void gather_block(const Tensor& t, std::int64_t first, std::int64_t count, float* out) {
  const std::int64_t channels = t.shape().c(), pixels = t.elements() / channels;
  if (t.element() == Element::bf16 && count == kChannelBlock) {  // whole blocks, vectorized
    gather_bf16_block(static_cast<const std::uint16_t*>(t.raw()) + first, channels, pixels, out);
    return;
  }
  with_elements(t, [&](auto in) {
    for (std::int64_t p = 0; p < pixels; ++p) {
      for (std::int64_t k = 0; k < count; ++k)
        out[p * kChannelBlock + k] = in.get(p * channels + first + k);
    }
  });
}

// dw (C, 1, R, S) and dbias (C, or empty) of a depthwise convolution, in fp32, 16 channels per
// task. A block of 16 channels of fp32 tensors is read in place; a partial block (where C is not a
// multiple of 16), and every block of bf16 tensors, from the thread's fp32 copy of its channels.
// The buffers are made on the first call of a shape.
void depthwise_weight_gradient(CpuBackend::State& state, const Tensor& x, const Tensor& dy,
                               Tensor& dw, Tensor& dbias, const ConvGeometry& g) {
  LABPOSE_ASSERT(x.layout() == Layout::nhwc && dy.layout() == Layout::nhwc);
  const Shape& w = dw.shape();
  const std::int64_t channels = x.shape().c(), taps = w[2] * w[3];
  const std::int64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
  const bool wide = x.element() == Element::f32 && dy.element() == Element::f32;
  const std::int64_t in_place = wide ? channels / kChannelBlock : 0;  // blocks read in place
  const std::int64_t x_pixels = x.elements() / channels, dy_pixels = dy.elements() / channels;
  const std::int64_t per_thread = (x_pixels + dy_pixels) * kChannelBlock;
  const std::string key = fmt::format("depthwise_dw|{}|{}|{}|{}", x.shape().text(),
                                      dy.shape().text(), w.text(), elements_key({&x, &dy}));
  auto& buffers = state.cached<DepthwiseGradientBuffers>(key, [&] {
    auto e = std::make_unique<DepthwiseGradientBuffers>();
    e->sums.resize(static_cast<std::size_t>(blocks * taps * kChannelBlock));
    return e;
  });
  const int threads = omp_get_max_threads();
  if (in_place < blocks) buffers.gathered.resize(static_cast<std::size_t>(threads * per_thread));
  const Shape gathered_xs{x.shape().n(), kChannelBlock, x.shape().h(), x.shape().w()};
  const Shape gathered_ys{dy.shape().n(), kChannelBlock, dy.shape().h(), dy.shape().w()};
  std::fill(buffers.sums.begin(), buffers.sums.end(), 0.0F);
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (std::int64_t b = 0; b < blocks; ++b) {
    float* sums = buffers.sums.data() + b * taps * kChannelBlock;
    std::array<float, kChannelBlock> bias_sums{};
    const std::int64_t first = b * kChannelBlock;
    const std::int64_t count = std::min(kChannelBlock, channels - first);
    if (b < in_place) {
      depthwise_weight_block(x.data(), dy.data(), x.shape(), dy.shape(), w, g, first, sums,
                             bias_sums.data());
    } else {
      float* own_x = buffers.gathered.data() + omp_get_thread_num() * per_thread;
      float* own_dy = own_x + x_pixels * kChannelBlock;
      gather_block(x, first, count, own_x);
      gather_block(dy, first, count, own_dy);
      depthwise_weight_block(own_x, own_dy, gathered_xs, gathered_ys, w, g, 0, sums,
                             bias_sums.data());
    }
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t c = first + k;
      for (std::int64_t t = 0; t < taps; ++t) dw.data()[c * taps + t] = sums[t * kChannelBlock + k];
      if (!dbias.empty()) dbias.data()[c] = bias_sums[static_cast<std::size_t>(k)];
    }
  }
}

// `converted_dy`, when given, is dy already in the primitive's format (backward_weights' copy).
void backward_data(CpuBackend::State& state, dt compute, bool transposed, const Tensor& dy,
                   const Tensor& w, Tensor& dx, const ConvGeometry& g,
                   const memory* converted_dy = nullptr) {
  const char* op = transposed ? "conv_transpose2d_backward_data" : "conv2d_backward_data";
  const Shape expected = transposed ? conv_transpose2d_output_shape(dx.shape(), w.shape(), g)
                                    : conv2d_output_shape(dx.shape(), w.shape(), g);
  check_shape(op, "dy", dy.shape(), expected);
  LABPOSE_ASSERT(w.layout() == Layout::flat);
  if (!transposed && depthwise(dx.shape(), w.shape(), g) && dilated(g)) {
    if (const auto flipped = flipped_geometry(w.shape(), g)) {
      const std::string key = fmt::format("flipped|{}", w.shape().text());
      auto& entry = state.cached<FlippedWeights>(key, [&] {
        auto e = std::make_unique<FlippedWeights>();
        e->w = Tensor(allocate_host_storage(static_cast<std::size_t>(w.elements()) * sizeof(float)),
                      0, w.shape(), Layout::flat);
        return e;
      });
      const std::int64_t rows = w.shape()[2], columns = w.shape()[3], taps = rows * columns;
      for (std::int64_t c = 0; c < w.shape()[0]; ++c) {
        for (std::int64_t t = 0; t < taps; ++t)
          entry.w.data()[c * taps + (taps - 1 - t)] = w.data()[c * taps + t];
      }
      forward(state, compute, false, dy, entry.w, Tensor(), dx, *flipped);
      return;
    }
  }
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}", op, dx.shape().text(), w.shape().text(), geometry_key(g),
                  static_cast<int>(compute), elements_key({&dy, &dx}));
  with_dnnl_errors(op, shapes_text(dy, w, dx), [&] {
    auto& entry = state.cached<BackwardDataEntry>(key, [&] {
      auto e = std::make_unique<BackwardDataEntry>();
      const Window window =
          transposed ? transpose_window(g, dx.shape(), w.shape(), dy.shape()) : conv_window(g);
      const memory::desc weights_md = any_weights(w.shape(), g.groups, transposed, compute);
      const memory::desc diff_dst_md = desc_of(dy, compute);
      auto hint = forward_pd(transposed, state.engine, desc_of(dx, compute), weights_md,
                             memory::desc(), diff_dst_md, window);
      memory::desc internal_weights;
      if (transposed) {
        const auto pd = deconvolution_backward_data_pd(
            state.engine, desc_of(dx), weights_md, diff_dst_md, window,
            deconvolution_forward::primitive_desc(hint.get()));
        e->run = deconvolution_backward_data(pd);
        internal_weights = pd.weights_desc();
      } else {
        const auto pd =
            convolution_backward_data_pd(state.engine, desc_of(dx), weights_md, diff_dst_md, window,
                                         convolution_forward::primitive_desc(hint.get()));
        e->run = convolution_backward_data(pd);
        internal_weights = pd.weights_desc();
      }
      e->diff_src = memory(desc_of(dx), state.engine, DNNL_MEMORY_NONE);
      e->diff_dst = std::make_unique<Converted>(desc_of(dy), diff_dst_md, state.engine);
      e->weights = std::make_unique<Converted>(user_weights(w.shape(), g.groups, transposed),
                                               internal_weights, state.engine);
      return e;
    });
    bind(entry.diff_src, dx);
    bind(entry.diff_dst->user, dy);
    bind(entry.weights->user, w);
    const bool reuse =
        converted_dy != nullptr && converted_dy->get_desc() == entry.diff_dst->internal_desc;
    entry.run.execute(state.stream, {{DNNL_ARG_DIFF_SRC, entry.diff_src},
                                     {DNNL_ARG_WEIGHTS, entry.weights->in(state.stream)},
                                     {DNNL_ARG_DIFF_DST,
                                      reuse ? *converted_dy : entry.diff_dst->in(state.stream)}});
    state.stream.wait();
  });
}

// The weight (and bias) gradient. `saved`, when given, is what the training forward kept of x.
// Returns dy as the primitive read it when that was a converted copy (valid until the next call
// with the same shapes), else null.
const memory* backward_weights(CpuBackend::State& state, dt compute, bool transposed,
                               const Tensor& x, const Tensor& dy, Tensor& dw, Tensor& dbias,
                               const ConvGeometry& g, const SavedInput* saved = nullptr) {
  const char* op = transposed ? "conv_transpose2d_backward_weights" : "conv2d_backward_weights";
  const Shape expected = transposed ? conv_transpose2d_output_shape(x.shape(), dw.shape(), g)
                                    : conv2d_output_shape(x.shape(), dw.shape(), g);
  check_shape(op, "dy", dy.shape(), expected);
  LABPOSE_ASSERT(dw.layout() == Layout::flat);
  if (own_weight_gradient(transposed, x, dw.shape(), dy, g)) {
    depthwise_weight_gradient(state, x, dy, dw, dbias, g);
    return nullptr;
  }
  const std::string key =
      fmt::format("{}|{}|{}|{}|{}|{}|{}", op, x.shape().text(), dw.shape().text(), dbias.empty(),
                  geometry_key(g), static_cast<int>(compute), elements_key({&x, &dy}));
  const memory* converted_dy = nullptr;
  with_dnnl_errors(op, shapes_text(x, dy, dw), [&] {
    auto& entry = state.cached<BackwardWeightsEntry>(key, [&] {
      auto e = std::make_unique<BackwardWeightsEntry>();
      const Window window =
          transposed ? transpose_window(g, x.shape(), dw.shape(), dy.shape()) : conv_window(g);
      e->has_bias = !dbias.empty();
      const memory::desc bias_md = e->has_bias ? bias_desc(dy.shape().c()) : memory::desc();
      // Weight and bias gradients in fp32 from operands in `compute`.
      const memory::desc weights_md = any_weights(dw.shape(), g.groups, transposed, dt::f32);
      const memory::desc src_md = desc_of(x, compute), diff_dst_md = desc_of(dy, compute);
      auto hint = forward_pd(transposed, state.engine, src_md,
                             any_weights(dw.shape(), g.groups, transposed, compute), bias_md,
                             diff_dst_md, window);
      memory::desc internal_weights;
      if (transposed) {
        const auto pd = deconvolution_backward_weights_pd(
            state.engine, src_md, weights_md, bias_md, diff_dst_md, window,
            deconvolution_forward::primitive_desc(hint.get()));
        e->run = deconvolution_backward_weights(pd);
        internal_weights = pd.diff_weights_desc();
      } else {
        const auto pd = convolution_backward_weights_pd(
            state.engine, src_md, weights_md, bias_md, diff_dst_md, window,
            convolution_forward::primitive_desc(hint.get()));
        e->run = convolution_backward_weights(pd);
        internal_weights = pd.diff_weights_desc();
      }
      e->src = std::make_unique<Converted>(desc_of(x), src_md, state.engine);
      e->diff_dst = std::make_unique<Converted>(desc_of(dy), diff_dst_md, state.engine);
      if (e->has_bias) e->diff_bias = memory(bias_md, state.engine, DNNL_MEMORY_NONE);
      e->diff_weights = std::make_unique<Converted>(user_weights(dw.shape(), g.groups, transposed),
                                                    internal_weights, state.engine);
      return e;
    });
    bind(entry.src->user, x);
    bind(entry.diff_dst->user, dy);
    bind(entry.diff_weights->user, dw);
    const auto* kept = dynamic_cast<const ConvertedInput*>(saved);
    const bool reuse = kept != nullptr && kept->copy.get_desc() == entry.src->internal_desc;
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, reuse ? kept->copy : entry.src->in(state.stream)},
        {DNNL_ARG_DIFF_DST, entry.diff_dst->in(state.stream)},
        {DNNL_ARG_DIFF_WEIGHTS, entry.diff_weights->internal()}};
    if (entry.has_bias) {
      bind(entry.diff_bias, dbias);
      args[DNNL_ARG_DIFF_BIAS] = entry.diff_bias;
    }
    entry.run.execute(state.stream, args);
    entry.diff_weights->out(state.stream);
    state.stream.wait();
    if (entry.diff_dst->differs) converted_dy = &entry.diff_dst->internal();
  });
  return converted_dy;
}

// The arithmetic of the training convolutions: the backend's precision.
dt compute_type_of(PlanPrecision precision) {
  return precision == PlanPrecision::bf16 ? dt::bf16 : dt::f32;
}

// Both gradients of a layer's training step: the weight gradient first, then the data gradient
// from the copy of dy that it converted.
void backward(CpuBackend::State& state, PlanPrecision precision, bool transposed, const Tensor& x,
              const Tensor& dy, const Tensor& w, Tensor* dx, Tensor& dw, Tensor& dbias,
              const ConvGeometry& g, const SavedInput* saved) {
  const dt compute = compute_type_of(precision);
  const memory* converted_dy =
      backward_weights(state, compute, transposed, x, dy, dw, dbias, g, saved);
  if (dx != nullptr) backward_data(state, compute, transposed, dy, w, *dx, g, converted_dy);
}

}  // namespace

void CpuBackend::conv2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                const ConvGeometry& g) {
  forward(state(), compute_type_of(plan_precision_), false, x, w, bias, y, g);
}
void CpuBackend::conv2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                      const ConvGeometry& g) {
  backward_data(state(), compute_type_of(plan_precision_), false, dy, w, dx, g);
}
void CpuBackend::conv2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                         Tensor& dbias, const ConvGeometry& g) {
  backward_weights(state(), compute_type_of(plan_precision_), false, x, dy, dw, dbias, g);
}
void CpuBackend::conv2d_forward_training(const Tensor& x, const Tensor& w, const Tensor& bias,
                                         Tensor& y, const ConvGeometry& g,
                                         std::unique_ptr<SavedInput>& saved) {
  forward(state(), compute_type_of(plan_precision_), false, x, w, bias, y, g, &saved);
}
void CpuBackend::conv2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w, Tensor* dx,
                                 Tensor& dw, Tensor& dbias, const ConvGeometry& g,
                                 const SavedInput* saved) {
  backward(state(), plan_precision_, false, x, dy, w, dx, dw, dbias, g, saved);
}
void CpuBackend::conv_transpose2d_forward(const Tensor& x, const Tensor& w, const Tensor& bias,
                                          Tensor& y, const ConvGeometry& g) {
  forward(state(), compute_type_of(plan_precision_), true, x, w, bias, y, g);
}
void CpuBackend::conv_transpose2d_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx,
                                                const ConvGeometry& g) {
  backward_data(state(), compute_type_of(plan_precision_), true, dy, w, dx, g);
}
void CpuBackend::conv_transpose2d_backward_weights(const Tensor& x, const Tensor& dy, Tensor& dw,
                                                   Tensor& dbias, const ConvGeometry& g) {
  backward_weights(state(), compute_type_of(plan_precision_), true, x, dy, dw, dbias, g);
}

void CpuBackend::conv_transpose2d_forward_training(const Tensor& x, const Tensor& w,
                                                   const Tensor& bias, Tensor& y,
                                                   const ConvGeometry& g,
                                                   std::unique_ptr<SavedInput>& saved) {
  forward(state(), compute_type_of(plan_precision_), true, x, w, bias, y, g, &saved);
}
void CpuBackend::conv_transpose2d_backward(const Tensor& x, const Tensor& dy, const Tensor& w,
                                           Tensor* dx, Tensor& dw, Tensor& dbias,
                                           const ConvGeometry& g, const SavedInput* saved) {
  backward(state(), plan_precision_, true, x, dy, w, dx, dw, dbias, g, saved);
}

}  // namespace labpose::nets::cpu
