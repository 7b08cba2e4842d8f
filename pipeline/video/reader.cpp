// VideoReader: the frame table from one pass over the packets, the decode loop that numbers each
// decoded picture by its timestamp, and exact seeking with a decode-forward check.
#include "pipeline/video/reader.hpp"

extern "C" {
#include <libavutil/pixdesc.h>
}

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/video/ffmpeg.hpp"
#include "pipeline/video/gpu_decoding.hpp"
#include "pipeline/video/pixel_conversion.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

// After this many decoder errors in a row with no picture, the video is declared unreadable
// rather than looping on it.
constexpr int kMaxErrorsInARow = 10000;
// How many earlier key frames a seek tries when the frame it wants does not come out.
constexpr int kSeekRetries = 3;

struct KeyFrame {
  std::int64_t index = 0;           // display index of the key frame
  std::int64_t seek_timestamp = 0;  // what av_seek_frame is given to land on (or before) it
};

// What one pass over the packets (no decoding) says about the frames.
struct FrameTable {
  std::int64_t frame_count = 0;
  // Presentation timestamps (stream time base) in display order, one per frame; empty when the
  // packets carry no usable timestamps and frames are numbered in decoding order.
  std::vector<std::int64_t> timestamps;
  std::vector<KeyFrame> key_frames;  // ascending index
  bool pts_from_dts = false;         // packets carry only dts (and nothing is reordered)
  std::string read_error;            // why the pass stopped before the end of the file
};

FrameTable read_frame_table(const fs::path& path, int stream_index, AVCodecID codec,
                            bool reorders) {
  // A second, independent opening: the decoding context stays at the start of the file.
  ffmpeg::OpenedVideo video = ffmpeg::open_video(path, false);
  if (static_cast<int>(video.input->nb_streams) <= stream_index ||
      video.input->streams[stream_index]->codecpar->codec_id != codec) {
    video = ffmpeg::open_video(path, true);  // streams found only by probing (e.g. MPEG-TS)
  }
  struct PacketTimes {
    std::int64_t pts, dts;
    bool key;
  };
  std::vector<PacketTimes> packets;
  FrameTable table;
  const ffmpeg::Packet packet(av_packet_alloc());
  if (!packet) throw Error("out of memory while opening a video");
  for (;;) {
    const int result = av_read_frame(video.input.get(), packet.get());
    if (result == AVERROR_EOF) break;
    if (result < 0) {
      table.read_error = ffmpeg::error_text(result);
      break;
    }
    // Packets an edit list marks as not shown are decoded for reference only: not frames.
    if (packet->stream_index == stream_index && (packet->flags & AV_PKT_FLAG_DISCARD) == 0) {
      packets.push_back({packet->pts, packet->dts, (packet->flags & AV_PKT_FLAG_KEY) != 0});
    }
    av_packet_unref(packet.get());
  }
  table.frame_count = static_cast<std::int64_t>(packets.size());

  const bool all_pts = std::all_of(packets.begin(), packets.end(),
                                   [](const PacketTimes& p) { return p.pts != AV_NOPTS_VALUE; });
  const bool all_dts = std::all_of(packets.begin(), packets.end(),
                                   [](const PacketTimes& p) { return p.dts != AV_NOPTS_VALUE; });
  // Without pts, dts are presentation times only when the codec does not reorder frames.
  table.pts_from_dts = !all_pts && all_dts && !reorders;
  if (!all_pts && !table.pts_from_dts) return table;
  const auto presentation = [&](const PacketTimes& p) { return all_pts ? p.pts : p.dts; };
  table.timestamps.reserve(packets.size());
  for (const auto& p : packets) table.timestamps.push_back(presentation(p));
  std::sort(table.timestamps.begin(), table.timestamps.end());
  if (std::adjacent_find(table.timestamps.begin(), table.timestamps.end()) !=
      table.timestamps.end()) {
    table.timestamps.clear();  // two frames at one time: timestamps cannot name frames
    table.pts_from_dts = false;
    return table;
  }
  for (const auto& p : packets) {
    if (!p.key) continue;
    const std::int64_t time = presentation(p);
    const auto index = std::lower_bound(table.timestamps.begin(), table.timestamps.end(), time) -
                       table.timestamps.begin();
    table.key_frames.push_back({index, p.dts != AV_NOPTS_VALUE ? p.dts : time});
  }
  std::sort(table.key_frames.begin(), table.key_frames.end(),
            [](const KeyFrame& a, const KeyFrame& b) { return a.index < b.index; });
  return table;
}

