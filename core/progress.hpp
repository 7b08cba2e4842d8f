// Progress bars with rate and ETA for anything longer than a few seconds. On a terminal the bar
// redraws in place (at most 10 times a second); elsewhere (CI logs, nohup, Slurm) it prints a plain
// line at every 10 % and at least once a minute. Nothing is printed with --quiet.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace labpose {

/// "0:07", "12:34", "1:02:03"; "?" for negative or non-finite seconds.
std::string format_duration(double seconds);

/// One progress line: `label  45% |#####     | 123/456 frames  12.3 frames/s  ETA 0:32  detail`.
/// total <= 0 means unknown (no percentage, bar or ETA).
std::string render_progress(std::string_view label, std::int64_t done, std::int64_t total,
                            double elapsed_seconds, std::string_view unit, std::string_view detail);

class Progress {
 public:
  /// Hooks for tests: a clock in seconds and where plain lines go (default: steady clock, stderr).
  struct Hooks {
    std::function<double()> now_seconds;
    std::function<void(std::string_view)> plain_line;
    bool terminal = false;
  };

  Progress(std::string label, std::int64_t total, std::string unit = "items");
  Progress(std::string label, std::int64_t total, std::string unit, Hooks hooks);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void advance(std::int64_t count = 1) { set_done(done_ + count); }
  void set_done(std::int64_t done);
  void set_total(std::int64_t total);
  /// Extra text after the ETA, e.g. "loss 0.0123".
  void set_detail(std::string detail);
  /// Prints the final line (done/total, elapsed time, mean rate); called by the destructor too.
  void finish();

  std::int64_t done() const { return done_; }

 private:
  void maybe_draw(bool force);

  std::string label_;
  std::int64_t total_;
  std::string unit_;
  Hooks hooks_;
  std::string detail_;
  std::int64_t done_ = 0;
  double start_ = 0;
  double last_draw_ = -1e30;
  int last_decile_ = 0;
  bool finished_ = false;
};

}  // namespace labpose
