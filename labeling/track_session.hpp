// The state of one track refinement page: a video's stitched tracks read once, the swaps made on
// the page since the last save (undone one by one, newest first), the video's frames as images,
// and saving. Guarded by a lock: the page's requests come on several threads. Not HTTP
// (track_server.hpp) and not the swapping or the files (pipeline/analysis/track_refinement.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/track_refinement.hpp"

namespace labpose::labeling {

/// One keypoint of a track in a frame; nullopt where the track has none.
struct TrackPoint {
  double x = 0, y = 0, likelihood = 0;
};

/// An individual's keypoints in one frame, one per bodypart of TrackSession::bodyparts().
struct IndividualPoints {
  std::string individual;
  std::vector<std::optional<TrackPoint>> points;
};

class TrackSession {
 public:
  /// Reads the tracks in `tracks_file` and opens `video`. Throws Error naming either.
  TrackSession(std::filesystem::path video, const std::filesystem::path& tracks_file);
  ~TrackSession();
  TrackSession(const TrackSession&) = delete;
  TrackSession& operator=(const TrackSession&) = delete;

  const std::filesystem::path& video() const { return video_; }
  const std::filesystem::path& tracks_file() const { return tracks_.file; }
  std::int64_t frame_count() const;
  int width() const { return width_; }
  int height() const { return height_; }
  /// The individuals that can be swapped, then "single" when the file has unique bodyparts.
  std::vector<std::string> individuals() const;
  /// Every bodypart name of the file, in column order (the animals', then the unique ones).
  const std::vector<std::string>& bodyparts() const { return bodyparts_; }

  /// Every individual's keypoints in `frame` as the tracks are now (swaps included). Throws
  /// RequestError(404) for a frame outside the tracks.
  std::vector<IndividualPoints> points(std::int64_t frame) const;
  /// Frame `frame` of the video as a JPEG. Throws RequestError(404) outside the video.
  std::string frame_jpeg(std::int64_t frame);

  /// Swaps `first` and `second` from `from` to the last frame. Throws RequestError(400) with the
  /// library's message for names or frames it refuses.
  void swap(const std::string& first, const std::string& second, std::int64_t from);
  /// Takes the newest unsaved swap back; false when there is none.
  bool undo();
  /// The swaps not saved yet, oldest first.
  std::vector<pipeline::TrackSwap> unsaved() const;
  /// Writes the tracks (pipeline::save_refined_tracks) and returns the paths written; the swaps
  /// saved can no longer be undone.
  std::vector<std::filesystem::path> save();
  /// How many changes (swaps, undos, saves) the session has seen: a page that sends the revision
  /// it last saw is refused a change made on tracks another tab has changed since.
  std::int64_t revision() const;
  /// Throws RequestError(409) when `seen` is not revision(): another tab changed the tracks.
  void expect_revision(std::int64_t seen) const;

 private:
  mutable std::mutex mutex_;
  std::filesystem::path video_;
  pipeline::RefinableTracks tracks_;
  std::vector<std::string> bodyparts_;
  std::vector<pipeline::TrackSwap> unsaved_;
  std::int64_t revision_ = 0;
  struct Reader;
  std::unique_ptr<Reader> reader_;  // opened once, seeked per request
  int width_ = 0, height_ = 0;
};

}  // namespace labpose::labeling
