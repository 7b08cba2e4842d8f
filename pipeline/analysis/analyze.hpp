// labpose analyze, DeepLabCut's analyze_videos (reference/dlc-format.md §3, §6.9) for single-animal
// networks: every frame of each video through a trained snapshot, in batches, on threads with
// bounded queues (decode into preallocated batches -> network and peaks -> rows on disk), and the
// tracks written as DeepLabCut writes them: <stem><scorer>.h5 (pandas fixed format, key
// df_with_missing), .csv on request, _meta.pickle with the keys DeepLabCut's tools read, and
// labpose's _meta.json. One row per frame, always: frames that cannot be decoded are NaN rows.
// Rows go to a checkpoint file as they are made, so memory stays flat and an interrupted video
// resumes where it stopped. Not dynamic cropping. The parts live beside it: model_choice,
// video_list, checkpoint, analysis_metadata, stages and runner; multi-animal projects go through
// multi_animal_analysis.hpp.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nets/backend.hpp"
#include "pipeline/analysis/model_choice.hpp"
#include "pipeline/analysis/precision_comparison.hpp"
#include "pipeline/analysis/video_list.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct AnalyzeOptions {
  int shuffle = 1;
  std::optional<double> training_fraction;
  std::optional<int> snapshot_index;  // default: config.yaml's snapshotindex
  bool best_snapshot = false;         // the best snapshot by test error instead
  std::string device = "cpu";
  nets::PlanPrecision precision = nets::PlanPrecision::fp32;  // automatic: bf16 where fast
  int batch_size = 0;                                         // 0: config.yaml's batch_size
  bool csv = false;
  std::optional<std::filesystem::path> dest;  // default: beside each video
  std::optional<projects::CropBox> crop;      // default: config.yaml's when `cropping` is on
  int shard_index = 0, shard_count = 1;       // analyze videos shard_index, +shard_count, ...
  bool overwrite = false;
  int decoder_threads = 0;     // 0: one when the network runs on the CPU, else one per core
  bool decode_on_gpu = false;  // --decode gpu: NVDEC on the network's GPU (GPU 0 from the CPU)
  int slots = 0;               // batches on the device at once; 0: 3 on a GPU, 1 on the CPU
  /// With a precision other than fp32: each video analyzed is analyzed again in fp32 (into a
  /// temporary folder, removed after) and how far the keypoints moved is reported, kept in
  /// VideoAnalysis::against_fp32 and in the _meta.json.
  bool against_fp32 = false;
  /// Called after each batch's rows are on disk with the video's rows written so far (tests).
  std::function<void(std::int64_t rows)> on_batch;
};

/// The names of one video's outputs (in `folder`).
struct AnalysisFiles {
  std::filesystem::path h5, csv, meta_pickle, meta_json, checkpoint;
};
/// The outputs of analyzing the video `video_stem` with `scorer`, in `folder` (names from
/// projects/layout.hpp).
AnalysisFiles analysis_files(const std::filesystem::path& folder, const std::string& video_stem,
                             const std::string& scorer);

/// The crop a finished analysis used, from its _meta.json (nullopt: whole frames, or no such file).
std::optional<projects::CropBox> analysis_crop(const AnalysisFiles& files);

struct VideoAnalysis {
  std::filesystem::path video;
  AnalysisFiles files;
  enum class Outcome { analyzed, skipped, failed } outcome = Outcome::analyzed;
  std::string error;                                // why it failed (Outcome::failed)
  std::int64_t frames = 0;                          // rows written (= the video's frames)
  std::int64_t resumed_from = 0;                    // rows found in the checkpoint
  std::vector<std::int64_t> undecodable_frames;     // NaN rows
  std::vector<std::int64_t> damaged_frames;         // decoded with concealed errors
  double seconds = 0.0;                             // wall time of this run on the video
  double frames_per_second = 0.0;                   // frames analyzed in this run / seconds
  std::optional<PrecisionComparison> against_fp32;  // AnalyzeOptions::against_fp32
};

/// Marks `result` failed with `error`'s message (and its hint) and warns with it: a video that
/// could not be analyzed while the others go on.
void mark_failed(VideoAnalysis& result, const Error& error);

/// Analyzes each video. A video whose outputs are complete for this scorer (by its _meta.json,
/// never by a file's mere presence) is skipped unless `overwrite`; one with a checkpoint resumes.
/// A video that cannot be read is reported (Outcome::failed) and the others go on. Ctrl-C/SIGTERM
/// (core/interrupt.hpp) stops after the current batch with the checkpoint kept and throws an
/// Error of kind interrupted. A multi-animal project's videos are analyzed, tracked and stitched
/// by analyze_multi_animal_videos with its default MultiAnimalOptions.
std::vector<VideoAnalysis> analyze_videos(const projects::ProjectConfig& config,
                                          const std::vector<std::filesystem::path>& videos,
                                          const AnalyzeOptions& options);
/// The same with `model` chosen already (an exported model: exported_analysis_model()); the
/// options that choose a shuffle's snapshot are not used.
std::vector<VideoAnalysis> analyze_videos(const AnalysisModel& model,
                                          const std::vector<std::filesystem::path>& videos,
                                          const AnalyzeOptions& options);

}  // namespace labpose::pipeline
