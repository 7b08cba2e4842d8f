// labpose plot-trajectories, DeepLabCut's plot_trajectories (reference/dlc-format.md §6.12): four
// PNG figures per video, and per individual for tracks of several animals, in
// plot-poses/<video stem>/ - the trajectory (x against y, image orientation, points with
// likelihood >= pcutoff), x (dashed) and y (solid) over the frames, the likelihood over the frames,
// and the histogram of frame-to-frame changes of x and y. One colour per bodypart, the same in
// every individual's figures.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

struct TrajectoryPlotOptions {
  double pcutoff = 0.6;
  std::string colormap = "rainbow";
  bool filtered = false;  // the names get "_filtered", as DeepLabCut's
};

/// Writes trajectory.png, plot.png, plot-likelihood.png and hist.png (with "_filtered" before the
/// extension for filtered tracks) into `folder` and returns their paths; for tracks of several
/// animals those four for each individual ("single" included), named as DeepLabCut names them
/// (trajectorymouse1.png, trajectory_filteredmouse1.png, ...), in the table's order.
std::vector<std::filesystem::path> plot_trajectories(const projects::Table& tracks,
                                                     const std::filesystem::path& folder,
                                                     const TrajectoryPlotOptions& options);

}  // namespace labpose::pipeline