void insert_sorted(std::vector<std::int64_t>& values, std::int64_t value) {
  const auto at = std::lower_bound(values.begin(), values.end(), value);
  if (at == values.end() || *at != value) values.insert(at, value);
}

// Decodes ahead on a thread of its own while the reader's caller converts the picture before, so
// that conversion overlaps decoding (as the stages of FFmpeg's own command line overlap). Up to
// kSlots pictures wait, in frames allocated once. stop() parks the thread and keeps what waits;
// clear() drops that too, before the decoder is flushed or the file reopened. While the thread
// runs, only it touches the decoder and the demuxer.
class Lookahead {
 public:
  /// Decodes the next picture into the frame given and returns its index; nullopt at the end.
  using Decode = std::function<std::optional<std::int64_t>(AVFrame*)>;

  explicit Lookahead(Decode decode) : decode_(std::move(decode)) {
    for (Slot& slot : slots_) {
      slot.frame.reset(av_frame_alloc());
      if (!slot.frame) throw Error("out of memory while opening a video");
    }
  }
  ~Lookahead() { stop(); }
  Lookahead(const Lookahead&) = delete;
  Lookahead& operator=(const Lookahead&) = delete;

  /// Moves the next picture into `into` and returns its index; nullopt at the end. Rethrows the
  /// error of a picture whose decoding failed (the next call decodes on after it).
  std::optional<std::int64_t> take(AVFrame* into) {
    std::unique_lock lock(mutex_);
    if (count_ == 0) {
      if (finished_) return std::nullopt;
      if (!running_) start();
      ready_.wait(lock, [&] { return count_ > 0; });
    }
    Slot& slot = slots_[head_];
    head_ = (head_ + 1) % kSlots;
    --count_;
    room_.notify_one();
    if (slot.error) {
      finished_ = false;
      std::rethrow_exception(std::exchange(slot.error, nullptr));
    }
    if (slot.index) av_frame_move_ref(into, slot.frame.get());
    return slot.index;
  }

  /// Waits for the thread to finish the picture it is decoding and parks it.
  void stop() {
    {
      const std::lock_guard lock(mutex_);
      if (!thread_.joinable()) return;
      stopping_ = true;
      room_.notify_one();
    }
    thread_.join();
    const std::lock_guard lock(mutex_);
    stopping_ = running_ = false;
  }

  /// stop(), and the waiting pictures dropped.
  void clear() {
    stop();
    for (Slot& slot : slots_) {
      av_frame_unref(slot.frame.get());
      slot.error = nullptr;
    }
    head_ = count_ = 0;
    finished_ = false;
  }

 private:
  static constexpr std::size_t kSlots = 3;
  struct Slot {
    ffmpeg::Frame frame;
    std::optional<std::int64_t> index;  // nullopt: the end of the video
    std::exception_ptr error;
  };

  // With mutex_ held.
  void start() {
    if (thread_.joinable()) thread_.join();  // it has left run() (running_ is false)
    running_ = true;
    thread_ = std::thread([this] { run(); });
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      room_.wait(lock, [&] { return stopping_ || count_ < kSlots; });
      if (stopping_) break;
      // The slot after the waiting ones: take() moves head_ and count_ together, so it stays put.
      Slot& slot = slots_[(head_ + count_) % kSlots];
      lock.unlock();
      try {
        slot.index = decode_(slot.frame.get());
      } catch (...) {
        slot.error = std::current_exception();
      }
      lock.lock();
      ++count_;
      ready_.notify_one();
      if (!slot.index || slot.error) {
        finished_ = true;
        break;
      }
    }
    running_ = false;
  }

  Decode decode_;
  std::array<Slot, kSlots> slots_;
  std::size_t head_ = 0, count_ = 0;  // the oldest waiting slot; how many wait
  bool running_ = false;              // the thread is in run()
  bool stopping_ = false;             // stop() asked it to leave
  bool finished_ = false;             // the end (or an error) is queued: nothing more to decode
  std::mutex mutex_;
  std::condition_variable room_, ready_;
  std::thread thread_;
};

}  // namespace

