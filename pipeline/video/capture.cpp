// LiveCapture: a decoding thread that keeps the newest frame of a live source.
#include "pipeline/video/capture.hpp"

#include <fmt/core.h>

extern "C" {
#include <libavdevice/version.h>  // LIBAVDEVICE_VERSION_MAJOR only: the library is loaded at run time
#include <libavutil/dict.h>
}

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "pipeline/video/ffmpeg.hpp"
#include "pipeline/video/pixel_conversion.hpp"

namespace labpose::pipeline {

struct LiveCapture::State {
  ffmpeg::InputContext input;
  ffmpeg::CodecContext decoder;
  int stream = -1;
  int width = 0, height = 0;  // the header's, read before the thread starts
  std::atomic<bool> stopping{false};
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::thread thread;
  int fifo = -1;  // a FIFO's descriptor, read without blocking so that stop() is never stuck

  State() = default;
  State(const State&) = delete;
  State& operator=(const State&) = delete;
  ~State() {
    if (fifo >= 0) ::close(fifo);  // FFmpeg's pipe: protocol leaves it open
  }

  mutable std::mutex mutex;
  std::condition_variable changed;
  CapturedFrame newest;  // guarded by mutex
  bool fresh = false;    // newest not taken yet
  bool ended = false;
  std::string error;
  std::int64_t arrived = 0, dropped = 0;

