// DeepLabCut's files of a multi-animal video analysis (reference/dlc-format.md §3.3), each written
// atomically: <stem><scorer>_full.pickle (every frame's candidates and edge costs, streamed frame
// by frame), _assemblies.pickle (the animals of each frame), the tracklets _el.pickle (_bx for the
// box tracker) and the stitched tracks _el.h5/.csv (four column levels, key "tracks"). Their names
// live here too. Not the analysis itself (multi_animal_analysis.hpp) and not the metadata files
// (analysis_metadata.hpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/tracking/sort_tracker.hpp"
#include "pipeline/tracking/tracklets.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

/// The outputs of one video's multi-animal analysis.
struct MultiAnimalFiles {
  std::filesystem::path full_pickle, assemblies_pickle;
  std::filesystem::path tracklets_pickle, tracks_h5, tracks_csv;  // <stem><scorer>_el.* / _bx.*
  std::filesystem::path journal;  // the resumable detections, <stem><scorer>.labpose-detections
};

/// DeepLabCut's short name of a tracker in file names: "el" (ellipse), "bx" (box).
std::string tracker_file_code(TrackMethod method);

/// The outputs of analyzing `video_stem` with `scorer` in `folder`, tracked by `tracker`.
MultiAnimalFiles multi_animal_files(const std::filesystem::path& folder,
                                    const std::string& video_stem, const std::string& scorer,
                                    TrackMethod tracker);

/// What names the entries and columns of the files.
struct AnimalFileHeader {
  std::string scorer;
  std::vector<std::string> individuals;  // config.yaml's, without "single"
  std::vector<std::string> multi_bodyparts, unique_bodyparts;
  PafGraph graph;          // the network's whole graph (DeepLabCut's PAFgraph)
  std::vector<int> edges;  // the edges assembly links through (DeepLabCut's PAFinds: paf_best)
  CandidateSettings candidates;
  std::int64_t frames = 0;    // of the video
  int identity_channels = 0;  // the identity head's (one per individual); 0 without one

  int bodyparts() const {
    return static_cast<int>(multi_bodyparts.size() + unique_bodyparts.size());
  }
};

/// DeepLabCut's name of frame `index` in a video of `frames` frames: "frame" and the index padded
/// with zeros to ceil(log10(frames)) digits.
std::string frame_key(std::int64_t index, std::int64_t frames);

/// _full.pickle, written frame by frame so that memory stays flat: {"metadata": {"nms radius",
/// "minimal confidence", "sigma", "PAFgraph", "PAFinds", "all_joints", "all_joints_names",
/// "nframes", "key_str_width"}, "frameNNN": {"coordinates": ([(n, 2) float64 per bodypart],),
/// "confidence": [(n, 1) float32 per bodypart], "costs": {edge: {"m1": (s, t) float32 affinities,
/// "distance": (s, t) float32 lengths}} for the PAFinds edges, and with header.identity_channels
/// "identity": [(n, individuals) float32 per bodypart]}}.
class FullPickleWriter {
 public:
  /// Throws Error naming `file` when it cannot be written.
  FullPickleWriter(std::filesystem::path file, const AnimalFileHeader& header);
  ~FullPickleWriter();
  FullPickleWriter(const FullPickleWriter&) = delete;
  FullPickleWriter& operator=(const FullPickleWriter&) = delete;

  /// Frame `index`'s entry. detections.costs: one per edge of header.graph; detections.identity:
  /// as ImageDetections has it when header.identity_channels > 0.
  void add(std::int64_t index, const ImageDetections& detections);
  /// Ends the pickle and renames it into place.
  void commit();

 private:
  void write(const std::string& bytes);

  AtomicFile file_;
  AnimalFileHeader header_;
  std::FILE* out_ = nullptr;
};

/// _assemblies.pickle: {frame index: float64 array (animals, multi bodyparts, 4) of x, y,
/// likelihood, identity (Assembly::identity, -1 without; NaN for a missing keypoint)} for the
/// frames with animals, and
/// "single": {frame index: (unique bodyparts, 3) array} when there are unique bodyparts.
/// frames[i] is frame i.
void write_assemblies_pickle(const std::filesystem::path& file,
                             const std::vector<Assemblies>& frames);

/// The tracklets file (_el.pickle): {"header": pandas MultiIndex (scorer, bodyparts, coords) of
/// the multi-animal bodyparts, tracklet id: {"frameNNN": float64 (bodyparts, 4) array}, and
/// "single": {frame index: (unique bodyparts, 3) array} when there are unique bodyparts}.
void write_tracklets_pickle(const std::filesystem::path& file, const Tracklets& tracklets,
                            const AnimalFileHeader& header);

/// The stitched tracks as DeepLabCut's _el.h5 table: columns (scorer, individuals, bodyparts,
/// coords x/y/likelihood), track i under individuals[i], then "single" with the unique
/// bodyparts; one row per frame, NaN where a track has no animal.
projects::Table tracks_table(const Tracks& tracks, const AnimalFileHeader& header);

}  // namespace labpose::pipeline
