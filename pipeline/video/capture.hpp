// Frames from a live source, newest first: a camera (/dev/videoN through FFmpeg's libavdevice,
// V4L2), or any stream FFmpeg reads as it arrives (a FIFO, a network URL). A thread decodes every
// frame as it comes and keeps only the newest; a consumer that is slower than the source gets the
// newest frame and the ones it never took are counted as dropped, never queued. Not seekable and
// without frame counts: for files, VideoReader.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace labpose::pipeline {

struct CaptureOptions {
  int width = 0, height = 0;  // a camera's requested size (0: its default)
  double fps = 0.0;           // a camera's requested frame rate (0: its default)
  /// Give up opening or reading at this time (a source that never sends a frame).
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// One captured frame: packed 8-bit RGB, numbered in arrival order from 0.
struct CapturedFrame {
  std::int64_t index = 0;
  std::chrono::steady_clock::time_point arrived;  // when it was decoded: "frame available"
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

class LiveCapture {
 public:
  /// Opens `source` (/dev/videoN: V4L2; anything else: what FFmpeg finds there) and starts
  /// decoding. Throws Error naming the source when it cannot be opened or has no video.
  LiveCapture(const std::string& source, const CaptureOptions& options = {});
  ~LiveCapture();
  LiveCapture(const LiveCapture&) = delete;
  LiveCapture& operator=(const LiveCapture&) = delete;

  /// The stream's frame size as its header gives it (frames may still change size).
  int width() const;
  int height() const;
  enum class Next { frame, waiting, ended };
  /// Waits up to `wait` for a frame newer than the last one taken and swaps it into `frame`
  /// (Next::frame); Next::waiting when none came in time; Next::ended once the source has ended
  /// (or failed: error() says why) and every frame was taken.
  Next next(CapturedFrame& frame, std::chrono::milliseconds wait);
  /// Frames that arrived and were replaced by a newer one before next() took them.
  std::int64_t dropped() const;
  /// Frames that arrived.
  std::int64_t arrived() const;
  /// Why the source stopped early (empty when it ended normally or is still running).
  std::string error() const;
  /// Stops decoding (also on destruction).
  void stop();

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace labpose::pipeline
