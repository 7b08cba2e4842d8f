// CPU inference plans: each fused op becomes one oneDNN primitive (convolutions with the folded
// batch norm as weights and bias, ReLU/ReLU6 and the residual sum as post-ops), activations stay in
// the blocked layouts oneDNN picks, weights are reordered once, and buffers are reused as soon as a
// value is dead (a residual sum writes into its residual's buffer when nothing reads it later).
// In bf16 (a CPU with bf16 units), weights are converted once and activations stay bf16 from the
// normalized input to the last layers, which write their outputs in fp32; bias, accumulation and
// post-ops are fp32 inside oneDNN's kernels. In int8 (VNNI), weights are quantized per output
// channel, activations are u8/s8 with the scales of the graph's calibration (value_formats.hpp),
// each convolution rescales its int32 sums to its output's scale, and outputs are fp32.
// A batch runs in passes of as many frames as fit the cache (pass_frames), sibling heads
// (sibling_heads) are one op, and a transposed convolution with few outputs (the heads) is a 1×1
// convolution into its columns and a gather of the taps (as_columns).
#include <fmt/core.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/error.hpp"
#include "nets/cpu/depthwise.hpp"
#include "nets/cpu/dilated_phases.hpp"
#include "nets/cpu/dnnl_state.hpp"
#include "nets/cpu/dnnl_versions.hpp"
#include "nets/cpu/max_pool.hpp"
#include "nets/cpu/pixel_normalization.hpp"
#include "nets/cpu/value_formats.hpp"
#include "nets/cpu/winograd.hpp"
#include "nets/fused_graph.hpp"
#include "nets/generic_plan.hpp"

