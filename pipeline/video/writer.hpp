// Writes 8-bit BGR frames to a video file with libx264 (H.264) through libavcodec, or MPEG-4 Part 2
// where libx264 is missing (MJPEG on request, for test clips); the container follows the file
// extension (.mp4, .avi, .mkv). The file appears only when close() succeeds (temp file + rename).
// Not a transcoder: no audio, no metadata copy.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

namespace labpose::pipeline {

struct VideoWriterOptions {
  int width = 0, height = 0;  // pixels; odd sizes are padded by one pixel (4:2:0 needs even sizes)
  double fps = 30.0;
  std::string codec = "auto";  // "auto" (libx264, else mpeg4), "libx264", "mpeg4", "mjpeg"
  int quality = 18;  // libx264 CRF (lower = better); mpeg4 uses a fixed quantizer derived from it
};

/// Whether this FFmpeg build has the encoder (e.g. "libx264", "mpeg4").
bool has_video_encoder(const std::string& name);

class VideoWriter {
 public:
  VideoWriter(const std::filesystem::path& path, const VideoWriterOptions& options);
  ~VideoWriter();
  VideoWriter(const VideoWriter&) = delete;
  VideoWriter& operator=(const VideoWriter&) = delete;

  /// Appends one frame: `bgr` points at height rows of width*3 bytes, `stride` bytes apart.
  void write_bgr(const std::uint8_t* bgr, std::size_t stride);
  /// The same, shown at `tick` frame periods (1/fps s) from the start; ticks must increase. Gaps
  /// make a variable-frame-rate video, like a camera that dropped frames.
  void write_bgr_at(const std::uint8_t* bgr, std::size_t stride, std::int64_t tick);
  /// Flushes the encoder, writes the container trailer and moves the file into place.
  void close();

  /// The encoder in use ("libx264" or "mpeg4").
  const std::string& codec_name() const;
  std::int64_t frames_written() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace labpose::pipeline
