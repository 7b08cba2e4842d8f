// RAII owners for FFmpeg's contexts, the conversion of FFmpeg error codes into messages, and the
// opening of video files. Internal to pipeline/video: other folders see VideoInfo, VideoReader and
// VideoWriter, never an AV* type.
#pragma once

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}

#include <filesystem>
#include <memory>
#include <string>

#include "pipeline/video/probe.hpp"

namespace labpose::pipeline::ffmpeg {

/// FFmpeg's text for an AVERROR code ("Invalid data found when processing input").
std::string error_text(int code);

struct InputCloser {
  void operator()(AVFormatContext* context) const { avformat_close_input(&context); }
};
struct OutputCloser {
  void operator()(AVFormatContext* context) const;  // closes the file and frees the context
};
struct CodecCloser {
  void operator()(AVCodecContext* context) const { avcodec_free_context(&context); }
};
struct FrameCloser {
  void operator()(AVFrame* frame) const { av_frame_free(&frame); }
};
struct PacketCloser {
  void operator()(AVPacket* packet) const { av_packet_free(&packet); }
};
struct ScaleCloser {
  void operator()(SwsContext* context) const { sws_freeContext(context); }
};

using InputContext = std::unique_ptr<AVFormatContext, InputCloser>;
using OutputContext = std::unique_ptr<AVFormatContext, OutputCloser>;
using CodecContext = std::unique_ptr<AVCodecContext, CodecCloser>;
using Frame = std::unique_ptr<AVFrame, FrameCloser>;
using Packet = std::unique_ptr<AVPacket, PacketCloser>;
using ScaleContext = std::unique_ptr<SwsContext, ScaleCloser>;

/// Keeps FFmpeg's own log lines off the terminal unless --verbose (we report errors ourselves).
void quiet_logging();
/// The error lines FFmpeg logged on this thread since the last call (after quiet_logging()).
std::string take_logged_errors();

/// An input file opened by libavformat and the index of its (best) video stream.
struct OpenedVideo {
  InputContext input;
  int stream = -1;
};
/// Opens `path` and finds its video stream, reading the stream info (a few packets) first when
/// `read_stream_info`. Throws Error naming the video for a missing, empty, unreadable or non-video
/// file. (Defined in probe.cpp.)
OpenedVideo open_video(const std::filesystem::path& path, bool read_stream_info = true);

}  // namespace labpose::pipeline::ffmpeg

namespace labpose::pipeline {

/// What the container and stream headers say about an opened video. (Defined in probe.cpp.)
VideoInfo header_video_info(const ffmpeg::OpenedVideo& video, const std::filesystem::path& path);

}  // namespace labpose::pipeline
