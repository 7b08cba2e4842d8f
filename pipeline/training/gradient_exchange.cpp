// Buckets laid out from the end of the gradients (where backward starts) down to the first
// exchanged element; started in that order, the same on every rank.
#include "pipeline/training/gradient_exchange.hpp"

#include <algorithm>
#include <chrono>

#include "core/error.hpp"

namespace labpose::pipeline {

GradientExchange::GradientExchange(nets::Communicator& world, const nets::Tensor& gradients,
                                   std::int64_t bucket_bytes)
    : world_(world),
      data_(gradients.data()),
      count_(gradients.elements()),
      bucket_elements_(
          std::max<std::int64_t>(bucket_bytes / static_cast<std::int64_t>(sizeof(float)), 1)) {
  LABPOSE_ASSERT(gradients.memory() == world.memory() || world.size() == 1);
}

GradientExchange::~GradientExchange() {
  for (auto& reduction : pending_) {
    try {
      reduction->wait();
    } catch (const Error&) {
      // Already failing: the error that stopped the step is the one to report.
    }
  }
}

void GradientExchange::begin(std::int64_t first) {
  LABPOSE_ASSERT(pending_.empty() && first >= 0 && first <= count_);
  buckets_.clear();
  for (std::int64_t end = count_; end > first; end -= bucket_elements_) {
    buckets_.push_back({std::max(end - bucket_elements_, first), end});
  }
  started_ = 0;
}

void GradientExchange::ready_from(std::int64_t offset) {
  start_down_to(offset);
}

void GradientExchange::start_down_to(std::int64_t offset) {
  while (started_ < buckets_.size() && buckets_[started_].begin >= offset) {
    const Bucket& bucket = buckets_[started_++];
    pending_.push_back(world_.start_mean(data_ + bucket.begin,
                                         static_cast<std::size_t>(bucket.end - bucket.begin)));
  }
}

void GradientExchange::finish() {
  start_down_to(0);
  const auto start = std::chrono::steady_clock::now();
  for (auto& reduction : pending_) reduction->wait();
  waited_seconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& reduction : pending_) exchange_seconds_ += reduction->seconds();
  pending_.clear();
  ++steps_;
}

}  // namespace labpose::pipeline
