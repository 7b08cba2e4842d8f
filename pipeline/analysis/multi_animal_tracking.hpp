// DeepLabCut's convert_detections2tracklets and stitch_tracklets on a video's files: one function
// links the assemblies into the tracklets pickle, one stitches the tracklets into the tracks
// table. labpose analyze runs both in one pass; labpose track and stitch run one each, from the
// file the step before wrote, so that they can run again with other settings without the network.
// Not the analysis (multi_animal_analysis.hpp) and not the file formats (multi_animal_files.hpp,
// tracklet_files.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/multi_animal_files.hpp"
#include "pipeline/analysis/multi_animal_model_choice.hpp"
#include "pipeline/tracking/stitch.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// What names the entries and columns of `model`'s files of a video of `frames` frames.
AnimalFileHeader animal_file_header(const AnimalAnalysisModel& model, std::int64_t frames);

/// convert_detections2tracklets: `assembled` (frames[i] is frame i) linked into tracklets with
/// `settings`, written to `file` (the _el.pickle or _bx.pickle) and returned. Animals whose
/// keypoints carry identities (Assembly::identity) vote with identity_votes over
/// header.individuals. Throws Error for an identity outside them.
Tracklets track_assemblies(const std::vector<Assemblies>& assembled,
                           const TrackerSettings& settings, const AnimalFileHeader& header,
                           const std::filesystem::path& file);

/// stitch_tracklets: `tracklets` stitched with `settings`, which check_stitch_settings has passed,
/// into files.tracks_h5 (key "tracks") and, with `csv`, files.tracks_csv. When no tracklet is long
/// enough, the tracks are left empty (NaN) with a warning naming `video_name`.
void stitch_into_tracks(const Tracklets& tracklets, const StitchSettings& settings,
                        const AnimalFileHeader& header, const MultiAnimalFiles& files, bool csv,
                        const std::string& video_name);

/// What labpose track and labpose stitch take. analyze: the shuffle, snapshot, dest (where the
/// analysis files are), csv and overwrite; the stitch settings default to the project's (n_tracks:
/// its individuals, min_length 10, max_gap from the data).
struct TrackStepOptions {
  AnalyzeOptions analyze;
  TrackMethod tracker = TrackMethod::ellipse;
  std::optional<int> n_tracks, min_length, max_gap;
};

/// One video's step: the file written (or found, when skipped).
struct TrackStepResult {
  std::filesystem::path video, output;
  bool skipped = false;
};

/// labpose track: each video's _assemblies.pickle into its tracklets pickle; a video whose
/// tracklets exist is skipped unless options.analyze.overwrite. Throws Error for a single-animal
/// project, and naming the file for a missing or damaged _assemblies.pickle.
std::vector<TrackStepResult> track_videos(const projects::ProjectConfig& config,
                                          const std::vector<std::filesystem::path>& videos,
                                          const TrackStepOptions& options);

/// labpose stitch: each video's tracklets pickle into its tracks (_el.h5, with csv _el.csv); a
/// video whose tracks exist is skipped unless options.analyze.overwrite. Throws as track_videos.
std::vector<TrackStepResult> stitch_videos(const projects::ProjectConfig& config,
                                           const std::vector<std::filesystem::path>& videos,
                                           const TrackStepOptions& options);

}  // namespace labpose::pipeline
