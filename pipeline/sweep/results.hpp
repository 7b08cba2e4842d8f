// What a sweep reports: results.csv (a row per trial: its values, its validation error at each
// rung, minutes, iterations, state), the table printed sorted by validation error, and best.yaml
// (the best trial, its shuffle and values, and its test error once measured). Written after every
// change of the state. Not the curves' plot (curves.hpp).
#pragma once

#include <filesystem>
#include <string>

#include "pipeline/sweep/state.hpp"

namespace labpose::pipeline {

/// A rung's end in words: "1.67 min", "300 iterations".
std::string rung_text(const SweepState& state, int rung);

std::string results_csv(const SweepState& state);
/// The table for the console, best first, with a line for the chosen trial's test error.
std::string results_table(const SweepState& state);
std::string best_yaml(const SweepState& state);

/// Writes results.csv and best.yaml (once a trial finished the last rung) into `folder`.
void write_sweep_results(const SweepState& state, const std::filesystem::path& folder);

}  // namespace labpose::pipeline
