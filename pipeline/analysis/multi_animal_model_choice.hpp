// What a multi-animal analysis runs with: the shuffle's snapshot (model_choice.hpp) and its heads,
// the edges assembly links through (test/pose_cfg.yaml's paf_best, every edge without it), and
// the assembly and tracking settings of test/inference_cfg.yaml (DeepLabCut's keys, its defaults
// where a key is absent). Not the network itself and not the analysis.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/analysis/analyze.hpp"
#include "pipeline/assembly/assemble.hpp"
#include "pipeline/pose/multi_animal_model.hpp"
#include "pipeline/tracking/sort_tracker.hpp"
#include "pipeline/tracking/stitch.hpp"
#include "pipeline/training/snapshot.hpp"
#include "projects/config.hpp"

namespace labpose::pipeline {

struct AnimalAnalysisModel {
  std::shared_ptr<const LoadedSnapshot> snapshot;  // model.snapshot, read once
  AnalysisModel model;                   // snapshot, scorer; bodyparts: multi-animal, then unique
  MultiAnimalModel animals;              // the network's heads: graph, unique bodyparts, identity
  std::vector<std::string> individuals;  // config.yaml's: the tracks' names
  std::vector<std::string> multi_bodyparts, unique_bodyparts;
  std::vector<int> edges;  // of animals.graph: paf_best, or every edge
  MapAssemblySettings assembly;
  TrackerSettings tracker;
  StitchSettings stitch;
};

/// The assembly and tracking keys of inference_cfg.yaml `file` over `model`'s settings: pcutoff,
/// pafthreshold, minimalnumberofconnections, topktoretain, max_age, min_hits, iou_threshold,
/// boundingboxslack. Throws Error with file:line for a value out of range.
void read_inference_settings(const std::filesystem::path& file, AnimalAnalysisModel& model);

/// The model of shuffle options.shuffle of the multi-animal project `config`, tracked by
/// `tracker`. Throws Error when the shuffle was never made or trained, its snapshot is a
/// single-animal network, or paf_best or inference_cfg.yaml hold values that do not fit.
AnimalAnalysisModel find_animal_analysis_model(const projects::ProjectConfig& config,
                                               const AnalyzeOptions& options, TrackMethod tracker);

}  // namespace labpose::pipeline
