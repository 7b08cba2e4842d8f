// Video probing through libavformat, and the opening of video files shared with the reader.
#include "pipeline/video/probe.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <regex>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/video/ffmpeg.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace ffmpeg {
namespace {

// The largest frames read: 8192x8192 pixels (67 megapixels), at most 16384 on a side. Such a
// frame is 192 MB as RGB and four times that as the network's float input, per frame of a batch;
// lab and 8K cameras stay well below. A header claiming more is almost always a damaged file.
constexpr std::int64_t kMaxFrameSide = 16384, kMaxFramePixels = 8192LL * 8192;

// How to tell a damaged file from a real video of that size.
const char* const kCheckItPlays =
    "check that it plays in a video player (ffprobe <video> prints its size)";

// When FFmpeg refused the frame size the file claims (its log says so; the code it returns, e.g.
// EBUSY, does not), the Error that names that size.
void refuse_size_ffmpeg_refused(const std::string& name) {
  static const std::regex refused(R"(Picture size (\d+)x(\d+) is invalid)");
  const std::string logged = take_logged_errors();
  std::smatch size;
  if (!std::regex_search(logged, size, refused)) return;
  throw Error(fmt::format("video {} claims frames of {}x{} pixels, a size FFmpeg refuses to "
                          "allocate: the file is damaged or not a video",
                          name, size[1].str(), size[2].str()),
              std::string(kCheckItPlays) +
                  "; if it does, re-encode it, e.g. ffmpeg -i <video> -c:v libx264 -crf 18 "
                  "copy.mp4");
}

void check_frame_size(const std::string& name, int width, int height) {
  const std::int64_t pixels = static_cast<std::int64_t>(width) * height;
  if (width <= kMaxFrameSide && height <= kMaxFrameSide && pixels <= kMaxFramePixels) return;
  throw Error(
      fmt::format("video {} claims frames of {}x{} pixels ({} MB each as RGB), more than the "
                  "8192x8192 pixels labpose reads (at most {} on a side); the file may be damaged "
                  "or not a video",
                  name, width, height, pixels * 3 / 1'000'000, kMaxFrameSide),
      std::string(kCheckItPlays) +
          "; a real video this large must be scaled down first, e.g. ffmpeg -i <video> -vf "
          "scale=iw/4:-2 smaller.mp4");
}

}  // namespace

OpenedVideo open_video(const fs::path& path, bool read_stream_info) {
  const std::string name = path.string();
  std::error_code error;
  if (!fs::exists(path, error)) {
    throw Error(fmt::format("video {} does not exist", name), "check the path for typos");
  }
  if (fs::is_directory(path, error)) {
    throw Error(fmt::format("{} is a folder, not a video", name));
  }
  if (fs::file_size(path, error) == 0) {
    throw Error(fmt::format("video {} is empty (0 bytes)", name),
                "the copy may have failed; copy the video again from its source");
  }
  if (::access(path.c_str(), R_OK) != 0) {
    throw Error(fmt::format("cannot read video {}: {}", name, describe_errno(errno)),
                "check the file's permissions (ls -l)");
  }
  quiet_logging();
  take_logged_errors();  // forget what was logged before this opening
  AVFormatContext* raw = nullptr;
  const int opened = avformat_open_input(&raw, path.c_str(), nullptr, nullptr);
  if (opened < 0) {
    refuse_size_ffmpeg_refused(name);
    throw Error(fmt::format("cannot open {} as a video: {}", name, error_text(opened)),
                "is it a video file? labpose reads what FFmpeg reads (mp4, avi, mov, mkv, ...)");
  }
  OpenedVideo video{InputContext(raw), -1};
  if (read_stream_info) {
    const int found = avformat_find_stream_info(video.input.get(), nullptr);
    if (found < 0) {
      refuse_size_ffmpeg_refused(name);
      throw Error(fmt::format("cannot read the streams of video {}: {}", name, error_text(found)),
                  "the file may be damaged or cut short");
    }
  }
  video.stream = av_find_best_stream(video.input.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (video.stream < 0)
    throw Error(fmt::format("{} has no video stream", name), "is it an audio or data file?");
  const AVCodecParameters* parameters = video.input->streams[video.stream]->codecpar;
  if (parameters->width <= 0 || parameters->height <= 0) {
    refuse_size_ffmpeg_refused(name);
    throw Error(fmt::format("video {} does not say its frame size", name),
                "the file may be damaged");
  }
  check_frame_size(name, parameters->width, parameters->height);
  return video;
}

}  // namespace ffmpeg

VideoInfo header_video_info(const ffmpeg::OpenedVideo& video, const fs::path& path) {
  const AVStream* stream = video.input->streams[video.stream];
  const AVCodecParameters* parameters = stream->codecpar;
  VideoInfo info;
  info.path = path;
  info.width = parameters->width;
  info.height = parameters->height;
  const AVRational rate =
      stream->avg_frame_rate.num > 0 ? stream->avg_frame_rate : stream->r_frame_rate;
  info.fps = rate.den > 0 ? av_q2d(rate) : 0.0;
  if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
    info.duration_seconds = static_cast<double>(stream->duration) * av_q2d(stream->time_base);
  } else if (video.input->duration != AV_NOPTS_VALUE && video.input->duration > 0) {
    info.duration_seconds = static_cast<double>(video.input->duration) / AV_TIME_BASE;
  }
  if (stream->nb_frames > 0) {
    info.frame_count = info.declared_frame_count = stream->nb_frames;
    info.frame_count_source = FrameCountSource::header;
  } else if (info.fps > 0 && info.duration_seconds > 0) {
    info.frame_count = static_cast<std::int64_t>(std::llround(info.duration_seconds * info.fps));
  }
  const AVCodecDescriptor* descriptor = avcodec_descriptor_get(parameters->codec_id);
  info.codec = descriptor != nullptr ? descriptor->name : "unknown";
  info.container = video.input->iformat->name;
  return info;
}

VideoInfo probe_video(const fs::path& path) {
  return header_video_info(ffmpeg::open_video(path), path);
}

std::string ffmpeg_versions() {
  const auto text = [](const char* name, unsigned version) {
    return fmt::format("{} {}.{}.{}", name, AV_VERSION_MAJOR(version), AV_VERSION_MINOR(version),
                       AV_VERSION_MICRO(version));
  };
  return fmt::format("{}, {}, {}, {}", text("libavformat", avformat_version()),
                     text("libavcodec", avcodec_version()), text("libswscale", swscale_version()),
                     text("libavutil", avutil_version()));
}

}  // namespace labpose::pipeline
