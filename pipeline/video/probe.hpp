// What a video is, read from its container and stream headers (no decoding): size, frame rate,
// frame count, codec. Used where a project learns about a video (create, add-videos).
// Not the frame reader: exact counts by decoding and seeking belong to the video reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace labpose::pipeline {

struct VideoInfo {
  std::filesystem::path path;
  int width = 0, height = 0;  // pixels
  double fps = 0;             // average frames per second
  std::int64_t frame_count = 0;
  bool frame_count_from_header = false;  // false: estimated from duration x fps
  double duration_seconds = 0;
  std::string codec;      // e.g. "h264"
  std::string container;  // e.g. "mov,mp4,m4a,3gp,3g2,mj2"
};

/// Opens `path` and reads its first video stream's headers. Throws Error naming the video for a
/// missing, empty, unreadable or non-video file.
VideoInfo probe_video(const std::filesystem::path& path);

/// "libavformat 59.27.100, libavcodec 59.37.100, ..." for `labpose doctor`.
std::string ffmpeg_versions();

}  // namespace labpose::pipeline
