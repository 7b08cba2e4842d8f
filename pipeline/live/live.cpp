// run_live: the frame loop, the latency statistics and the tracks CSV of a live run.
#include "pipeline/live/live.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>

#include "core/console.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/number_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
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
  FrameSource frames(source, options.seconds);
  if (frames.width() > 0 && frames.height() > 0) predictor.prepare(frames.height(), frames.width());
  const Clock::time_point started = Clock::now();
  LatencyLog log(started);
  Clock::time_point reported = started;
  LivePose pose;
  CapturedFrame* frame = nullptr;
  bool interrupted = false;
  std::vector<std::int64_t> confident;
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
    pose.keypoints = predictor.predict(frame->pixels.data(), frame->height, frame->width);
    const Clock::time_point known = Clock::now();
    pose.frame = frame->index;
    pose.timestamp = seconds_between(started, frame->arrived);
    pose.latency = seconds_between(frame->arrived, known);
    log.add(pose.latency);
    confident.resize(pose.keypoints.size());
    for (std::size_t j = 0; j < pose.keypoints.size(); ++j)
      confident[j] += pose.keypoints[j].likelihood >= options.pcutoff ? 1 : 0;
    for (PoseProcessor* processor : processors) processor->process(pose);
  }
  LiveSummary summary = log.summary(frames.dropped(), Clock::now());
  summary.interrupted = interrupted;
  summary.confident = std::move(confident);
  return summary;
}

LiveCsvWriter::LiveCsvWriter(const fs::path& file, const std::string& scorer,
                             const std::vector<std::string>& bodyparts)
    : file_(file), part_(fs::path(file).concat(".part")) {
  out_.open(part_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw Error(fmt::format("cannot write {}", part_.string()),
                "check that the folder exists and is writable, or pick another --output");
  }
  std::string scorers = "scorer", parts = "bodyparts", coords = "coords";
  for (const auto& bodypart : bodyparts) {
    for (const char* coord : {"x", "y", "likelihood"}) {
      scorers += "," + scorer;
      parts += "," + bodypart;
      coords += fmt::format(",{}", coord);
    }
  }
  for (const char* column : {"timestamp", "latency"}) {
    scorers += "," + scorer;
    parts += fmt::format(",{}", column);
    coords += ",seconds";
  }
  out_ << scorers << '\n' << parts << '\n' << coords << '\n';
}

LiveCsvWriter::~LiveCsvWriter() = default;

void LiveCsvWriter::process(const LivePose& pose) {
  std::string row = std::to_string(pose.frame);
  const auto cell = [&row](double value) {
    row += ',';
    if (!std::isnan(value)) row += projects::python_float_repr(value);
  };
  for (const auto& keypoint : pose.keypoints) {
    cell(keypoint.x);
    cell(keypoint.y);
    cell(keypoint.likelihood);
  }
  cell(pose.timestamp);
  cell(pose.latency);
  row += '\n';
  out_ << row;
  // The rows reach the file at least every 64 rows, so a killed run keeps them in the .part file.
  if (++rows_ % 64 == 0) out_.flush();
}

void LiveCsvWriter::finish() {
  out_.flush();
  const bool written = static_cast<bool>(out_);
  out_.close();
  if (!written) {
    throw Error(fmt::format("could not write all rows to {} (is the disk full?)", part_.string()),
                "free some space; the rows written so far are in the .part file");
  }
  std::error_code error;
  fs::rename(part_, file_, error);
  if (error) {
    throw Error(
        fmt::format("cannot rename {} to {}: {}", part_.string(), file_.string(), error.message()),
        "the rows are in the .part file");
  }
}

}  // namespace labpose::pipeline
