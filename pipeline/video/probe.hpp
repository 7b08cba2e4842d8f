// What a video is, read from its container and stream headers (no decoding): size, frame rate,
// frame count, codec. Used where a project learns about a video (create, add-videos).
// Not the frame reader: exact counts by decoding and seeking belong to the video reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace labpose::pipeline {

/// Where VideoInfo::frame_count comes from.
enum class FrameCountSource {
  header,     // the container's own count (probe_video)
  estimated,  // duration x frame rate, the container has no count (probe_video)
  packets,    // one per frame packet, read from the whole file (VideoReader): exact
};

struct VideoInfo {
  std::filesystem::path path;
  int width = 0, height = 0;  // pixels
  double fps = 0;             // average frames per second
  std::int64_t frame_count = 0;
  FrameCountSource frame_count_source = FrameCountSource::estimated;
  std::int64_t declared_frame_count = 0;  // what the container says; 0 when it says nothing
  bool variable_frame_rate = false;       // frame intervals differ (VideoReader only)
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
