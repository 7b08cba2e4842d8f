// How a CPU inference plan stores each value of a fused graph: fp32, bf16, or (int8 plans) u8 for
// values that cannot be negative and s8 for the others, each with the scale of one step taken from
// the graph's calibration ranges. Also the per-channel weight scales of int8 convolutions. Pure
// arithmetic, no oneDNN objects: the plan (plan.cpp) builds primitives from it.
#pragma once

#include <cstdint>
#include <cstring>
#include <dnnl.hpp>
#include <vector>

#include "nets/backend.hpp"
#include "nets/cpu/elements.hpp"
#include "nets/fused_graph.hpp"

namespace labpose::nets::cpu {

struct ValueFormat {
  dnnl::memory::data_type type = dnnl::memory::data_type::f32;
  float scale = 1.0F;  // the real value of one integer step (1 for fp32 and bf16)
};

/// The format of every op's value in a plan computing in `precision` (fp32, bf16 or int8): values
/// no op reads are the plan's outputs, always fp32. In int8 a value is u8 when it cannot be
/// negative (a ReLU or ReLU6 last), s8 otherwise; a convolution that adds a residual shares its
/// residual's type (the sum is in place) and a max-pool its input's format. Throws an Error when
/// an int8 plan's graph has no calibration ranges.
std::vector<ValueFormat> value_formats(const FusedGraph& graph, PlanPrecision precision);

/// The format the network input is converted to before a first op other than normalize.
ValueFormat input_format(const FusedGraph& graph, PlanPrecision precision);

/// Per output channel of a convolution (conv: K; conv_transpose: K = weight_shape[1] * groups), the
/// scale mapping its weights onto [-127, 127]: the largest |weight| of the channel / 127.
std::vector<float> weight_scales(const FusedOp& op);

}  // namespace labpose::nets::cpu
