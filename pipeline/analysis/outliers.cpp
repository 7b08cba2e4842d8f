// extract_outlier_frames: the three criteria of DeepLabCut's extract_outlier_frames over a track
// table, the frames picked among the flagged ones, the machinelabels file; and merge_datasets.
#include "pipeline/analysis/outliers.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <numeric>
#include <set>

#include "core/console.hpp"
#include "core/error.hpp"
#include "pipeline/analysis/analyze.hpp"
#include "pipeline/analysis/arma.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "projects/labels.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The tracked bodyparts compared (all, or those asked for, of every individual, in the order
// asked for).
std::vector<TrackColumns> compared_bodyparts(const projects::Table& tracks,
                                             const OutlierOptions& options) {
  std::vector<TrackColumns> all = track_columns(tracks);
  if (options.bodyparts.empty()) return all;
  std::vector<TrackColumns> compared;
  for (const std::string& wanted : options.bodyparts) {
    const std::size_t before = compared.size();
    std::copy_if(all.begin(), all.end(), std::back_inserter(compared),
                 [&](const TrackColumns& c) { return c.bodypart == wanted; });
    if (compared.size() == before) {
      throw UsageError(fmt::format("the tracks have no bodypart {}", wanted),
                       fmt::format("they have: {}", fmt::join(track_bodyparts(all), ", ")));
    }
  }
  return compared;
}

std::vector<double> column_values(const projects::Table& tracks, std::size_t column) {
  std::vector<double> values(tracks.row_count());
  for (std::size_t row = 0; row < values.size(); ++row) values[row] = tracks.at(row, column);
  return values;
}

// DeepLabCut's FitSARIMAXModel: points below p_bound are missing; NaN predictions without enough
// points.
std::vector<double> arma_prediction(const projects::Table& tracks, std::size_t column,
                                    const std::vector<double>& likelihood,
                                    const OutlierOptions& options) {
  std::vector<double> series = column_values(tracks, column);
  for (std::size_t row = 0; row < series.size(); ++row) {
    if (likelihood[row] < options.p_bound) series[row] = kNaN;
  }
  const auto fit = fit_arma(series, options.ar_degree, options.ma_degree, options.alpha);
  return fit ? fit->mean : std::vector<double>(series.size(), kNaN);
}

void remove_frames(const ExtractedVideo& extracted) {
  std::error_code ignored;
  for (const std::int64_t index : extracted.frames) {
    fs::remove(extracted.folder / projects::frame_image_name(index, extracted.frame_count),
               ignored);
  }
}

// `table` with the rows of `added` appended (rows already in `table` keep their values; columns
// only in `added` are added, NaN for the old rows), as DeepLabCut's concat + drop duplicates.
projects::Table append_rows(projects::Table table, const projects::Table& added) {
  std::vector<std::size_t> column_of(added.column_count());
  std::vector<std::vector<std::string>> new_columns;
  for (std::size_t c = 0; c < added.column_count(); ++c) {
    const auto found = std::find(table.columns.begin(), table.columns.end(), added.columns[c]);
    if (found != table.columns.end()) {
      column_of[c] = static_cast<std::size_t>(found - table.columns.begin());
    } else {
      column_of[c] = table.column_count() + new_columns.size();
      new_columns.push_back(added.columns[c]);
    }
  }
  if (!new_columns.empty()) {
    const std::size_t old_count = table.column_count();
    const std::size_t count = old_count + new_columns.size();
    std::vector<double> values(table.row_count() * count, kNaN);
    for (std::size_t row = 0; row < table.row_count(); ++row) {
      std::copy_n(table.values.begin() + static_cast<std::ptrdiff_t>(row * old_count), old_count,
                  values.begin() + static_cast<std::ptrdiff_t>(row * count));
    }
    table.columns.insert(table.columns.end(), new_columns.begin(), new_columns.end());
    table.values = std::move(values);
  }
  std::set<std::vector<std::string>> keys(table.index.begin(), table.index.end());
  for (std::size_t row = 0; row < added.row_count(); ++row) {
    if (!keys.insert(added.index[row]).second) continue;
    const std::size_t to = table.add_row(added.index[row]);
    for (std::size_t c = 0; c < added.column_count(); ++c)
      table.at(to, column_of[c]) = added.at(row, c);
  }
  return table;
}

}  // namespace

OutlierAlgorithm parse_outlier_algorithm(std::string_view name) {
  if (name == "jump") return OutlierAlgorithm::jump;
  if (name == "uncertain") return OutlierAlgorithm::uncertain;
  if (name == "fitting") return OutlierAlgorithm::fitting;
  throw UsageError(
      fmt::format("unknown outlier algorithm {}", name),
      "use jump, uncertain or fitting (DeepLabCut's manual mode is the labeling page)");
}

