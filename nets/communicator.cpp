// The single-process communicator (nothing to exchange) and the range of values over the ranks.
#include "nets/communicator.hpp"

namespace labpose::nets {
namespace {

class Done final : public PendingReduction {
 public:
  void wait() override {}
  double seconds() const override { return 0.0; }
};

}  // namespace

std::unique_ptr<PendingReduction> SingleProcess::start_mean(float* data, std::size_t count) {
  static_cast<void>(data);
  static_cast<void>(count);
  return std::make_unique<Done>();
}

void SingleProcess::all_reduce(std::span<double> values, ReduceOp op) {
  static_cast<void>(values);
  static_cast<void>(op);
}

void SingleProcess::broadcast(std::span<std::byte> bytes, int root) {
  static_cast<void>(bytes);
  static_cast<void>(root);
}

RangeOverRanks range_over_ranks(Communicator& world, std::span<const double> values) {
  std::vector<double> both(values.begin(), values.end());
  for (const double value : values) both.push_back(-value);
  world.all_reduce(both, ReduceOp::max);
  RangeOverRanks range;
  range.high.assign(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(values.size()));
  for (std::size_t i = 0; i < values.size(); ++i) range.low.push_back(-both[values.size() + i]);
  return range;
}

}  // namespace labpose::nets
