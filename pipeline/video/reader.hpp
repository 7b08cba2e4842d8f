// Decodes a video's frames in display order with FFmpeg (libavformat/libavcodec, multi-threaded),
// into buffers the caller owns, as packed RGB or BGR, optionally cropped. On opening it reads
// every packet once (no decoding) to build the frame table: the exact frame count, each frame's
// timestamp, the key frames, and whether the frame rate varies. That table makes seeking exact
// and keeps frame numbers right when a frame cannot be decoded: such a frame is reported with its
// index and the caller decides (analysis writes NaN); nothing is filled in, nothing shifts.
// Decodes on the CPU, or on an NVIDIA GPU with NVDEC when asked (gpu_decoding.hpp).
// Not a scaler or a writer (see writer.hpp); one stream, no audio; one reader per thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "pipeline/video/probe.hpp"

namespace labpose::pipeline {

enum class PixelOrder { rgb, bgr };

/// A rectangle of the frame in pixels: columns x..x+width-1, rows y..y+height-1.
struct PixelRect {
  int x = 0, y = 0, width = 0, height = 0;
};

struct VideoReaderOptions {
  VideoReaderOptions() = default;
  VideoReaderOptions(PixelOrder pixel_order, std::optional<PixelRect> region, int decoder_threads,
                     std::optional<int> gpu = std::nullopt)
      : order(pixel_order), crop(region), threads(decoder_threads), gpu_decoding(gpu) {}

  PixelOrder order = PixelOrder::rgb;
  std::optional<PixelRect> crop;  // must lie inside the frame; frames are read cropped
  // Decoder threads (frame + slice threading); 0 = one per core. With other than 1, the reader
  // also decodes ahead on a thread of its own (up to 3 pictures) while read() converts.
  int threads = 0;
  // Decode on this CUDA device with NVDEC (FFmpeg's hardware acceleration) instead of the CPU;
  // pictures come back to host memory and are converted as the CPU's are, to the same bytes.
  // Where NVDEC cannot be used (no NVIDIA driver or GPU, a codec or profile it lacks), the CPU
  // decodes and the reader says why, once.
  std::optional<int> gpu_decoding;
};

enum class FrameStatus {
  ok,
  damaged,      // decoded, but the decoder concealed errors in it: the pixels may be wrong
  undecodable,  // no picture could be decoded: the caller's buffer is left as it was
};

struct FrameRead {
  std::int64_t index = 0;  // 0-based frame number in display order
  FrameStatus status = FrameStatus::ok;
  double seconds = 0;  // presentation time, from the first frame
};

class VideoReader {
 public:
  /// Opens the video and reads its frame table. Throws Error naming the video for a missing,
  /// empty, unreadable, non-video or undecodable file, or a crop outside the frame.
  explicit VideoReader(const std::filesystem::path& path, const VideoReaderOptions& options = {});
  ~VideoReader();
  VideoReader(const VideoReader&) = delete;
  VideoReader& operator=(const VideoReader&) = delete;

  /// Size, rate, codec and the exact frame count (frame_count_source == packets); the container's
  /// own count is in declared_frame_count.
  const VideoInfo& info() const;
  std::int64_t frame_count() const { return info().frame_count; }
  /// The size of the frames read: the crop's when cropping, else the video's.
  int width() const;
  int height() const;
  /// Bytes of one packed frame with no row padding: width() * height() * 3.
  std::size_t frame_bytes() const;

  /// Decodes the frame at position() into `pixels` (height() rows of width()*3 bytes, `stride`
  /// bytes apart) and advances. Returns nullopt after the last frame. An undecodable frame still
  /// returns its index (status undecodable) and leaves `pixels` untouched; a damaged one is
  /// written and flagged. No allocation per frame.
  std::optional<FrameRead> read(std::uint8_t* pixels, std::size_t stride);
  /// The same into a packed buffer of frame_bytes().
  std::optional<FrameRead> read(std::uint8_t* pixels) { return read(pixels, row_bytes()); }

  /// Makes `index` (0..frame_count()) the next frame read() returns. Goes back to the key frame at
  /// or before it and decodes forward (or just decodes forward when that is shorter), checking
  /// each frame's timestamp, so the frame read after a seek is the one a sequential read gives.
  void seek(std::int64_t index);
  /// The index of the frame read() returns next.
  std::int64_t position() const;

  /// Presentation time of frame `index` in seconds from the first frame.
  double frame_seconds(std::int64_t index) const;
  /// The indices of the frames found undecodable / damaged so far, ascending.
  const std::vector<std::int64_t>& undecodable_frames() const;
  const std::vector<std::int64_t>& damaged_frames() const;
  /// False when the video carries no usable timestamps: frames are then numbered in decoding
  /// order, seeking decodes from the start, and an undecodable frame cannot be placed exactly.
  bool exact_frame_numbers() const;
  /// Whether pictures are decoded on a GPU (asked for, available, and taken by this stream so far).
  bool decodes_on_gpu() const;

 private:
  std::size_t row_bytes() const { return static_cast<std::size_t>(width()) * 3; }
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace labpose::pipeline
