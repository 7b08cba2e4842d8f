// A video's tracks being refined on the page: swaps, undo, frames as JPEG, saving.
#include "labeling/track_session.hpp"

#include <fmt/core.h>
#include <opencv2/core.hpp>

#include <algorithm>

#include "labeling/label_store.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "pipeline/images/image_files.hpp"
#include "pipeline/video/reader.hpp"

namespace labpose::labeling {
namespace fs = std::filesystem;

struct TrackSession::Reader {
  explicit Reader(const fs::path& video)
      : reader(video, {pipeline::PixelOrder::bgr, std::nullopt, 1}), pixels(reader.frame_bytes()) {}
  pipeline::VideoReader reader;
  std::vector<std::uint8_t> pixels;
};

TrackSession::TrackSession(fs::path video, const fs::path& tracks_file)
    : video_(std::move(video)), tracks_(pipeline::read_refinable_tracks(tracks_file)) {
  bodyparts_ = pipeline::track_bodyparts(pipeline::track_columns(tracks_.table));
  reader_ = std::make_unique<Reader>(video_);
  width_ = reader_->reader.width();
  height_ = reader_->reader.height();
}

TrackSession::~TrackSession() = default;

std::int64_t TrackSession::frame_count() const {
  return static_cast<std::int64_t>(tracks_.table.row_count());
}

std::vector<std::string> TrackSession::individuals() const {
  return pipeline::track_individuals(pipeline::track_columns(tracks_.table));
}

std::vector<IndividualPoints> TrackSession::points(std::int64_t frame) const {
  const std::lock_guard lock(mutex_);
  if (frame < 0 || frame >= frame_count()) {
    throw RequestError(
        404, fmt::format("no frame {}: the tracks have frames 0 to {}", frame, frame_count() - 1));
  }
  const auto row = static_cast<std::size_t>(frame);
  std::vector<IndividualPoints> out;
  for (const auto& column : pipeline::track_columns(tracks_.table)) {
    if (out.empty() || out.back().individual != column.individual)
      out.push_back({column.individual, std::vector<std::optional<TrackPoint>>(bodyparts_.size())});
    const double x = tracks_.table.at(row, column.x), y = tracks_.table.at(row, column.y);
    if (std::isnan(x) || std::isnan(y)) continue;
    const auto at = std::find(bodyparts_.begin(), bodyparts_.end(), column.bodypart);
    out.back().points[static_cast<std::size_t>(at - bodyparts_.begin())] =
        TrackPoint{x, y, tracks_.table.at(row, column.likelihood)};
  }
  return out;
}

std::string TrackSession::frame_jpeg(std::int64_t frame) {
  const std::lock_guard lock(mutex_);
  pipeline::VideoReader& reader = reader_->reader;
  if (frame < 0 || frame >= reader.frame_count()) {
    throw RequestError(404, fmt::format("no frame {}: {} has frames 0 to {}", frame,
                                        video_.filename().string(), reader.frame_count() - 1));
  }
  if (reader.position() != frame) reader.seek(frame);
  const auto read = reader.read(reader_->pixels.data());
  if (!read) throw RequestError(404, fmt::format("frame {} could not be read", frame));
  const cv::Mat bgr(height_, width_, CV_8UC3, reader_->pixels.data());
  return pipeline::encode_jpeg(bgr, pipeline::ChannelOrder::bgr, 90);
}

void TrackSession::swap(const std::string& first, const std::string& second, std::int64_t from) {
  const std::lock_guard lock(mutex_);
  const pipeline::TrackSwap swap{first, second, from, std::nullopt};
  try {
    pipeline::swap_individuals(tracks_.table, swap, tracks_.file);
  } catch (const Error& refused) {
    throw RequestError(400, refused.what(), refused.hint());
  }
  unsaved_.push_back(swap);
  ++revision_;
}

bool TrackSession::undo() {
  const std::lock_guard lock(mutex_);
  if (unsaved_.empty()) return false;
  // A swap is its own inverse.
  pipeline::swap_individuals(tracks_.table, unsaved_.back(), tracks_.file);
  unsaved_.pop_back();
  ++revision_;
  return true;
}

std::vector<pipeline::TrackSwap> TrackSession::unsaved() const {
  const std::lock_guard lock(mutex_);
  return unsaved_;
}

std::vector<fs::path> TrackSession::save() {
  const std::lock_guard lock(mutex_);
  std::vector<fs::path> written;
  try {
    written = pipeline::save_refined_tracks(tracks_);
  } catch (const Error& refused) {
    if (refused.kind() == ErrorKind::interrupted) throw;
    throw RequestError(409, refused.what(), refused.hint());
  }
  unsaved_.clear();
  ++revision_;
  return written;
}

std::int64_t TrackSession::revision() const {
  const std::lock_guard lock(mutex_);
  return revision_;
}

void TrackSession::expect_revision(std::int64_t seen) const {
  const std::lock_guard lock(mutex_);
  if (seen == revision_) return;
  throw RequestError(409,
                     "the tracks were changed in another tab or window since this page last "
                     "showed them",
                     "the page now shows them as they are; look, then swap, undo or save again");
}

}  // namespace labpose::labeling