struct VideoReader::State {
  fs::path path;
  VideoReaderOptions options;
  VideoInfo info;
  FrameTable table;
  double time_base = 0;  // seconds per timestamp tick
  ffmpeg::OpenedVideo video;
  ffmpeg::CodecContext decoder;
  ffmpeg::Packet packet;
  ffmpeg::Frame frame;
  std::optional<FrameConverter> converter;
  std::unique_ptr<ffmpeg::GpuDecoding> gpu;  // null: decoding on the CPU
  std::atomic<bool> host_pictures = false;   // NVDEC left this stream to the CPU (set by decode)
  int width = 0, height = 0;

  std::int64_t next = 0;  // the index read() returns next
  bool pending = false;   // `frame` holds a decoded picture not returned yet
  std::int64_t pending_index = 0;
  bool drained = false;  // the decoder has given its last picture to read()
  // The decoder's side (the lookahead thread's, while it runs).
  bool demux_done = false, flush_sent = false;
  std::int64_t decoded_since_start = 0;  // numbering without timestamps

  // After a seek: the wanted frame has not come out yet; if a later one does, try an earlier key.
  bool verifying = false;
  std::ptrdiff_t seek_key = 0;  // index into table.key_frames of the last seek, -1: the start
  int retries = 0;

  std::vector<std::int64_t> undecodable, damaged;

  // Decoding ahead, when the reader has more than one decoder thread. Declared last: it stops
  // before the decoder and the file it uses are closed.
  std::optional<Lookahead> lookahead;

  std::string name() const { return path.string(); }

  void open_decoder() {
    const AVStream* stream = video.input->streams[video.stream];
    const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
    if (codec == nullptr) {
      throw Error(fmt::format("video {} uses the codec {}, which this FFmpeg build cannot decode",
                              name(), info.codec),
                  "re-encode it to H.264, e.g. ffmpeg -i in.avi -c:v libx264 -crf 18 out.mp4");
    }
    decoder.reset(avcodec_alloc_context3(codec));
    if (!decoder) throw Error("out of memory while opening video " + name());
    int result = avcodec_parameters_to_context(decoder.get(), stream->codecpar);
    if (result < 0) fail("reading the codec parameters", result);
    decoder->thread_count = options.threads;
    decoder->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    if (options.gpu_decoding) attach_gpu(*codec, *options.gpu_decoding);
    decoder->pkt_timebase = stream->time_base;
    result = avcodec_open2(decoder.get(), codec, nullptr);
    if (result < 0) fail("opening the " + std::string(codec->name) + " decoder", result);
  }

  // NVDEC for the decoder about to open, or the CPU with a warning that says why.
  void attach_gpu(const AVCodec& codec, int device) {
    std::string why_not;
    gpu = ffmpeg::GpuDecoding::attach(*decoder, codec, device, why_not);
    if (!gpu) {
      console::warn("video {}: decoding on the CPU: {}", name(), why_not);
      return;
    }
    decoder->thread_count = 1;  // NVDEC decodes; CPU threads would only queue for it
    console::info("video {}: decoding on CUDA device {} (NVDEC)", name(), device);
  }

  // A decoded picture into host memory; the first one NVDEC left to the CPU is said.
  void bring_to_host(AVFrame* picture) {
    if (gpu->to_host(*picture) || host_pictures.exchange(true)) return;
    const char* format = av_get_pix_fmt_name(static_cast<AVPixelFormat>(picture->format));
    console::warn(
        "video {}: NVDEC does not decode this {} stream ({}); FFmpeg decodes it on the "
        "CPU",
        name(), info.codec, format != nullptr ? format : "an unusual pixel format");
  }

  [[noreturn]] void fail(const std::string& what, int code) const {
    if (code == AVERROR(ENOMEM)) {
      throw Error(fmt::format("out of memory ({}) reading video {}", what, name()),
                  "close other programs, or read fewer videos at once");
    }
    throw Error(
        fmt::format("cannot read video {}: {}: {}", name(), what, ffmpeg::error_text(code)),
        "the file may be damaged; ffmpeg -v error -i <video> -f null - lists what is wrong");
  }

  bool numbered_by_timestamps() const { return !table.timestamps.empty(); }

