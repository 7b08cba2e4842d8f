// The demo project: a complete DeepLabCut-layout project made in seconds from the synthetic mouse,
// or from a scene of several mice as a multi-animal project (config.yaml with its bodyparts,
// individuals and skeleton, the video, frames extracted by k-means, and CollectedData labels taken
// from the exact ground truth). `labpose demo` starts from it.
// Not training or analysis: later steps of the demo run on the project this makes.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "pipeline/synthetic/mice.hpp"
#include "pipeline/synthetic/mouse.hpp"

namespace labpose::pipeline {

struct DemoProjectOptions {
  std::filesystem::path dir = ".";  // where the project folder is made
  SyntheticVideoOptions video;      // size, length, seed of the synthetic video
  int labeled_frames = 20;          // numframes2pick: frames extracted and labeled
  int threads = 0;                  // decoder threads for the extraction
  // 1: the single mouse, demo-labpose-<date>/. 2 or more: a multi-animal project of that many
  // mice (individuals mouse1, mouse2, ...), demo_mice-labpose-<date>/.
  int animals = 1;
  bool distinct_shades = false;  // several animals: each mouse a slightly different shade
  bool identity = false;         // several animals: config.yaml's identity: true (an identity head)
};

struct DemoProject {
  std::filesystem::path config;              // <dir>/demo[_mice]-labpose-<date>/config.yaml
  std::filesystem::path video;               // the video inside the project
  std::vector<std::int64_t> labeled_frames;  // frame indices with labels, ascending
  std::vector<std::vector<SyntheticKeypoint>> truth;  // one animal: every frame's keypoints
  SyntheticMiceTruth mice_truth;  // several: every frame's keypoints, [frame][individual][part]
};

/// Makes the demo project. Throws Error when the project folder already exists or anything fails;
/// a half-made project is removed. `animals` below 1 is a UsageError.
DemoProject create_demo_project(const DemoProjectOptions& options);

}  // namespace labpose::pipeline
