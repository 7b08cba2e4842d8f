// A small single-animal project for the labeling tests: config.yaml (4 bodyparts, a skeleton,
// scorer "Alice"), labeled-data/mouse/ with five 64x48 PNG frames, no labels yet.
#pragma once

#include <filesystem>
#include <string>

namespace labpose::testing {

/// Writes the project into `dir` and returns its config.yaml.
std::filesystem::path make_labeling_project(const std::filesystem::path& dir);

/// Writes `folder`/machinelabels-iter0.h5 as DeepLabCut's extract_outlier_frames does (x, y,
/// likelihood per bodypart) with one row, img003.png: bodypart j at (10 + j, 20) with likelihood
/// 0.25 (j + 1), except tailbase, which the network did not find (NaN).
void write_machine_labels(const std::filesystem::path& folder);

}  // namespace labpose::testing
