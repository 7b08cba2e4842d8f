// Track filters: scipy's medfilt, savgol_filter and CubicSpline, as DeepLabCut applies them.
#include "pipeline/analysis/filter.hpp"

#include <fmt/core.h>
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "pipeline/analysis/arma.hpp"
#include "pipeline/analysis/tracks.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The (i, i+1) pieces of a not-a-knot cubic spline through (x[i], y[i]): second derivatives from
// the tridiagonal system left after eliminating the first and last (the not-a-knot conditions).
class CubicSpline {
 public:
  CubicSpline(std::vector<double> x, std::vector<double> y) : x_(std::move(x)), y_(std::move(y)) {
    const std::size_t n = x_.size();
    std::vector<double> h(n - 1);
    for (std::size_t i = 0; i + 1 < n; ++i) h[i] = x_[i + 1] - x_[i];
    // Rows i = 1..n-2: h[i-1] M[i-1] + 2 (h[i-1] + h[i]) M[i] + h[i] M[i+1] = r[i].
    const std::size_t m = n - 2;  // unknowns M[1..n-2]
    std::vector<double> lower(m, 0.0), diagonal(m), upper(m, 0.0), rhs(m);
    for (std::size_t k = 0; k < m; ++k) {
      const std::size_t i = k + 1;
      lower[k] = h[i - 1];
      diagonal[k] = 2.0 * (h[i - 1] + h[i]);
      upper[k] = h[i];
      rhs[k] = 6.0 * ((y_[i + 1] - y_[i]) / h[i] - (y_[i] - y_[i - 1]) / h[i - 1]);
    }
    // Not-a-knot: M0 = ((h0 + h1) M1 - h0 M2) / h1 and the mirror image at the end.
    diagonal[0] += h[0] * (h[0] + h[1]) / h[1];
    upper[0] -= h[0] * h[0] / h[1];
    const double hl = h[n - 2], hp = h[n - 3];
    diagonal[m - 1] += hl * (hp + hl) / hp;
    lower[m - 1] -= hl * hl / hp;
    // Thomas algorithm.
    for (std::size_t k = 1; k < m; ++k) {
      const double factor = lower[k] / diagonal[k - 1];
      diagonal[k] -= factor * upper[k - 1];
      rhs[k] -= factor * rhs[k - 1];
    }
    second_.assign(n, 0.0);
    second_[m] = rhs[m - 1] / diagonal[m - 1];
    for (std::size_t k = m - 1; k-- > 0;)
      second_[k + 1] = (rhs[k] - upper[k] * second_[k + 2]) / diagonal[k];
    second_[0] = ((h[0] + h[1]) * second_[1] - h[0] * second_[2]) / h[1];
    second_[n - 1] = ((hp + hl) * second_[n - 2] - hl * second_[n - 3]) / hp;
  }

  double operator()(double t) const {
    auto upper = std::upper_bound(x_.begin(), x_.end(), t);
    std::size_t i = upper == x_.begin() ? 0 : static_cast<std::size_t>(upper - x_.begin()) - 1;
    i = std::min(i, x_.size() - 2);
    const double h = x_[i + 1] - x_[i];
    const double a = x_[i + 1] - t, b = t - x_[i];
    return second_[i] * a * a * a / (6.0 * h) + second_[i + 1] * b * b * b / (6.0 * h) +
           (y_[i] / h - second_[i] * h / 6.0) * a + (y_[i + 1] / h - second_[i + 1] * h / 6.0) * b;
  }

 private:
  std::vector<double> x_, y_, second_;
};

// Least-squares polynomial of `order` through (t, values[first + t]) for t = 0..count-1, evaluated
// at t = from..to-1 into out[first + t].
void fit_and_evaluate(const std::vector<double>& values, std::size_t first, int count, int order,
                      int from, int to, std::vector<double>& out) {
  Eigen::MatrixXd a(count, order + 1);
  Eigen::VectorXd y(count);
  for (int t = 0; t < count; ++t) {
    double power = 1.0;
    for (int p = 0; p <= order; ++p, power *= t) a(t, p) = power;
    y(t) = values[first + static_cast<std::size_t>(t)];
  }
  const Eigen::VectorXd coefficients = a.colPivHouseholderQr().solve(y);
  for (int t = from; t < to; ++t) {
    double value = 0.0, power = 1.0;
    for (int p = 0; p <= order; ++p, power *= t) value += coefficients(p) * power;
    out[first + static_cast<std::size_t>(t)] = value;
  }
}

// savgol on a run of finite samples [first, first + count) with count >= window.
void savgol_run(const std::vector<double>& values, std::size_t first, std::size_t count, int window,
                int polyorder, const Eigen::VectorXd& centre, std::vector<double>& out) {
  const int half = window / 2;
  for (std::size_t i = static_cast<std::size_t>(half); i + static_cast<std::size_t>(half) < count;
       ++i) {
    double sum = 0.0;
    for (int j = -half; j <= half; ++j)
      sum += centre(j + half) * values[first + i + static_cast<std::size_t>(j)];
    out[first + i] = sum;
  }
  // mode="interp": the ends from a polynomial fitted to the first and last `window` samples.
  fit_and_evaluate(values, first, window, polyorder, 0, half, out);
  fit_and_evaluate(values, first + count - static_cast<std::size_t>(window), window, polyorder,
                   window - half, window, out);
}

}  // namespace

TrackFilter parse_track_filter(const std::string& text) {
  if (text == "median") return TrackFilter::median;
  if (text == "savgol") return TrackFilter::savgol;
  if (text == "spline") return TrackFilter::spline;
  if (text == "arima") return TrackFilter::arima;
  throw UsageError(fmt::format("--type {} is not a filter", text),
                   "use median, savgol, spline or arima");
}

