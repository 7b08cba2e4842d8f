// How well tracks follow known animals through a video, as the multi-object-tracking benchmarks
// score trackers: the CLEAR MOT measures (MOTA with its misses, false positives and identity
// switches) and the identity measures (IDF1, IDP, IDR). A track and an animal match in a frame when
// the mean distance between their keypoints (over the bodyparts both have there) is within a
// threshold in pixels. Not the assembly's purity (assembly_purity.hpp), which looks at single
// frames without identities.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

struct ScoredPoint {
  double x = 0.0, y = 0.0;  // NaN: the bodypart is missing
};

/// animals[frame][animal][bodypart]. Every frame has the same animals (truth: individuals;
/// tracks: track slots); an animal with no keypoint in a frame is absent from it.
using AnimalFrames = std::vector<std::vector<std::vector<ScoredPoint>>>;

struct TrackingScores {
  std::int64_t frames = 0;
  std::int64_t truth = 0;            // animals present, summed over frames
  std::int64_t tracked = 0;          // track positions present, summed over frames
  std::int64_t matches = 0;          // of those, matched to an animal
  std::int64_t misses = 0;           // animals present that no track matched (FN)
  std::int64_t false_positives = 0;  // track positions that matched no animal (FP)
  std::int64_t switches = 0;         // an animal matched by another track than last time (IDSW)
  double mota = 0.0;                 // 1 - (misses + false positives + switches) / truth
  double mean_distance = 0.0;        // pixels, over the matches
  double idf1 = 0.0, idp = 0.0, idr = 0.0;  // with each track given to one animal for good
  double switches_per_1000_frames = 0.0;
  // Of the frames with an animal, the share where every animal there is matched by its own track:
  // the one IDF1 gives it for the whole video.
  double own_identity_frames = 0.0;
};

/// The animals of a multi-animal table of tracks or labels (DeepLabCut's four column levels, rows
/// in frame order; "single", the unique bodyparts, left out), each with `bodyparts` in that order
/// (NaN where the table has no such column). Throws Error naming `file` for a table without
/// individuals or bodyparts/coords levels.
AnimalFrames animal_frames_of(const projects::Table& table,
                              const std::vector<std::string>& bodyparts,
                              const std::filesystem::path& file);

/// The bodyparts of the animals of a multi-animal table ("single", the unique bodyparts, left
/// out), in column order. Throws Error naming `file` for a table without bodyparts/coords levels.
std::vector<std::string> animal_bodyparts_of(const projects::Table& table,
                                             const std::filesystem::path& file);

/// Scores `tracks` against `truth` (the same frames, bodyparts in the same order) with matches
/// within `threshold` pixels. Within a frame a match that held in the frame before is kept while it
/// stays within the threshold; the other animals and tracks are paired by least total distance.
/// Throws Error when the two disagree in frames or bodyparts, or the threshold is not positive.
TrackingScores score_tracks(const AnimalFrames& truth, const AnimalFrames& tracks,
                            double threshold);

}  // namespace labpose::pipeline
