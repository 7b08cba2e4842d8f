// Closed-loop pose estimation, DeepLabCut-Live's job: frames one at a time through a
// FramePredictor whose inference plan is built once, each pose handed at once to processors (as
// DLC-Live's Processor.process(pose)), with the latency from "frame available" to "pose available"
// measured for every frame. From a video file every frame is processed (a latency benchmark); from
// a camera or stream (LiveCapture) the newest frame is taken and older ones are dropped and
// counted, never queued. The programs' C++ API: `labpose live` is built on it. Not batch analysis
// (analyze.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/predictor.hpp"
#include "pipeline/video/capture.hpp"

namespace labpose::pipeline {

/// One frame's pose: J rows of x, y, likelihood (DLC-Live's get_pose), with when it was known.
struct LivePose {
  std::int64_t frame = 0;  // the frame's number in the file, or in arrival order from a camera
  double timestamp = 0.0;  // seconds from the start of the run to the frame becoming available
  double latency = 0.0;    // seconds from the frame available to its pose available
  std::vector<KeypointPrediction> keypoints;  // J, in the model's bodypart order
};

/// Called with each pose on the thread that runs the network, before the next frame is taken:
/// keep it short (trigger a device, queue work), as in DLC-Live.
class PoseProcessor {
 public:
  virtual ~PoseProcessor() = default;
  virtual void process(const LivePose& pose) = 0;
};

struct LiveSource {
  std::filesystem::path video;  // a video file: every frame, as fast as it runs
  std::string camera;           // or /dev/videoN or a stream: the newest frame each time
  CaptureOptions capture;       // a camera's size and rate
};

struct LiveOptions {
  std::optional<double> seconds;  // stop after this long (default: the end of the source)
  double report_seconds = 5.0;    // a latency line this often (0: only at the end)
  double pcutoff = 0.6;           // LiveSummary::confident counts keypoints at least this likely
};

struct LiveSummary {
  std::int64_t frames = 0;   // poses computed
  std::int64_t dropped = 0;  // camera frames replaced by newer ones before they were taken
  double seconds = 0.0;      // the run's wall time
  double p50_ms = 0.0, p95_ms = 0.0, p99_ms = 0.0, max_ms = 0.0;  // latency
  double frames_per_second = 0.0;
  bool interrupted = false;             // stopped by Ctrl-C/SIGTERM
  std::vector<std::int64_t> confident;  // per bodypart: poses with likelihood >= pcutoff
};

/// "p50 12.3 ms, p95 ..., p99 ..., 81.2 frames/s, 0 dropped".
std::string latency_text(const LiveSummary& summary);

/// Runs `predictor` on the source's frames until it ends, `options.seconds` pass or Ctrl-C/SIGTERM
/// (core/interrupt.hpp), calling every processor with each pose. Throws Error when the source
/// cannot be read.
LiveSummary run_live(FramePredictor& predictor, const LiveSource& source,
                     const LiveOptions& options, const std::vector<PoseProcessor*>& processors);

/// A processor writing DeepLabCut's tracks CSV (scorer/bodyparts/coords header rows, one row per
/// pose, x, y, likelihood per bodypart) with two more columns: the pose's timestamp and latency in
/// seconds. Rows go to `<file>.part` as they come and finish() renames it to `file`, so a run
/// killed midway leaves its rows in the .part file and never a half-written `file`.
class LiveCsvWriter final : public PoseProcessor {
 public:
  LiveCsvWriter(const std::filesystem::path& file, const std::string& scorer,
                const std::vector<std::string>& bodyparts);
  ~LiveCsvWriter() override;
  LiveCsvWriter(const LiveCsvWriter&) = delete;
  LiveCsvWriter& operator=(const LiveCsvWriter&) = delete;
  void process(const LivePose& pose) override;
  /// Flushes and renames the file into place. Throws Error when the disk refused a row.
  void finish();

 private:
  std::filesystem::path file_, part_;
  std::ofstream out_;
  std::int64_t rows_ = 0;
};

}  // namespace labpose::pipeline
