// The optimizer and the frozen, backbone and head ranges of the trainable buffer.
#include "pipeline/training/parameter_groups.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/error.hpp"
#include "nets/models/models.hpp"

namespace labpose::pipeline {

std::unique_ptr<nets::Optimizer> make_optimizer(nets::Backend& backend, const PoseConfig& pose,
                                                std::int64_t count) {
  const auto weight_decay = static_cast<float>(pose.weight_decay);
  if (pose.optimizer == "adamw") return std::make_unique<nets::AdamW>(backend, count, weight_decay);
  if (pose.optimizer == "sgd") {
    return std::make_unique<nets::SgdMomentum>(backend, count, static_cast<float>(pose.momentum),
                                               weight_decay);
  }
  throw UsageError(fmt::format("pose_cfg.yaml: optimizer \"{}\" is not known", pose.optimizer),
                   "use adamw or sgd");
}

ParameterRanges parameter_ranges(nets::Net& net, const std::string& architecture,
                                 int frozen_stages) {
  ParameterRanges ranges;
  ranges.count = net.trainable_count();
  ranges.head_begin = ranges.count;
  const std::size_t base = net.trainable_values().offset();
  bool seen_unfrozen = false;
  for (const auto& parameter : net.parameters()) {
    if (!parameter->trainable) continue;
    const auto begin = static_cast<std::int64_t>(parameter->value.offset() - base);
    const std::int64_t end = begin + parameter->value.elements();
    const int stage = nets::backbone_stage(architecture, parameter->name);
    if (stage == 0) ranges.head_begin = std::min(ranges.head_begin, begin);
    if (stage >= 1 && stage <= frozen_stages) {
      LABPOSE_ASSERT(!seen_unfrozen);  // the frozen stages are a prefix of the trainable buffer
      ranges.frozen_end = std::max(ranges.frozen_end, end);
    } else {
      seen_unfrozen = true;
    }
  }
  return ranges;
}

void set_frozen_batch_norms(nets::Net& net, const std::string& architecture, int frozen_stages) {
  for (std::size_t node = 0; node < net.node_count(); ++node) {
    nets::Layer& layer = net.layer(static_cast<int>(node));
    if (layer.kind() != nets::LayerKind::batch_norm) continue;
    const int stage = nets::backbone_stage(architecture, layer.name() + ".weight");
    dynamic_cast<nets::BatchNorm2d&>(layer).set_frozen(stage >= 1 && stage <= frozen_stages);
  }
}

}  // namespace labpose::pipeline
