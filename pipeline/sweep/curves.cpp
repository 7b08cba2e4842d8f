// The validation curves of a sweep, drawn with the plain Figure.
#include "pipeline/sweep/curves.hpp"

#include <fmt/core.h>

#include <cmath>

#include "pipeline/plots/colormap.hpp"
#include "pipeline/plots/figure.hpp"
#include "pipeline/training/learning_stats.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

void write_sweep_curves(const SweepState& state,
                        const std::function<fs::path(int shuffle)>& train_dir,
                        const fs::path& png) {
  const bool by_time = state.budget.by_time();
  Figure figure(900, 560, fmt::format("sweep {}: each trial's validation error (px)", state.name),
                by_time ? "training minutes" : "iterations", "px");
  std::vector<const TrialRecord*> promoted;
  for (const auto& trial : state.trials) {
    if (trial.rung > 0 || trial.target_rung > 0) promoted.push_back(&trial);
  }
  const auto colors = colormap_colors("rainbow", std::max<std::size_t>(promoted.size(), 1));
  const Rgb grey{0.72, 0.72, 0.72};
  // Grey first, so the promoted trials are drawn over them.
  for (const bool highlighted : {false, true}) {
    std::size_t color = 0;
    for (const auto& trial : state.trials) {
      const bool went_on = trial.rung > 0 || trial.target_rung > 0;
      if (went_on != highlighted) continue;
      const fs::path stats = train_dir(trial.shuffle) / "learning_stats.csv";
      std::error_code error;
      if (!fs::exists(stats, error)) continue;
      std::vector<double> x, y;
      for (const auto& row : read_learning_stats(stats)) {
        if (!row.test_error || !std::isfinite(*row.test_error)) continue;
        x.push_back(by_time ? row.seconds / 60.0 : static_cast<double>(row.iteration));
        y.push_back(*row.test_error);
      }
      if (x.empty()) continue;
      const Rgb rgb = highlighted ? colors[color++ % colors.size()] : grey;
      const std::string label = highlighted ? fmt::format("trial {}", trial.id) : std::string();
      figure.add_line(x, y, rgb, label);
      figure.add_points(x, y, rgb, "");
    }
  }
  figure.save(png);
}

}  // namespace labpose::pipeline
