// VideoWriter on libavformat/libavcodec/libswscale.
#include "pipeline/video/writer.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/video/ffmpeg.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

bool has_video_encoder(const std::string& name) {
  return avcodec_find_encoder_by_name(name.c_str()) != nullptr;
}

struct VideoWriter::State {
  fs::path path;
  std::optional<AtomicFile> file;
  ffmpeg::OutputContext output;
  ffmpeg::CodecContext encoder;
  ffmpeg::Frame frame;
  ffmpeg::Packet packet;
  ffmpeg::ScaleContext scale;
  AVStream* stream = nullptr;
  std::string codec_name;
  int width = 0, height = 0;  // of the frames given to us
  std::vector<std::uint8_t> padded;
  std::int64_t frames = 0;
  std::int64_t next_tick = 0;  // the smallest presentation time (in frame periods) still allowed
  bool closed = false;

  [[noreturn]] void fail(const std::string& what, int code) const {
    throw Error(fmt::format("cannot write video {}: {}: {}", path.string(), what,
                            ffmpeg::error_text(code)));
  }

  // Sends `input` (or nullptr to flush) and writes every packet the encoder returns.
  void encode(AVFrame* input) {
    int result = avcodec_send_frame(encoder.get(), input);
    if (result < 0) fail("encoding a frame", result);
    for (;;) {
      result = avcodec_receive_packet(encoder.get(), packet.get());
      if (result == AVERROR(EAGAIN) || result == AVERROR_EOF) return;
      if (result < 0) fail("encoding a frame", result);
      av_packet_rescale_ts(packet.get(), encoder->time_base, stream->time_base);
      packet->stream_index = stream->index;
      result = av_interleaved_write_frame(output.get(), packet.get());
      if (result < 0) fail("writing a packet (disk full?)", result);
    }
  }
};

VideoWriter::VideoWriter(const fs::path& path, const VideoWriterOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = path;
  s.width = options.width;
  s.height = options.height;
  if (options.width <= 0 || options.height <= 0 || !(options.fps > 0)) {
    throw Error(fmt::format("cannot write video {}: invalid size {}x{} or frame rate {}",
                            path.string(), options.width, options.height, options.fps));
  }
  ffmpeg::quiet_logging();
  s.file.emplace(path);

  AVFormatContext* raw = nullptr;
  int result = avformat_alloc_output_context2(&raw, nullptr, nullptr, path.filename().c_str());
  if (result < 0 || raw == nullptr) {
    throw Error(fmt::format("cannot write video {}: unknown container for \"{}\"", path.string(),
                            path.extension().string()),
                "use a .mp4, .avi or .mkv file name");
  }
  s.output.reset(raw);

  const AVCodec* codec = nullptr;
  if (options.codec == "mjpeg") {
    codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
  } else if (options.codec == "auto" || options.codec == "libx264") {
    codec = avcodec_find_encoder_by_name("libx264");
  } else if (options.codec != "mpeg4") {
    throw Error(
        fmt::format("cannot write video {}: unknown codec \"{}\"", path.string(), options.codec),
        "use auto, libx264, mpeg4 or mjpeg");
  }
  if (codec == nullptr && options.codec != "libx264" && options.codec != "mjpeg")
    codec = avcodec_find_encoder(AV_CODEC_ID_MPEG4);
  if (codec == nullptr) {
    throw Error(fmt::format("cannot write video {}: no {} encoder in this FFmpeg build",
                            path.string(),
                            options.codec == "auto" ? "H.264 or MPEG-4" : options.codec));
  }
  s.codec_name = codec->name;
  s.stream = avformat_new_stream(s.output.get(), nullptr);
  s.encoder.reset(avcodec_alloc_context3(codec));
  if (s.stream == nullptr || !s.encoder)
    throw Error("out of memory while setting up the video encoder");
  AVCodecContext* encoder = s.encoder.get();
  encoder->width = options.width + options.width % 2;
  encoder->height = options.height + options.height % 2;
  // MJPEG is full-range 4:2:0 (the "J" format); the others use limited-range 4:2:0.
  encoder->pix_fmt = s.codec_name == "mjpeg" ? AV_PIX_FMT_YUVJ420P : AV_PIX_FMT_YUV420P;
  encoder->color_range = s.codec_name == "mjpeg" ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG;
  const AVRational rate = av_d2q(options.fps, 100000);
  encoder->time_base = av_inv_q(rate);
  encoder->framerate = rate;
  encoder->gop_size = 12;
  encoder->thread_count = 0;
  AVDictionary* settings = nullptr;
  if (s.codec_name == "libx264") {
    av_dict_set(&settings, "crf", std::to_string(options.quality).c_str(), 0);
    av_dict_set(&settings, "preset", "veryfast", 0);
  } else {
    encoder->flags |= AV_CODEC_FLAG_QSCALE;
    encoder->global_quality = FF_QP2LAMBDA * std::clamp(options.quality / 6, 1, 31);
  }
  if ((s.output->oformat->flags & AVFMT_GLOBALHEADER) != 0)
    encoder->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
  result = avcodec_open2(encoder, codec, &settings);
  av_dict_free(&settings);
  if (result < 0) s.fail("opening the " + s.codec_name + " encoder", result);
  result = avcodec_parameters_from_context(s.stream->codecpar, encoder);
  if (result < 0) s.fail("setting stream parameters", result);
  s.stream->time_base = encoder->time_base;
  s.stream->avg_frame_rate = rate;

  result = avio_open(&s.output->pb, s.file->temp_path().c_str(), AVIO_FLAG_WRITE);
  if (result < 0) s.fail("opening the file", result);
  result = avformat_write_header(s.output.get(), nullptr);
  if (result < 0) s.fail("writing the header", result);

  s.frame.reset(av_frame_alloc());
  s.packet.reset(av_packet_alloc());
  if (!s.frame || !s.packet) throw Error("out of memory while setting up the video encoder");
  s.frame->format = encoder->pix_fmt;
  s.frame->width = encoder->width;
  s.frame->height = encoder->height;
  result = av_frame_get_buffer(s.frame.get(), 0);
  if (result < 0) s.fail("allocating a frame", result);
  s.scale.reset(sws_getContext(encoder->width, encoder->height, AV_PIX_FMT_BGR24, encoder->width,
                               encoder->height, encoder->pix_fmt, SWS_BILINEAR, nullptr, nullptr,
                               nullptr));
  if (!s.scale) throw Error("cannot set up the colour conversion for the video encoder");
  if (encoder->width != s.width || encoder->height != s.height) {
    s.padded.resize(static_cast<std::size_t>(encoder->width) *
                    static_cast<std::size_t>(encoder->height) * 3);
  }
}

