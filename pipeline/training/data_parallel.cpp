// Batch slices, batch norm over the ranks, the broadcast of the starting weights, the per-step
// agreement and the replicas' checksum.
#include "pipeline/training/data_parallel.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nets/layer.hpp"

namespace labpose::pipeline {

BatchSlice batch_slice(int global_batch, const nets::Communicator& world,
                       const std::filesystem::path& pose_file) {
  const int ranks = world.size();
  if (global_batch % ranks != 0) {
    const int fitting = std::max(ranks, global_batch / ranks * ranks);
    throw UsageError(
        fmt::format("{}: batch_size {} cannot be shared evenly by {} ranks (batch_size is the "
                    "whole batch of a step, over all ranks)",
                    pose_file.string(), global_batch, ranks),
        fmt::format("use a batch_size that {} divides (e.g. --batch-size {}), or another number "
                    "of ranks",
                    ranks, fitting));
  }
  const int batch = global_batch / ranks;
  return {batch, batch * world.rank()};
}

void on_every_rank(nets::Communicator& world, const std::function<void()>& step) {
  if (world.size() == 1) {
    step();
    return;
  }
  std::exception_ptr failure;
  std::string text;  // kind, message and hint of this rank's error, for the others
  try {
    step();
  } catch (const Error& error) {
    failure = std::current_exception();
    text = fmt::format("{}\n{}\n{}", error.exit_code(), error.hint(), error.what());
  }
  std::array<double, 1> first{failure ? static_cast<double>(world.rank())
                                      : static_cast<double>(world.size())};
  world.all_reduce(first, nets::ReduceOp::min);
  const int failed = static_cast<int>(first[0]);
  if (failed == world.size()) return;
  std::uint64_t length = text.size();
  world.broadcast(std::as_writable_bytes(std::span(&length, 1)), failed);
  text.resize(length);
  world.broadcast(std::as_writable_bytes(std::span(text.data(), text.size())), failed);
  if (world.rank() != 0) {
    throw ReportedByRankZero(static_cast<ErrorKind>(std::stoi(text.substr(0, text.find('\n')))));
  }
  if (failed == 0) std::rethrow_exception(failure);
  const std::size_t kind_end = text.find('\n'), hint_end = text.find('\n', kind_end + 1);
  throw Error(fmt::format("rank {}: {}", failed, text.substr(hint_end + 1)),
              text.substr(kind_end + 1, hint_end - kind_end - 1),
              static_cast<ErrorKind>(std::stoi(text.substr(0, kind_end))));
}

void synchronize_batch_norms(nets::Net& net, nets::Communicator& world) {
  for (std::size_t node = 0; node < net.node_count(); ++node) {
    nets::Layer& layer = net.layer(static_cast<int>(node));
    if (layer.kind() == nets::LayerKind::batch_norm)
      dynamic_cast<nets::BatchNorm2d&>(layer).set_ranks(&world);
  }
}

void broadcast_parameters(nets::Communicator& world, nets::Net& net) {
  if (world.size() == 1) return;
  std::int64_t total = 0;
  for (const auto& parameter : net.parameters()) total += parameter->value.elements();
  std::vector<float> host(static_cast<std::size_t>(total));
  nets::Backend& backend = net.backend();
  std::size_t at = 0;
  for (const auto& parameter : net.parameters()) {
    backend.copy_to_host(parameter->value, host.data() + at);
    at += static_cast<std::size_t>(parameter->value.elements());
  }
  world.broadcast(std::as_writable_bytes(std::span<float>(host)), 0);
  at = 0;
  for (const auto& parameter : net.parameters()) {
    backend.copy_from_host(host.data() + at, parameter->value);
    at += static_cast<std::size_t>(parameter->value.elements());
  }
}

StepAgreement agree_after_step(nets::Communicator& world, double loss, double seconds,
                               bool interrupted) {
  if (world.size() == 1) return {loss, seconds, interrupted};
  // The losses are summed; the clocks and the interrupts take their maximum.
  std::array<double, 1> sum{loss};
  std::array<double, 2> maximum{seconds, interrupted ? 1.0 : 0.0};
  world.all_reduce(sum, nets::ReduceOp::sum);
  world.all_reduce(maximum, nets::ReduceOp::max);
  return {sum[0] / world.size(), maximum[0], maximum[1] != 0.0};
}

void check_replicas_agree(nets::Communicator& world, nets::Net& net, std::int64_t iteration) {
  if (world.size() == 1) return;
  std::vector<float> values(static_cast<std::size_t>(net.trainable_count()));
  net.backend().copy_to_host(net.trainable_values(), values.data());
  double sum = 0.0, magnitude = 0.0;
  for (const float value : values) {
    sum += value;
    magnitude += std::abs(value);
  }
  const std::array<double, 2> mine{sum, magnitude};
  const nets::RangeOverRanks range = nets::range_over_ranks(world, mine);
  const std::vector<double>&low = range.low, &high = range.high;
  // Replicas that take the same steps from the same averaged gradients are identical; the
  // tolerance only allows for reductions that round differently on different ranks.
  const double tolerance = 1e-5 * std::max(high[1], 1.0);
  if (high[0] - low[0] <= tolerance && high[1] - low[1] <= tolerance) return;
  throw Error(fmt::format("the ranks' copies of the network differ at iteration {} (parameter "
                          "sums from {} to {}): the replicas have drifted apart",
                          iteration, low[0], high[0]),
              "this is a bug in labpose, not in your data; please report it with the command "
              "line, and resume from the last snapshot (--resume)");
}

}  // namespace labpose::pipeline
