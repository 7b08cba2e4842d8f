// The pipeline benchmark: DeviceSlots and PoseRunner fed by synthetic frames or a video's.
#include "tools/labpose/bench_pipeline.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>

#include "nets/models/models.hpp"
#include "nets/random.hpp"
#include "pipeline/analysis/device_slots.hpp"
#include "pipeline/analysis/runner.hpp"
#include "pipeline/analysis/stages.hpp"
#include "pipeline/video/reader.hpp"

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
  SyntheticFrames(int batch, int batches) : batch_(batch), batches_(batches) {}

  bool fill(pipeline::FrameBatch& frames) {
    if (next_batch_ == batches_) return false;
    if (drawn_.insert(&frames).second) {
      nets::Random random(static_cast<std::uint64_t>(drawn_.size()));
      for (std::uint8_t& value : frames.pixels)
        value = static_cast<std::uint8_t>(random.uniform() * 255.999);
    }
    frames.reads.clear();
    for (int i = 0; i < batch_; ++i) {
      const std::int64_t frame = std::int64_t{next_batch_} * batch_ + i;
      frames.reads.push_back({frame, pipeline::FrameStatus::ok, static_cast<double>(frame) / 30.0});
    }
    ++next_batch_;
    return true;
  }

 private:
  int batch_, batches_;
  int next_batch_ = 0;
  std::set<const pipeline::FrameBatch*> drawn_;
};

// The slots' pose runners for one frame size, and the stage functions that call them.
struct Runners {
  std::vector<std::unique_ptr<pipeline::PoseRunner>> runners;
  std::vector<pipeline::PoseSlot> slots;
  int batch() const { return runners.front()->batch_size(); }
  pipeline::BatchShape shape(int width, int height) const {
    return {static_cast<std::size_t>(batch()),
            3 * static_cast<std::size_t>(width) * static_cast<std::size_t>(height),
            static_cast<std::size_t>(runners.front()->joints())};
  }
};

Runners make_runners(const pipeline::DeviceSlots& slots, int batch, int width, int height) {
  Runners made;
  made.runners = slots.runners(pipeline::DecodeSettings{}, batch, height, width);
  made.slots = pipeline::pose_slots(made.runners);
  return made;
}

// Runs the stages; returns when each batch reached the sink.
std::vector<double> arrivals_through(const Runners& made, const pipeline::BatchShape& shape,
                                     const pipeline::BatchSource& source, bool in_background) {
  std::vector<double> arrivals;
  pipeline::run_analysis_stages(
      shape, source, made.slots,
      [&arrivals](const pipeline::FrameBatch&) { arrivals.push_back(now_seconds()); },
      in_background);
  return arrivals;
}

// What one measurement gave, for the report.
struct Figures {
  int width = 0, height = 0, batch = 0, slots = 0;
  double seconds = 0, per_second = 0;
  std::string timed;          // which frames were timed, in words
  double decode_fps = 0.0;    // with a video: decoding alone
  std::string decoding = "";  // with a video: "cpu", or "nvdec" where NVDEC decoded it
};

Figures synthetic_figures(const PipelineBench& bench, const pipeline::DeviceSlots& slots) {
  const Runners made = make_runners(slots, bench.batch, bench.width, bench.height);
  const int warmup =
      std::max(bench.warmup, static_cast<int>(pipeline::batches_in_flight(made.runners.size())));
  SyntheticFrames source(made.batch(), warmup + bench.batches);
  const auto arrivals = arrivals_through(
      made, made.shape(bench.width, bench.height),
      [&source](pipeline::FrameBatch& frames) { return source.fill(frames); }, false);
  // From the last warm-up batch's arrival to the last batch's: the timed batches in between.
  Figures figures;
  figures.width = bench.width;
  figures.height = bench.height;
  figures.batch = made.batch();
  figures.slots = static_cast<int>(made.runners.size());
  figures.seconds = arrivals.back() - arrivals[static_cast<std::size_t>(warmup) - 1];
  figures.per_second = static_cast<double>(bench.batches) * made.batch() / figures.seconds;
  figures.timed =
      fmt::format("synthetic frames, {} batches after {} untimed", bench.batches, warmup);
  return figures;
}

Figures video_figures(const PipelineBench& bench, const pipeline::DeviceSlots& slots,
                      nets::Backend& backend) {
  Figures figures;
  {
    const double start = now_seconds();
    pipeline::VideoReader reader(bench.video,
                                 pipeline::analysis_reading(backend, 0, bench.decode_on_gpu));
    std::vector<std::uint8_t> frame(reader.frame_bytes());
    std::int64_t frames = 0;
    while (reader.read(frame.data())) ++frames;
    figures.decode_fps = static_cast<double>(frames) / (now_seconds() - start);
  }
  pipeline::VideoReader reader(bench.video,
                               pipeline::analysis_reading(backend, 0, bench.decode_on_gpu));
  figures.width = reader.width();
  figures.height = reader.height();
  figures.decoding = reader.decodes_on_gpu() ? "nvdec" : "cpu";
  const Runners made = make_runners(slots, bench.batch, reader.width(), reader.height());
  figures.batch = made.batch();
  figures.slots = static_cast<int>(made.runners.size());
  const double start = now_seconds();
  pipeline::FrameDecoder decoder(reader, made.batch());
  const auto arrivals = arrivals_through(
      made, made.shape(reader.width(), reader.height()),
      [&decoder](pipeline::FrameBatch& frames) { return decoder.fill(frames); },
      backend.host_memory());
  figures.seconds = arrivals.back() - start;
  figures.per_second = static_cast<double>(reader.frame_count()) / figures.seconds;
  figures.timed = fmt::format(
      "{} frames of {}, decoding{} included; decoding alone {:.1f} frames/s, "
      "so {:.0f} % of it",
      reader.frame_count(), bench.video, reader.decodes_on_gpu() ? " (NVDEC)" : "",
      figures.decode_fps, 100.0 * figures.per_second / figures.decode_fps);
  return figures;
}

void report(const PipelineBench& bench, const nets::Backend& backend, const Figures& figures) {
  if (bench.json) {
    std::printf(
        "%s\n",
        fmt::format(
            R"({{"arch": "{}", "mode": "pipeline", "width": {}, "height": {}, )"
            R"("batch": {}, "device": "{}", "backend": "{}", "slots": {}, "video": "{}", )"
            R"("seconds": {:.6f}, "decode_fps": {:.4f}, "decoding": "{}", "precision": "{}", )"
            R"("fps": {:.4f}}})",
            bench.architecture, figures.width, figures.height, figures.batch, backend.name(),
            backend.description(), figures.slots, bench.video, figures.seconds, figures.decode_fps,
            figures.decoding, nets::precision_name(backend.plan_precision()), figures.per_second)
            .c_str());
    return;
  }
  std::printf("%s\n", fmt::format("{} {}x{} batch {} on {} ({}): analysis pipeline with {} slot{} "
                                  "(8-bit frames up, peaks down, keypoints decoded): {:.3f} "
                                  "frames/s ({})",
                                  bench.architecture, figures.width, figures.height, figures.batch,
                                  backend.name(), backend.description(), figures.slots,
                                  figures.slots == 1 ? "" : "s", figures.per_second, figures.timed)
                          .c_str());
}

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
  report(
      bench, backend,
      bench.video.empty() ? synthetic_figures(bench, slots) : video_figures(bench, slots, backend));
}

}  // namespace labpose::tools
