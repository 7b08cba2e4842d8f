// run_live: the frame loop and the latency statistics of a live run.
#include "pipeline/live/live.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <set>

#include "core/console.hpp"
#include "core/interrupt.hpp"
#include "pipeline/video/reader.hpp"

namespace labpose::pipeline {
using Clock = std::chrono::steady_clock;

namespace {

double seconds_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double>(to - from).count();
}

// The q-quantile of `values` (nearest rank), in milliseconds.
double quantile_ms(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  const auto rank =
      static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())) - 1.0);
  const auto at = values.begin() + static_cast<std::ptrdiff_t>(std::min(rank, values.size() - 1));
  std::nth_element(values.begin(), at, values.end());
  return *at * 1000.0;
}

// Latencies and counts of a run, summarized on request.
class LatencyLog {
 public:
  explicit LatencyLog(Clock::time_point started) : started_(started) {}
  void add(double latency) { latencies_.push_back(latency); }
  LiveSummary summary(std::int64_t dropped, Clock::time_point now) const {
    LiveSummary s;
    s.frames = static_cast<std::int64_t>(latencies_.size());
    s.dropped = dropped;
    s.seconds = seconds_between(started_, now);
    s.p50_ms = quantile_ms(latencies_, 0.50);
    s.p95_ms = quantile_ms(latencies_, 0.95);
    s.p99_ms = quantile_ms(latencies_, 0.99);
    s.max_ms =
        latencies_.empty() ? 0.0 : *std::max_element(latencies_.begin(), latencies_.end()) * 1000.0;
    s.frames_per_second = s.seconds > 0 ? static_cast<double>(s.frames) / s.seconds : 0.0;
    return s;
  }

 private:
  Clock::time_point started_;
  std::vector<double> latencies_;
};

// How often each bodypart reached pcutoff, and the animals and tracks seen.
class PoseCounts {
 public:
  PoseCounts(double pcutoff, int animal_bodyparts)
      : pcutoff_(pcutoff), animal_bodyparts_(static_cast<std::size_t>(animal_bodyparts)) {}
  void add(const LivePose& pose) {
    confident_.resize(animal_bodyparts_ + pose.keypoints.size());
    for (const LiveAnimal& animal : pose.animals) {
      tracks_.insert(animal.track);
      for (std::size_t j = 0; j < animal.keypoints.size() && j < animal_bodyparts_; ++j)
        count(j, animal.keypoints[j]);
    }
    for (std::size_t j = 0; j < pose.keypoints.size(); ++j)
      count(animal_bodyparts_ + j, pose.keypoints[j]);
    animals_ += static_cast<std::int64_t>(pose.animals.size());
  }
  void into(LiveSummary& summary) const {
    summary.confident = confident_;
    summary.animals = animals_;
    summary.tracks = static_cast<std::int64_t>(tracks_.size());
  }

 private:
  void count(std::size_t j, const KeypointPrediction& keypoint) {
    confident_[j] += keypoint.likelihood >= pcutoff_ ? 1 : 0;
  }
  double pcutoff_;
  std::size_t animal_bodyparts_;
  std::vector<std::int64_t> confident_;
  std::int64_t animals_ = 0;
  std::set<int> tracks_;
};

// One animal's keypoints from a FramePredictor.
class SingleAnimalModel final : public LivePoseModel {
 public:
  explicit SingleAnimalModel(FramePredictor& predictor) : predictor_(predictor) {}
  void prepare(int height, int width) override { predictor_.prepare(height, width); }
  void estimate(const std::uint8_t* pixels, int height, int width, LivePose& pose) override {
    pose.keypoints = predictor_.predict(pixels, height, width);
  }

 private:
  FramePredictor& predictor_;
};