std::vector<double> median_filter(const std::vector<double>& values, int window) {
  if (window < 1 || window % 2 == 0) {
    throw UsageError(fmt::format("the median filter's window must be odd, not {}", window),
                     "use --window 5 (or 3, 7, ...)");
  }
  const auto n = static_cast<std::ptrdiff_t>(values.size());
  const std::ptrdiff_t half = window / 2;
  std::vector<double> out(values.size(), kNaN), sample;
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    if (std::isnan(values[static_cast<std::size_t>(i)])) continue;
    sample.clear();
    for (std::ptrdiff_t j = i - half; j <= i + half; ++j) {
      const double v = j < 0 || j >= n ? 0.0 : values[static_cast<std::size_t>(j)];  // zero padding
      if (!std::isnan(v)) sample.push_back(v);
    }
    std::sort(sample.begin(), sample.end());
    const std::size_t middle = sample.size() / 2;
    out[static_cast<std::size_t>(i)] =
        sample.size() % 2 == 1 ? sample[middle] : 0.5 * (sample[middle - 1] + sample[middle]);
  }
  return out;
}

std::vector<double> savgol_filter(const std::vector<double>& values, int window, int polyorder) {
  if (window < 1 || window % 2 == 0 || polyorder < 0 || polyorder >= window) {
    throw UsageError(fmt::format("the Savitzky-Golay filter needs an odd window larger than its "
                                 "polynomial order (window {}, order {})",
                                 window, polyorder),
                     "e.g. --window 7 --polyorder 3");
  }
  // The centre row of the least-squares fit over t = -half..half (the fitted value at t = 0).
  const int half = window / 2;
  Eigen::MatrixXd a(window, polyorder + 1);
  for (int t = -half; t <= half; ++t) {
    double power = 1.0;
    for (int p = 0; p <= polyorder; ++p, power *= t) a(t + half, p) = power;
  }
  const Eigen::MatrixXd pseudo_inverse = a.completeOrthogonalDecomposition().pseudoInverse();
  const Eigen::VectorXd centre = pseudo_inverse.row(0).transpose();

  std::vector<double> out = values;  // runs shorter than the window stay as they are
  std::size_t i = 0;
  while (i < values.size()) {
    if (std::isnan(values[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < values.size() && !std::isnan(values[end])) ++end;
    if (end - i >= static_cast<std::size_t>(window))
      savgol_run(values, i, end - i, window, polyorder, centre, out);
    i = end;
  }
  return out;
}

std::vector<double> spline_fill(const std::vector<double>& values, int max_gap) {
  std::vector<double> x, y;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isnan(values[i])) {
      x.push_back(static_cast<double>(i));
      y.push_back(values[i]);
    }
  }
  std::vector<double> out(values.size(), kNaN);
  if (x.size() < 4) return values;
  const auto first = static_cast<std::size_t>(x.front()), last = static_cast<std::size_t>(x.back());
  const CubicSpline spline(x, y);
  std::size_t i = first;
  while (i <= last) {
    if (!std::isnan(values[i])) {
      out[i] = values[i];  // the spline passes through it
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end <= last && std::isnan(values[end])) ++end;
    if (max_gap <= 0 || end - i <= static_cast<std::size_t>(max_gap)) {
      for (std::size_t j = i; j < end; ++j) out[j] = spline(static_cast<double>(j));
    }
    i = end;
  }
  return out;
}

projects::Table filter_tracks(const projects::Table& tracks, const FilterOptions& options) {
  projects::Table out = tracks;
  const std::size_t rows = tracks.row_count();
  const auto column = [&](std::size_t c) {
    std::vector<double> values(rows);
    for (std::size_t r = 0; r < rows; ++r) values[r] = tracks.at(r, c);
    return values;
  };
  for (const TrackColumns& part : track_columns(tracks)) {
    for (const std::size_t c : {part.x, part.y}) {
      std::vector<double> values = column(c);
      std::vector<double> filtered;
      switch (options.type) {
        case TrackFilter::median:
          filtered = median_filter(values, options.window);
          break;
        case TrackFilter::savgol:
          filtered = savgol_filter(values, options.window, options.polyorder);
          break;
        case TrackFilter::spline:
          for (std::size_t r = 0; r < rows; ++r) {
            if (!(tracks.at(r, part.likelihood) >= options.p_bound)) values[r] = kNaN;
          }
          filtered = spline_fill(values, options.window);
          for (std::size_t r = 0; r < rows; ++r) {
            if (filtered[r] == 0.0) filtered[r] = kNaN;  // as DeepLabCut: exactly 0 means nothing
            if (std::isnan(values[r]) && !std::isnan(filtered[r]))
              out.at(r, part.likelihood) = 0.01;
          }
          break;
        case TrackFilter::arima: {
          for (std::size_t r = 0; r < rows; ++r) {
            if (tracks.at(r, part.likelihood) < options.p_bound) values[r] = kNaN;
          }
          const auto fit = fit_arma(values, options.ar_degree, options.ma_degree, options.alpha);
          filtered = fit ? fit->mean : std::vector<double>(rows, kNaN);
          if (rows > 0) filtered[0] = tracks.at(0, c);  // as DeepLabCut
          break;
        }
      }
      for (std::size_t r = 0; r < rows; ++r) out.at(r, c) = filtered[r];
    }
  }
  return out;
}

fs::path write_filtered_tracks(const projects::Table& filtered, const fs::path& tracks, bool csv) {
  const fs::path h5 = projects::filtered_tracks_path(tracks);
  projects::write_table_hdf5(filtered, h5);
  if (csv) {
    fs::path csv_file = h5;
    csv_file.replace_extension(".csv");
    projects::write_table_csv(filtered, csv_file);
  }
  return h5;
}

}  // namespace labpose::pipeline
