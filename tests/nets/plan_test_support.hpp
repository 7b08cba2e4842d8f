// Helpers for the tests of compiled inference plans in reduced precision (bf16_test.cpp,
// int8_test.cpp): one-op graphs, random convolutions, running a plan on host values.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "nets/cpu/elements.hpp"
#include "nets/fused_graph.hpp"
#include "tests/nets/nets_test_support.hpp"

namespace labpose::nets::testing {

/// The float whose bf16 bit pattern is `bits`.
inline float from_bf16(std::uint16_t bits) {
  const std::uint32_t wide = std::uint32_t{bits} << 16;
  float value = 0;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

/// Activations as a CPU plan holds them, for the tests of its own kernels: bf16 bit patterns
/// (rounded to nearest) or floats, chosen by the type of the second argument.
inline std::uint16_t stored(float value, std::uint16_t /*type*/) {
  return cpu::bf16_bits(value);
}
inline float stored(float value, float /*type*/) {
  return value;
}
inline float loaded(std::uint16_t bits) {
  return from_bf16(bits);
}
inline float loaded(float value) {
  return value;
}

/// NCHW values of `shape` as a CPU plan's NHWC activations of type T.
template <typename T>
std::vector<T> to_nhwc(const std::vector<float>& values, const Shape& shape) {
  std::vector<T> result(values.size());
  const std::int64_t pixels = shape.h() * shape.w();
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      for (std::int64_t p = 0; p < pixels; ++p) {
        result[static_cast<std::size_t>((n * pixels + p) * shape.c() + c)] =
            stored(values[static_cast<std::size_t>((n * shape.c() + c) * pixels + p)], T{});
      }
    }
  }
  return result;
}

/// NHWC activations of type T and `shape` as NCHW floats.
template <typename T>
std::vector<float> from_nhwc(const std::vector<T>& values, const Shape& shape) {
  std::vector<float> result(values.size());
  const std::int64_t pixels = shape.h() * shape.w();
  for (std::int64_t n = 0; n < shape.n(); ++n) {
    for (std::int64_t c = 0; c < shape.c(); ++c) {
      for (std::int64_t p = 0; p < pixels; ++p) {
        result[static_cast<std::size_t>((n * shape.c() + c) * pixels + p)] =
            loaded(values[static_cast<std::size_t>((n * pixels + p) * shape.c() + c)]);
      }
    }
  }
  return result;
}

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

/// One fused convolution of each kind a pose network has, with its input shape.
struct ConvolutionCase {
  const char* name;
  FusedOp op;
  Shape input;
};

/// 3x3 with ReLU6, 1x1 strided with ReLU, depthwise dilated, the 3-channel first layer, and the
/// pose head's transposed 3x3 stride 2, narrow and wide.
inline std::vector<ConvolutionCase> convolution_cases() {
  const Shape input{2, 16, 13, 17};
  std::vector<ConvolutionCase> cases = {
      {"3x3, ReLU6", conv_op(FusedOp::Kind::conv, {24, 16, 3, 3}, ConvGeometry::symmetric(1, 1), 1),
       input},
      {"1x1, stride 2, ReLU",
       conv_op(FusedOp::Kind::conv, {8, 16, 1, 1}, ConvGeometry::symmetric(2, 0), 2), input},
      {"depthwise 3x3, dilation 2",
       conv_op(FusedOp::Kind::conv, {16, 1, 3, 3}, ConvGeometry::symmetric(1, 2, 2, 16), 3), input},
      {"first layer: 3 channels, 3x3 stride 2",
       conv_op(FusedOp::Kind::conv, {32, 3, 3, 3}, ConvGeometry::symmetric(2, 1), 4),
       {2, 3, 30, 41}},
  };
  cases[0].op.activation = 6.0F;
  cases[1].op.activation = 0.0F;
  ConvGeometry head = ConvGeometry::symmetric(2, 1);  // the pose head's
  head.output_pad_h = head.output_pad_w = 1;
  cases.push_back({"transposed 3x3 stride 2",
                   conv_op(FusedOp::Kind::conv_transpose, {16, 5, 3, 3}, head, 5), input});
  // With 9 x 4 columns per pixel from 48 channels, the CPU plan computes it as a 1x1 convolution
  // and a gather of the taps.
  cases.push_back({"transposed 3x3 stride 2, as columns",
                   conv_op(FusedOp::Kind::conv_transpose, {48, 4, 3, 3}, head, 6),
                   {2, 48, 9, 11}});
  return cases;
}

}  // namespace labpose::nets::testing
