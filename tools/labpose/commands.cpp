// The command table.
#include <fmt/ranges.h>

#include "tools/labpose/command.hpp"

namespace labpose::tools {

const std::vector<Command>& command_table() {
  static const std::vector<Command> table = {
      create_command(),
      add_videos_command(),
      extract_frames_command(),
      label_command(),
      check_labels_command(),
      convert_labels_command(),
      create_dataset_command(),
      train_command(),
      evaluate_command(),
      analyze_command(),
      filter_command(),
      plot_trajectories_command(),
      labeled_video_command(),
      unavailable_command("extract-outliers",
                          "extract frames where the network is unsure or jumps, for relabeling"),
      unavailable_command("merge",
                          "advance the project to the next iteration after refining labels"),
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
       {"create", "add-videos", "extract-frames", "label", "check-labels", "convert-labels",
        "create-dataset", "train", "evaluate", "analyze", "filter", "plot-trajectories",
        "labeled-video", "bench", "demo", "doctor", "net"})
    names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace labpose::tools
