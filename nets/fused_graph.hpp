// The inference form of a network: batch norm folded into convolution weights, ReLU/ReLU6 and
// residual adds attached to the convolution that produces them. Backends compile it into an
// InferencePlan. Built by Net::fuse(); weights are host copies (compilation only, not the training
// path).
#pragma once

#include <string>
#include <vector>

#include "nets/backend.hpp"

namespace labpose::nets {

struct FusedOp {
  enum class Kind { normalize, conv, conv_transpose, max_pool };
  Kind kind = Kind::conv;
  std::string name;  // the layer it starts with, e.g. "layer1.0.conv1"
  int input = -1;    // the op whose output this reads; -1 = the network input

  // normalize: y[:, c] = x[:, c] * scale[c] + shift[c]
  std::vector<float> scale, shift;

  // conv / conv_transpose: y = act_after(act_before(conv(x) + bias) + residual)
  Shape weight_shape;          // (K, C/groups, R, S), or (C, K/groups, R, S) for conv_transpose
  std::vector<float> weights;  // logical order of weight_shape
  std::vector<float> bias;     // K values (zeros when the layer had none)
  ConvGeometry geometry;
  float activation = -1.0F;  // before the residual add: < 0 none, 0 ReLU, > 0 ReLU capped there
  int residual = -1;         // op whose output is added, or -1
  float activation_after_residual = -1.0F;

  // max_pool
  PoolGeometry pool;
};

/// What an int8 plan quantizes with: the largest magnitude of the network input and of each op's
/// output over calibration images (nets/calibration.hpp). Empty for an uncalibrated graph.
struct ActivationRanges {
  float input = 0.0F;
  std::vector<float> values;  // one per op of the graph, in its order
  bool empty() const { return values.empty(); }
};

struct FusedGraph {
  std::vector<FusedOp> ops;  // in execution order; an op reads only earlier ops
  std::vector<int> outputs;
  std::vector<std::string> output_names;
  ActivationRanges ranges;  // for int8 plans (Net::set_activation_ranges)
};

}  // namespace labpose::nets
