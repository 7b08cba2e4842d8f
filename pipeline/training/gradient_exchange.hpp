// The gradients of a data-parallel step averaged over the ranks, in buckets of about 25 MB sent as
// soon as backward has produced them (Net::backward's gradients_ready), so that the exchange runs
// while backward computes the earlier layers, as PyTorch's DistributedDataParallel does. Only the
// trainable part past the frozen stages is exchanged. Not the optimizer step, which every rank
// takes for itself on the same averaged gradients.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nets/communicator.hpp"
#include "nets/tensor.hpp"

namespace labpose::pipeline {

class GradientExchange {
 public:
  static constexpr std::int64_t kBucketBytes = std::int64_t{25} << 20;

  /// `gradients`: the network's flat trainable gradients, in the communicator's memory.
  GradientExchange(nets::Communicator& world, const nets::Tensor& gradients,
                   std::int64_t bucket_bytes = kBucketBytes);
  /// Waits for reductions still running (a step that failed half-way), which write the gradients.
  ~GradientExchange();
  GradientExchange(const GradientExchange&) = delete;
  GradientExchange& operator=(const GradientExchange&) = delete;

  /// A new step whose gradients from `first` on (the end of the frozen stages) are exchanged.
  void begin(std::int64_t first);
  /// Backward's report: every gradient from `offset` on is final; starts the buckets it completes.
  void ready_from(std::int64_t offset);
  /// Starts what is left and waits until every bucket holds the ranks' mean.
  void finish();

  /// Over all steps: seconds the buckets' reductions ran, seconds finish() waited for them (the
  /// part backward did not hide), and the steps.
  double exchange_seconds() const { return exchange_seconds_; }
  double waited_seconds() const { return waited_seconds_; }
  std::int64_t steps() const { return steps_; }

 private:
  struct Bucket {
    std::int64_t begin, end;  // elements of the flat gradients
  };
  void start_down_to(std::int64_t offset);

  nets::Communicator& world_;
  float* data_;
  std::int64_t count_;
  std::int64_t bucket_elements_;
  std::vector<Bucket> buckets_;  // from the last elements down to the first
  std::size_t started_ = 0;      // buckets_ started this step
  std::vector<std::unique_ptr<nets::PendingReduction>> pending_;
  double exchange_seconds_ = 0.0;
  double waited_seconds_ = 0.0;
  std::int64_t steps_ = 0;
};

}  // namespace labpose::pipeline
