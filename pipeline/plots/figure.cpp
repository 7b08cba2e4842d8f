// Figures on OpenCV: axes with "nice" tick steps, series clipped to the plot area, PNG output.
#include "pipeline/plots/figure.hpp"

#include <fmt/core.h>

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "pipeline/images/image_files.hpp"

namespace labpose::pipeline {
namespace {

constexpr int kLeft = 80, kRight = 150, kTop = 40, kBottom = 55;  // margins in pixels
constexpr int kYLabelLeft = 6;  // the y label's distance from the left edge
constexpr int kFont = cv::FONT_HERSHEY_SIMPLEX;
constexpr double kTitleScale = 0.55, kLabelScale = 0.45;
const cv::Scalar kInk(40, 40, 40), kGrid(225, 225, 225);

cv::Scalar bgr(const Rgb& color) {
  return {std::round(255.0 * color.b), std::round(255.0 * color.g), std::round(255.0 * color.r)};
}

// A tick step of 1, 2 or 5 times a power of ten giving about `count` ticks over `span`.
double nice_step(double span, int count) {
  if (!(span > 0)) return 1.0;
  const double raw = span / count;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (raw <= factor * power) return factor * power;
  }
  return 10.0 * power;
}

std::string tick_text(double value, double step) {
  if (std::fabs(value) < step * 1e-9) value = 0.0;
  return step >= 1.0
             ? fmt::format("{:.0f}", value)
             : fmt::format("{:.{}f}", value, static_cast<int>(std::ceil(-std::log10(step))));
}

void text(cv::Mat& image, const std::string& words, cv::Point at, double scale = kLabelScale) {
  cv::putText(image, words, at, kFont, scale, kInk, 1, cv::LINE_AA);
}

// The box of `words` drawn with its baseline at `baseline_at` (descenders included).
Box text_box(const std::string& words, cv::Point baseline_at, double scale) {
  int baseline = 0;
  const cv::Size size = cv::getTextSize(words, kFont, scale, 1, &baseline);
  return {baseline_at.x, baseline_at.y - size.height, size.width, size.height + baseline};
}

// The largest font scale up to `scale` (in steps of 5 %) at which `words` are at most `room` wide.
double fitting_scale(const std::string& words, double scale, int room) {
  while (scale > 0.1 && text_box(words, {0, 0}, scale).width > room) scale *= 0.95;
  return scale;
}

// `words` turned a quarter anticlockwise into `box` (as text_box sized it before turning).
void vertical_text(cv::Mat& image, const std::string& words, const Box& box, double scale) {
  if (words.empty() || box.width <= 0 || box.height <= 0) return;
  cv::Mat strip(box.width, box.height, CV_8UC3, cv::Scalar(255, 255, 255));
  int baseline = 0;
  const cv::Size size = cv::getTextSize(words, kFont, scale, 1, &baseline);
  cv::putText(strip, words, {0, size.height}, kFont, scale, kInk, 1, cv::LINE_AA);
  cv::Mat turned;
  cv::rotate(strip, turned, cv::ROTATE_90_COUNTERCLOCKWISE);
  turned.copyTo(image(cv::Rect(box.x, box.y, turned.cols, turned.rows)));
}

}  // namespace

bool Box::intersects(const Box& other) const {
  return x < other.x + other.width && other.x < x + width && y < other.y + other.height &&
         other.y < y + height;
}

bool Box::inside(int image_width, int image_height) const {
  return x >= 0 && y >= 0 && x + width <= image_width && y + height <= image_height;
}

