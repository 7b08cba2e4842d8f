// The loader's share of a training run's time, and its number of workers.
#include "pipeline/training/data_wait.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace labpose::pipeline {
namespace {

constexpr double kWorthSaying = 0.05;

}  // namespace

double DataWait::share(double elapsed) const {
  return elapsed > 0 ? std::clamp(waited_ / elapsed, 0.0, 1.0) : 0.0;
}

std::string DataWait::progress_text(double elapsed) const {
  const double part = share(elapsed);
  return part >= kWorthSaying ? fmt::format("  waiting for data {:.0f} %", 100 * part)
                              : std::string();
}

std::string DataWait::advice(double elapsed, int threads, unsigned cores) const {
  const double part = share(elapsed);
  if (part < kWorthSaying) return {};
  const std::string machine =
      cores > 0 ? fmt::format(" of this machine's {} cores", cores) : std::string();
  return fmt::format(
      "the network waited for training batches {:.0f} % of the time ({:.1f} s): the {} loader "
      "threads{} did not keep up; raise loader_threads in pose_cfg.yaml, or use a smaller "
      "crop_size",
      100 * part, waited_, threads, machine);
}

int loader_threads_for(int configured, bool on_gpu, unsigned cores) {
  if (!on_gpu || cores < 2) return configured;
  return std::max(configured, static_cast<int>(std::min(cores - 1, 8U)));
}

}  // namespace labpose::pipeline
