// sweeps/<name>/curves.png: every trial's validation error against its training minutes (or
// iterations), from its learning_stats.csv; trials that went on past the first rung in colour and
// named in the legend, the others grey. Not the results table (results.hpp).
#pragma once

#include <filesystem>
#include <functional>

#include "pipeline/sweep/state.hpp"

namespace labpose::pipeline {

/// Draws the curves of `state`'s trials; `train_dir(shuffle)` is a trial's train/ folder. Trials
/// without a measured validation error yet are left out.
void write_sweep_curves(const SweepState& state,
                        const std::function<std::filesystem::path(int shuffle)>& train_dir,
                        const std::filesystem::path& png);

}  // namespace labpose::pipeline