FigureLayout Figure::layout() const {
  FigureLayout boxes;
  const int plot_w = width_ - kLeft - kRight, plot_h = height_ - kTop - kBottom;
  boxes.plot = {kLeft, kTop, plot_w, plot_h};
  boxes.title_scale = fitting_scale(title_, kTitleScale, width_ - kLeft - 4);
  boxes.title = text_box(title_, {kLeft, kTop - 14}, boxes.title_scale);
  const Box x_label = text_box(x_label_, {0, height_ - 12}, kLabelScale);
  boxes.x_label = {kLeft + (plot_w - x_label.width) / 2, x_label.y, x_label.width, x_label.height};
  // Upright, the label is `along` long and `across` high; turned, the other way round.
  boxes.y_label_scale = fitting_scale(y_label_, kLabelScale, plot_h);
  const Box upright = text_box(y_label_, {0, 0}, boxes.y_label_scale);
  const int along = std::min(upright.width, plot_h), across = upright.height;
  boxes.y_label = {kYLabelLeft, kTop + (plot_h - along) / 2, across, along};
  return boxes;
}

Figure::Figure(int width, int height, std::string title, std::string x_label, std::string y_label)
    : width_(width),
      height_(height),
      title_(std::move(title)),
      x_label_(std::move(x_label)),
      y_label_(std::move(y_label)) {}

void Figure::set_x_range(double low, double high) {
  x_set_ = true;
  x_low_ = low;
  x_high_ = high > low ? high : low + 1.0;
}

void Figure::set_y_range(double low, double high, bool downwards) {
  y_set_ = true;
  y_low_ = low;
  y_high_ = high > low ? high : low + 1.0;
  y_down_ = downwards;
}

void Figure::add_line(const std::vector<double>& x, const std::vector<double>& y, Rgb color,
                      std::string label, bool dashed) {
  series_.push_back({Series::Kind::line, x, y, color, std::move(label), dashed, 0.0});
}

void Figure::add_points(const std::vector<double>& x, const std::vector<double>& y, Rgb color,
                        std::string label) {
  series_.push_back({Series::Kind::points, x, y, color, std::move(label), false, 0.0});
}

void Figure::add_histogram(const std::vector<double>& counts, double low, double high, Rgb color,
                           std::string label) {
  Series bars{Series::Kind::bars, {}, counts, color, std::move(label), false, 0.0};
  const double width = counts.empty() ? 1.0 : (high - low) / static_cast<double>(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i)
    bars.x.push_back(low + width * static_cast<double>(i));
  bars.bar_width = width;
  series_.push_back(std::move(bars));
}

