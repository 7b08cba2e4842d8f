// Closed-loop pose estimation, DeepLabCut-Live's job: frames one at a time through a
// FramePredictor whose inference plan is built once, each pose handed at once to processors (as
// DLC-Live's Processor.process(pose)), with the latency from "frame available" to "pose available"
// measured for every frame. From a video file every frame is processed (a latency benchmark); from
// a camera or stream (LiveCapture) the newest frame is taken and older ones are dropped and
// counted, never queued. A multi-animal model's frames are assembled into animals and tracked
// (live_animals.hpp). The programs' C++ API: `labpose live` is built on it. Not batch analysis
// (analyze.hpp), and not the tracks CSV (live_csv.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/predictor.hpp"
#include "pipeline/video/capture.hpp"

namespace labpose::pipeline {

/// One animal of a multi-animal model in one frame, as the tracker follows it.
struct LiveAnimal {
  /// The tracker's tracklet id: the same while the tracker follows the animal, a new one after it
  /// lost it. Never stitched into the project's individuals: that needs the frames to come.
  int track = 0;
  std::vector<KeypointPrediction> keypoints;  // the multi-animal bodyparts, in the model's order
};

/// One frame's pose: rows of x, y, likelihood (DLC-Live's get_pose), with when it was known.
struct LivePose {
  std::int64_t frame = 0;  // the frame's number in the file, or in arrival order from a camera
  double timestamp = 0.0;  // seconds from the start of the run to the frame becoming available
  double latency = 0.0;    // seconds from the frame available to its pose available
  /// One animal: J, in the model's bodypart order. Several animals: the unique bodyparts (empty
  /// when the project has none).
  std::vector<KeypointPrediction> keypoints;
  std::vector<LiveAnimal> animals;  // several animals: those tracked in this frame, by track id
};

/// What computes each frame's pose for run_live: one animal's keypoints (FramePredictor), or a
/// multi-animal model's animals (LiveAnimalModel).
class LivePoseModel {
 public:
  virtual ~LivePoseModel() = default;
  /// Builds what frames of this size need (the inference plan) before the first one comes.
  virtual void prepare(int height, int width) = 0;
  /// Sets pose.keypoints and pose.animals for one frame (height, width, 3 packed 8-bit RGB).
  virtual void estimate(const std::uint8_t* pixels, int height, int width, LivePose& pose) = 0;
  /// The bodyparts of each of pose.animals (0 for a single-animal model).
  virtual int animal_bodyparts() const { return 0; }
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
  bool interrupted = false;  // stopped by Ctrl-C/SIGTERM
  /// Per bodypart, the keypoints with likelihood >= pcutoff: one per pose; for several animals the
  /// multi-animal bodyparts (one per animal tracked), then the unique ones (one per pose).
  std::vector<std::int64_t> confident;
  std::int64_t animals = 0;  // several animals: animals tracked, summed over the frames
  std::int64_t tracks = 0;   // several animals: the tracklet ids seen
};

/// "p50 12.3 ms, p95 ..., p99 ..., 81.2 frames/s, 0 dropped".
std::string latency_text(const LiveSummary& summary);

/// Runs `model` on the source's frames until it ends, `options.seconds` pass or Ctrl-C/SIGTERM
/// (core/interrupt.hpp), calling every processor with each pose. Throws Error when the source
/// cannot be read.
LiveSummary run_live(LivePoseModel& model, const LiveSource& source, const LiveOptions& options,
                     const std::vector<PoseProcessor*>& processors);
/// run_live() with one animal's keypoints from `predictor` (batch 1 is the quickest).
LiveSummary run_live(FramePredictor& predictor, const LiveSource& source,
                     const LiveOptions& options, const std::vector<PoseProcessor*>& processors);

}  // namespace labpose::pipeline
