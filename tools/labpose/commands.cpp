// The command table.
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
      sweep_command(),
      evaluate_command(),
      analyze_command(),
      track_command(),
      stitch_command(),
      refine_tracks_command(),
      export_command(),
      live_command(),
      filter_command(),
      plot_trajectories_command(),
      labeled_video_command(),
      extract_outliers_command(),
      merge_command(),
      bench_command(),
      demo_command(),
      doctor_command(),
      net_command(),
      weights_command(),
  };
  return table;
}

}  // namespace labpose::tools
