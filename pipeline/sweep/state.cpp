// state.json: read and written whole, under state.lock.
#include "pipeline/sweep/state.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kStateVersion = 1;

const std::vector<std::pair<TrialState, const char*>>& state_names() {
  static const std::vector<std::pair<TrialState, const char*>> names = {
      {TrialState::waiting, "waiting"},
      {TrialState::running, "running"},
      {TrialState::stopped, "stopped"},
      {TrialState::done, "done"},
      {TrialState::failed, "failed"}};
  return names;
}

TrialState state_of(const std::string& name) {
  for (const auto& [state, text] : state_names()) {
    if (name == text) return state;
  }
  throw json::other_error::create(501, "unknown trial state " + name, nullptr);
}

json trial_json(const TrialRecord& trial) {
  json parameters = json::array();
  for (const auto& [key, value] : trial.parameters) parameters.push_back({key, value});
  return {{"id", trial.id},
          {"shuffle", trial.shuffle},
          {"parameters", parameters},
          {"state", trial_state_name(trial.state)},
          {"rung", trial.rung},
          {"target_rung", trial.target_rung},
          {"errors", trial.errors},
          {"minutes", trial.minutes},
          {"iterations", trial.iterations},
          {"message", trial.message}};
}

TrialRecord trial_of(const json& item) {
  TrialRecord trial;
  trial.id = item.at("id").get<int>();
  trial.shuffle = item.at("shuffle").get<int>();
  for (const auto& pair : item.at("parameters")) {
    trial.parameters.emplace_back(pair.at(0).get<std::string>(), pair.at(1).get<std::string>());
  }
  trial.state = state_of(item.at("state").get<std::string>());
  trial.rung = item.at("rung").get<int>();
  trial.target_rung = item.at("target_rung").get<int>();
  trial.errors = item.at("errors").get<std::vector<double>>();
  trial.minutes = item.at("minutes").get<double>();
  trial.iterations = item.at("iterations").get<std::int64_t>();
  trial.message = item.at("message").get<std::string>();
  return trial;
}

[[noreturn]] void damaged(const std::string& what) {
  throw json::other_error::create(501, what, nullptr);
}

// What the rest of the sweep relies on, so that a damaged file is an error here and not a crash
// or a trial stuck forever later.
void check_state(const SweepState& state) {
  if (state.rungs.empty() || state.trials.empty() || state.eta < 2)
    damaged("no rungs, no trials or eta below 2");
  if (!(state.budget.minutes > 0) && state.budget.iterations <= 0) damaged("no budget");
  for (std::size_t k = 0; k < state.rungs.size(); ++k) {
    if (!std::isfinite(state.rungs[k]) || state.rungs[k] <= 0 ||
        (k > 0 && state.rungs[k] <= state.rungs[k - 1])) {
      damaged("the rungs are not increasing positive numbers");
    }
  }
  if (state.device.empty()) damaged("no device");
  const int top = static_cast<int>(state.rungs.size()) - 1;
  std::set<int> ids;
  for (const auto& trial : state.trials) {
    const std::string which = fmt::format("trial {}: ", trial.id);
    if (trial.id < 1 || !ids.insert(trial.id).second) damaged(which + "a missing or repeated id");
    if (trial.rung < -1 || trial.rung > top) damaged(which + "rung out of range");
    if (trial.target_rung < 0 || trial.target_rung > top)
      damaged(which + "target_rung out of range");
    if (trial.errors.size() != static_cast<std::size_t>(trial.rung + 1))
      damaged(which + "not one error per finished rung");
    for (const double error : trial.errors) {
      if (!std::isfinite(error) || error < 0) damaged(which + "an error that is not a distance");
    }
  }
  if (state.chosen && std::find_if(state.trials.begin(), state.trials.end(), [&](const auto& t) {
                        return t.id == *state.chosen;
                      }) == state.trials.end()) {
    damaged("the chosen trial does not exist");
  }
}

}  // namespace

const char* trial_state_name(TrialState state) {
  for (const auto& [value, text] : state_names()) {
    if (value == state) return text;
  }
  return "unknown";
}

const TrialRecord& trial_by_id(const SweepState& state, int id) {
  for (const auto& trial : state.trials) {
    if (trial.id == id) return trial;
  }
  throw Error(fmt::format("sweep {} has no trial {}", state.name, id));
}

TrialRecord& trial_by_id(SweepState& state, int id) {
  return const_cast<TrialRecord&>(trial_by_id(std::as_const(state), id));
}