std::vector<double> fit_deviations(const projects::Table& tracks, const OutlierOptions& options) {
  const std::size_t rows = tracks.row_count();
  std::vector<double> sum(rows, 0.0), count(rows, 0.0);
  for (const TrackColumns& part : compared_bodyparts(tracks, options)) {
    const std::vector<double> likelihood = column_values(tracks, part.likelihood);
    const std::vector<double> mean_x = arma_prediction(tracks, part.x, likelihood, options);
    const std::vector<double> mean_y = arma_prediction(tracks, part.y, likelihood, options);
    for (std::size_t row = 0; row < rows; ++row) {
      const double distance =
          std::hypot(tracks.at(row, part.x) - mean_x[row], tracks.at(row, part.y) - mean_y[row]);
      if (std::isfinite(distance)) {  // pandas' mean skips NaN
        sum[row] += distance;
        count[row] += 1.0;
      }
    }
  }
  std::vector<double> deviation(rows, kNaN);
  for (std::size_t row = 0; row < rows; ++row) {
    if (count[row] > 0.0) deviation[row] = sum[row] / count[row];
  }
  return deviation;
}

std::vector<std::int64_t> find_outlier_frames(const projects::Table& tracks, std::int64_t first,
                                              std::int64_t end, const OutlierOptions& options) {
  const auto rows = static_cast<std::int64_t>(tracks.row_count());
  first = std::clamp<std::int64_t>(first, 0, rows);
  end = std::clamp<std::int64_t>(end, first, rows);
  const std::vector<TrackColumns> parts = compared_bodyparts(tracks, options);
  std::vector<std::int64_t> frames;
  switch (options.algorithm) {
    case OutlierAlgorithm::uncertain:
      for (std::int64_t row = first; row < end; ++row) {
        const auto r = static_cast<std::size_t>(row);
        if (std::any_of(parts.begin(), parts.end(), [&](const TrackColumns& part) {
              return tracks.at(r, part.likelihood) < options.p_bound;
            }))
          frames.push_back(row);
      }
      break;
    case OutlierAlgorithm::jump:
      // The previous frame of the range only: the first frame of the range has no jump.
      for (std::int64_t row = first + 1; row < end; ++row) {
        const auto r = static_cast<std::size_t>(row);
        if (std::any_of(parts.begin(), parts.end(), [&](const TrackColumns& part) {
              const double dx = tracks.at(r, part.x) - tracks.at(r - 1, part.x);
              const double dy = tracks.at(r, part.y) - tracks.at(r - 1, part.y);
              return dx * dx + dy * dy > options.epsilon * options.epsilon;
            }))
          frames.push_back(row);
      }
      break;
    case OutlierAlgorithm::fitting: {
      // DeepLabCut fits the tracks of the range only.
      projects::Table range;
      range.column_level_names = tracks.column_level_names;
      range.columns = tracks.columns;
      range.index_levels = tracks.index_levels;
      range.integer_index = tracks.integer_index;
      range.index.assign(tracks.index.begin() + first, tracks.index.begin() + end);
      range.values.assign(
          tracks.values.begin() + static_cast<std::ptrdiff_t>(first) *
                                      static_cast<std::ptrdiff_t>(tracks.column_count()),
          tracks.values.begin() + static_cast<std::ptrdiff_t>(end) *
                                      static_cast<std::ptrdiff_t>(tracks.column_count()));
      const std::vector<double> deviation = fit_deviations(range, options);
      for (std::size_t i = 0; i < deviation.size(); ++i) {
        if (deviation[i] > options.epsilon) frames.push_back(first + static_cast<std::int64_t>(i));
      }
      const auto enough = static_cast<std::size_t>(2 * std::max(0, options.frames_wanted));
      if (frames.size() < enough && deviation.size() > enough) {
        // Too few beyond epsilon: the most distant ones (frames without a fit last, not first).
        std::vector<std::size_t> order(deviation.size());
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
          const bool a_finite = std::isfinite(deviation[a]), b_finite = std::isfinite(deviation[b]);
          if (a_finite != b_finite) return a_finite;
          return a_finite && deviation[a] > deviation[b];
        });
        frames.clear();
        for (std::size_t i = 0; i < enough; ++i) {
          if (!std::isfinite(deviation[order[i]])) break;
          frames.push_back(first + static_cast<std::int64_t>(order[i]));
        }
        std::sort(frames.begin(), frames.end());
      }
      break;
    }
  }
  return frames;
}

