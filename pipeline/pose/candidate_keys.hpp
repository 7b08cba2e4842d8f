// DeepLabCut's candidate keys in a multi-animal shuffle's test/pose_cfg.yaml, which its inference
// reads (analyze_videos, evaluate_network): `nmsradius` (the width of the non-maximum suppression
// window, in score-map cells), `minconfidence` (the least score of a candidate) and `sigma` (the
// Gaussian smoothing before it, in cells). A lab that tuned them for its animals gets them in
// `analyze`, `evaluate`, `live` and the test error measured while training; absent keys keep
// CandidateSettings' defaults, the values of DeepLabCut's template (5, 0.01, 1). labpose's own key
// `locref_neighbours` (true unless set to false) refines each candidate with its neighbours' votes
// (candidates.hpp); false decodes as DeepLabCut does. `evaluate` of a
// multi-animal snapshot chooses nmsradius on the labeled images where no person set it, and says so
// on its line.
#pragma once

#include <array>
#include <filesystem>

#include "pipeline/assembly/candidates.hpp"

namespace labpose::pipeline {

/// The test/pose_cfg.yaml of the shuffle whose train/ folder holds `train_dir_file` (a snapshot
/// or train/pose_cfg.yaml).
std::filesystem::path test_pose_cfg_of(const std::filesystem::path& train_dir_file);

/// Sets `settings` from the candidate keys of test/pose_cfg.yaml `file`, where it has them; a file
/// that does not exist changes nothing. Throws Error (with file:line) for a value out of range:
/// nmsradius a whole number of cells from 1 to 100, minconfidence from 0 to 1, sigma from 0 (no
/// smoothing) to 100, locref_neighbours true or false.
void read_candidate_keys(const std::filesystem::path& file, CandidateSettings& settings);

/// The nmsradius values evaluate tries when it may choose (DeepLabCut's 5 among them).
inline constexpr std::array<int, 4> kNmsRadiiTried{3, 4, 5, 6};

/// Whether evaluate may choose nmsradius in test/pose_cfg.yaml `file`: it has none (or the file
/// does not exist), it has DeepLabCut's template line (5, no comment), or evaluate chose the one it
/// has (its line says so). Any other value, or 5 with a comment of a person's (`nmsradius: 5  #
/// mine`), was set by a person and is kept.
bool evaluate_chooses_nms_radius(const std::filesystem::path& file);

/// Sets nmsradius in `file` to the radius evaluate chose, with a comment on its line that says so.
void write_chosen_nms_radius(const std::filesystem::path& file, int radius);

}  // namespace labpose::pipeline