  void run();
  void publish(CapturedFrame& frame);
};

namespace {

// FFmpeg's blocking reads give up when the capture stops or Ctrl-C/SIGTERM arrives.
int interrupted(void* opaque) {
  const auto* state = static_cast<const LiveCapture::State*>(opaque);
  const bool late = state->deadline && std::chrono::steady_clock::now() >= *state->deadline;
  return state->stopping.load() || interrupt_requested() || late ? 1 : 0;
}

bool is_camera(const std::string& source) {
  return source.rfind("/dev/video", 0) == 0;
}

// FFmpeg's input devices (V4L2 cameras) come from libavdevice, loaded when the first live source
// opens: linked, it and the 200 libraries it needs (SDL, X11, PulseAudio, JACK...) would load into
// every labpose run. Returns why it could not be loaded, or "" once registered.
const std::string& register_devices() {
  static const std::string failure = [] {
    const std::string name = fmt::format("libavdevice.so.{}", LIBAVDEVICE_VERSION_MAJOR);
    void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept loaded: FFmpeg uses it
    if (library == nullptr) return std::string(dlerror());
    using RegisterAll = void (*)();
    const auto register_all =
        reinterpret_cast<RegisterAll>(dlsym(library, "avdevice_register_all"));
    if (register_all == nullptr) return fmt::format("{} has no avdevice_register_all", name);
    register_all();
    return std::string();
  }();
  return failure;
}

}  // namespace

void LiveCapture::State::publish(CapturedFrame& frame) {
  {
    const std::lock_guard lock(mutex);
    frame.index = arrived++;
    if (fresh) ++dropped;
    std::swap(newest, frame);
    fresh = true;
  }
  changed.notify_all();
}

void LiveCapture::State::run() {
  ffmpeg::Packet packet(av_packet_alloc());
  ffmpeg::Frame decoded(av_frame_alloc());
  std::unique_ptr<FrameConverter> converter;
  CapturedFrame spare;
  std::string failure;
  const auto take_frames = [&]() -> bool {
    while (true) {
      const int result = avcodec_receive_frame(decoder.get(), decoded.get());
      if (result == AVERROR(EAGAIN) || result == AVERROR_EOF) return true;
      if (result < 0) {
        failure = "decoding failed: " + ffmpeg::error_text(result);
        return false;
      }
      spare.arrived = std::chrono::steady_clock::now();
      if (!converter || spare.width != decoded->width || spare.height != decoded->height) {
        spare.width = decoded->width;
        spare.height = decoded->height;
        converter = std::make_unique<FrameConverter>(0, 0, spare.width, spare.height, false);
      }
      spare.pixels.resize(static_cast<std::size_t>(spare.width) *
                          static_cast<std::size_t>(spare.height) * 3);
      converter->convert(*decoded, spare.pixels.data(), static_cast<std::size_t>(spare.width) * 3);
      av_frame_unref(decoded.get());
      publish(spare);
    }
  };
  try {
    while (!stopping.load()) {
      const int result = av_read_frame(input.get(), packet.get());
      if (result == AVERROR(EAGAIN)) {  // a camera with no new frame yet
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      if (result < 0) {
        // AVERROR_EXIT: stop(), Ctrl-C or the deadline asked for it.
        if (result != AVERROR_EOF && result != AVERROR_EXIT && !stopping.load())
          failure = "reading stopped: " + ffmpeg::error_text(result);
        avcodec_send_packet(decoder.get(), nullptr);  // drain what the decoder holds
        take_frames();
        break;
      }
      const bool ours = packet->stream_index == stream;
      const int sent = ours ? avcodec_send_packet(decoder.get(), packet.get()) : 0;
      av_packet_unref(packet.get());
      if (sent < 0 && sent != AVERROR(EAGAIN)) continue;  // a damaged packet: the next may do
      if (ours && !take_frames()) break;
    }
  } catch (const Error& thrown) {
    failure = thrown.what();
  }
  {
    const std::lock_guard lock(mutex);
    ended = true;
    error = failure;
  }
  changed.notify_all();
}

LiveCapture::LiveCapture(const std::string& source, const CaptureOptions& options)
    : state_(std::make_unique<State>()) {
  const std::string& devices_missing = register_devices();
  ffmpeg::quiet_logging();
  State& s = *state_;
  s.deadline = options.deadline;
  const AVInputFormat* format = nullptr;
  AVDictionary* settings = nullptr;
  if (is_camera(source)) {
    format = av_find_input_format("v4l2");
    if (format == nullptr) {
      throw Error(fmt::format("cannot open the camera {}: this FFmpeg has no V4L2 input{}", source,
                              devices_missing.empty() ? "" : " (" + devices_missing + ")"),
                  fmt::format("install FFmpeg's libavdevice with V4L2 support (Debian: "
                              "libavdevice{})",
                              LIBAVDEVICE_VERSION_MAJOR));
    }
    if (options.width > 0 && options.height > 0) {
      av_dict_set(&settings, "video_size",
                  fmt::format("{}x{}", options.width, options.height).c_str(), 0);
    }
    if (options.fps > 0)
      av_dict_set(&settings, "framerate", fmt::format("{}", options.fps).c_str(), 0);
  }
  // A live source is read as it comes: its header and first frames say what it is, without
  // waiting for seconds of it.
  av_dict_set(&settings, "analyzeduration", "200000", 0);  // microseconds
  av_dict_set(&settings, "probesize", "262144", 0);
  // A FIFO is opened here, waiting for its writer (Ctrl-C ends the wait), then read without
  // blocking: FFmpeg retries an empty read and asks interrupted() in between. A camera is asked
  // for frames without blocking too.
  std::string url = source;
  struct stat status = {};
  if (::stat(source.c_str(), &status) == 0 && S_ISFIFO(status.st_mode)) {
    s.fifo = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    if (s.fifo < 0 && interrupt_requested())
      throw Error("stopped while waiting for a writer to " + source, "", ErrorKind::interrupted);
    if (s.fifo < 0 || ::fcntl(s.fifo, F_SETFL, ::fcntl(s.fifo, F_GETFL) | O_NONBLOCK) != 0) {
      throw Error(fmt::format("cannot open {}: {}", source, std::strerror(errno)),
                  "check the FIFO's permissions");
    }
    url = fmt::format("pipe:{}", s.fifo);
  }
  AVFormatContext* context = avformat_alloc_context();
  context->interrupt_callback = {interrupted, state_.get()};
  if (is_camera(source)) context->flags |= AVFMT_FLAG_NONBLOCK;
  int result = avformat_open_input(&context, url.c_str(), format, &settings);
  av_dict_free(&settings);
  const auto check_stopped = [&] {
    if (interrupt_requested())
      throw Error("stopped while opening " + source, "", ErrorKind::interrupted);
    if (s.deadline && std::chrono::steady_clock::now() >= *s.deadline) {
      throw Error(fmt::format("{} sent no video to recognize within the time given", source),
                  "check that the camera or the stream is running");
    }
  };
  check_stopped();
  if (result < 0) {
    throw Error(fmt::format("cannot open {}: {}", source, ffmpeg::error_text(result)),
                is_camera(source)
                    ? "check that the camera is plugged in and not used by another "
                      "program (v4l2-ctl --list-devices lists them)"
                    : "check the path, or that something writes a video stream there");
  }
  s.input.reset(context);
  result = avformat_find_stream_info(context, nullptr);
  check_stopped();
  const AVCodec* codec = nullptr;
  if (result >= 0) result = av_find_best_stream(context, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
  if (result < 0 || codec == nullptr) {
    throw Error(fmt::format("{} has no video stream that can be decoded ({})", source,
                            ffmpeg::error_text(result)),
                "give a camera (/dev/videoN) or a video stream");
  }
  s.stream = result;
  s.decoder.reset(avcodec_alloc_context3(codec));
  avcodec_parameters_to_context(s.decoder.get(), context->streams[s.stream]->codecpar);
  s.decoder->thread_count = 1;  // a frame as soon as its packet is in: no frame-thread delay
  result = avcodec_open2(s.decoder.get(), codec, nullptr);
  if (result < 0) {
    throw Error(fmt::format("cannot decode {}: {}", source, ffmpeg::error_text(result)),
                "the stream's codec is not supported by this FFmpeg");
  }
  s.width = s.decoder->width;
  s.height = s.decoder->height;
  s.thread = std::thread([&s] { s.run(); });
}

LiveCapture::~LiveCapture() {
  stop();
}

void LiveCapture::stop() {
  state_->stopping = true;
  if (state_->thread.joinable()) state_->thread.join();
  state_->decoder.reset();
  state_->input.reset();
  if (state_->fifo >= 0) ::close(state_->fifo);
  state_->fifo = -1;
}

LiveCapture::Next LiveCapture::next(CapturedFrame& frame, std::chrono::milliseconds wait) {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  if (!s.changed.wait_for(lock, wait, [&] { return s.fresh || s.ended; })) return Next::waiting;
  if (!s.fresh) return Next::ended;
  std::swap(frame, s.newest);
  s.fresh = false;
  return Next::frame;
}

int LiveCapture::width() const {
  return state_->decoder->width;
}
int LiveCapture::height() const {
  return state_->decoder->height;
}

std::int64_t LiveCapture::dropped() const {
  const std::lock_guard lock(state_->mutex);
  return state_->dropped;
}

std::int64_t LiveCapture::arrived() const {
  const std::lock_guard lock(state_->mutex);
  return state_->arrived;
}

std::string LiveCapture::error() const {
  const std::lock_guard lock(state_->mutex);
  return state_->error;
}

}  // namespace labpose::pipeline
