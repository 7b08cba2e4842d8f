// The labeled frames a network learns from: every labeled-data folder's CollectedData merged (in
// config.yaml's bodypart order, rows sorted by image path), and a split of them into training and
// test images saved by image path (labpose-split-<P>shuffle<S>.json) so it is reused exactly.
// Multi-animal projects too: each image then holds every individual's points. Not augmentation or
// batching (loader.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "projects/config.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

struct LabeledImage {
  std::string path;           // "labeled-data/<stem>/<image>", relative to the project folder
  int width = 0, height = 0;  // pixels
  // One per slot (Dataset::slots()): a bodypart, or in a multi-animal project an individual's
  // bodypart; NaN where not labeled.
  std::vector<double> x, y;
  std::string source;  // the label file's name (CollectedData_<scorer>.h5 or .csv)
};

struct Dataset {
  /// The keypoints: a single-animal project's bodyparts; a multi-animal project's
  /// multianimalbodyparts, then its uniquebodyparts.
  std::vector<std::string> bodyparts;
  /// Multi-animal only: the individuals in config.yaml's order, then "single" (DeepLabCut's name
  /// for the unique bodyparts) when there are unique bodyparts. Empty for a single-animal project.
  std::vector<std::string> individuals;
  std::size_t multi_bodyparts = 0;  // multi-animal: how many of bodyparts each animal has
  std::vector<LabeledImage> images;

  bool multi_animal() const { return !individuals.empty(); }
  /// Points per image: bodyparts, or individuals x bodyparts (individual i's bodypart j at
  /// i * bodyparts.size() + j; an animal's unique-bodypart slots and single's per-animal ones
  /// stay empty, as in DeepLabCut's arrays).
  std::size_t slots() const;
  /// Multi-animal: the individuals with multi-animal bodyparts (all but a last "single"), whose
  /// slots come first.
  std::size_t animals() const {
    return individuals.size() - (multi_bodyparts < bodyparts.size() ? 1 : 0);
  }
  /// "snout", or "individual2 bodypart1": a slot in words, for messages.
  std::string slot_name(std::size_t slot) const;
};

/// What merging found and did, one line per problem (for the user).
struct MergeReport {
  std::vector<std::string> skipped;  // frames left out (no labels, missing or unreadable image)
  std::vector<std::string> dropped;  // points left out (outside their image)
  std::vector<std::string> notes;    // which label file was read and why (e.g. .h5 and CSV differ)
};

/// Merges the labels of every labeled-data folder of the project (the config's scorer). Frames
/// without any labeled point, frames whose image is missing or unreadable, and points outside
/// their image are left out and reported. Throws when a label file does not fit the config.
Dataset merge_labeled_data(const projects::ProjectConfig& config, MergeReport* report);

/// The dataset as a CollectedData table (3-level rows, config bodypart order; four header rows and
/// DeepLabCut's column order in a multi-animal project).
projects::Table dataset_table(const Dataset& dataset, const std::string& scorer);
/// Reads a merged CollectedData .h5/.csv back (image sizes from the image headers under `project`).
Dataset read_dataset(const std::filesystem::path& table_file, const std::filesystem::path& project);

struct Split {
  double training_fraction = 0.95;
  int shuffle = 1;
  std::uint64_t seed = 0;
  std::vector<std::string> train, test;  // image paths
  // A sweep trial's: images taken out of the training images to choose between trials on, never
  // trained on and never test images. Empty for an ordinary shuffle.
  std::vector<std::string> validation;
};

/// DeepLabCut's split: a random permutation (from `seed`); the first int(n * fraction) images
/// train.
Split make_split(const Dataset& dataset, double training_fraction, int shuffle, std::uint64_t seed);
void write_split(const Split& split, const std::filesystem::path& file);  // JSON, atomic
Split read_split(const std::filesystem::path& file);
/// Indices into dataset.images of split.train / split.test; throws when an image is not in the
/// dataset.
std::vector<std::size_t> indices_of(const Dataset& dataset, const std::vector<std::string>& paths,
                                    const std::filesystem::path& split_file);

}  // namespace labpose::pipeline
