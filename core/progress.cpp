// Progress bar rendering and the terminal/plain-line policy.
#include "core/progress.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>

#include "core/console.hpp"

namespace labpose {
namespace {

constexpr int kBarWidth = 24;
constexpr double kTerminalInterval = 0.1;  // s between redraws on a terminal
constexpr double kPlainInterval = 60.0;    // s between plain lines at the latest

double steady_seconds() {
  using std::chrono::duration;
  return duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_rate(double per_second, std::string_view unit) {
  if (per_second >= 100) return fmt::format("{:.0f} {}/s", per_second, unit);
  if (per_second >= 1) return fmt::format("{:.1f} {}/s", per_second, unit);
  if (per_second > 0)
    return fmt::format("{:.1f} s/{}", 1.0 / per_second, unit.empty() ? "it" : unit);
  return fmt::format("- {}/s", unit);
}

}  // namespace

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  const auto total = static_cast<std::int64_t>(std::llround(seconds));
  const std::int64_t hours = total / 3600, minutes = (total / 60) % 60, secs = total % 60;
  if (hours > 0) return fmt::format("{}:{:02}:{:02}", hours, minutes, secs);
  return fmt::format("{}:{:02}", minutes, secs);
}

std::string render_progress(std::string_view label, std::int64_t done, std::int64_t total,
                            double elapsed_seconds, std::string_view unit,
                            std::string_view detail) {
  const double rate = elapsed_seconds > 0 ? static_cast<double>(done) / elapsed_seconds : 0.0;
  std::string line(label);
  if (total > 0) {
    const double fraction =
        std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
    const int filled = static_cast<int>(fraction * kBarWidth);
    line += fmt::format(" {:3.0f}% |{}{}| {}/{} {}", 100.0 * fraction,
                        std::string(static_cast<std::size_t>(filled), '#'),
                        std::string(static_cast<std::size_t>(kBarWidth - filled), ' '), done, total,
                        unit);
  } else {
    line += fmt::format(" {} {}", done, unit);
  }
  line += "  " + format_rate(rate, unit);
  if (total > 0 && done < total) {
    const double eta = rate > 0 ? static_cast<double>(total - done) / rate : -1.0;
    line += "  ETA " + format_duration(eta);
  } else {
    line += "  elapsed " + format_duration(elapsed_seconds);
  }
  if (!detail.empty()) {
    line += "  ";
    line += detail;
  }
  return line;
}

Progress::Progress(std::string label, std::int64_t total, std::string unit)
    : Progress(std::move(label), total, std::move(unit),
               Hooks{steady_seconds, [](std::string_view line) { console::write_line(line); },
                     console::stderr_is_terminal()}) {}

Progress::Progress(std::string label, std::int64_t total, std::string unit, Hooks hooks)
    : label_(std::move(label)), total_(total), unit_(std::move(unit)), hooks_(std::move(hooks)) {
  start_ = hooks_.now_seconds();
}

Progress::~Progress() {
  try {
    finish();
  } catch (...) {  // a destructor must not throw; the last line is cosmetic
  }
}

void Progress::set_done(std::int64_t done) {
  done_ = done;
  maybe_draw(false);
}

void Progress::set_total(std::int64_t total) {
  total_ = total;
}

void Progress::set_detail(std::string detail) {
  detail_ = std::move(detail);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (console::verbosity() == console::Verbosity::quiet) return;
  const std::string line =
      render_progress(label_, done_, total_, hooks_.now_seconds() - start_, unit_, detail_);
  if (hooks_.terminal) {
    console::set_status_line("");
    console::write_line(line);
  } else {
    hooks_.plain_line(line);
  }
}

void Progress::maybe_draw(bool force) {
  if (finished_ || console::verbosity() == console::Verbosity::quiet) return;
  const double now = hooks_.now_seconds();
  if (hooks_.terminal) {
    if (!force && now - last_draw_ < kTerminalInterval) return;
    last_draw_ = now;
    console::set_status_line(render_progress(label_, done_, total_, now - start_, unit_, detail_));
    return;
  }
  // Plain lines: one per completed tenth of the total, and one a minute while nothing else prints.
  const int decile =
      total_ > 0 ? static_cast<int>(10 * done_ / std::max<std::int64_t>(total_, 1)) : 0;
  const bool new_decile = decile > last_decile_ && done_ < total_;
  if (!force && !new_decile && now - std::max(last_draw_, start_) < kPlainInterval) return;
  last_decile_ = std::max(decile, last_decile_);
  last_draw_ = now;
  hooks_.plain_line(render_progress(label_, done_, total_, now - start_, unit_, detail_));
}

}  // namespace labpose
