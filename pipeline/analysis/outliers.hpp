// Outlier frames for the next labeling round, DeepLabCut's extract_outlier_frames
// (reference/dlc-format.md §6.13): frames of an analyzed video where the network is unsure
// (uncertain), where a keypoint jumps (jump) or strays from an ARMA fit of its track (fitting);
// numframes2pick of them picked by k-means or at random (pipeline/frames) and written to
// labeled-data/<stem>/ with the network's predictions in machinelabels-iter<K>.h5 and
// machinelabels.csv, for refinement. Not the refinement itself (labpose label --refine) and not the
// iteration step (merge_labeled_iteration).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/analysis/analyze.hpp"
#include "pipeline/frames/extract.hpp"
#include "projects/config.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

enum class OutlierAlgorithm { jump, uncertain, fitting };
/// "jump", "uncertain" or "fitting"; a usage error names the choices otherwise.
OutlierAlgorithm parse_outlier_algorithm(std::string_view name);

struct OutlierOptions {
  OutlierAlgorithm algorithm = OutlierAlgorithm::jump;
  double epsilon = 20.0;  // px: jump between frames, or fitting's mean distance from the fit
  double p_bound = 0.01;  // uncertain: likelihood below; fitting: points below are missing
  int ar_degree = 3, ma_degree = 1;    // fitting: ARMA(p, q)
  double alpha = 0.01;                 // fitting: confidence level of the fit's interval
  std::vector<std::string> bodyparts;  // the bodyparts compared; empty: all
  /// fitting: when fewer than 2 * frames_wanted frames exceed epsilon, the 2 * frames_wanted most
  /// distant ones are taken instead (DeepLabCut's heuristic).
  int frames_wanted = 0;
};

/// The frames (rows of `tracks`, within [first, end)) that the algorithm flags, ascending.
/// Throws a usage error for a comparison bodypart the tracks do not have.
std::vector<std::int64_t> find_outlier_frames(const projects::Table& tracks, std::int64_t first,
                                              std::int64_t end, const OutlierOptions& options);

/// The mean over the compared bodyparts of each frame's distance from its ARMA fit (NaN where no
/// bodypart could be fitted): fitting's criterion.
std::vector<double> fit_deviations(const projects::Table& tracks, const OutlierOptions& options);

struct OutlierVideo {
  std::filesystem::path tracks;
  std::vector<std::int64_t> outliers;  // frames flagged
  ExtractedVideo extracted;            // frames written
  std::filesystem::path machine_labels;
};

/// Flags the outliers of one analyzed video's tracks (`analysis.h5`, written by analyze for
/// `video` of this project, with its crop in `analysis.meta_json`), picks config.yaml's
/// numframes2pick of them (options.frames) among frames not yet extracted, writes them as images,
/// and adds the network's predictions at those frames to machinelabels-iter<K>.h5 /
/// machinelabels.csv (rows already there are kept). Coordinates are those of the written images: a
/// cropped analysis is shifted back, and minus the video_sets crop when the frames are cropped.
/// Writes nothing when a check fails.
OutlierVideo extract_outlier_frames(const projects::ProjectConfig& config, const std::string& video,
                                    const AnalysisFiles& analysis, const OutlierOptions& outliers,
                                    const ExtractFramesOptions& frames);

struct IterationMerge {
  int previous = 0, next = 0;
  std::vector<std::string> unreviewed;  // "<stem>/<image>": machine-labeled frames without labels
};

/// DeepLabCut's merge_datasets: once the outlier frames are labeled, config.yaml's iteration goes
/// up by one (or to `force_iteration`), so the next create-dataset writes iteration-<K+1>. Refuses
/// (Error listing them) while frames of machinelabels-iter<K> have no human labels, unless `force`.
IterationMerge merge_labeled_iteration(projects::ProjectConfig& config, bool force,
                                       std::optional<int> force_iteration);

}  // namespace labpose::pipeline
