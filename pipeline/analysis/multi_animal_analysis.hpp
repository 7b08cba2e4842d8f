// labpose analyze on a multi-animal project, DeepLabCut's analyze_videos with auto_track: every
// frame through the network one at a time (whole frames, a plan per frame size), its candidates and
// edge costs into a resumable journal (detection_journal.hpp), then the animals assembled through
// paf_best (each keypoint with the individual the identity head favours there, when the network
// has one), linked into tracklets by the ellipse or box tracker or by the identity votes alone, and
// stitched into one track per individual, written as DeepLabCut writes them
// (multi_animal_files.hpp) with the _meta.pickle and _meta.json of single-animal analysis. In fp32
// or bf16 (not int8); not batched, not an exported model.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nets/backend.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/tracking/sort_tracker.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

/// What only a multi-animal analysis takes.
struct MultiAnimalOptions {
  bool track = true;                           // false: --no-track (auto_track=False)
  TrackMethod tracker = TrackMethod::ellipse;  // ellipse (_el), box (_bx) or identity (_id)
  // false: --no-temporal-prior, every frame assembled alone as DeepLabCut does (temporal_prior.hpp)
  bool temporal_prior = true;
};

/// Throws UsageError where a multi-animal analysis (or live run) does not take `precision`:
/// int8, whose accuracy check measures one animal's keypoints. fp32, bf16, fp16, tf32 and auto
/// (on the CPU bf16 where its bf16 units are clearly faster, else fp32; fp32 on a GPU) it takes.
void check_multi_animal_precision(nets::PlanPrecision precision);

/// The backend a multi-animal analysis (or live run) computes on: `device` in `precision`
/// (check_multi_animal_precision first; auto as devices::make_backend decides it, never int8).
std::unique_ptr<nets::Backend> make_animal_backend(const std::string& device,
                                                   nets::PlanPrecision precision);

/// Throws UsageError naming the first of `options` that a multi-animal analysis does not take
/// (--precision int8, --against-fp32, --batch-size, --slots).
void check_multi_animal_options(const AnalyzeOptions& options);

/// Analyzes each video of the multi-animal project `config` (options as analyze_videos takes
/// them; check_multi_animal_options first). VideoAnalysis::files.h5 is the tracks (_el.h5), or
/// with multi.track off the _assemblies.pickle; files.checkpoint is the detections journal. A
/// finished video is skipped unless options.overwrite; an interrupted one resumes from its
/// journal; Ctrl-C/SIGTERM stops after the current frame with the journal kept and throws an
/// Error of kind interrupted.
std::vector<VideoAnalysis> analyze_multi_animal_videos(
    const projects::ProjectConfig& config, const std::vector<std::filesystem::path>& videos,
    const AnalyzeOptions& options, const MultiAnimalOptions& multi);

}  // namespace labpose::pipeline
