// Helpers for the tests of compiled inference plans in reduced precision (bf16_test.cpp,
// int8_test.cpp): one-op graphs, random convolutions, running a plan on host values.
#pragma once

#include <cmath>
#include <vector>

#include "nets/fused_graph.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets::testing {

/// The plan's outputs for `values` (logical NCHW order) of shape `input`.
inline std::vector<std::vector<float>> run_plan(Backend& backend, const FusedGraph& graph,
                                                const Shape& input,
                                                const std::vector<float>& values) {
  auto plan = backend.compile(graph, input);
  const auto& outputs = plan->run(upload(backend, input, values));
  std::vector<std::vector<float>> host;
  for (const Tensor& output : outputs) host.push_back(download(backend, output));
  return host;
}

inline std::vector<float> absolute(std::vector<float> values) {
  for (float& v : values) v = std::abs(v);
  return values;
}

/// A graph of `op` alone, reading the network input, its value the output.
inline FusedGraph one_op(const FusedOp& op) {
  FusedGraph graph;
  graph.ops = {op};
  graph.outputs = {0};
  graph.output_names = {"y"};
  return graph;
}

/// A (transposed) convolution with weights and bias uniform in [-0.5, 0.5].
inline FusedOp conv_op(FusedOp::Kind kind, const Shape& weight_shape, const ConvGeometry& geometry,
                       std::uint64_t seed) {
  FusedOp op;
  op.kind = kind;
  op.name = "conv";
  op.weight_shape = weight_shape;
  op.weights = random_values(weight_shape.elements(), seed, 0.5);
  const std::int64_t outputs =
      kind == FusedOp::Kind::conv ? weight_shape[0] : weight_shape[1] * geometry.groups;
  op.bias = random_values(outputs, seed + 1, 0.5);
  op.geometry = geometry;
  return op;
}

}  // namespace labpose::nets::testing
