// DeepLabCut's candidate keys in a multi-animal shuffle's test/pose_cfg.yaml, which its inference
// reads (analyze_videos, evaluate_network): `nmsradius` (the width of the non-maximum suppression
// window, in score-map cells), `minconfidence` (the least score of a candidate) and `sigma` (the
// Gaussian smoothing before it, in cells). A lab that tuned them for its animals gets them in
// `analyze`, `evaluate`, `live` and the test error measured while training; absent keys keep
// CandidateSettings' defaults, the values of DeepLabCut's template (5, 0.01, 1).
#pragma once

#include <filesystem>

#include "pipeline/assembly/candidates.hpp"

namespace labpose::pipeline {

/// The test/pose_cfg.yaml of the shuffle whose train/ folder holds `train_dir_file` (a snapshot
/// or train/pose_cfg.yaml).
std::filesystem::path test_pose_cfg_of(const std::filesystem::path& train_dir_file);

/// Sets `settings` from the candidate keys of test/pose_cfg.yaml `file`, where it has them; a file
/// that does not exist changes nothing. Throws Error (with file:line) for a value out of range:
/// nmsradius a whole number of cells from 1 to 100, minconfidence from 0 to 1, sigma from 0 (no
/// smoothing) to 100.
void read_candidate_keys(const std::filesystem::path& file, CandidateSettings& settings);

}  // namespace labpose::pipeline
