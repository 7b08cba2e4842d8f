// Two of the three stages of video analysis as plain objects, each testable without threads:
// FrameDecoder fills a FrameBatch from a video (read as analysis_reading sets the reader up),
// RowWriter turns a batch's keypoints into rows of the checkpoint (NaN rows for frames that could
// not be decoded). The middle stage is PoseRunner (pipeline/pose/pose_runner.hpp). Not the threads
// and queues that connect them (runner.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "nets/backend.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/pose/decode.hpp"
#include "pipeline/video/reader.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// The reader as analysis sets it up for a network on `backend`: RGB, cropped to `crop`, with
/// `threads` decoder threads, or (0) one at background priority when the network computes on the
/// host's cores (it would otherwise preempt the network's threads) and one per core with a GPU.
/// With `on_gpu` (--decode gpu), NVDEC decodes on the backend's GPU (GPU 0 for a host backend).
VideoReaderOptions analysis_reading(const nets::Backend& backend, int threads, bool on_gpu,
                                    std::optional<PixelRect> crop = std::nullopt);

/// The region of the frame a crop box (config.yaml's or --crop; x2 and y2 exclusive, as DeepLabCut
/// slices) keeps; nullopt for the whole frame.
std::optional<PixelRect> crop_region(const std::optional<projects::CropBox>& crop);

/// One batch of frames in flight, allocated once and reused.
struct FrameBatch {
  /// Room for `capacity` (N) frames of `frame_bytes` and their `joints` (J) keypoints.
  FrameBatch(std::size_t capacity, std::size_t frame_bytes, std::size_t joints);

  std::vector<FrameRead> reads;               // the frames read into this batch, in order
  std::vector<std::uint8_t> pixels;           // (N, H, W, 3) packed RGB
  std::vector<KeypointPrediction> keypoints;  // (N, J), valid for the first reads.size() frames
  std::int64_t sequence = 0;                  // the batch's place in the video, from 0
};

class FrameDecoder {
 public:
  /// Reads `reader` from its position on, `batch_size` frames a batch; `reader` must outlive it.
  FrameDecoder(VideoReader& reader, int batch_size);

  int batch_size() const { return batch_size_; }
  std::size_t frame_bytes() const { return reader_.frame_bytes(); }
  /// True once the frame after the last one read is past the video's end.
  bool finished() const { return next_ >= reader_.frame_count(); }
  /// Reads up to batch_size() frames into `batch` (reads and pixels, replacing what it held);
  /// false when the reader had no frame left.
  bool fill(FrameBatch& batch);

 private:
  VideoReader& reader_;
  int batch_size_;
  std::int64_t next_;  // the frame after the last one read
};

class RowWriter {
 public:
  /// Called after each batch's rows are on disk: the batch's frames, the rows written so far.
  using AfterBatch = std::function<void(std::int64_t frames, std::int64_t rows)>;

  /// Appends rows of x, y, likelihood per keypoint (checkpoint.columns() / 3 keypoints) to
  /// `checkpoint`, which already holds rows 0..first_row-1; `checkpoint` must outlive it.
  RowWriter(Checkpoint& checkpoint, std::int64_t first_row, AfterBatch after_batch = {});

  /// Appends a row per frame of `batch`, in frame order: keypoints for a decoded frame (status
  /// damaged when the decoder concealed errors), NaN for an undecodable one and for frames the
  /// reader skipped before it. Flushed to disk before it returns.
  void write(const FrameBatch& batch);
  /// NaN rows (undecodable) for the frames from rows() to `frames`: missing at the stream's end.
  void finish(std::int64_t frames);

  /// J, the keypoints of a row.
  std::size_t joints() const { return checkpoint_.columns() / 3; }
  /// The rows in the checkpoint: the index of the next frame's row.
  std::int64_t rows() const { return rows_; }
  /// The frames this writer wrote as undecodable / damaged, ascending.
  const std::vector<std::int64_t>& undecodable_frames() const { return undecodable_; }
  const std::vector<std::int64_t>& damaged_frames() const { return damaged_; }

 private:
  void add_nan_row(std::int64_t frame);

  Checkpoint& checkpoint_;
  std::int64_t rows_;
  AfterBatch after_batch_;
  std::vector<double> buffer_;  // the rows of one batch, reused
  std::vector<std::int64_t> undecodable_, damaged_;
};

}  // namespace labpose::pipeline
