// The four trajectory figures of each individual, drawn with pipeline/plots/figure.
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
  Rgb color;
  std::vector<double> x, y, likelihood;
};

// The bodyparts of `individual`, each in the colour of its name among all the table's bodyparts
// (so a bodypart has the same colour in every individual's figures, as DeepLabCut's).
std::vector<Part> parts_of(const projects::Table& tracks, const std::vector<TrackColumns>& columns,
                           const std::string& individual, const std::vector<Rgb>& colors) {
  const std::vector<std::string> names = track_bodyparts(columns);
  std::vector<Part> parts;
  for (const TrackColumns& column : columns) {
    if (column.individual != individual) continue;
    const auto at = std::find(names.begin(), names.end(), column.bodypart) - names.begin();
    Part part{column.bodypart, colors[static_cast<std::size_t>(at)], {}, {}, {}};
    for (std::size_t r = 0; r < tracks.row_count(); ++r) {
      part.x.push_back(tracks.at(r, column.x));
      part.y.push_back(tracks.at(r, column.y));
      part.likelihood.push_back(tracks.at(r, column.likelihood));
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

// The four figures of `parts` into `files` (trajectory, plot, plot-likelihood, hist).
void plot_parts(const std::vector<Part>& parts, const std::string& who,
                const std::vector<fs::path>& files, const TrajectoryPlotOptions& options) {
  const std::size_t rows = parts.empty() ? 0 : parts.front().x.size();
  std::vector<double> frames(rows);
  for (std::size_t r = 0; r < frames.size(); ++r) frames[r] = static_cast<double>(r);
  const std::string cut = fmt::format("likelihood >= {}", options.pcutoff);

  Figure trajectory(800, 640, "trajectories" + who + " (" + cut + ")", "x (pixels)", "y (pixels)");
  Figure over_time(1000, 560, "x (dashed) and y (solid) over time" + who, "frame", "pixels");
  Figure likelihood(1000, 480, "likelihood" + who, "frame", "likelihood");
  likelihood.set_y_range(0.0, 1.0);
  Figure changes(900, 560, "frame-to-frame changes of x and y" + who, "pixels", "frames");
  double largest_change = 0.0;
  std::vector<std::vector<double>> moves(parts.size());
  for (std::size_t j = 0; j < parts.size(); ++j) {
    const Part& part = parts[j];
    std::vector<double> x = part.x, y = part.y;
    for (std::size_t r = 0; r < x.size(); ++r) {
      if (!(part.likelihood[r] >= options.pcutoff)) x[r] = y[r] = std::nan("");
    }
    trajectory.add_points(x, y, part.color, part.name);
    over_time.add_line(frames, x, part.color, part.name, true);
    over_time.add_line(frames, y, part.color, "");
    likelihood.add_line(frames, part.likelihood, part.color, part.name);
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
    changes.add_histogram(histogram(moves[j], 100, 0.0, top), 0.0, top, parts[j].color,
                          parts[j].name);
  }
  trajectory.save(files[0]);
  over_time.save(files[1]);
  likelihood.save(files[2]);
  changes.save(files[3]);
}

}  // namespace

std::vector<fs::path> plot_trajectories(const projects::Table& tracks, const fs::path& folder,
                                        const TrajectoryPlotOptions& options) {
  const std::vector<TrackColumns> columns = track_columns(tracks);
  const std::vector<Rgb> colors =
      colormap_colors(options.colormap, track_bodyparts(columns).size());
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    throw Error(fmt::format("cannot make the folder {}: {}", folder.string(), error.message()),
                "check the permissions of the video's folder, or pick one with --dest");
  }
  std::vector<fs::path> written;
  for (const std::string& individual : track_individuals(columns)) {
    std::vector<fs::path> files;
    for (const std::string& name : projects::trajectory_plot_names(options.filtered, individual))
      files.push_back(folder / name);
    plot_parts(parts_of(tracks, columns, individual, colors),
               individual.empty() ? std::string() : " of " + individual, files, options);
    written.insert(written.end(), files.begin(), files.end());
  }
  return written;
}

}  // namespace labpose::pipeline