  double seconds(std::int64_t index) const {
    if (numbered_by_timestamps()) {
      return static_cast<double>(table.timestamps[static_cast<std::size_t>(index)] -
                                 table.timestamps.front()) *
             time_base;
    }
    return info.fps > 0 ? static_cast<double>(index) / info.fps : 0.0;
  }

  // The display index of a decoded picture, or -1 when its timestamp names no frame.
  std::int64_t index_of(const AVFrame& decoded) {
    if (!numbered_by_timestamps()) return decoded_since_start++;
    const std::int64_t time =
        decoded.pts != AV_NOPTS_VALUE ? decoded.pts : decoded.best_effort_timestamp;
    const auto& times = table.timestamps;
    const auto at = std::lower_bound(times.begin(), times.end(), time);
    if (time == AV_NOPTS_VALUE || at == times.end() || *at != time) return -1;
    return at - times.begin();
  }

  // Decodes the next picture into `out` and returns its index; nullopt when the decoder has
  // given out everything.
  std::optional<std::int64_t> decode(AVFrame* out) {
    int errors_in_a_row = 0;
    for (;;) {
      int result = avcodec_receive_frame(decoder.get(), out);
      if (result == 0) {
        const std::int64_t index = index_of(*out);
        if (index < 0) {
          console::debug("video {}: a decoded picture with timestamp {} matches no frame; dropped",
                         name(), out->pts);
          av_frame_unref(out);
          continue;
        }
        if (gpu) bring_to_host(out);
        return index;
      }
      if (result == AVERROR_EOF) return std::nullopt;
      if (result != AVERROR(EAGAIN)) {
        // A picture was lost (corrupt data); the gap in the timestamps tells which one.
        if (result == AVERROR(ENOMEM)) fail("decoding", result);
        if (++errors_in_a_row > kMaxErrorsInARow) fail("decoding", result);
        continue;
      }
      if (demux_done) {
        if (flush_sent) return std::nullopt;  // neither drains nor gives pictures: drained
        result = avcodec_send_packet(decoder.get(), nullptr);  // drain: no frame may stay inside
        flush_sent = true;
        if (result < 0 && result != AVERROR_EOF) fail("finishing decoding", result);
        continue;
      }
      result = av_read_frame(video.input.get(), packet.get());
      if (result < 0) {
        demux_done = true;
        continue;
      }
      if (packet->stream_index != video.stream) {
        av_packet_unref(packet.get());
        continue;
      }
      if (table.pts_from_dts && packet->pts == AV_NOPTS_VALUE) packet->pts = packet->dts;
      result = avcodec_send_packet(decoder.get(), packet.get());
      av_packet_unref(packet.get());
      if (result == AVERROR(ENOMEM)) fail("decoding", result);
      if (result < 0 && ++errors_in_a_row > kMaxErrorsInARow) fail("decoding", result);
    }
  }

  // The next picture into `frame` (pending), from the lookahead or decoded here.
  void next_picture() {
    const std::optional<std::int64_t> index =
        lookahead ? lookahead->take(frame.get()) : decode(frame.get());
    pending = index.has_value();
    pending_index = index.value_or(0);
    drained = !pending;
  }

  // Before the demuxer or the decoder is reset: no picture decoded ahead survives it.
  void stop_lookahead() {
    if (lookahead) lookahead->clear();
  }

  void reset_decoding() {
    stop_lookahead();
    avcodec_flush_buffers(decoder.get());
    av_frame_unref(frame.get());
    pending = false;
    demux_done = flush_sent = drained = false;
  }

  // Back to the first packet of the file, by opening it again (works for every container).
  void restart() {
    stop_lookahead();
    video = ffmpeg::open_video(path);
    reset_decoding();
    decoded_since_start = 0;
    seek_key = -1;
  }

  // Positions the demuxer at (or before) key frame `key` and resets the decoder.
  void jump_to_key(std::ptrdiff_t key) {
    const KeyFrame& target = table.key_frames[static_cast<std::size_t>(key)];
    stop_lookahead();
    const int result =
        av_seek_frame(video.input.get(), video.stream, target.seek_timestamp, AVSEEK_FLAG_BACKWARD);
    if (result < 0) {
      restart();
      return;
    }
    reset_decoding();
    seek_key = key;
  }

  // The wanted frame did not come out after a seek: go back further, if there is further to go.
  bool retry_earlier() {
    if (retries >= kSeekRetries || seek_key < 0) return false;
    ++retries;
    if (seek_key == 0) {
      restart();
    } else {
      jump_to_key(seek_key - 1);
    }
    return true;
  }
};