namespace labpose::nets::cpu {
namespace {

using namespace dnnl;
using tag = memory::format_tag;
using dt = memory::data_type;

// Whether oneDNN chose its reference loops ("ref:any") for a primitive.
bool reference_kernel(const primitive_desc_base& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

// Bytes of one element of `type`.
std::size_t element_bytes(dt type) {
  return memory::desc({1}, type, tag::a).get_size();
}

// The largest working set of one frame: over the ops, the bytes an op reads and writes (its input
// and its output; a residual sum accumulates into the output).
std::size_t frame_working_set(const FusedGraph& graph, const Shape& frame,
                              const std::vector<ValueFormat>& formats, const ValueFormat& input) {
  const std::vector<Shape> shapes = fused_shapes(graph, frame);
  const auto bytes = [&](int value) -> std::size_t {
    if (value < 0) {  // the network input: fp32 pixels for normalize, input's format otherwise
      return static_cast<std::size_t>(frame.elements()) * element_bytes(input.type);
    }
    const auto v = static_cast<std::size_t>(value);
    return static_cast<std::size_t>(shapes[v].elements()) * element_bytes(formats[v].type);
  };
  std::size_t most = 0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const FusedOp& op = graph.ops[i];
    const std::size_t read = op.kind == FusedOp::Kind::normalize
                                 ? static_cast<std::size_t>(frame.elements()) * sizeof(float)
                                 : bytes(op.input);
    most = std::max(most, read + bytes(static_cast<int>(i)));
  }
  return most;
}

// The frames one pass of a plan runs: the largest divisor of the batch whose working set fits in
// half of the last-level cache (the other half for weights and what the next op reads). Layer by
// layer, a batch whose activations spill to memory is slower per frame than a smaller one whose
// activations stay in the cache, more than larger matrix blocks gain (docs/precision.md has the
// figures). Depends on the shapes and the cache's size alone, never on a timing.
std::int64_t pass_frames(std::int64_t batch, std::size_t frame_bytes, std::size_t cache_bytes) {
  const std::size_t budget = cache_bytes / 2;
  for (std::int64_t frames = batch; frames > 1; --frames) {
    if (batch % frames == 0 && static_cast<std::size_t>(frames) * frame_bytes <= budget)
      return frames;
  }
  return 1;
}

Shape with_batch(const Shape& shape, std::int64_t batch) {
  std::vector<std::int64_t> dims = shape.dims();
  dims[0] = batch;
  return Shape(dims);
}

// Transposed convolutions that read the same value in the same way and whose outputs only leave
// the plan (the score-map and location-refinement heads): sets of two or more, each in graph
// order. One primitive computes a set with its output channels side by side, reading the input
// once; the heads, with 4-16 output channels each, take a third of mobilenet_v2_0.35's time when
// apart.
std::vector<std::vector<std::size_t>> sibling_heads(const FusedGraph& graph) {
  std::vector<bool> read(graph.ops.size(), false), taken(graph.ops.size(), false);
  for (const FusedOp& op : graph.ops) {
    for (const int value : {op.input, op.residual}) {
      if (value >= 0) read[static_cast<std::size_t>(value)] = true;
    }
  }
  const auto mergeable = [&](std::size_t i) {
    const FusedOp& op = graph.ops[i];
    return op.kind == FusedOp::Kind::conv_transpose && op.geometry.groups == 1 && op.residual < 0 &&
           !read[i];
  };
  std::vector<std::vector<std::size_t>> sets;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    if (taken[i] || !mergeable(i)) continue;
    const FusedOp& a = graph.ops[i];
    std::vector<std::size_t> set{i};
    for (std::size_t j = i + 1; j < graph.ops.size(); ++j) {
      const FusedOp& b = graph.ops[j];
      if (!taken[j] && mergeable(j) && b.input == a.input && b.geometry == a.geometry &&
          b.weight_shape[0] == a.weight_shape[0] && b.weight_shape[2] == a.weight_shape[2] &&
          b.weight_shape[3] == a.weight_shape[3] && b.activation == a.activation &&
          b.activation_after_residual == a.activation_after_residual) {
        set.push_back(j);
        taken[j] = true;
      }
    }
    if (set.size() > 1) sets.push_back(set);
  }
  return sets;
}

// One transposed convolution computing the set's: weights (C, K, R, S) with each member's K
// output channels after the previous member's, biases likewise.
FusedOp merged_heads(const FusedGraph& graph, const std::vector<std::size_t>& set) {
  FusedOp merged = graph.ops[set.front()];
  const Shape& w = merged.weight_shape;
  const std::int64_t inputs = w[0], taps = w[2] * w[3];
  std::int64_t outputs = 0;
  for (const std::size_t m : set) outputs += graph.ops[m].weight_shape[1];
  merged.weights.assign(static_cast<std::size_t>(inputs * outputs * taps), 0.0F);
  merged.bias.clear();
  std::int64_t first = 0;  // the member's first output channel
  for (const std::size_t m : set) {
    const FusedOp& op = graph.ops[m];
    const std::int64_t k = op.weight_shape[1];
    for (std::int64_t c = 0; c < inputs; ++c) {
      std::copy_n(op.weights.begin() + c * k * taps, k * taps,
                  merged.weights.begin() + (c * outputs + first) * taps);
    }
    merged.bias.insert(merged.bias.end(), op.bias.begin(), op.bias.end());
    merged.name += "+" + op.name;
    first += k;
  }
  merged.name = merged.name.substr(merged.name.find('+') + 1);
  merged.weight_shape = Shape{inputs, outputs, w[2], w[3]};
  return merged;
}

// A transposed convolution computed as a 1×1 convolution into its columns and a gather of the
// taps: where the columns (K·R·S values per input pixel) are no more than the input's channels and
// the output is fp32 (the heads). oneDNN 2.6's transposed-convolution kernel runs the heads at
// under half the rate of its 1×1 convolutions, which read the input once into a matrix product.
bool as_columns(const FusedOp& op, const ValueFormat& out) {
  const Shape& w = op.weight_shape;
  return op.kind == FusedOp::Kind::conv_transpose && op.geometry.groups == 1 && op.residual < 0 &&
         out.type == dt::f32 && out.scale == 1.0F && w[1] * w[2] * w[3] <= w[0];
}

// The 1×1 convolution computing a transposed convolution's columns: its output channel
// (r·S + s)·K + k is what an input pixel gives output channel k through tap (r, s). No bias and no
// activation: the gather adds those.
FusedOp columns_op(const FusedOp& op) {
  const Shape& w = op.weight_shape;
  const std::int64_t inputs = w[0], outputs = w[1], taps = w[2] * w[3];
  FusedOp columns = op;
  columns.kind = FusedOp::Kind::conv;
  columns.weight_shape = Shape{taps * outputs, inputs, 1, 1};
  columns.weights.assign(static_cast<std::size_t>(taps * outputs * inputs), 0.0F);
  for (std::int64_t c = 0; c < inputs; ++c) {
    for (std::int64_t k = 0; k < outputs; ++k) {
      for (std::int64_t t = 0; t < taps; ++t) {
        columns.weights[static_cast<std::size_t>((t * outputs + k) * inputs + c)] =
            op.weights[static_cast<std::size_t>((c * outputs + k) * taps + t)];
      }
    }
  }
  columns.bias.assign(static_cast<std::size_t>(taps * outputs), 0.0F);
  columns.geometry = ConvGeometry{};
  columns.activation = -1.0F;
  columns.activation_after_residual = -1.0F;
  return columns;
}

// y = act(bias + sum of the columns' taps that land on each output pixel), NHWC fp32 both: output
// (y, x) takes tap (r, s) of input pixel (iy, ix) where y = iy·stride - pad + r·dilation, and the
// same across. Each output pixel is written once, so rows run in parallel.
void gather_taps(const float* columns, float* out, const Shape& in, const Shape& shape,
                 const Shape& w, const ConvGeometry& g, const std::vector<float>& bias,
                 float activation, float activation_after) {
  const std::int64_t k_count = w[1], r_count = w[2], s_count = w[3];
  const std::int64_t column_size = r_count * s_count * k_count;
  const std::int64_t rows = shape.n() * shape.h();
#pragma omp parallel for schedule(static)
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t n = row / shape.h(), y = row % shape.h();
    for (std::int64_t x = 0; x < shape.w(); ++x) {
      float* pixel = out + (row * shape.w() + x) * k_count;
      std::copy(bias.begin(), bias.end(), pixel);
      for (std::int64_t r = 0; r < r_count; ++r) {
        const std::int64_t ty = y + g.pad_top - r * g.dilation_h;
        if (ty < 0 || ty % g.stride_h != 0 || ty / g.stride_h >= in.h()) continue;
        for (std::int64_t s = 0; s < s_count; ++s) {
          const std::int64_t tx = x + g.pad_left - s * g.dilation_w;
          if (tx < 0 || tx % g.stride_w != 0 || tx / g.stride_w >= in.w()) continue;
          const float* tap =
              columns + ((n * in.h() + ty / g.stride_h) * in.w() + tx / g.stride_w) * column_size +
              (r * s_count + s) * k_count;
          for (std::int64_t k = 0; k < k_count; ++k) pixel[k] += tap[k];
        }
      }
      for (const float cap : {activation, activation_after}) {
        if (cap < 0) continue;
        for (std::int64_t k = 0; k < k_count; ++k)
          pixel[k] = cap == 0 ? std::max(pixel[k], 0.0F) : std::clamp(pixel[k], 0.0F, cap);
      }
    }
  }
}

