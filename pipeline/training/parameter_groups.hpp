// The parameter groups of training: the optimizer pose_cfg.yaml names, and where the frozen
// backbone stages, the trainable backbone and the head lie in the network's flat trainable buffer
// (the optimizer updates each range at its own rate). Not the rates (schedule.hpp) and not the loop
// (trainer.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "nets/net.hpp"
#include "nets/optimizers.hpp"
#include "pipeline/training/pose_config.hpp"

namespace labpose::pipeline {

/// The optimizer pose_cfg.yaml names, with its settings, for `count` trainable values; UsageError
/// for an unknown one.
std::unique_ptr<nets::Optimizer> make_optimizer(nets::Backend& backend, const PoseConfig& pose,
                                                std::int64_t count);

/// Where the frozen backbone stages end and the head begins in the flat trainable buffer.
struct ParameterRanges {
  std::int64_t frozen_end = 0;  // [0, frozen_end): not updated
  std::int64_t head_begin = 0;  // [head_begin, count): the head
  std::int64_t count = 0;
};

/// The ranges of `net` (an `architecture` pose network) with its first `frozen_stages` backbone
/// stages frozen.
ParameterRanges parameter_ranges(nets::Net& net, const std::string& architecture,
                                 int frozen_stages);

/// Puts the batch norms of the first `frozen_stages` backbone stages in inference mode (running
/// statistics, not updated) and the others in training mode.
void set_frozen_batch_norms(nets::Net& net, const std::string& architecture, int frozen_stages);

}  // namespace labpose::pipeline