VideoWriter::~VideoWriter() =
    default;  // an unclosed writer leaves no file: AtomicFile removes the temp

void VideoWriter::write_bgr(const std::uint8_t* bgr, std::size_t stride) {
  write_bgr_at(bgr, stride, state_->next_tick);
}

void VideoWriter::write_bgr_at(const std::uint8_t* bgr, std::size_t stride, std::int64_t tick) {
  State& s = *state_;
  LABPOSE_ASSERT(!s.closed);
  LABPOSE_ASSERT(tick >= s.next_tick);
  const std::uint8_t* source = bgr;
  int source_stride = static_cast<int>(stride);
  if (!s.padded.empty()) {
    // Odd sizes: repeat the last column/row so the frame is even-sized for 4:2:0.
    const int width = s.encoder->width, row_bytes = s.width * 3;
    for (int y = 0; y < s.encoder->height; ++y) {
      const std::uint8_t* row = bgr + static_cast<std::size_t>(std::min(y, s.height - 1)) * stride;
      std::uint8_t* out =
          &s.padded[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) * 3];
      std::memcpy(out, row, static_cast<std::size_t>(row_bytes));
      if (width > s.width) std::memcpy(out + row_bytes, row + row_bytes - 3, 3);
    }
    source = s.padded.data();
    source_stride = width * 3;
  }
  int result = av_frame_make_writable(s.frame.get());
  if (result < 0) s.fail("preparing a frame", result);
  const std::uint8_t* planes[1] = {source};
  const int strides[1] = {source_stride};
  sws_scale(s.scale.get(), planes, strides, 0, s.encoder->height, s.frame->data, s.frame->linesize);
  s.frame->pts = tick;
  s.next_tick = tick + 1;
  ++s.frames;
  s.encode(s.frame.get());
}

void VideoWriter::close() {
  State& s = *state_;
  if (s.closed) return;
  s.encode(nullptr);
  const int result = av_write_trailer(s.output.get());
  if (result < 0) s.fail("writing the trailer", result);
  s.output.reset();  // closes the file
  s.closed = true;
  s.file->commit();
}

const std::string& VideoWriter::codec_name() const {
  return state_->codec_name;
}
std::int64_t VideoWriter::frames_written() const {
  return state_->frames;
}

}  // namespace labpose::pipeline
