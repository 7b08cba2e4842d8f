// What a finished video analysis says about itself: DeepLabCut's <stem><scorer>_meta.pickle (the
// keys DeepLabCut's tools read) and labpose's _meta.json (model, device, timings, bad frames, crop,
// and the identity that marks the outputs complete), written once the tracks are; read back to
// skip finished videos. Not the tracks (.h5/.csv) and not the checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/checkpoint.hpp"
#include "pipeline/video/probe.hpp"

namespace labpose::pipeline {

/// How a video was analyzed, beyond its result: for the metadata files.
struct AnalysisRun {
  int iteration = 0;  // config.yaml's active-learning iteration
  std::string device, device_description;
  std::string precision;  // of the network's arithmetic: "fp32", "bf16", "fp16"
  int batch_size = 0;
  bool csv = false;          // the outputs include the .csv
  double started = 0.0;      // seconds since the epoch
  double stopped = 0.0;      // seconds since the epoch
  std::string started_text;  // local time, as local_time_text()
};

/// Now in local time, "YYYY-MM-DD HH:MM:SS".
std::string local_time_text();

/// The record of a run on `backend` that ends now and took `seconds`, begun at `started_text`.
AnalysisRun finished_run(const nets::Backend& backend, int iteration, int batch_size, bool csv,
                         double seconds, std::string started_text);

/// Writes result.files.meta_pickle and meta_json (atomically) for a finished analysis of a video
/// described by `info` (its whole frames), made from `identity` (its crop included).
void write_analysis_metadata(const AnalysisModel& model, const VideoAnalysis& result,
                             const VideoInfo& info, const AnalysisIdentity& identity,
                             const AnalysisRun& run);

/// The frame count that a finished analysis of `video` recorded in files.meta_json (its exact
/// count, from the video's packets), without reading the video; nullopt when there is no such
/// file, or it is of another file than `video` as it is now (its path or size differ).
std::optional<std::int64_t> analyzed_frame_count(const AnalysisFiles& files,
                                                 const std::filesystem::path& video);

/// True when `files` hold a complete analysis made for `identity` (by the _meta.json, whatever
/// the batch size).
bool analysis_complete(const AnalysisFiles& files, const AnalysisIdentity& identity);

/// Before a video is analyzed again (--overwrite): removes its checkpoint (or journal) and the
/// _meta.json that says its outputs are complete. The outputs stay until the new ones replace
/// them, and an interrupted run resumes when the command runs again instead of looking finished.
void forget_analysis(const AnalysisFiles& files, const std::filesystem::path& journal);

}  // namespace labpose::pipeline
