// labpose filter, DeepLabCut's filterpredictions (reference/dlc-format.md §6.10) on the tracks of
// one animal or of several (each individual's bodyparts): each x and y column smoothed or
// gap-filled on its own, the likelihoods kept (or set to 0.01 where spline filling made a point
// up), written beside the tracks as <name>_filtered.h5/.csv (e.g. <video><scorer>_el_filtered.h5).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "projects/table.hpp"

namespace labpose::pipeline {

enum class TrackFilter {
  median,  // scipy.signal.medfilt: the median of `window` samples, the ends padded with zeros
  savgol,  // scipy.signal.savgol_filter(window, polyorder, mode="interp")
  spline,  // scipy CubicSpline (not-a-knot) through the points with likelihood >= p_bound, filling
           // gaps of at most `window` frames (window <= 0: every gap); likelihood 0.01 there
  arima,   // DeepLabCut's ARIMA filter: the one-step-ahead predictions of an ARMA(ar, ma) fit of
           // each coordinate (statsmodels' SARIMAX), points below p_bound missing; the first
           // sample kept
};

/// "median", "savgol", "spline" or "arima"; a UsageError naming --type otherwise.
TrackFilter parse_track_filter(const std::string& text);

struct FilterOptions {
  TrackFilter type = TrackFilter::median;
  int window = 5;          // samples (odd for median and savgol)
  int polyorder = 3;       // savgol's polynomial order (< window)
  double p_bound = 0.001;  // spline, arima: points below this likelihood are treated as missing
  int ar_degree = 3, ma_degree = 1;  // arima
  double alpha = 0.01;               // arima: significance level of the fit's interval
};

/// The filtered copy of a track table (columns scorer/bodyparts/coords, or
/// scorer/individuals/bodyparts/coords, with x, y, likelihood per bodypart; other coords are
/// copied unchanged). NaN samples (frames that could not be decoded) are
/// left out of their neighbours' median and split savgol into runs; they stay NaN unless spline
/// filling reaches them or arima predicts them. Throws UsageError for a window or order the filter
/// cannot use.
projects::Table filter_tracks(const projects::Table& tracks, const FilterOptions& options);

/// Writes `filtered`, the filtered copy of the tracks in `tracks`, as DeepLabCut names it:
/// <tracks stem>_filtered.h5 (pandas fixed format, key df_with_missing) and, when `csv`, the .csv
/// beside it, each atomically. Returns the .h5.
std::filesystem::path write_filtered_tracks(const projects::Table& filtered,
                                            const std::filesystem::path& tracks, bool csv);

// The one-dimensional filters, exposed for tests against scipy. NaN marks a missing sample.
std::vector<double> median_filter(const std::vector<double>& values, int window);
std::vector<double> savgol_filter(const std::vector<double>& values, int window, int polyorder);
/// Cubic-spline values at every index from the finite samples (nothing when there are fewer than
/// four); indices before the first or after the last finite sample, and gaps longer than
/// `max_gap` (> 0), are NaN.
std::vector<double> spline_fill(const std::vector<double>& values, int max_gap);

}  // namespace labpose::pipeline
