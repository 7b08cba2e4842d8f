// How much of a training run's time its steps waited for the loader's next batch (the device
// outrunning the augmentation workers, typically on a GPU), for the progress line and the advice at
// the end; and how many workers a run starts. Not the loader itself (loader.hpp).
#pragma once

#include <string>

namespace labpose::pipeline {

class DataWait {
 public:
  /// One wait for the loader's next batch, in seconds.
  void add(double seconds) { waited_ += seconds; }
  double waited() const { return waited_; }
  /// The share (0 to 1) of `elapsed` seconds of training spent waiting.
  double share(double elapsed) const;
  /// "  waiting for data 23 %" for the progress line from 5 % on, else "".
  std::string progress_text(double elapsed) const;
  /// The end of the run's advice from 5 % on (naming loader_threads, the workers the run had and
  /// the machine's cores), else "".
  std::string advice(double elapsed, int threads, unsigned cores) const;

 private:
  double waited_ = 0.0;
};

/// The loader's workers: pose_cfg.yaml's loader_threads, and on a GPU at least one per core but one
/// (up to 8), since there the CPU only feeds the device. `cores` 0 means unknown.
int loader_threads_for(int configured, bool on_gpu, unsigned cores);

}  // namespace labpose::pipeline
