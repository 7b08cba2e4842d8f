// A sweep's state: sweeps/<name>/state.json in the project, the one record every process of the
// sweep (threads, other `labpose sweep` commands, array tasks on other machines) reads and changes
// under a lock (state.lock beside it), written atomically. Each trial has its own lock
// (locks/trial-<id>.lock) held while a process trains it, so a trial whose process died is seen as
// free and resumed. Not the choice of the next job (scheduler.hpp).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/file_lock.hpp"
#include "pipeline/sweep/space.hpp"
#include "pipeline/sweep/trial_config.hpp"

namespace labpose::pipeline {

enum class TrialState {
  waiting,  // not started
  running,  // a process trains it (if its lock is free, that process died: it resumes)
  stopped,  // interrupted in a rung; resumes from its snapshot
  done,     // finished the rung it was trained to
  failed,   // training failed (message says why); ranks last
};

/// "waiting", "running", ...
const char* trial_state_name(TrialState state);

struct TrialRecord {
  int id = 1;       // from 1
  int shuffle = 1;  // the trial's shuffle number (its model folder)
  TrialParameters parameters;
  TrialState state = TrialState::waiting;
  int rung = -1;               // the highest rung finished; -1: none
  int target_rung = 0;         // the rung it trains (or trained) toward
  std::vector<double> errors;  // validation error (pixels) at the end of each finished rung
  double minutes = 0.0;        // training time so far
  std::int64_t iterations = 0;
  std::string message;  // failed: the error
};

struct SweepState {
  std::string name;
  std::string algorithm;      // grid, random or halving
  int eta = 3;                // halving: 1/eta of a rung's trials go on
  TrialBudget budget;         // each trial's full training
  std::vector<double> rungs;  // ends of the rungs in the budget's unit, ascending; the last: all
  double training_fraction = 0.95;
  int base_shuffle = 1;
  int iteration = 0;
  std::string device;  // train's --device for each trial, or a comma-separated list
  std::uint64_t seed = 0;
  std::string space_file, space_text;
  double validation_fraction = 0.15;
  std::vector<std::string> validation;  // image paths, drawn once from the base's training images
  std::vector<TrialRecord> trials;
  // The chosen trial's test error, measured once when the sweep is over.
  std::optional<int> chosen;
  std::optional<double> test_error;
  std::string test_snapshot;
};

/// The trial with `id`; throws Error when there is none.
TrialRecord& trial_by_id(SweepState& state, int id);
const TrialRecord& trial_by_id(const SweepState& state, int id);

/// The state's JSON text, and back; errors name the file.
std::string sweep_state_text(const SweepState& state);
SweepState parse_sweep_state(const std::string& text, const std::filesystem::path& file);

/// The files of one sweep, and the lock-protected changes of its state.
class SweepStore {
 public:
  explicit SweepStore(std::filesystem::path folder);

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path state_file() const { return folder_ / "state.json"; }
  std::filesystem::path trial_lock_file(int id) const;
  std::filesystem::path trial_log_file(int id) const;
  bool exists() const;

  /// Holds the state's lock while `change` reads and changes the state, then writes it (only if
  /// `change` returns true). Returns the state as written (or read).
  SweepState update(const std::function<bool(SweepState&)>& change) const;
  /// The state as it is now (read under the lock).
  SweepState read() const;
  /// Writes the first state of a new sweep; throws when the sweep exists already.
  void create(const SweepState& state) const;

  /// Whether a process holds the trial's lock now (it is being trained).
  bool trial_busy(int id) const;
  /// Takes the trial's lock if it is free.
  std::optional<FileLock> take_trial(int id) const;

 private:
  std::filesystem::path folder_;
};

}  // namespace labpose::pipeline
