// A test video for tracking: a scene of several synthetic mice other than the one a demo project
// labels (its paths from another seed), with every frame's ground truth written as DeepLabCut's
// multi-animal table, so that a tracker's output (<video><scorer>_el.h5) can be scored against it
// (pipeline/evaluation/tracking_scores.hpp, labpose-bench-tracks). Not the demo project itself.
#pragma once

#include <filesystem>
#include <string>

#include "pipeline/synthetic/mice.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

struct MiceTestVideo {
  std::filesystem::path video;                // <folder>/<stem>.mp4
  std::filesystem::path truth_h5, truth_csv;  // <folder>/<stem>_truth.h5 / .csv
};

/// The ground truth of a scene as a table: scorer "ground_truth", the individuals mouse1, mouse2,
/// ..., synthetic_bodyparts(), x and y; a row per frame (frame numbers); hidden keypoints NaN.
projects::Table mice_truth_table(const SyntheticMiceTruth& truth);

/// Renders `options`' scene to <folder>/<stem>.mp4 and writes its truth table beside it (.h5 with
/// key df_with_missing, and .csv). Throws Error when a file cannot be written.
MiceTestVideo write_mice_test_video(const std::filesystem::path& folder, const std::string& stem,
                                    const SyntheticMiceOptions& options);

}  // namespace labpose::pipeline
