// The decoding and row-writing stages of video analysis.
#include "pipeline/analysis/stages.hpp"

#include <limits>
#include <string>

#include "core/error.hpp"

namespace labpose::pipeline {

VideoReaderOptions analysis_reading(const nets::Backend& backend, int threads, bool on_gpu,
                                    std::optional<PixelRect> crop) {
  VideoReaderOptions options(PixelOrder::rgb, crop,
                             threads > 0 ? threads : (backend.host_memory() ? 1 : 0));
  if (on_gpu) {
    const std::string name = backend.name();  // "cuda:N" on a GPU
    const std::size_t colon = name.find(':');
    options.gpu_decoding =
        backend.host_memory() || colon == std::string::npos ? 0 : std::stoi(name.substr(colon + 1));
  }
  return options;
}

std::optional<PixelRect> crop_region(const std::optional<projects::CropBox>& crop) {
  if (!crop) return std::nullopt;
  return PixelRect{crop->x1, crop->y1, crop->x2 - crop->x1, crop->y2 - crop->y1};
}

FrameBatch::FrameBatch(std::size_t capacity, std::size_t frame_bytes, std::size_t joints)
    : pixels(capacity * frame_bytes), keypoints(capacity * joints) {
  reads.reserve(capacity);
}

FrameDecoder::FrameDecoder(VideoReader& reader, int batch_size)
    : reader_(reader), batch_size_(batch_size), next_(reader.position()) {
  LABPOSE_ASSERT(reader_.frame_bytes() == 3 * static_cast<std::size_t>(reader_.height()) *
                                              static_cast<std::size_t>(reader_.width()));
  LABPOSE_ASSERT(batch_size_ > 0);
}

bool FrameDecoder::fill(FrameBatch& batch) {
  LABPOSE_ASSERT(batch.pixels.size() >= static_cast<std::size_t>(batch_size_) * frame_bytes());
  batch.reads.clear();
  while (static_cast<int>(batch.reads.size()) < batch_size_) {
    std::uint8_t* pixels = batch.pixels.data() + batch.reads.size() * frame_bytes();
    const auto read = reader_.read(pixels);
    if (!read) break;
    batch.reads.push_back(*read);
  }
  if (batch.reads.empty()) return false;
  next_ = batch.reads.back().index + 1;
  return true;
}

RowWriter::RowWriter(Checkpoint& checkpoint, std::int64_t first_row, AfterBatch after_batch)
    : checkpoint_(checkpoint), rows_(first_row), after_batch_(std::move(after_batch)) {}

void RowWriter::add_nan_row(std::int64_t frame) {
  buffer_.insert(buffer_.end(), checkpoint_.columns(), std::numeric_limits<double>::quiet_NaN());
  buffer_.push_back(kRowUndecodable);
  undecodable_.push_back(frame);
}

void RowWriter::write(const FrameBatch& batch) {
  const std::size_t joints = this->joints();
  buffer_.clear();
  for (std::size_t i = 0; i < batch.reads.size(); ++i) {
    const FrameRead& read = batch.reads[i];
    // Frames the decoder skipped (missing from the stream) and undecodable ones are NaN rows.
    for (; rows_ < read.index; ++rows_) add_nan_row(rows_);
    if (read.status == FrameStatus::undecodable) {
      add_nan_row(read.index);
    } else {
      for (std::size_t j = 0; j < joints; ++j) {
        const KeypointPrediction& k = batch.keypoints[i * joints + j];
        buffer_.insert(buffer_.end(), {k.x, k.y, k.likelihood});
      }
      buffer_.push_back(read.status == FrameStatus::damaged ? kRowDamaged : kRowOk);
      if (read.status == FrameStatus::damaged) damaged_.push_back(read.index);
    }
    rows_ = read.index + 1;
  }
  checkpoint_.append(buffer_.data(), buffer_.size() / checkpoint_.row_doubles());
  if (after_batch_) after_batch_(static_cast<std::int64_t>(batch.reads.size()), rows_);
}

void RowWriter::finish(std::int64_t frames) {
  if (rows_ >= frames) return;
  buffer_.clear();
  for (; rows_ < frames; ++rows_) add_nan_row(rows_);
  checkpoint_.append(buffer_.data(), buffer_.size() / checkpoint_.row_doubles());
}

}  // namespace labpose::pipeline
