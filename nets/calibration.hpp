// Post-training calibration for int8 inference plans: a fused graph run in fp32 with every value
// kept, over calibration inputs, recording the largest magnitude of the input and of each op's
// output. Not the quantization itself (the CPU backend's int8 plans do it from these ranges), and
// not where calibration images come from (the pipeline's project frames, or bench's random ones).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "nets/backend.hpp"
#include "nets/fused_graph.hpp"

namespace labpose::nets {

class RangeObserver {
 public:
  /// Observes `graph` (without its ranges) through fp32 plans of `backend`, which must outlive the
  /// observer.
  RangeObserver(Backend& backend, FusedGraph graph);
  ~RangeObserver();
  RangeObserver(const RangeObserver&) = delete;
  RangeObserver& operator=(const RangeObserver&) = delete;

  /// Runs one batch; input: (N, C, H, W) on the backend (a plan is compiled once per shape).
  void observe(const Tensor& input);
  /// The largest magnitudes seen so far (zeros before the first observe()).
  const ActivationRanges& ranges() const { return ranges_; }
  /// How many images observe() has seen.
  std::int64_t images() const { return images_; }

 private:
  Backend& backend_;
  FusedGraph graph_;                                             // every op's value an output
  std::map<std::string, std::unique_ptr<InferencePlan>> plans_;  // by input shape
  ActivationRanges ranges_;
  std::int64_t images_ = 0;
};

}  // namespace labpose::nets