class CpuPlan final : public InferencePlan {
 public:
  CpuPlan(CpuBackend& backend, const FusedGraph& graph, const Shape& input)
      : backend_(backend),
        state_(backend.state()),
        input_shape_(input),
        precision_(backend.plan_precision()),
        formats_(value_formats(graph, precision_)),
        input_format_(input_format(graph, precision_)),
        frames_per_pass_(pass_frames(
            input.n(), frame_working_set(graph, with_batch(input, 1), formats_, input_format_),
            backend.cache_bytes())),
        pass_shape_(with_batch(input, frames_per_pass_)) {
    // Compiled for one pass of frames_per_pass_ frames; run() makes as many passes as it takes.
    const std::vector<Shape> shapes = fused_shapes(graph, pass_shape_);
    const std::size_t count = graph.ops.size();
    // The last op reading each value (outputs live to the end).
    std::vector<std::size_t> last_use(count, 0);
    for (std::size_t i = 0; i < count; ++i) {
      for (const int value : {graph.ops[i].input, graph.ops[i].residual}) {
        if (value >= 0) last_use[static_cast<std::size_t>(value)] = i;
      }
    }
    for (int output : graph.outputs) last_use[static_cast<std::size_t>(output)] = count;

    input_memory_ = memory(desc_of(pass_shape_, Layout::nhwc), state_.engine, DNNL_MEMORY_NONE);
    values_.resize(count);
    buffer_of_.assign(count, -1);
    buffer_taken_over_.assign(count, false);
    // Sibling heads are compiled as one op where the first of them stands; the others' values are
    // channel ranges of its output.
    std::vector<FusedOp> merged(count);
    std::vector<std::vector<std::size_t>> set_at(count);
    std::vector<bool> in_a_set(count, false);
    for (const auto& set : sibling_heads(graph)) {
      merged[set.front()] = merged_heads(graph, set);
      set_at[set.front()] = set;
      for (const std::size_t m : set) in_a_set[m] = true;
    }
    for (std::size_t i = 0; i < count; ++i) {
      if (in_a_set[i] && set_at[i].empty()) continue;  // computed with the first of its set
      const FusedOp& op = set_at[i].empty() ? graph.ops[i] : merged[i];
      const memory source = op.input >= 0 ? values_[static_cast<std::size_t>(op.input)]
                            : op.kind == FusedOp::Kind::normalize ? input_memory_
                                                                  : network_input();
      const Shape& in = op.input < 0 ? pass_shape_ : shapes[static_cast<std::size_t>(op.input)];
      std::string where = fmt::format("{} at input {}", op.name, pass_shape_.text());
      with_dnnl_errors("compiling an inference plan", where, [&] {
        switch (op.kind) {
          case FusedOp::Kind::normalize:
            add_normalize(op, source, shapes[i], i);
            break;
          case FusedOp::Kind::max_pool:
            add_pool(op, source, in, shapes[i], i);
            break;
          case FusedOp::Kind::conv:
          case FusedOp::Kind::conv_transpose: {
            const Shape out = set_at[i].empty() ? shapes[i] : merged_shape(shapes, set_at[i]);
            if (as_columns(op, formats_[i])) {
              add_transpose_as_columns(op, source, in, out, i, last_use);
            } else if (by_winograd(op, source, in, i)) {
              add_winograd(op, source, in, out, i);
            } else if (by_depthwise(op, source, in, i)) {
              add_depthwise(op, source, in, out, i);
            } else if (by_phases(op, source, in, i)) {
              add_dilated_by_phases(op, source, in, out, i, last_use);
            } else {
              add_conv(op, source, in, out, i, last_use);
            }
            break;
          }
        }
      });
      if (!set_at[i].empty()) split_into_members(set_at[i], shapes);
      // Values whose last reader was op i can give their buffers back.
      for (std::size_t v = 0; v < i + 1; ++v) {
        if (last_use[v] == i && buffer_of_[v] >= 0 && !buffer_taken_over_[v])
          release(buffer_of_[v]);
      }
    }
    // The outputs hold the whole batch; each pass writes its frames' part.
    for (int output : graph.outputs) {
      const auto index = static_cast<std::size_t>(output);
      outputs_.push_back(backend_.allocate(with_batch(shapes[index], input.n())));
      output_shapes_.push_back(outputs_.back().shape());
      memory target(desc_of(shapes[index], outputs_.back().layout()), state_.engine,
                    DNNL_MEMORY_NONE);
      output_targets_.push_back(target);
      ScaledReorder out = scaled_reorder(values_[index], target, 0, {formats_[index].scale});
      steps_.push_back({out.run, std::move(out.args), {}});
    }
  }

