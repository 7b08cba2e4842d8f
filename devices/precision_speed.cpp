// A fused 3×3 convolution with ReLU (and a small 1×1 after it), compiled once in each precision
// (int8 with ranges measured in fp32 on the same input), warmed up, then timed in rounds.
#include "devices/precision_speed.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <vector>

#include "core/console.hpp"
#include "devices/devices.hpp"
#include "nets/calibration.hpp"
#include "nets/cpu/backend.hpp"
#include "nets/fused_graph.hpp"
#include "nets/random.hpp"

namespace labpose::devices {
namespace {

constexpr int kChannels = 128, kOutputs = 16, kHeight = 60, kWidth = 80, kRunsPerRound = 3;

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

// A compiled plan of the probe in one precision, with its input, ready to be timed.
struct Probe {
  std::unique_ptr<nets::Backend> backend;
  std::unique_ptr<nets::InferencePlan> plan;
  nets::Tensor input;

  Probe(nets::PlanPrecision precision, nets::FusedGraph graph, const std::vector<float>& pixels) {
    const nets::Shape shape{1, kChannels, kHeight, kWidth};
    backend = make_backend("cpu", precision);
    input = backend->allocate(shape);
    backend->copy_from_host(pixels.data(), input);
    if (precision == nets::PlanPrecision::int8) {
      const auto fp32 = make_backend("cpu");
      nets::Tensor fp32_input = fp32->allocate(shape);
      fp32->copy_from_host(pixels.data(), fp32_input);
      nets::RangeObserver observer(*fp32, graph);
      observer.observe(fp32_input);
      graph.ranges = observer.ranges();
    }
    plan = backend->compile(graph, shape);
    for (int run = 0; run < 2; ++run) plan->run(input);  // warm-up
  }

  // GFLOP/s of the fastest of a few runs.
  double gflops() {
    double fastest = 1e30;
    for (int run = 0; run < kRunsPerRound; ++run) {
      const auto start = std::chrono::steady_clock::now();
      plan->run(input);
      fastest = std::min(
          fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    const double flop = 2.0 * kChannels * (kChannels * 9.0 + kOutputs) * kHeight * kWidth;
    return flop / fastest * 1e-9;
  }
};

double sorted_at(std::vector<double> values, double fraction) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5)];
}

}  // namespace

double MeasuredSpeed::median() const {
  return sorted_at(rounds, 0.5);
}
double MeasuredSpeed::lowest() const {
  return sorted_at(rounds, 0.0);
}
double MeasuredSpeed::highest() const {
  return sorted_at(rounds, 1.0);
}

PrecisionSpeeds measure_cpu_precision_speeds(int rounds, bool with_int8) {
  const nets::FusedGraph graph = convolution_graph();
  const std::vector<float> pixels =
      uniform_values(std::int64_t{kChannels} * kHeight * kWidth, 8, 0.0, 1.0);
  std::vector<Probe> probes;
  std::vector<MeasuredSpeed*> speeds_of;
  PrecisionSpeeds speeds;
  probes.emplace_back(nets::PlanPrecision::fp32, graph, pixels);
  speeds_of.push_back(&speeds.fp32);
  if (nets::cpu::cpu_has_bf16()) {
    probes.emplace_back(nets::PlanPrecision::bf16, graph, pixels);
    speeds_of.push_back(&speeds.bf16.emplace());
  }
  if (with_int8 && nets::cpu::cpu_has_int8()) {
    probes.emplace_back(nets::PlanPrecision::int8, graph, pixels);
    speeds_of.push_back(&speeds.int8.emplace());
  }
  for (int round = 0; round < rounds; ++round) {
    for (std::size_t k = 0; k < probes.size(); ++k) {
      const std::size_t which = (k + static_cast<std::size_t>(round)) % probes.size();
      speeds_of[which]->rounds.push_back(probes[which].gflops());
    }
  }
  return speeds;
}

SpeedComparison compare_speeds(const MeasuredSpeed& candidate, const MeasuredSpeed& baseline) {
  SpeedComparison comparison;
  comparison.rounds = static_cast<int>(std::min(candidate.rounds.size(), baseline.rounds.size()));
  for (int k = 0; k < comparison.rounds; ++k) {
    const auto round = static_cast<std::size_t>(k);
    if (candidate.rounds[round] > baseline.rounds[round]) ++comparison.wins;
  }
  comparison.ratio = baseline.median() > 0 ? candidate.median() / baseline.median() : 1.0;
  const double won =
      comparison.rounds > 0 ? static_cast<double>(comparison.wins) / comparison.rounds : 0.0;
  if (won >= 5.0 / 6.0 && comparison.ratio >= 1.05) {
    comparison.verdict = SpeedComparison::Verdict::faster;
  } else if (won <= 1.0 / 6.0 || comparison.ratio <= 1.0) {
    comparison.verdict = SpeedComparison::Verdict::not_faster;
  }
  return comparison;
}

CpuPrecisionChoice choose_cpu_precision(const PrecisionSpeeds& speeds) {
  CpuPrecisionChoice choice;
  const MeasuredSpeed* best = &speeds.fp32;
  if (speeds.bf16) {
    choice.bf16 = compare_speeds(*speeds.bf16, speeds.fp32);
    if (choice.bf16->verdict == SpeedComparison::Verdict::faster) {
      choice.without_int8 = nets::PlanPrecision::bf16;
      best = &*speeds.bf16;
    }
  }
  if (speeds.int8) choice.int8 = compare_speeds(*speeds.int8, *best);
  return choice;
}

const CpuPrecisionChoice& automatic_cpu_choice() {
  static const CpuPrecisionChoice chosen = [] {
    const CpuPrecisionChoice choice = choose_cpu_precision(measure_cpu_precision_speeds(7, true));
    if (choice.bf16 && choice.without_int8 == nets::PlanPrecision::fp32) {
      console::info(
          "--precision auto: fp32 on this CPU: its bf16 units are not clearly faster here (bf16 "
          "{:.2f}x fp32 on a 3x3 convolution, faster in {} of {} rounds; labpose doctor says "
          "more)",
          choice.bf16->ratio, choice.bf16->wins, choice.bf16->rounds);
    }
    return choice;
  }();
  return chosen;
}

nets::PlanPrecision automatic_cpu_precision() {
  return automatic_cpu_choice().without_int8;
}

}  // namespace labpose::devices
