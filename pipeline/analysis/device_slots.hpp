// The copies of the network that analysis runs batches on at once. On a GPU: more backends on the
// same device, each with its own stream, pinned staging, cuDNN handle and weights, so that the
// upload of one batch and the download of another overlap the run of a third. Where the network
// computes on the host, one: its cores are busy with one batch. Not the threads (runner.hpp).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "nets/backend.hpp"
#include "nets/net.hpp"
#include "pipeline/analysis/runner.hpp"
#include "pipeline/pose/pose_runner.hpp"

namespace labpose::pipeline {

/// The slots analysis uses on `backend` unless told: 3 on a GPU, 1 where plans run on the host.
int default_slot_count(const nets::Backend& backend);

class DeviceSlots {
 public:
  /// Loads a network onto a backend (the same weights every time).
  using LoadNet = std::function<std::unique_ptr<nets::Net>(nets::Backend&)>;

  /// The first slot is `backend` with `net` (both must outlive this); each of the `count` - 1
  /// others is a backend on the same device and precision with `load`'s network. A slot the
  /// device cannot start (out of memory) is left out and said on the console.
  DeviceSlots(nets::Backend& backend, const nets::Net& net, int count, const LoadNet& load);
  DeviceSlots(const DeviceSlots&) = delete;
  DeviceSlots& operator=(const DeviceSlots&) = delete;

  int count() const { return static_cast<int>(slots_.size()); }

  /// One PoseRunner per slot for frames of height x width in batches of `batch` (all with the
  /// first runner's batch, lowered where the device's tensors require). A slot whose plan does
  /// not fit in the device's memory beside the others is left out for this video and said.
  std::vector<std::unique_ptr<PoseRunner>> runners(const DecodeSettings& settings, int batch,
                                                   int height, int width) const;

 private:
  struct Slot {
    nets::Backend* backend;
    const nets::Net* net;
  };
  std::vector<std::unique_ptr<nets::Backend>> own_backends_;
  std::vector<std::unique_ptr<nets::Net>> own_nets_;  // after the backends: destroyed before them
  std::vector<Slot> slots_;
};

/// The pose stage's slots (runner.hpp) that run `runners`, which must outlive them.
std::vector<PoseSlot> pose_slots(const std::vector<std::unique_ptr<PoseRunner>>& runners);

}  // namespace labpose::pipeline
