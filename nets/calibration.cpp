// Calibration by the largest magnitude ("min-max"): every op's value made a graph output, so that
// one fp32 plan run shows them all.
#include "nets/calibration.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/error.hpp"

namespace labpose::nets {
namespace {

float largest_magnitude(const std::vector<float>& values) {
  float largest = 0.0F;
  for (const float v : values) {
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  }
  return largest;
}

}  // namespace

RangeObserver::RangeObserver(Backend& backend, FusedGraph graph)
    : backend_(backend), graph_(std::move(graph)) {
  LABPOSE_ASSERT(backend_.plan_precision() == PlanPrecision::fp32);
  graph_.ranges = {};
  graph_.outputs.resize(graph_.ops.size());
  std::iota(graph_.outputs.begin(), graph_.outputs.end(), 0);
  graph_.output_names.clear();
  for (const FusedOp& op : graph_.ops) graph_.output_names.push_back(op.name);
  ranges_.values.assign(graph_.ops.size(), 0.0F);
}

RangeObserver::~RangeObserver() = default;

void RangeObserver::observe(const Tensor& input) {
  auto& plan = plans_[input.shape().text()];
  if (!plan) plan = backend_.compile(graph_, input.shape());
  const std::vector<Tensor>& outputs = plan->run(input);
  std::vector<float> host(static_cast<std::size_t>(input.elements()));
  backend_.copy_to_host(input, host.data());
  ranges_.input = std::max(ranges_.input, largest_magnitude(host));
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    host.resize(static_cast<std::size_t>(outputs[i].elements()));
    backend_.copy_to_host(outputs[i], host.data());
    ranges_.values[i] = std::max(ranges_.values[i], largest_magnitude(host));
  }
  images_ += input.shape().n();
}

}  // namespace labpose::nets
