// Value formats of CPU plans: the u8/s8 choice settled as a fixed point, since an in-place residual
// sum and a max-pool tie the types of two values together.
#include "nets/cpu/value_formats.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "core/error.hpp"

namespace labpose::nets::cpu {
namespace {

using dt = dnnl::memory::data_type;

// A value that was always 0 still gets a usable step; any range above it is kept as measured
// (activations of some networks are legitimately tiny).
constexpr float kSmallestRange = 1e-30F;

std::size_t index(int value) {
  return static_cast<std::size_t>(value);
}

// Whether op i's value may be negative, before types are tied together.
bool may_be_negative(const FusedOp& op) {
  switch (op.kind) {
    case FusedOp::Kind::normalize:
    case FusedOp::Kind::max_pool:  // of the network input (s8); of a value: that value's
      return true;
    case FusedOp::Kind::conv:
    case FusedOp::Kind::conv_transpose:
      break;
  }
  return op.residual >= 0 ? op.activation_after_residual < 0 : op.activation < 0;
}

// Which values an int8 plan stores signed: a residual sum's value and its residual, and a
// max-pool's value and its input, must share a type.
std::vector<bool> signed_values(const FusedGraph& graph) {
  const std::size_t count = graph.ops.size();
  std::vector<bool> is_signed(count);
  for (std::size_t i = 0; i < count; ++i) {
    const FusedOp& op = graph.ops[i];
    const bool pooled_value = op.kind == FusedOp::Kind::max_pool && op.input >= 0;
    is_signed[i] = pooled_value ? is_signed[index(op.input)] : may_be_negative(op);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < count; ++i) {
      const FusedOp& op = graph.ops[i];
      const int tied = op.kind == FusedOp::Kind::max_pool ? op.input : op.residual;
      if (tied < 0 || is_signed[i] == is_signed[index(tied)]) continue;
      is_signed[i] = true;
      is_signed[index(tied)] = true;
      changed = true;
    }
  }
  return is_signed;
}

}  // namespace

ValueFormat input_format(const FusedGraph& graph, PlanPrecision precision) {
  switch (precision) {
    case PlanPrecision::bf16:
      return {dt::bf16, 1.0F};
    case PlanPrecision::int8:
      return {dt::s8, std::max(graph.ranges.input, kSmallestRange) / 127.0F};
    default:
      return {dt::f32, 1.0F};
  }
}

std::vector<ValueFormat> value_formats(const FusedGraph& graph, PlanPrecision precision) {
  const std::size_t count = graph.ops.size();
  const bool int8 = precision == PlanPrecision::int8;
  if (int8 && graph.ranges.values.size() != count) {
    throw Error(fmt::format("an int8 inference plan needs the activation ranges of a calibration "
                            "({} values for {} ops)",
                            graph.ranges.values.size(), count),
                "calibrate the network first (labpose calibrates on the project's labeled frames "
                "when --precision int8 is asked for)");
  }
  std::vector<bool> read(count, false);
  for (const FusedOp& op : graph.ops) {
    for (const int value : {op.input, op.residual}) {
      if (value >= 0) read[index(value)] = true;
    }
  }
  const std::vector<bool> is_signed = int8 ? signed_values(graph) : std::vector<bool>(count);
  const dt activations = precision == PlanPrecision::bf16 ? dt::bf16 : dt::f32;
  std::vector<ValueFormat> formats(count);
  for (std::size_t i = 0; i < count; ++i) {
    const FusedOp& op = graph.ops[i];
    if (op.kind == FusedOp::Kind::max_pool) {
      formats[i] = op.input >= 0 ? formats[index(op.input)] : input_format(graph, precision);
      continue;
    }
    const bool residual = op.residual >= 0;
    if (!read[i] && !residual) {
      formats[i] = {dt::f32, 1.0F};  // a plan output
    } else if (!int8) {
      formats[i] = {residual ? formats[index(op.residual)].type : activations, 1.0F};
    } else {
      const float range = graph.ranges.values[i];
      const float bounded = std::isfinite(range) ? std::max(range, kSmallestRange) : 1.0F;
      formats[i] = is_signed[i] ? ValueFormat{dt::s8, bounded / 127.0F}
                                : ValueFormat{dt::u8, bounded / 255.0F};
    }
  }
  return formats;
}

std::vector<float> weight_scales(const FusedOp& op) {
  const Shape& w = op.weight_shape;
  const int groups = op.geometry.groups;
  const std::int64_t taps = w[2] * w[3];
  std::vector<float> largest;
  if (op.kind == FusedOp::Kind::conv) {
    // (K, C/g, R, S): each output channel's weights are contiguous.
    const std::int64_t per_channel = w[1] * taps;
    largest.assign(static_cast<std::size_t>(w[0]), 0.0F);
    for (std::size_t i = 0; i < op.weights.size(); ++i) {
      float& m = largest[i / static_cast<std::size_t>(per_channel)];
      m = std::max(m, std::abs(op.weights[i]));
    }
  } else {
    // (C, K/g, R, S): output channel g * K/g + k of input channel c in group g = c / (C/g).
    const std::int64_t inputs_per_group = w[0] / groups, outputs_per_group = w[1];
    largest.assign(static_cast<std::size_t>(outputs_per_group * groups), 0.0F);
    for (std::int64_t c = 0; c < w[0]; ++c) {
      for (std::int64_t k = 0; k < outputs_per_group; ++k) {
        float& m =
            largest[static_cast<std::size_t>((c / inputs_per_group) * outputs_per_group + k)];
        for (std::int64_t t = 0; t < taps; ++t) {
          m = std::max(m,
                       std::abs(op.weights[static_cast<std::size_t>((c * w[1] + k) * taps + t)]));
        }
      }
    }
  }
  for (float& m : largest) m = std::max(m, 1e-12F) / 127.0F;
  return largest;
}

}  // namespace labpose::nets::cpu
