// The command table.
#include <fmt/ranges.h>

#include "tools/labpose/command.hpp"

namespace labpose::tools {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      create_command(),
      add_videos_command(),
      extract_frames_command(),
      unavailable_command("label",
                          "label frames in the browser (works over ssh on a headless machine)"),
      check_labels_command(),
      convert_labels_command(),
      create_dataset_command(),
      train_command(),
      evaluate_command(),
      analyze_command(),
      filter_command(),
      plot_trajectories_command(),
      labeled_video_command(),
      extract_outliers_command(),
      merge_command(),
      bench_command(),
      demo_command(),
      doctor_command(),
      net_command(),
  };
  return table;
}

std::string available_command_names() {
  std::vector<std::string> names;
  for (const auto& name :
       {"create", "add-videos", "extract-frames", "check-labels", "convert-labels",
        "create-dataset", "train", "evaluate", "analyze", "filter", "plot-trajectories", "labeled-video", "extract-outliers", "merge", "bench", "demo", "doctor", "net"})
    names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace labpose::tools
