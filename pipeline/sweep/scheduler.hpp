// Which trial a sweep trains next, and how long: successive halving's rungs for a budget, and the
// asynchronous promotion rule (ASHA): a trial in the best 1/eta of those that finished a rung goes
// on to the next rung as soon as it is known to be there (while the rung has taken fewer than 1/eta
// of them), a new trial starts otherwise, and a trial whose process died resumes first. Grid and
// random sweeps are the case of one rung. Pure functions of the state; not the running of trials
// (sweep.hpp).
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "pipeline/sweep/state.hpp"

namespace labpose::pipeline {

/// The ends of successive halving's rungs for trials of `amount` (minutes or iterations): up to 4
/// rungs, amount / eta^k, as many as `trials` fill (each rung keeps 1/eta of the one before) while
/// the first rung is at least `smallest_first`. Iteration budgets (`whole`) give whole numbers.
std::vector<double> halving_rungs(double amount, int trials, int eta, double smallest_first,
                                  bool whole);
/// The smallest first rung for a budget: a minute (100 iterations), or 1/9 of a shorter trial.
double smallest_first_rung(const TrialBudget& budget);
/// The training a halving sweep of `trials` spends in all (the budget's unit), when every
/// promotion is made: every trial to the first rung, then 1/eta of them to each next one.
double halving_cost(int trials, const std::vector<double>& rungs, int eta);
/// The most trials a halving sweep can start within `total` (the budget's unit); 0 when not even
/// one trial fits.
int halving_trials_within(double total, const TrialBudget& budget, int eta);

struct SweepJob {
  int trial = 0;  // its id
  int rung = 0;   // train it to the end of this rung
};

struct NextStep {
  enum class Kind {
    run,   // train `job`
    wait,  // nothing to start until a running trial finishes its rung
    over,  // every trial finished or failed
  };
  Kind kind = Kind::over;
  SweepJob job;
};

/// The next job of the sweep; `busy(id)` says whether some process trains trial `id` now.
NextStep next_job(const SweepState& state, const std::function<bool(int id)>& busy);

/// A trial's validation error at rung `rung`; +infinity when it has none (failed, not there yet).
double error_at(const TrialRecord& trial, int rung);
/// Trials best first: by the highest rung finished, then the error there, then id.
std::vector<const TrialRecord*> ranked_trials(const SweepState& state);
/// The best trial that finished the last rung; nullopt while none has.
std::optional<int> best_trial(const SweepState& state);

}  // namespace labpose::pipeline