  std::int64_t frames_per_pass() const override { return frames_per_pass_; }

  const Shape& input_shape() const override { return input_shape_; }
  const std::vector<Shape>& output_shapes() const override { return output_shapes_; }

  const std::vector<Tensor>& run(const Tensor& input) override {
    return run_first(input, input_shape_.n());
  }

  const std::vector<Tensor>& run_first(const Tensor& input, std::int64_t frames) override {
    check_shape("InferencePlan::run", "input", input.shape(), input_shape_);
    LABPOSE_ASSERT(input.layout() == Layout::nhwc);
    LABPOSE_ASSERT(frames >= 1 && frames <= input_shape_.n());
    with_dnnl_errors("running an inference plan", input_shape_.text(), [&] {
      for (std::int64_t first = 0; first < frames; first += frames_per_pass_) {
        input_memory_.set_data_handle(frame_data(input, first));
        for (std::size_t k = 0; k < outputs_.size(); ++k)
          output_targets_[k].set_data_handle(frame_data(outputs_[k], first));
        for (auto& step : steps_) {
          if (step.custom) {
            step.custom();
          } else {
            step.run.execute(state_.stream, step.args);
          }
        }
        state_.stream.wait();
      }
    });
    return outputs_;
  }

 private:
  struct Step {
    primitive run;
    std::unordered_map<int, memory> args;
    std::function<void()> custom;
  };

  // The output of a set of sibling heads: their channels side by side.
  static Shape merged_shape(const std::vector<Shape>& shapes, const std::vector<std::size_t>& set) {
    std::int64_t channels = 0;
    for (const std::size_t m : set) channels += shapes[m].c();
    const Shape& first = shapes[set.front()];
    return Shape{first.n(), channels, first.h(), first.w()};
  }

  // Each member's value: its channels of the set's output (compiled as the first member's value).
  void split_into_members(const std::vector<std::size_t>& set, const std::vector<Shape>& shapes) {
    const memory whole = values_[set.front()];
    const int buffer = buffer_of_[set.front()];
    std::int64_t first = 0;
    for (const std::size_t m : set) {
      const memory::desc part =
          whole.get_desc().submemory_desc(dims_of(shapes[m]), {0, first, 0, 0});
      values_[m] = memory(part, state_.engine, whole.get_data_handle());
      buffer_of_[m] = buffer;
      first += shapes[m].c();
    }
  }

  // Frame `frame` of a batch of fp32 images (the batch is the outermost dimension of every layout).
  static float* frame_data(const Tensor& tensor, std::int64_t frame) {
    return tensor.data() + frame * (tensor.elements() / tensor.shape().n());
  }

