// A small single-animal project for the labeling tests: config.yaml (4 bodyparts, a skeleton,
// scorer "Alice"), labeled-data/mouse/ with five 64x48 PNG frames, no labels yet. And DeepLabCut's
// multi-animal example (tests/data) with blank frames drawn in place of its images.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace labpose::testing {

/// Writes the project into `dir` and returns its config.yaml.
std::filesystem::path make_labeling_project(const std::filesystem::path& dir);

/// Writes `folder`/machinelabels-iter0.h5 as DeepLabCut's extract_outlier_frames does (x, y,
/// likelihood per bodypart) with one row, img003.png: bodypart j at (10 + j, 20) with likelihood
/// 0.25 (j + 1), except tailbase, which the network did not find (NaN).
void write_machine_labels(const std::filesystem::path& folder);

/// Copies DeepLabCut's example multi_mouse-dlc_team-2022-04-12 (config.yaml: individual1-3 with
/// bodypart1-3, unique corner1-2, scorer dlc_team; labels of m3v1mp4 and m3v1mp4short) into `dir`,
/// writes a blank grey 640x480 PNG for each of `images` into labeled-data/m3v1mp4short/ and
/// returns its config.yaml.
std::filesystem::path copy_multi_animal_example(const std::filesystem::path& dir,
                                                const std::vector<std::string>& images);

}  // namespace labpose::testing
