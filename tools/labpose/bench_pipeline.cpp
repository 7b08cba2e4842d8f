// The pipeline benchmark: DeviceSlots and PoseRunner fed by a source of synthetic frames.
#include "tools/labpose/bench_pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "nets/models/models.hpp"
#include "nets/random.hpp"
#include "pipeline/analysis/device_slots.hpp"
#include "pipeline/analysis/runner.hpp"

namespace labpose::tools {
namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Each batch's pixels are drawn once, the first time the source sees it, which is before the
// timed batches (`warmup` covers every batch in flight): the source then costs nothing, and the
// figure is the path from packed frames to keypoints.
class SyntheticFrames {
 public:
  SyntheticFrames(const PipelineBench& bench, int warmup) : bench_(bench), warmup_(warmup) {}

  bool fill(pipeline::FrameBatch& batch) {
    if (next_batch_ == warmup_ + bench_.batches) return false;
    if (drawn_.insert(&batch).second) {
      nets::Random random(static_cast<std::uint64_t>(drawn_.size()));
      for (std::uint8_t& value : batch.pixels)
        value = static_cast<std::uint8_t>(random.uniform() * 255.999);
    }
    batch.reads.clear();
    for (int i = 0; i < bench_.batch; ++i) {
      const std::int64_t frame = std::int64_t{next_batch_} * bench_.batch + i;
      batch.reads.push_back({frame, pipeline::FrameStatus::ok, static_cast<double>(frame) / 30.0});
    }
    ++next_batch_;
    return true;
  }

 private:
  const PipelineBench& bench_;
  int warmup_;
  int next_batch_ = 0;
  std::set<const pipeline::FrameBatch*> drawn_;
};

}  // namespace

void measure_pipeline(const PipelineBench& bench, nets::Backend& backend) {
  const nets::PoseNetSpec spec{bench.architecture, bench.bodyparts, true};
  const auto load = [&spec](nets::Backend& on) {
    auto net = nets::build_pose_net(on, spec);
    nets::initialize_pose_net(*net, 1);
    return net;
  };
  const auto net = load(backend);
  const pipeline::DeviceSlots slots(
      backend, *net, bench.slots > 0 ? bench.slots : pipeline::default_slot_count(backend), load);
  const auto runners =
      slots.runners(pipeline::DecodeSettings{}, bench.batch, bench.height, bench.width);
  const int batch = runners.front()->batch_size();  // lowered where the device requires, and said
  std::vector<pipeline::PoseSlot> pose;
  for (const auto& runner : runners) {
    pose.push_back([&runner = *runner](pipeline::FrameBatch& frames) {
      runner.run(frames.pixels.data(), frames.reads.size(), frames.keypoints.data());
    });
  }
  const std::size_t frame_bytes = 3 * static_cast<std::size_t>(bench.width) *
                                  static_cast<std::size_t>(bench.height);
  const int warmup = std::max(
      bench.warmup, static_cast<int>(pipeline::batches_in_flight(runners.size())));
  SyntheticFrames source(bench, warmup);
  std::vector<double> arrivals;  // when each batch reached the sink
  pipeline::run_analysis_stages(
      {static_cast<std::size_t>(batch), frame_bytes, static_cast<std::size_t>(runners.front()->joints())},
      [&source](pipeline::FrameBatch& frames) { return source.fill(frames); }, pose,
      [&arrivals](const pipeline::FrameBatch&) { arrivals.push_back(now_seconds()); }, false);
  // From the last warm-up batch's arrival to the last batch's: the timed batches in between.
  const double seconds = arrivals.back() - arrivals[static_cast<std::size_t>(warmup) - 1];
  const double per_second = static_cast<double>(bench.batches) * batch / seconds;
  if (bench.json) {
    std::printf("%s\n",
                fmt::format(R"({{"arch": "{}", "mode": "pipeline", "width": {}, "height": {}, )"
                            R"("batch": {}, "device": "{}", "backend": "{}", "slots": {}, )"
                            R"("batches": {}, "seconds": {:.6f}, "precision": "{}", "fps": {:.4f}}})",
                            bench.architecture, bench.width, bench.height, batch, backend.name(),
                            backend.description(), runners.size(), bench.batches, seconds,
                            nets::precision_name(backend.plan_precision()), per_second)
                    .c_str());
  } else {
    std::printf("%s\n",
                fmt::format("{} {}x{} batch {} on {} ({}): analysis pipeline with {} slot{} "
                            "(8-bit frames up, peaks down, keypoints decoded): {:.3f} frames/s "
                            "({:.1f} ms per batch over {} batches after {} untimed)",
                            bench.architecture, bench.width, bench.height, batch, backend.name(),
                            backend.description(), runners.size(), runners.size() == 1 ? "" : "s",
                            per_second, 1e3 * seconds / bench.batches, bench.batches, warmup)
                    .c_str());
  }
}

}  // namespace labpose::tools