  // A buffer of at least `bytes`, reused from dead values when one is big enough.
  int acquire(std::size_t bytes) {
    int best = -1;
    for (int b : free_) {
      const auto size = buffers_[static_cast<std::size_t>(b)]->bytes();
      if (size >= bytes && (best < 0 || size < buffers_[static_cast<std::size_t>(best)]->bytes()))
        best = b;
    }
    if (best >= 0) {
      free_.erase(std::find(free_.begin(), free_.end(), best));
      return best;
    }
    buffers_.push_back(allocate_host_storage(bytes));
    return static_cast<int>(buffers_.size()) - 1;
  }
  void release(int buffer) { free_.push_back(buffer); }

  void set_value(std::size_t i, const memory::desc& desc, int buffer) {
    values_[i] = memory(desc, state_.engine, buffers_[static_cast<std::size_t>(buffer)]->data());
    buffer_of_[i] = buffer;
  }

  // The network's input in input_format_, for ops other than normalize that read it (a graph
  // fused without its normalization): in a bf16 or int8 plan, converted once per run.
  memory network_input() {
    if (input_format_.type == dt::f32) return input_memory_;
    if (!converted_input_) {
      const memory::desc desc(dims_of(pass_shape_), input_format_.type, tag::nhwc);
      const auto buffer = static_cast<std::size_t>(acquire(desc.get_size()));
      converted_input_ = memory(desc, state_.engine, buffers_[buffer]->data());
      ScaledReorder in =
          scaled_reorder(input_memory_, *converted_input_, 0, {1.0F / input_format_.scale});
      steps_.push_back({in.run, std::move(in.args), {}});
    }
    return *converted_input_;
  }

  // The format of what op `op` reads.
  const ValueFormat& source_format(const FusedOp& op) const {
    return op.input >= 0 ? formats_[static_cast<std::size_t>(op.input)] : input_format_;
  }

  void add_normalize(const FusedOp& op, const memory& source, const Shape& shape, std::size_t i) {
    const ValueFormat format = formats_[i];
    const memory::desc desc(dims_of(shape), format.type, tag::nhwc);
    set_value(i, desc, acquire(desc.get_size()));
    memory target = values_[i];
    const std::int64_t pixels = shape.n() * shape.h() * shape.w();
    LABPOSE_ASSERT(static_cast<std::int64_t>(op.scale.size()) == shape.c());
    const NormalizedType type = format.type == dt::bf16 ? NormalizedType::bf16
                                : format.type == dt::s8 ? NormalizedType::s8
                                                        : NormalizedType::f32;
    auto normalization =
        std::make_shared<PixelNormalization>(op.scale, op.shift, type, format.scale);
    steps_.push_back({primitive(), {}, [source, target, pixels, normalization]() {
                        normalization->run(static_cast<const float*>(source.get_data_handle()),
                                           target.get_data_handle(), pixels);
                      }});
  }

  void add_pool(const FusedOp& op, const memory& source, const Shape& in, const Shape& shape,
                std::size_t i) {
    const auto& g = op.pool;
    if (by_own_pool(op, source, in, i)) {
      const memory target = own_kernel_output(shape, i);
      steps_.push_back({primitive(), {}, [source, target, in, shape, g]() {
                          max_pool_bf16(static_cast<const std::uint16_t*>(source.get_data_handle()),
                                        static_cast<std::uint16_t*>(target.get_data_handle()), in,
                                        shape, g);
                        }});
      count_own_max_pool();
      return;
    }
    const auto pd = max_pool_forward_pd(
        state_.engine, prop_kind::forward_inference, source.get_desc(),
        memory::desc(dims_of(shape), formats_[i].type, tag::any), pool_window(g));
    set_value(i, pd.dst_desc(), acquire(pd.dst_desc().get_size()));
    steps_.push_back(
        {pooling_forward(pd), {{DNNL_ARG_SRC, source}, {DNNL_ARG_DST, values_[i]}}, {}});
  }

  // Whether max_pool_bf16 pools op i: bf16 NHWC activations in (a pool's value has its input's
  // type: value_formats.hpp).
  bool by_own_pool(const FusedOp& op, const memory& source, const Shape& in, std::size_t i) const {
    return own_max_pool_enabled() && max_pool_bf16_applies(op.pool) &&
           formats_[i].type == dt::bf16 &&
           source.get_desc() == memory::desc(dims_of(in), dt::bf16, tag::nhwc);
  }

  // ReLU (cap 0) or ReLU capped at `cap`, on values counted in steps of `step`.
  static void append_activation(post_ops& ops, float cap, float step) {
    if (cap < 0) return;
    if (cap == 0) {
      append_eltwise(ops, algorithm::eltwise_relu, 0.0F, 0.0F);
    } else {
      append_eltwise(ops, algorithm::eltwise_clip, 0.0F, cap / step);
    }
  }