VideoReader::VideoReader(const fs::path& path, const VideoReaderOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.path = path;
  s.options = options;
  s.video = ffmpeg::open_video(path);
  s.info = header_video_info(s.video, path);
  const AVStream* stream = s.video.input->streams[s.video.stream];
  s.time_base = av_q2d(stream->time_base);
  s.table = read_frame_table(path, s.video.stream, stream->codecpar->codec_id,
                             stream->codecpar->video_delay > 0);
  const std::string name = s.name();
  if (s.table.frame_count == 0) {
    throw Error(fmt::format("video {} holds no frames{}", name,
                            s.table.read_error.empty() ? "" : " (" + s.table.read_error + ")"),
                "the file may be damaged or cut short; check that it plays");
  }

  VideoInfo& info = s.info;
  info.frame_count = s.table.frame_count;
  info.frame_count_source = FrameCountSource::packets;
  const auto& times = s.table.timestamps;
  if (times.size() >= 2) {
    std::vector<std::int64_t> intervals(times.size() - 1);
    for (std::size_t i = 1; i < times.size(); ++i) intervals[i - 1] = times[i] - times[i - 1];
    const auto [shortest, longest] = std::minmax_element(intervals.begin(), intervals.end());
    const std::int64_t low = *shortest, high = *longest;
    const auto middle = intervals.begin() + static_cast<std::ptrdiff_t>(intervals.size() / 2);
    std::nth_element(intervals.begin(), middle, intervals.end());
    const std::int64_t median = *middle;
    // Timestamps are rounded to the time base (30 fps in 1/12800 s ticks is 426 or 427), so one
    // tick, or 1 % of the interval, is still a constant rate.
    const std::int64_t tolerance = std::max<std::int64_t>(1, median / 100);
    info.variable_frame_rate = median - low > tolerance || high - median > tolerance;
    info.duration_seconds =
        static_cast<double>(times.back() - times.front() + median) * s.time_base;
    if (info.variable_frame_rate || !(info.fps > 0)) {
      info.fps = static_cast<double>(times.size()) / info.duration_seconds;
    }
    if (info.variable_frame_rate) {
      console::warn(
          "video {} has a variable frame rate (frames {:.1f} to {:.1f} ms apart, {:.3f} fps on "
          "average); frame numbers stay exact, times come from the video's timestamps",
          name, static_cast<double>(low) * s.time_base * 1000,
          static_cast<double>(high) * s.time_base * 1000, info.fps);
    }
  }
  if (info.declared_frame_count > 0 && info.declared_frame_count != info.frame_count) {
    console::warn("video {}: its header says {} frames, but it holds {}; labpose uses {}", name,
                  info.declared_frame_count, info.frame_count, info.frame_count);
  }
  if (!s.table.read_error.empty()) {
    console::warn("video {} could not be read to the end ({}); it holds at least {} frames", name,
                  s.table.read_error, info.frame_count);
  }
  if (times.empty()) {
    console::warn(
        "video {} carries no usable frame timestamps: frames are numbered in decoding order and "
        "seeking decodes from the start",
        name);
  }

  if (options.crop) {
    const PixelRect& crop = *options.crop;
    if (crop.x < 0 || crop.y < 0 || crop.width <= 0 || crop.height <= 0 ||
        crop.x + crop.width > info.width || crop.y + crop.height > info.height) {
      throw Error(
          fmt::format("the crop {}x{} at ({}, {}) does not fit inside the {}x{} frames of "
                      "video {}",
                      crop.width, crop.height, crop.x, crop.y, info.width, info.height, name),
          fmt::format(
              "make the crop box (x1, x2, y1, y2) fit inside the frames: 0 <= x1 < x2 <= {}, "
              "0 <= y1 < y2 <= {}",
              info.width, info.height));
    }
    s.width = crop.width;
    s.height = crop.height;
    s.converter.emplace(crop.x, crop.y, crop.width, crop.height, options.order == PixelOrder::bgr);
  } else {
    s.width = info.width;
    s.height = info.height;
    s.converter.emplace(0, 0, info.width, info.height, options.order == PixelOrder::bgr);
  }
  s.open_decoder();
  s.packet.reset(av_packet_alloc());
  s.frame.reset(av_frame_alloc());
  if (!s.packet || !s.frame) throw Error("out of memory while opening video " + name);
  // With one decoder thread everything stays on the caller's thread (as `ffmpeg -threads 1`
  // decodes on one); with more, the caller converts one picture while the next is decoded.
  if (options.threads != 1) {
    s.lookahead.emplace([&s](AVFrame* out) { return s.decode(out); });
  }
}

