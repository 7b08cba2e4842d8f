// The four trajectory figures, drawn with pipeline/plots/figure.
#include "pipeline/analysis/trajectories.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/figure.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

struct Part {
  std::string name;
  std::vector<double> x, y, likelihood;
};

std::vector<Part> parts_of(const projects::Table& tracks) {
  std::vector<Part> parts;
  for (const TrackColumns& columns : track_columns(tracks)) {
    Part part{columns.bodypart, {}, {}, {}};
    for (std::size_t r = 0; r < tracks.row_count(); ++r) {
      part.x.push_back(tracks.at(r, columns.x));
      part.y.push_back(tracks.at(r, columns.y));
      part.likelihood.push_back(tracks.at(r, columns.likelihood));
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace

std::vector<fs::path> plot_trajectories(const projects::Table& tracks, const fs::path& folder,
                                        const TrajectoryPlotOptions& options) {
  const std::vector<Part> parts = parts_of(tracks);
  const std::vector<Rgb> colors = colormap_colors(options.colormap, parts.size());
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    throw Error(fmt::format("cannot make the folder {}: {}", folder.string(), error.message()),
                "check the permissions of the video's folder, or pick one with --dest");
  }
  std::vector<double> frames(tracks.row_count());
  for (std::size_t r = 0; r < frames.size(); ++r) frames[r] = static_cast<double>(r);
  const std::string cut = fmt::format("likelihood >= {}", options.pcutoff);

  Figure trajectory(800, 640, "trajectories (" + cut + ")", "x (pixels)", "y (pixels)");
  Figure over_time(1000, 560, "x (dashed) and y (solid) over time", "frame", "pixels");
  Figure likelihood(1000, 480, "likelihood", "frame", "likelihood");
  likelihood.set_y_range(0.0, 1.0);
  Figure changes(900, 560, "frame-to-frame changes of x and y", "pixels", "frames");
  double largest_change = 0.0;
  std::vector<std::vector<double>> moves(parts.size());
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const Part& part = parts[j];
    std::vector<double> x = part.x, y = part.y;
    for (std::size_t r = 0; r < x.size(); ++r) {
      if (!(part.likelihood[r] >= options.pcutoff)) x[r] = y[r] = std::nan("");
    }
    trajectory.add_points(x, y, colors[j], part.name);
    over_time.add_line(frames, x, colors[j], part.name, true);
    over_time.add_line(frames, y, colors[j], "");
    likelihood.add_line(frames, part.likelihood, colors[j], part.name);
    for (std::size_t r = 1; r < x.size(); ++r) {
      for (const auto* series : {&x, &y}) {
        const double change = std::fabs((*series)[r] - (*series)[r - 1]);
        if (std::isfinite(change)) {
          moves[j].push_back(change);
          largest_change = std::max(largest_change, change);
        }
      }
    }
  }
  // y grows downwards, as in the video.
  double y_low = INFINITY, y_high = -INFINITY;
  for (const Part& part : parts) {
    for (std::size_t r = 0; r < part.y.size(); ++r) {
      if (part.likelihood[r] >= options.pcutoff && std::isfinite(part.y[r])) {
        y_low = std::min(y_low, part.y[r]);
        y_high = std::max(y_high, part.y[r]);
      }
    }
  }
  if (std::isfinite(y_low)) trajectory.set_y_range(y_low - 5.0, y_high + 5.0, true);
  const double top = largest_change > 0 ? largest_change : 1.0;
  for (std::size_t j = 0; j < parts.size(); ++j) {
    changes.add_histogram(histogram(moves[j], 100, 0.0, top), 0.0, top, colors[j], parts[j].name);
  }

  std::vector<fs::path> files;
  for (const std::string& name : projects::trajectory_plot_names(options.filtered))
    files.push_back(folder / name);
  trajectory.save(files[0]);
  over_time.save(files[1]);
  likelihood.save(files[2]);
  changes.save(files[3]);
  return files;
}

}  // namespace labpose::pipeline