  // Whether op i (reading `source` of shape `in`) can run on labpose's own kernels: a convolution
  // without a residual, in a bf16 or fp32 plan, reading and writing the plan's type in NHWC.
  bool by_own_kernel(const FusedOp& op, const memory& source, const Shape& in,
                     std::size_t i) const {
    const dt type = precision_ == PlanPrecision::bf16 ? dt::bf16 : dt::f32;
    return op.kind == FusedOp::Kind::conv && op.residual < 0 && formats_[i].type == type &&
           formats_[i].scale == 1.0F &&
           source.get_desc() == memory::desc(dims_of(in), type, tag::nhwc);
  }
  // A 3×3 convolution that winograd_applies takes.
  bool by_winograd(const FusedOp& op, const memory& source, const Shape& in, std::size_t i) const {
    return winograd_enabled() && winograd_applies(op.weight_shape, op.geometry, precision_) &&
           by_own_kernel(op, source, in, i);
  }
  // A depthwise convolution that depthwise_planned takes.
  bool by_depthwise(const FusedOp& op, const memory& source, const Shape& in, std::size_t i) const {
    return depthwise_planned(op.weight_shape, op.geometry, precision_) &&
           by_own_kernel(op, source, in, i);
  }

  // A dilated convolution that phases_apply takes.
  bool by_phases(const FusedOp& op, const memory& source, const Shape& in, std::size_t i) const {
    return phases_enabled() && phases_apply(op.weight_shape, op.geometry, precision_) &&
           by_own_kernel(op, source, in, i);
  }

  // Op i's output as labpose's own kernels write it: a buffer of the plan's type, in NHWC.
  memory own_kernel_output(const Shape& shape, std::size_t i) {
    const memory::desc desc(dims_of(shape), formats_[i].type, tag::nhwc);
    set_value(i, desc, acquire(desc.get_size()));
    return values_[i];
  }

  void add_winograd(const FusedOp& op, const memory& source, const Shape& in, const Shape& shape,
                    std::size_t i) {
    const memory target = own_kernel_output(shape, i);
    auto conv = std::make_shared<WinogradConv>(
        op.weights, op.weight_shape, op.bias, in, shape, op.geometry, op.activation,
        op.activation_after_residual, precision_, omp_get_max_threads());
    // One scratch buffer for all of them, as large as the largest needs.
    if (!winograd_scratch_ || winograd_scratch_->bytes() < conv->scratch_bytes())
      winograd_scratch_ = allocate_host_storage(conv->scratch_bytes());
    steps_.push_back({primitive(), {}, [this, conv, source, target]() {
                        conv->run(source.get_data_handle(), target.get_data_handle(),
                                  winograd_scratch_->data());
                      }});
  }

  void add_depthwise(const FusedOp& op, const memory& source, const Shape& in, const Shape& shape,
                     std::size_t i) {
    const memory target = own_kernel_output(shape, i);
    auto conv = std::make_shared<DepthwiseConv>(
        op.weights, op.weight_shape, op.bias, in, shape, op.geometry, op.activation,
        op.activation_after_residual, precision_, omp_get_max_threads());
    steps_.push_back({primitive(), {}, [conv, source, target]() {
                        conv->run(source.get_data_handle(), target.get_data_handle());
                      }});
  }

  // as_columns: the 1×1 convolution writes the columns in NHWC, then gather_taps the output.
  void add_transpose_as_columns(const FusedOp& op, const memory& source, const Shape& in,
                                const Shape& shape, std::size_t i,
                                const std::vector<std::size_t>& last_use) {
    const Shape& w = op.weight_shape;
    add_conv(columns_op(op), source, in, Shape{in.n(), w[1] * w[2] * w[3], in.h(), in.w()}, i,
             last_use, tag::nhwc);
    const memory columns = values_[i];
    const int columns_buffer = buffer_of_[i];
    const memory::desc desc(dims_of(shape), dt::f32, tag::nhwc);
    set_value(i, desc, acquire(desc.get_size()));
    release(columns_buffer);
    steps_.push_back({primitive(),
                      {},
                      [columns, out = values_[i], in, shape, w, g = op.geometry, bias = op.bias,
                       before = op.activation, after = op.activation_after_residual]() {
                        gather_taps(static_cast<const float*>(columns.get_data_handle()),
                                    static_cast<float*>(out.get_data_handle()), in, shape, w, g,
                                    bias, before, after);
                      }});
  }