OutlierVideo extract_outlier_frames(const projects::ProjectConfig& config, const std::string& video,
                                    const AnalysisFiles& analysis, const OutlierOptions& outliers,
                                    const ExtractFramesOptions& frames) {
  const fs::path& tracks_h5 = analysis.h5;
  OutlierVideo result;
  result.tracks = tracks_h5;
  const projects::Table tracks = projects::read_table_hdf5(tracks_h5);
  if (!tracks.integer_index) {
    throw Error(fmt::format("{} is not a table of tracks (its rows are not frame numbers)",
                            tracks_h5.string()),
                "give the .h5 that labpose analyze (or DeepLabCut's analyze_videos) wrote");
  }
  const std::vector<TrackColumns> columns = track_columns(tracks);
  const auto rows = static_cast<std::int64_t>(tracks.row_count());
  const auto n = static_cast<double>(rows);
  const auto first = static_cast<std::int64_t>(std::floor(n * config.values().start));
  const auto end = std::min(rows, static_cast<std::int64_t>(std::ceil(n * config.values().stop)));
  OutlierOptions options = outliers;
  if (options.frames_wanted == 0)
    options.frames_wanted = frames.frames.value_or(config.values().numframes2pick);
  result.outliers = find_outlier_frames(tracks, first, end, options);
  console::info("{}: {} outlier frame{} found ({})", projects::video_stem(video),
                result.outliers.size(), result.outliers.size() == 1 ? "" : "s",
                tracks_h5.filename().string());

  result.extracted =
      extract_frames_among(config, video, result.outliers, frames, [&](std::int64_t frame_count) {
        if (frame_count != rows) {
          throw Error(fmt::format("{} has {} rows but video {} has {} frames", tracks_h5.string(),
                                  rows, video, frame_count),
                      "the tracks belong to another version of the video: analyze it again");
        }
      });
  const ExtractedVideo& extracted = result.extracted;
  result.machine_labels =
      extracted.folder / projects::machine_labels_h5_name(config.values().iteration);
  if (extracted.frames.empty()) return result;
  try {
    // Coordinates in the written images: the analysis crop is undone, the extraction crop applied.
    double shift_x = 0.0, shift_y = 0.0;
    if (const auto crop = analysis_crop(analysis)) {
      shift_x += crop->x1;
      shift_y += crop->y1;
    }
    if (frames.crop) {
      for (const auto& set : config.values().video_sets) {
        if (set.crop && projects::video_stem(set.key) == extracted.stem) {
          shift_x -= set.crop->x1;
          shift_y -= set.crop->y1;
        }
      }
    }
    projects::Table predictions;
    predictions.column_level_names = tracks.column_level_names;
    predictions.columns = tracks.columns;
    predictions.index_levels = 3;
    for (const std::int64_t frame : extracted.frames) {
      const std::size_t row =
          predictions.add_row({"labeled-data", extracted.stem,
                               projects::frame_image_name(frame, extracted.frame_count)});
      for (std::size_t c = 0; c < tracks.column_count(); ++c)
        predictions.at(row, c) = tracks.at(static_cast<std::size_t>(frame), c);
      for (const TrackColumns& part : columns) {
        predictions.at(row, part.x) += shift_x;
        predictions.at(row, part.y) += shift_y;
      }
    }
    std::error_code error;
    const projects::Table combined =
        fs::exists(result.machine_labels, error)
            ? append_rows(projects::read_table_hdf5(result.machine_labels), predictions)
            : predictions;
    projects::write_table_hdf5(combined, result.machine_labels);
    projects::write_table_csv(combined, extracted.folder / projects::machine_labels_csv_name());
  } catch (...) {
    remove_frames(extracted);
    throw;
  }
  return result;
}

IterationMerge merge_labeled_iteration(projects::ProjectConfig& config, bool force,
                                       std::optional<int> force_iteration) {
  IterationMerge merge;
  merge.previous = config.values().iteration;
  merge.next = force_iteration.value_or(merge.previous + 1);
  if (merge.next < 0) throw UsageError(fmt::format("cannot go to iteration {}", merge.next));
  const projects::ProjectLayout layout(config.project_dir());
  for (const fs::path& folder : layout.labeled_folders()) {
    const fs::path machine = folder / projects::machine_labels_h5_name(merge.previous);
    std::error_code error;
    if (!fs::exists(machine, error)) continue;
    const projects::Table predicted = projects::read_table_hdf5(machine);
    std::set<std::string> labeled;
    const auto files = projects::label_files(folder, config.values().scorer);
    if (files.any_exists()) {
      const projects::Table labels = projects::read_labels(files).table;
      for (std::size_t row = 0; row < labels.row_count(); ++row)
        labeled.insert(projects::image_key(labels, row).image);
    }
    for (std::size_t row = 0; row < predicted.row_count(); ++row) {
      const std::string image = projects::image_key(predicted, row).image;
      if (labeled.count(image) == 0 && fs::exists(folder / image, error))
        merge.unreviewed.push_back(folder.filename().string() + "/" + image);
    }
  }
  if (!merge.unreviewed.empty() && !force) {
    const std::size_t shown = std::min<std::size_t>(merge.unreviewed.size(), 5);
    throw Error(
        fmt::format("{} outlier frame{} of iteration {} {} no labels in CollectedData_{}: {}{}",
                    merge.unreviewed.size(), merge.unreviewed.size() == 1 ? "" : "s",
                    merge.previous, merge.unreviewed.size() == 1 ? "has" : "have",
                    config.values().scorer,
                    fmt::join(merge.unreviewed.begin(),
                              merge.unreviewed.begin() + static_cast<std::ptrdiff_t>(shown), ", "),
                    merge.unreviewed.size() > shown ? ", ..." : ""),
        fmt::format("review them first (labpose label {} --refine), delete the images you do not "
                    "want, or pass --force to go on without them",
                    config.file().string()));
  }
  config.set_iteration(merge.next);
  config.save();
  return merge;
}

}  // namespace labpose::pipeline
