// The tracking test video and its ground-truth table.
#include "pipeline/synthetic/mice_test_video.hpp"

#include <string>

#include "projects/labels.hpp"
#include "projects/table.hpp"

namespace labpose::pipeline {

projects::Table mice_truth_table(const SyntheticMiceTruth& truth) {
  const int animals = truth.empty() ? 0 : static_cast<int>(truth.front().size());
  projects::Table table = projects::make_multi_animal_label_table(
      "ground_truth", synthetic_individuals(animals), synthetic_bodyparts(), {});
  table.index_levels = 1;
  table.integer_index = true;
  const std::vector<projects::KeypointColumns> columns =
      projects::keypoint_columns(table, "ground truth");
  for (std::size_t frame = 0; frame < truth.size(); ++frame) {
    const std::size_t row = table.add_row({std::to_string(frame)});
    std::size_t keypoint = 0;
    for (const auto& animal : truth[frame]) {
      for (const SyntheticKeypoint& point : animal) {
        const projects::KeypointColumns& column = columns[keypoint++];
        if (!point.visible) continue;
        table.at(row, column.x) = point.x;
        table.at(row, column.y) = point.y;
      }
    }
  }
  return table;
}

MiceTestVideo write_mice_test_video(const std::filesystem::path& folder, const std::string& stem,
                                    const SyntheticMiceOptions& options) {
  MiceTestVideo files{folder / (stem + ".mp4"), folder / (stem + "_truth.h5"),
                      folder / (stem + "_truth.csv")};
  const projects::Table table = mice_truth_table(write_synthetic_mice_video(files.video, options));
  projects::write_table_hdf5(table, files.truth_h5);
  projects::write_table_csv(table, files.truth_csv);
  return files;
}

}  // namespace labpose::pipeline