// The frames of a source, one at a time: a file's every frame, or a capture's newest.
class FrameSource {
 public:
  FrameSource(const LiveSource& source, const std::optional<double>& seconds) {
    if (!source.camera.empty()) {
      CaptureOptions options = source.capture;
      if (seconds) {
        options.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(*seconds));
      }
      capture_.emplace(source.camera, options);
      return;
    }
    VideoReaderOptions options;
    options.order = PixelOrder::rgb;
    options.threads = 1;  // the network has the cores; one frame is decoded at a time
    reader_.emplace(source.video, options);
    frame_.width = reader_->width();
    frame_.height = reader_->height();
    frame_.pixels.resize(reader_->frame_bytes());
  }
  // The next frame, with `arrived` set; false at the end, or when `stop` says so while waiting
  // for a camera.
  bool next(CapturedFrame*& frame, const std::function<bool()>& stop) {
    if (capture_) {
      while (true) {
        const LiveCapture::Next next = capture_->next(frame_, std::chrono::milliseconds(50));
        if (next == LiveCapture::Next::frame) break;
        if (next == LiveCapture::Next::waiting && !stop()) continue;
        if (const std::string error = capture_->error(); !error.empty())
          console::warn("the source stopped: {}", error);
        return false;
      }
      frame = &frame_;
      return true;
    }
    while (reader_->position() < reader_->frame_count()) {
      const std::optional<FrameRead> read = reader_->read(frame_.pixels.data());
      if (!read) return false;
      if (read->status == FrameStatus::undecodable) {
        console::warn("frame {} could not be decoded; it has no pose", read->index);
        continue;
      }
      frame_.index = read->index;
      frame_.arrived = Clock::now();
      frame = &frame_;
      return true;
    }
    return false;
  }
  std::int64_t dropped() const { return capture_ ? capture_->dropped() : 0; }
  int width() const { return capture_ ? capture_->width() : reader_->width(); }
  int height() const { return capture_ ? capture_->height() : reader_->height(); }

 private:
  std::optional<VideoReader> reader_;
  std::optional<LiveCapture> capture_;
  CapturedFrame frame_;
};

}  // namespace

std::string latency_text(const LiveSummary& s) {
  return fmt::format(
      "{} frames, latency p50 {:.1f} ms, p95 {:.1f} ms, p99 {:.1f} ms, {:.1f} "
      "frames/s, {} dropped",
      s.frames, s.p50_ms, s.p95_ms, s.p99_ms, s.frames_per_second, s.dropped);
}

LiveSummary run_live(FramePredictor& predictor, const LiveSource& source,
                     const LiveOptions& options, const std::vector<PoseProcessor*>& processors) {
  SingleAnimalModel model(predictor);
  return run_live(model, source, options, processors);
}

LiveSummary run_live(LivePoseModel& model, const LiveSource& source, const LiveOptions& options,
                     const std::vector<PoseProcessor*>& processors) {
  FrameSource frames(source, options.seconds);
  if (frames.width() > 0 && frames.height() > 0) model.prepare(frames.height(), frames.width());
  const Clock::time_point started = Clock::now();
  LatencyLog log(started);
  Clock::time_point reported = started;
  LivePose pose;
  CapturedFrame* frame = nullptr;
  bool interrupted = false;
  PoseCounts counts(options.pcutoff, model.animal_bodyparts());
  // A latency line every report_seconds, also while a camera is silent.
  const auto report = [&] {
    const Clock::time_point now = Clock::now();
    if (options.report_seconds <= 0 || seconds_between(reported, now) < options.report_seconds)
      return;
    reported = now;
    console::info("live: {}", latency_text(log.summary(frames.dropped(), now)));
  };
  while (true) {
    const auto stop = [&] {
      report();
      interrupted = interrupt_requested();
      return interrupted ||
             (options.seconds && seconds_between(started, Clock::now()) >= *options.seconds);
    };
    if (stop() || !frames.next(frame, stop)) break;
    model.estimate(frame->pixels.data(), frame->height, frame->width, pose);
    const Clock::time_point known = Clock::now();
    pose.frame = frame->index;
    pose.timestamp = seconds_between(started, frame->arrived);
    pose.latency = seconds_between(frame->arrived, known);
    log.add(pose.latency);
    counts.add(pose);
    for (PoseProcessor* processor : processors) processor->process(pose);
  }
  LiveSummary summary = log.summary(frames.dropped(), Clock::now());
  summary.interrupted = interrupted;
  counts.into(summary);
  return summary;
}

}  // namespace labpose::pipeline
