// Backends, networks and pose runners per analysis slot.
#include "pipeline/analysis/device_slots.hpp"

#include "core/console.hpp"
#include "core/error.hpp"
#include "devices/devices.hpp"

namespace labpose::pipeline {

int default_slot_count(const nets::Backend& backend) {
  return backend.host_memory() ? 1 : 3;
}

DeviceSlots::DeviceSlots(nets::Backend& backend, const nets::Net& net, int count,
                         const LoadNet& load) {
  LABPOSE_ASSERT(count >= 1);
  slots_.push_back({&backend, &net});
  for (int k = 1; k < count; ++k) {
    try {
      auto other = devices::make_backend(backend.name(), backend.plan_precision());
      auto other_net = load(*other);
      slots_.push_back({other.get(), other_net.get()});
      own_nets_.push_back(std::move(other_net));
      own_backends_.push_back(std::move(other));
    } catch (const Error& error) {
      console::info(
          "{}: analysis runs {} batch{} at once, not {}: another copy of the network "
          "did not start ({})",
          backend.name(), k, k == 1 ? "" : "es", count, error.what());
      break;
    }
  }
}

std::vector<std::unique_ptr<PoseRunner>> DeviceSlots::runners(const DecodeSettings& settings,
                                                              int batch, int height,
                                                              int width) const {
  std::vector<std::unique_ptr<PoseRunner>> runners;
  for (const Slot& slot : slots_) {
    try {
      runners.push_back(
          std::make_unique<PoseRunner>(*slot.backend, *slot.net, settings, batch, height, width));
    } catch (const Error& error) {
      if (runners.empty()) throw;
      console::info("{}: {}x{} frames: {} batch{} at once, not {}: no room for another plan ({})",
                    slot.backend->name(), width, height, runners.size(),
                    runners.size() == 1 ? "" : "es", slots_.size(), error.what());
      break;
    }
    batch = runners.front()->batch_size();  // the first runner says a lowered batch once
  }
  return runners;
}

std::vector<PoseSlot> pose_slots(const std::vector<std::unique_ptr<PoseRunner>>& runners) {
  std::vector<PoseSlot> slots;
  for (const auto& runner : runners) {
    slots.push_back([&pose = *runner](FrameBatch& batch) {
      pose.run(batch.pixels.data(), batch.reads.size(), batch.keypoints.data());
    });
  }
  return slots;
}

}  // namespace labpose::pipeline
