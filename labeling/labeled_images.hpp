// check-labels' pictures: every labeled frame with its labels drawn, as DeepLabCut's check_labels
// writes them into labeled-data/<video>_labeled/<image> (a '+' per point in config.yaml's colormap,
// dotsize and alphavalue, the skeleton between labeled points). Not validation:
// projects/label_check.hpp.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "projects/config.hpp"

namespace labpose::labeling {

struct LabeledImagesFolder {
  std::filesystem::path folder;  // labeled-data/<video>_labeled
  std::size_t images = 0;        // pictures written
  std::vector<std::string>
      problems;  // images that could not be read, labels that could not be read
};

/// Draws every row of each folder's CollectedData_<scorer> whose image exists; PNGs written
/// atomically, replacing older ones. Folders without labels are skipped.
std::vector<LabeledImagesFolder> draw_labeled_images(const projects::ProjectConfig& config);

}  // namespace labpose::labeling
