// A sweep's search space, sweep.yaml: pose_cfg.yaml keys (and `lr`), each with a list of choices or
// a range with a scale, read with errors that name sweep.yaml:line; the grid of its choices and
// random draws from it. Not what a value does to a trial's configuration (trial_config.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace labpose::pipeline {

struct SweepParameter {
  enum class Kind { choices, uniform, log_uniform };
  std::string key;
  int line = 0;  // in sweep.yaml, from 1
  Kind kind = Kind::choices;
  std::vector<std::string> choices;  // YAML texts ("0.001", "efficientnet_lite0", "[320, 240]")
  double low = 0.0, high = 0.0;      // a range's ends
  bool whole = false;                // a whole-number key: draws are rounded
};

struct SweepSpace {
  std::filesystem::path file;
  std::string text;                        // the file as read (kept in the sweep's state)
  std::vector<SweepParameter> parameters;  // in the file's order
};

/// One trial's values: (key, YAML text) in the space's order.
using TrialParameters = std::vector<std::pair<std::string, std::string>>;

/// Reads sweep.yaml; errors name file:line and say what the key takes.
SweepSpace read_sweep_space(const std::filesystem::path& file);
/// The same from `text`, with `file` naming the place in messages.
SweepSpace parse_sweep_space(const std::string& text, const std::filesystem::path& file);

/// The place of a parameter in messages: "sweep.yaml:7".
std::string parameter_place(const SweepSpace& space, const SweepParameter& parameter);

/// Whether every parameter is a list of choices (a grid can be made).
bool is_grid(const SweepSpace& space);
/// The most combinations a grid trains (a larger one is sampled by random or halving).
constexpr std::uint64_t kMaxGridTrials = 10000;
/// How many combinations the choices make (saturating at 2^62; a range counts as one).
std::uint64_t grid_size(const SweepSpace& space);
/// Combination `index` (from 0, below grid_size), the last parameter varying fastest.
TrialParameters grid_trial(const SweepSpace& space, std::uint64_t index);
/// Every combination of the choices, in grid_trial's order. Throws UsageError naming the first
/// range, or when there are more than kMaxGridTrials.
std::vector<TrialParameters> grid_trials(const SweepSpace& space);
/// Trial `index` (from 0) drawn from the space with `seed`: uniform over a list, uniform or
/// log-uniform over a range (3 significant digits; whole-number keys rounded). The same seed and
/// index always draw the same trial.
TrialParameters random_trial(const SweepSpace& space, std::uint64_t seed, int index);

/// A commented starting sweep.yaml (labpose sweep --example).
std::string example_space_text();

}  // namespace labpose::pipeline
