// A fused 3×3 convolution with ReLU (and a small 1×1 after it), compiled in each precision (int8
// with ranges measured in fp32 on the same input), timed after a warm-up.
#include "devices/precision_speed.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/random.hpp"

namespace labpose::devices {
namespace {

constexpr int kChannels = 128, kOutputs = 16, kHeight = 60, kWidth = 80, kRuns = 8;

std::vector<float> uniform_values(std::int64_t count, std::uint64_t seed, double low, double high) {
  nets::Random random(seed);
  std::vector<float> values(static_cast<std::size_t>(count));
  for (float& v : values) v = static_cast<float>(low + (high - low) * random.uniform());
  return values;
}

// The 3×3 convolution with ReLU, and after it a 1×1 convolution to 16 channels that writes the
// graph's output: so the 3×3 layer reads and writes the plan's own type and is computed as a
// network's inner 3×3 layers are (by Winograd where the plan does that).
nets::FusedGraph convolution_graph() {
  nets::FusedOp op;
  op.kind = nets::FusedOp::Kind::conv;
  op.name = "probe";
  op.weight_shape = {kChannels, kChannels, 3, 3};
  op.weights = uniform_values(op.weight_shape.elements(), 7, -0.05, 0.05);
  op.bias.assign(kChannels, 0.01F);
  op.geometry = nets::ConvGeometry::symmetric(1, 1);
  op.activation = 0.0F;
  nets::FusedOp out;
  out.kind = nets::FusedOp::Kind::conv;
  out.name = "out";
  out.input = 0;
  out.weight_shape = {kOutputs, kChannels, 1, 1};
  out.weights = uniform_values(out.weight_shape.elements(), 9, -0.05, 0.05);
  out.bias.assign(kOutputs, 0.0F);
  out.geometry = nets::ConvGeometry::symmetric(1, 0);
  nets::FusedGraph graph;
  graph.ops = {op, out};
  graph.outputs = {1};
  graph.output_names = {"y"};
  return graph;
}

double gflops(nets::PlanPrecision precision, nets::FusedGraph graph,
              const std::vector<float>& pixels) {
  const nets::Shape shape{1, kChannels, kHeight, kWidth};
  const auto backend = make_backend("cpu", precision);
  nets::Tensor input = backend->allocate(shape);
  backend->copy_from_host(pixels.data(), input);
  if (precision == nets::PlanPrecision::int8) {
    const auto fp32 = make_backend("cpu");
    nets::Tensor fp32_input = fp32->allocate(shape);
    fp32->copy_from_host(pixels.data(), fp32_input);
    nets::RangeObserver observer(*fp32, graph);
    observer.observe(fp32_input);
    graph.ranges = observer.ranges();
  }
  const auto plan = backend->compile(graph, shape);
  double fastest = 1e30;
  for (int run = 0; run < kRuns + 2; ++run) {
    const auto start = std::chrono::steady_clock::now();
    plan->run(input);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (run >= 2) fastest = std::min(fastest, seconds);  // two warm-up runs
  }
  const double flop = 2.0 * kChannels * (kChannels * 9.0 + kOutputs) * kHeight * kWidth;
  return flop / fastest * 1e-9;
}

}  // namespace

PrecisionSpeeds measure_cpu_precision_speeds() {
  const nets::FusedGraph graph = convolution_graph();
  const std::vector<float> pixels =
      uniform_values(std::int64_t{kChannels} * kHeight * kWidth, 8, 0.0, 1.0);
  PrecisionSpeeds speeds;
  speeds.fp32 = gflops(nets::PlanPrecision::fp32, graph, pixels);
  if (nets::cpu::cpu_has_bf16()) speeds.bf16 = gflops(nets::PlanPrecision::bf16, graph, pixels);
  if (nets::cpu::cpu_has_int8()) speeds.int8 = gflops(nets::PlanPrecision::int8, graph, pixels);
  return speeds;
}

}  // namespace labpose::devices
