// The labeling tests' project.
#include "tests/labeling/labeling_support.hpp"

#include <fmt/core.h>

#include <cmath>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/images/image_files.hpp"
#include "projects/table.hpp"
#include "tests/support/test_support.hpp"

namespace labpose::testing {
namespace fs = std::filesystem;

fs::path make_labeling_project(const fs::path& dir) {
  const fs::path project = dir / "mouse-Alice-2026-11-23";
  fs::create_directories(project / "labeled-data" / "mouse");
  fs::create_directories(project / "videos");
  write_text(project / "config.yaml", fmt::format(R"(# Project definitions (do not edit)
Task: mouse
scorer: Alice
date: Nov23
multianimalproject: false
identity:

project_path: {}

engine: pytorch

video_sets:
  {}/videos/mouse.mp4:
    crop: 0, 64, 0, 48
bodyparts:
- snout
- leftear
- rightear
- tailbase

start: 0
stop: 1
numframes2pick: 5

skeleton:
- - snout
  - tailbase
skeleton_color: black
pcutoff: 0.6
dotsize: 6
alphavalue: 0.7
colormap: rainbow

TrainingFraction:
- 0.95
iteration: 0
default_net_type: resnet_50
default_augmenter: imgaug
snapshotindex: -1
batch_size: 8
)",
                                                  project.string(), project.string()));
  for (int index = 0; index < 5; ++index) {
    cv::Mat image(48, 64, CV_8UC3, cv::Scalar(20 + 40 * index, 80, 160));
    cv::circle(image, {10 + 8 * index, 24}, 6, cv::Scalar(255, 255, 255), cv::FILLED);
    write_file_atomically(project / "labeled-data" / "mouse" / fmt::format("img{:03}.png", index),
                          pipeline::encode_png(image, pipeline::ChannelOrder::bgr));
  }
  return project / "config.yaml";
}

void write_machine_labels(const fs::path& folder) {
  projects::Table machine;
  machine.column_level_names = {"scorer", "bodyparts", "coords"};
  for (const char* bodypart : {"snout", "leftear", "rightear", "tailbase"}) {
    for (const char* coord : {"x", "y", "likelihood"})
      machine.columns.push_back({"DLC_resnet50_mouseNov23shuffle1_1000", bodypart, coord});
  }
  machine.index_levels = 3;
  machine.add_row({"labeled-data", "mouse", "img003.png"});
  for (std::size_t j = 0; j < 4; ++j) {
    machine.at(0, 3 * j) = 10.0 + static_cast<double>(j);
    machine.at(0, 3 * j + 1) = 20.0;
    machine.at(0, 3 * j + 2) = 0.25 * static_cast<double>(j + 1);
  }
  machine.at(0, 9) = std::nan("");
  projects::write_table_hdf5(machine, folder / "machinelabels-iter0.h5");
}

fs::path copy_multi_animal_example(const fs::path& dir, const std::vector<std::string>& images) {
  const fs::path project = dir / "multi_mouse-dlc_team-2022-04-12";
  fs::copy(fs::path(LABPOSE_SOURCE_DIR) / "tests" / "data" / project.filename(), project,
           fs::copy_options::recursive);
  const cv::Mat blank(480, 640, CV_8UC3, cv::Scalar(90, 90, 90));
  for (const auto& image : images) {
    const fs::path file = project / "labeled-data" / "m3v1mp4short" / image;
    write_file_atomically(file, pipeline::encode_png(blank, pipeline::ChannelOrder::bgr));
  }
  return project / "config.yaml";
}

}  // namespace labpose::testing