void Figure::save(const std::filesystem::path& png) const {
  // The data range from the series unless set.
  double x_low = x_low_, x_high = x_high_, y_low = y_low_, y_high = y_high_;
  if (!x_set_ || !y_set_) {
    double xl = std::numeric_limits<double>::infinity(), xh = -xl, yl = xl, yh = -xl;
    for (const auto& s : series_) {
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
        if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
        xl = std::min(xl, s.x[i]);
        xh = std::max(xh, s.x[i] + s.bar_width);
        yl = std::min(yl, s.kind == Series::Kind::bars ? 0.0 : s.y[i]);
        yh = std::max(yh, s.y[i]);
      }
    }
    if (!std::isfinite(xl)) xl = 0, xh = 1, yl = 0, yh = 1;
    if (!x_set_) x_low = xl, x_high = xh > xl ? xh : xl + 1.0;
    if (!y_set_) {
      const double pad = 0.05 * (yh - yl);
      y_low = yl - pad;
      y_high = yh > yl ? yh + pad : yl + 1.0;
    }
  }
  cv::Mat image(height_, width_, CV_8UC3, cv::Scalar(255, 255, 255));
  const FigureLayout parts = layout();
  const int plot_w = parts.plot.width, plot_h = parts.plot.height;
  const auto px = [&](double x) { return kLeft + (x - x_low) / (x_high - x_low) * plot_w; };
  const auto py = [&](double y) {
    const double t = (y - y_low) / (y_high - y_low);
    return y_down_ ? kTop + t * plot_h : kTop + (1.0 - t) * plot_h;
  };
  const auto point = [&](double x, double y) {
    return cv::Point(static_cast<int>(std::lround(px(x))), static_cast<int>(std::lround(py(y))));
  };

  // Grid and ticks.
  const double x_step = nice_step(x_high - x_low, 6), y_step = nice_step(y_high - y_low, 6);
  for (double t = std::ceil(x_low / x_step) * x_step; t <= x_high + 1e-9 * x_step; t += x_step) {
    const int at = static_cast<int>(std::lround(px(t)));
    cv::line(image, {at, kTop}, {at, kTop + plot_h}, kGrid, 1);
    const std::string words = tick_text(t, x_step);
    text(image, words, {at - 4 * static_cast<int>(words.size()), kTop + plot_h + 18});
  }
  for (double t = std::ceil(y_low / y_step) * y_step; t <= y_high + 1e-9 * y_step; t += y_step) {
    const int at = static_cast<int>(std::lround(py(t)));
    cv::line(image, {kLeft, at}, {kLeft + plot_w, at}, kGrid, 1);
    const std::string words = tick_text(t, y_step);
    const Box box = text_box(words, {0, 0}, kLabelScale);
    text(image, words, {kLeft - 8 - box.width, at + 5});
  }

  cv::Mat plot = image(cv::Rect(kLeft, kTop, plot_w, plot_h));
  const cv::Point offset(kLeft, kTop);
  for (const auto& s : series_) {
    const cv::Scalar color = bgr(s.color);
    switch (s.kind) {
      case Series::Kind::line: {
        std::vector<cv::Point> run;
        const auto flush = [&] {
          if (run.size() >= 2) {
            for (std::size_t i = 0; i + 1 < run.size(); ++i) {
              if (s.dashed && (i / 3) % 2 == 1) continue;
              cv::line(plot, run[i] - offset, run[i + 1] - offset, color, 1, cv::LINE_AA);
            }
          }
          run.clear();
        };
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) {
            flush();
            continue;
          }
          run.push_back(point(s.x[i], s.y[i]));
        }
        flush();
        break;
      }
      case Series::Kind::points:
        for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
          if (std::isfinite(s.x[i]) && std::isfinite(s.y[i]))
            cv::circle(plot, point(s.x[i], s.y[i]) - offset, 2, color, cv::FILLED, cv::LINE_AA);
        }
        break;
      case Series::Kind::bars: {
        cv::Mat layer = plot.clone();
        for (std::size_t i = 0; i < s.x.size(); ++i) {
          if (!(s.y[i] > 0)) continue;
          cv::rectangle(layer, point(s.x[i], 0.0) - offset,
                        point(s.x[i] + s.bar_width, s.y[i]) - offset, color, cv::FILLED);
        }
        cv::addWeighted(layer, 0.5, plot, 0.5, 0.0, plot);
        break;
      }
    }
  }

  // Frame, labels, title, legend.
  cv::rectangle(image, {kLeft, kTop}, {kLeft + plot_w, kTop + plot_h}, kInk, 1);
  text(image, title_, {parts.title.x, kTop - 14}, parts.title_scale);
  text(image, x_label_, {parts.x_label.x, height_ - 12});
  vertical_text(image, y_label_, parts.y_label, parts.y_label_scale);
  int row = kTop + 12;
  for (const auto& s : series_) {
    if (s.label.empty()) continue;
    cv::line(image, {kLeft + plot_w + 10, row - 4}, {kLeft + plot_w + 30, row - 4}, bgr(s.color),
             2);
    text(image, s.label, {kLeft + plot_w + 36, row});
    row += 18;
  }

  write_file_atomically(png, encode_png(image, ChannelOrder::bgr));
}

std::vector<double> histogram(const std::vector<double>& values, int bins, double low,
                              double high) {
  std::vector<double> counts(static_cast<std::size_t>(std::max(bins, 1)), 0.0);
  const double width = (high - low) / static_cast<double>(counts.size());
  for (const double v : values) {
    if (!std::isfinite(v) || v < low || v > high) continue;
    auto bin = width > 0 ? static_cast<std::size_t>((v - low) / width) : 0;
    bin = std::min(bin, counts.size() - 1);
    counts[bin] += 1.0;
  }
  return counts;
}

}  // namespace labpose::pipeline