  // by_phases: the input split into its phases, one undilated convolution of them all, the phases
  // merged into the output (dilated_phases.hpp).
  void add_dilated_by_phases(const FusedOp& op, const memory& source, const Shape& in,
                             const Shape& shape, std::size_t i,
                             const std::vector<std::size_t>& last_use) {
    const PhaseSplit split_in{in.n(), in.h(), in.w(), in.c(), op.geometry.dilation_h};
    const PhaseSplit split_out{shape.n(), shape.h(), shape.w(), shape.c(), op.geometry.dilation_h};
    const Shape phases_in{split_in.phase_images(), in.c(), split_in.phase_height(),
                          split_in.phase_width()};
    const Shape phases_out{split_in.phase_images(), shape.c(), split_in.phase_height(),
                           split_in.phase_width()};
    const memory::desc in_desc(dims_of(phases_in), formats_[i].type, tag::nhwc);
    const int in_buffer = acquire(in_desc.get_size());
    const memory phases(in_desc, state_.engine,
                        buffers_[static_cast<std::size_t>(in_buffer)]->data());
    const std::size_t bytes = element_bytes(formats_[i].type);
    steps_.push_back({primitive(), {}, [source, phases, split_in, bytes]() {
                        split_into_phases(source.get_data_handle(), phases.get_data_handle(),
                                          split_in, bytes);
                      }});
    FusedOp undilated = op;
    undilated.geometry = phase_geometry(op.geometry);
    add_conv(undilated, phases, phases_in, phases_out, i, last_use, tag::nhwc);
    const memory convolved = values_[i];
    const int convolved_buffer = buffer_of_[i];
    release(in_buffer);  // read by the convolution, before the output below is written
    const memory target = own_kernel_output(shape, i);
    release(convolved_buffer);
    steps_.push_back({primitive(), {}, [convolved, target, split_out, bytes]() {
                        merge_phases(convolved.get_data_handle(), target.get_data_handle(),
                                     split_out, bytes);
                      }});
    count_convolution_by_phases();
  }