std::string sweep_state_text(const SweepState& state) {
  json trials = json::array();
  for (const auto& trial : state.trials) trials.push_back(trial_json(trial));
  json root = {{"version", kStateVersion},
               {"name", state.name},
               {"algorithm", state.algorithm},
               {"eta", state.eta},
               {"minutes_per_trial", state.budget.minutes},
               {"iterations_per_trial", state.budget.iterations},
               {"rungs", state.rungs},
               {"training_fraction", state.training_fraction},
               {"base_shuffle", state.base_shuffle},
               {"iteration", state.iteration},
               {"device", state.device},
               {"seed", state.seed},
               {"space_file", state.space_file},
               {"space", state.space_text},
               {"validation_fraction", state.validation_fraction},
               {"validation", state.validation},
               {"trials", trials}};
  if (state.chosen) root["chosen"] = *state.chosen;
  if (state.test_error) root["test_error"] = *state.test_error;
  if (!state.test_snapshot.empty()) root["test_snapshot"] = state.test_snapshot;
  return root.dump(1) + "\n";
}

SweepState parse_sweep_state(const std::string& text, const fs::path& file) {
  try {
    const json root = json::parse(text);
    if (root.at("version").get<int>() != kStateVersion) {
      throw Error(fmt::format("{} is a sweep state of version {}; this labpose reads version {}",
                              file.string(), root.at("version").dump(), kStateVersion),
                  "continue the sweep with the labpose that started it");
    }
    SweepState state;
    state.name = root.at("name").get<std::string>();
    state.algorithm = root.at("algorithm").get<std::string>();
    state.eta = root.at("eta").get<int>();
    state.budget.minutes = root.at("minutes_per_trial").get<double>();
    state.budget.iterations = root.at("iterations_per_trial").get<std::int64_t>();
    state.rungs = root.at("rungs").get<std::vector<double>>();
    state.training_fraction = root.at("training_fraction").get<double>();
    state.base_shuffle = root.at("base_shuffle").get<int>();
    state.iteration = root.at("iteration").get<int>();
    state.device = root.at("device").get<std::string>();
    state.seed = root.at("seed").get<std::uint64_t>();
    state.space_file = root.at("space_file").get<std::string>();
    state.space_text = root.at("space").get<std::string>();
    state.validation_fraction = root.at("validation_fraction").get<double>();
    state.validation = root.at("validation").get<std::vector<std::string>>();
    for (const auto& item : root.at("trials")) state.trials.push_back(trial_of(item));
    if (root.contains("chosen")) state.chosen = root.at("chosen").get<int>();
    if (root.contains("test_error")) state.test_error = root.at("test_error").get<double>();
    if (root.contains("test_snapshot"))
      state.test_snapshot = root.at("test_snapshot").get<std::string>();
    check_state(state);
    return state;
  } catch (const json::exception& error) {
    throw Error(fmt::format("{} is not a labpose sweep state: {}", file.string(), error.what()),
                "it was damaged; restore it from a backup, or start the sweep again under "
                "another --name");
  }
}

SweepStore::SweepStore(fs::path folder) : folder_(std::move(folder)) {}

fs::path SweepStore::trial_lock_file(int id) const {
  return folder_ / "locks" / fmt::format("trial-{:03d}.lock", id);
}

fs::path SweepStore::trial_log_file(int id) const {
  return folder_ / "logs" / fmt::format("trial-{:03d}.log", id);
}

bool SweepStore::exists() const {
  std::error_code error;
  return fs::exists(state_file(), error);
}

SweepState SweepStore::update(const std::function<bool(SweepState&)>& change) const {
  const FileLock lock = FileLock::wait_for(folder_ / "state.lock");
  SweepState state = parse_sweep_state(read_file(state_file()), state_file());
  if (change(state)) write_file_atomically(state_file(), sweep_state_text(state));
  return state;
}

SweepState SweepStore::read() const {
  return update([](SweepState&) { return false; });
}

void SweepStore::create(const SweepState& state) const {
  create_folder(folder_ / "locks");
  create_folder(folder_ / "logs");
  const FileLock lock = FileLock::wait_for(folder_ / "state.lock");
  if (exists()) {
    throw Error(fmt::format("the sweep {} exists already ({})", state.name, state_file().string()),
                "continue it with the same command, or start another with a new --name");
  }
  write_file_atomically(state_file(), sweep_state_text(state));
}

bool SweepStore::trial_busy(int id) const {
  return !take_trial(id).has_value();
}

std::optional<FileLock> SweepStore::take_trial(int id) const {
  return FileLock::try_take(trial_lock_file(id));
}

}  // namespace labpose::pipeline
