// The command table: each subcommand lives in its own file and contributes one Command. A command
// turns its flags into a typed options struct, then calls library code with it.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace labpose::tools {

struct Command {
  std::string name;
  std::string summary;
  /// Adds the options to `app` and returns the action to run once parsing succeeded (it reads the
  /// parsed values through what it captured). The action returns the exit code.
  std::function<std::function<int()>(CLI::App& app)> define;
};

/// Every subcommand of the product, in the order `labpose --help` lists them.
const std::vector<Command>& command_table();

// One function per file.
Command create_command();
Command add_videos_command();
Command extract_frames_command();
Command label_command();
Command convert_labels_command();
Command check_labels_command();
Command create_dataset_command();
Command train_command();
Command evaluate_command();
Command analyze_command();
Command track_command();
Command stitch_command();
Command refine_tracks_command();
Command export_command();
Command live_command();
Command filter_command();
Command labeled_video_command();
Command extract_outliers_command();
Command merge_command();
Command plot_trajectories_command();
Command demo_command();
Command doctor_command();
Command net_command();
Command weights_command();
Command sweep_command();
Command bench_command();

}  // namespace labpose::tools