  void add_conv(const FusedOp& op, const memory& source, const Shape& in, const Shape& shape,
                std::size_t i, const std::vector<std::size_t>& last_use,
                tag destination = tag::any) {
    const bool transposed = op.kind == FusedOp::Kind::conv_transpose;
    const auto& g = op.geometry;
    const Shape& w = op.weight_shape;
    // In int8 the kernel computes out = scale[k] * sum + bias[k] in output steps: scale[k] =
    // input step * weight step[k] / output step; post-ops in output steps.
    const bool int8 = precision_ == PlanPrecision::int8;
    const ValueFormat& in_format = source_format(op);
    const ValueFormat& out_format = formats_[i];
    const std::vector<float> weight_steps = int8 ? weight_scales(op) : std::vector<float>();
    post_ops ops;
    append_activation(ops, op.activation, out_format.scale);
    if (op.residual >= 0)
      ops.append_sum(formats_[static_cast<std::size_t>(op.residual)].scale / out_format.scale);
    append_activation(ops, op.activation_after_residual, out_format.scale);
    primitive_attr attributes;
    attributes.set_post_ops(ops);
    std::vector<float> bias = op.bias;
    Args scale_args;
    if (int8) {
      std::vector<float> output_scales(weight_steps.size());
      for (std::size_t k = 0; k < weight_steps.size(); ++k) {
        output_scales[k] = in_format.scale * weight_steps[k] / out_format.scale;
        bias[k] /= out_format.scale;
      }
      scale_args = set_output_scales(attributes, state_.engine, g.groups > 1, output_scales, bias);
    }
    const dt weight_type = int8 ? dt::s8 : precision_ == PlanPrecision::bf16 ? dt::bf16 : dt::f32;

    // With a residual the output must have the residual's layout (the sum adds in place).
    const memory::desc dst_any = op.residual >= 0
                                     ? values_[static_cast<std::size_t>(op.residual)].get_desc()
                                     : memory::desc(dims_of(shape), out_format.type, destination);
    const memory::desc bias_md({static_cast<std::int64_t>(bias.size())}, dt::f32, tag::a);
    primitive run;
    memory::desc weights_desc, dst_desc;
    memory::desc user_weights;
    if (transposed) {
      const std::int64_t outputs = w[1] * g.groups;
      const memory::desc weights_any =
          g.groups == 1
              ? memory::desc({outputs, w[0], w[2], w[3]}, weight_type, tag::any)
              : memory::desc({g.groups, w[1], w[0] / g.groups, w[2], w[3]}, weight_type, tag::any);
      // oneDNN 2.6 has no optimized transposed convolution for an `any` destination or for
      // inference (it falls back to its reference loops): ask for NHWC and the training flavour.
      const auto pd = deconvolution_forward_pd(
          state_.engine, prop_kind::forward_training, source.get_desc(), weights_any, bias_md,
          op.residual >= 0 ? dst_any : memory::desc(dims_of(shape), out_format.type, tag::nhwc),
          transpose_window(g, in, w, shape), attributes);
      run = deconvolution_forward(pd);
      weights_desc = pd.weights_desc();
      dst_desc = pd.dst_desc();
      user_weights = conv_transpose_weights_desc(w, g.groups);
    } else {
      const auto pd_for = [&](const memory::desc& dst) {
        return convolution_forward_pd(
            state_.engine, prop_kind::forward_inference, source.get_desc(),
            memory::desc(dims_of_desc(conv_weights_desc(w, g.groups, tag::any)), weight_type,
                         tag::any),
            bias_md, dst, conv_window(g), attributes);
      };
      auto pd = pd_for(dst_any);
      // oneDNN 2.6 on a CPU with AVX2 and no AVX-512 (Zen 3) has no kernel that reads NHWC and
      // chooses its destination's layout itself: it runs its reference loops, tens of times
      // slower. Asked for an NHWC destination, its AVX2 kernels take the convolution.
      if (reference_kernel(pd) && op.residual < 0 && destination == tag::any) {
        auto nhwc = pd_for(memory::desc(dims_of(shape), out_format.type, tag::nhwc));
        if (!reference_kernel(nhwc)) pd = nhwc;
      }
      run = convolution_forward(pd);
      weights_desc = pd.weights_desc();
      dst_desc = pd.dst_desc();
      user_weights = conv_weights_desc(w, g.groups, tag::oihw);
    }

    // Weights: folded on the host, reordered once into the primitive's layout and type (in int8
    // divided by their channel's step on the way: dims (K, ...) or grouped (G, K/G, ...)).
    memory plain(user_weights, state_.engine, const_cast<float*>(op.weights.data()));
    memory weights(weights_desc, state_.engine);
    std::vector<float> per_step(weight_steps.size());
    for (std::size_t k = 0; k < weight_steps.size(); ++k) per_step[k] = 1.0F / weight_steps[k];
    if (int8) {
      const ScaledReorder to_weights =
          scaled_reorder(plain, weights, g.groups == 1 ? 1 : 3, per_step);
      to_weights.run.execute(state_.stream, to_weights.args);
    } else {
      reorder(plain, weights).execute(state_.stream, plain, weights);
    }
    memory bias_memory(bias_md, state_.engine);
    std::copy(bias.begin(), bias.end(), static_cast<float*>(bias_memory.get_data_handle()));
    state_.stream.wait();
    constants_.push_back(weights);
    constants_.push_back(bias_memory);

    if (op.residual >= 0) {
      const auto residual = static_cast<std::size_t>(op.residual);
      if (last_use[residual] == i) {
        // Nothing reads the residual after this op: accumulate straight into its buffer.
        set_value(i, dst_desc, buffer_of_[residual]);
        buffer_taken_over_[residual] = true;
      } else {
        set_value(i, dst_desc, acquire(dst_desc.get_size()));
        steps_.push_back({reorder(values_[residual], values_[i]),
                          {{DNNL_ARG_FROM, values_[residual]}, {DNNL_ARG_TO, values_[i]}},
                          {}});
      }
    } else {
      set_value(i, dst_desc, acquire(dst_desc.get_size()));
    }
    scale_args.insert({{DNNL_ARG_SRC, source},
                       {DNNL_ARG_WEIGHTS, weights},
                       {DNNL_ARG_BIAS, bias_memory},
                       {DNNL_ARG_DST, values_[i]}});
    steps_.push_back({run, std::move(scale_args), {}});
  }

  CpuBackend& backend_;
  CpuBackend::State& state_;
  Shape input_shape_;
  PlanPrecision precision_;
  std::vector<ValueFormat> formats_;  // of each op's value
  ValueFormat input_format_;          // of the network input, for ops other than normalize
  std::int64_t frames_per_pass_;
  Shape pass_shape_;  // the input of one pass
  std::vector<Shape> output_shapes_;
  std::vector<memory> output_targets_;  // each output's frames of the current pass
  memory input_memory_;
  std::optional<memory> converted_input_;  // bf16/int8 plans whose first op is not normalize
  std::vector<memory> values_;
  std::vector<int> buffer_of_;
  std::vector<bool> buffer_taken_over_;
  std::vector<std::shared_ptr<Storage>> buffers_;
  std::vector<int> free_;
  std::vector<memory> constants_;
  std::shared_ptr<Storage> winograd_scratch_;  // shared by the Winograd convolutions
  std::vector<Step> steps_;
  std::vector<Tensor> outputs_;
};

}  // namespace

std::unique_ptr<InferencePlan> CpuBackend::compile(const FusedGraph& graph, const Shape& input) {
  return std::make_unique<CpuPlan>(*this, graph, input);
}

}  // namespace labpose::nets::cpu