VideoReader::~VideoReader() = default;

const VideoInfo& VideoReader::info() const {
  return state_->info;
}
int VideoReader::width() const {
  return state_->width;
}
int VideoReader::height() const {
  return state_->height;
}
std::size_t VideoReader::frame_bytes() const {
  return row_bytes() * static_cast<std::size_t>(height());
}
std::int64_t VideoReader::position() const {
  return state_->next;
}
double VideoReader::frame_seconds(std::int64_t index) const {
  LABPOSE_ASSERT(index >= 0 && index < state_->info.frame_count);
  return state_->seconds(index);
}
const std::vector<std::int64_t>& VideoReader::undecodable_frames() const {
  return state_->undecodable;
}
const std::vector<std::int64_t>& VideoReader::damaged_frames() const {
  return state_->damaged;
}
bool VideoReader::exact_frame_numbers() const {
  return state_->numbered_by_timestamps();
}
bool VideoReader::decodes_on_gpu() const {
  return state_->gpu != nullptr && !state_->host_pictures;
}

std::optional<FrameRead> VideoReader::read(std::uint8_t* pixels, std::size_t stride) {
  State& s = *state_;
  if (s.next >= s.info.frame_count) return std::nullopt;
  for (;;) {
    if (!s.pending && !s.drained) {
      s.next_picture();
      continue;
    }
    if (s.pending && s.pending_index < s.next) {  // before the wanted frame (after a seek)
      av_frame_unref(s.frame.get());
      s.pending = false;
      continue;
    }
    if (!s.pending || s.pending_index > s.next) {
      // The wanted frame did not come out: the seek landed too late, or it cannot be decoded.
      if (s.verifying && s.retry_earlier()) continue;
      s.verifying = false;
      insert_sorted(s.undecodable, s.next);
      const FrameRead missing{s.next, FrameStatus::undecodable, s.seconds(s.next)};
      ++s.next;
      return missing;
    }
    s.converter->convert(*s.frame, pixels, stride);
    const bool damaged =
        s.frame->decode_error_flags != 0 || (s.frame->flags & AV_FRAME_FLAG_CORRUPT) != 0;
    if (damaged) insert_sorted(s.damaged, s.next);
    av_frame_unref(s.frame.get());
    s.pending = false;
    s.verifying = false;
    const FrameRead done{s.next, damaged ? FrameStatus::damaged : FrameStatus::ok,
                         s.seconds(s.next)};
    ++s.next;
    return done;
  }
}

void VideoReader::seek(std::int64_t index) {
  State& s = *state_;
  if (index < 0 || index > s.info.frame_count) {
    throw Error(fmt::format("cannot go to frame {} of video {}: it has frames 0 to {}", index,
                            s.name(), s.info.frame_count - 1));
  }
  // The decoder's position: the pending picture, or the next one it gives.
  const std::int64_t decoder_at = s.pending   ? s.pending_index
                                  : s.drained ? s.info.frame_count
                                              : s.next;
  s.retries = 0;
  if (!s.numbered_by_timestamps()) {
    if (index < decoder_at) s.restart();
    s.next = index;
    return;
  }
  const auto& keys = s.table.key_frames;
  const auto after =
      std::upper_bound(keys.begin(), keys.end(), index,
                       [](std::int64_t i, const KeyFrame& k) { return i < k.index; });
  const std::ptrdiff_t key = (after - keys.begin()) - 1;  // the last key frame at or before index
  // Decode forward when no key frame lies between here and the target (a jump would not help).
  const bool forward =
      index >= decoder_at && (key < 0 || keys[static_cast<std::size_t>(key)].index <= decoder_at);
  s.next = index;
  if (forward || index == s.info.frame_count) return;
  if (key < 0) {
    s.restart();
  } else {
    s.jump_to_key(key);
  }
  s.verifying = true;
}

}  // namespace labpose::pipeline
