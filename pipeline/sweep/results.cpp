// results.csv, the console table and best.yaml from the sweep's state.
#include "pipeline/sweep/results.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "core/atomic_file.hpp"
#include "core/text_table.hpp"
#include "pipeline/sweep/scheduler.hpp"
#include "projects/yaml_text.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

// The keys of the trials' values, in the space's order.
std::vector<std::string> parameter_keys(const SweepState& state) {
  std::vector<std::string> keys;
  for (const auto& trial : state.trials) {
    for (const auto& [key, value] : trial.parameters) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
  }
  return keys;
}

std::string value_of(const TrialRecord& trial, const std::string& key) {
  for (const auto& [name, value] : trial.parameters) {
    if (name == key) return value;
  }
  return {};
}

// A CSV cell: quoted when it holds a comma or a quote.
std::string cell(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string error_text(const TrialRecord& trial, int rung) {
  const double error = error_at(trial, rung);
  return std::isfinite(error) ? fmt::format("{:.2f}", error) : std::string();
}

}  // namespace

std::string rung_text(const SweepState& state, int rung) {
  const double end = state.rungs.at(static_cast<std::size_t>(rung));
  if (state.budget.by_time()) return fmt::format("{:.3g} min", end);
  return fmt::format("{} iterations", static_cast<long long>(end));
}

std::string results_csv(const SweepState& state) {
  const auto keys = parameter_keys(state);
  std::string text = "trial,shuffle";
  for (const auto& key : keys) text += "," + cell(key);
  for (std::size_t rung = 0; rung < state.rungs.size(); ++rung) {
    text += state.budget.by_time() ? fmt::format(",validation_error_at_{:g}_min", state.rungs[rung])
                                   : fmt::format(",validation_error_at_{}_iterations",
                                                 static_cast<long long>(state.rungs[rung]));
  }
  text += ",minutes,iterations,state,test_error\n";
  for (const auto& trial : state.trials) {
    text += fmt::format("{},{}", trial.id, trial.shuffle);
    for (const auto& key : keys) text += "," + cell(value_of(trial, key));
    for (std::size_t rung = 0; rung < state.rungs.size(); ++rung)
      text += "," + error_text(trial, static_cast<int>(rung));
    const bool tested = state.chosen == trial.id && state.test_error;
    text += fmt::format(",{:.2f},{},{},{}\n", trial.minutes, trial.iterations,
                        trial_state_name(trial.state),
                        tested ? fmt::format("{:.2f}", *state.test_error) : std::string());
  }
  return text;
}

std::string results_table(const SweepState& state) {
  const auto keys = parameter_keys(state);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"trial"};
  header.insert(header.end(), keys.begin(), keys.end());
  for (std::size_t rung = 0; rung < state.rungs.size(); ++rung)
    header.push_back("val px @" + rung_text(state, static_cast<int>(rung)));
  header.insert(header.end(), {"minutes", "iterations", "state"});
  rows.push_back(header);
  for (const TrialRecord* trial : ranked_trials(state)) {
    std::vector<std::string> row = {std::to_string(trial->id)};
    for (const auto& key : keys) row.push_back(value_of(*trial, key));
    for (std::size_t rung = 0; rung < state.rungs.size(); ++rung)
      row.push_back(error_text(*trial, static_cast<int>(rung)));
    row.push_back(fmt::format("{:.1f}", trial->minutes));
    row.push_back(std::to_string(trial->iterations));
    row.push_back(trial_state_name(trial->state));
    rows.push_back(row);
  }
  std::string text = text_table(rows);
  for (const auto& trial : state.trials) {
    if (trial.state == TrialState::failed)
      text += fmt::format("trial {} failed: {}\n", trial.id, trial.message);
  }
  if (state.chosen) {
    text += fmt::format("chosen: trial {} (shuffle {}); ", *state.chosen,
                        trial_by_id(state, *state.chosen).shuffle);
    text += state.test_error ? fmt::format("its test error: {:.2f} px ({})\n", *state.test_error,
                                           state.test_snapshot)
                             : std::string("no test images to measure it on\n");
  }
  return text;
}

std::string best_yaml(const SweepState& state) {
  const auto best = best_trial(state);
  if (!best) return {};
  const TrialRecord* trial = &trial_by_id(state, *best);
  namespace yaml = projects::yaml_text;
  const int top = static_cast<int>(state.rungs.size()) - 1;
  std::string text = fmt::format(
      "# The best trial of sweep {} by validation error (labpose sweep --promote makes it the\n"
      "# project's model). Its values apply to the base shuffle's train/pose_cfg.yaml.\n",
      state.name);
  text += fmt::format("sweep: {}\ntrial: {}\nshuffle: {}\ntraining_fraction: {}\n",
                      yaml::quote_string(state.name), trial->id, trial->shuffle,
                      yaml::float_text(state.training_fraction));
  text += "parameters:\n";
  for (const auto& [key, value] : trial->parameters) text += fmt::format("  {}: {}\n", key, value);
  text += fmt::format("validation_error: {:.3f}\n", error_at(*trial, top));
  text += fmt::format("minutes: {:.2f}\niterations: {}\n", trial->minutes, trial->iterations);
  if (state.chosen == trial->id && state.test_error) {
    text += fmt::format("test_error: {:.3f}\ntest_snapshot: {}\n", *state.test_error,
                        yaml::quote_string(state.test_snapshot));
  } else {
    text += "test_error:\n";
  }
  return text;
}

void write_sweep_results(const SweepState& state, const fs::path& folder) {
  write_file_atomically(folder / "results.csv", results_csv(state));
  const std::string best = best_yaml(state);
  if (!best.empty()) write_file_atomically(folder / "best.yaml", best);
}

}  // namespace labpose::pipeline
