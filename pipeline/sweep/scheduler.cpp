// Successive halving's arithmetic and the choice of the next job.
#include "pipeline/sweep/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace labpose::pipeline {

std::vector<double> halving_rungs(double amount, int trials, int eta, double smallest_first,
                                  bool whole) {
  int halvings = 0;
  double kept = static_cast<double>(trials);
  while (halvings < 3 && kept / eta >= 1.0 &&
         amount / std::pow(eta, halvings + 1) >= smallest_first) {
    ++halvings;
    kept /= eta;
  }
  std::vector<double> rungs;
  for (int k = halvings; k >= 0; --k) {
    double end = amount / std::pow(eta, k);
    if (whole) end = std::max(1.0, std::round(end));
    rungs.push_back(end);
  }
  return rungs;
}

double smallest_first_rung(const TrialBudget& budget) {
  const double usual = budget.by_time() ? 1.0 : 100.0;
  return std::min(usual, budget.amount() / 9.0);
}

double halving_cost(int trials, const std::vector<double>& rungs, int eta) {
  double cost = 0.0, previous = 0.0;
  int count = trials;
  for (const double end : rungs) {
    cost += count * (end - previous);
    previous = end;
    count /= eta;
  }
  return cost;
}

int halving_trials_within(double total, const TrialBudget& budget, int eta) {
  const double smallest = smallest_first_rung(budget);
  int best = 0;
  // The cost grows with the trial count, a step at each new rung: try counts up to the bound
  // that even one rung of the smallest size allows.
  const int most =
      static_cast<int>(std::min(100000.0, std::floor(total / std::max(smallest, 1e-9))));
  for (int trials = 1; trials <= most; ++trials) {
    const auto rungs = halving_rungs(budget.amount(), trials, eta, smallest, !budget.by_time());
    if (halving_cost(trials, rungs, eta) <= total + 1e-9) best = trials;
  }
  return best;
}

double error_at(const TrialRecord& trial, int rung) {
  if (rung < 0 || static_cast<std::size_t>(rung) >= trial.errors.size())
    return std::numeric_limits<double>::infinity();
  return trial.errors[static_cast<std::size_t>(rung)];
}

NextStep next_job(const SweepState& state, const std::function<bool(int id)>& busy) {
  const auto run = [](int trial, int rung) {
    return NextStep{NextStep::Kind::run, SweepJob{trial, rung}};
  };
  // A trial whose process stopped or died mid-rung resumes first.
  for (const auto& trial : state.trials) {
    if (trial.state == TrialState::stopped ||
        (trial.state == TrialState::running && !busy(trial.id))) {
      return run(trial.id, trial.target_rung);
    }
  }
  // Promotions, from the highest rung down: the best 1/eta of those that finished rung k.
  const int top = static_cast<int>(state.rungs.size()) - 1;
  for (int rung = top - 1; rung >= 0; --rung) {
    std::vector<const TrialRecord*> finished;
    for (const auto& trial : state.trials) {
      const bool failed_here = trial.state == TrialState::failed && trial.target_rung == rung;
      if (trial.rung >= rung || failed_here) finished.push_back(&trial);
    }
    std::stable_sort(finished.begin(), finished.end(),
                     [rung](const TrialRecord* a, const TrialRecord* b) {
                       return error_at(*a, rung) < error_at(*b, rung);
                     });
    // At most 1/eta of those that finished go on, counting those promoted earlier (on what was
    // known then): a rung never takes more trials than successive halving gives it.
    const std::size_t quota = finished.size() / static_cast<std::size_t>(state.eta);
    std::size_t promoted = 0;
    for (const TrialRecord* trial : finished) promoted += trial->target_rung > rung ? 1 : 0;
    if (promoted >= quota) continue;
    for (std::size_t i = 0; i < quota; ++i) {
      const TrialRecord& trial = *finished[i];
      if (trial.state == TrialState::done && trial.rung == rung && trial.target_rung == rung &&
          std::isfinite(error_at(trial, rung))) {
        return run(trial.id, rung + 1);
      }
    }
  }
  for (const auto& trial : state.trials) {
    if (trial.state == TrialState::waiting) return run(trial.id, 0);
  }
  for (const auto& trial : state.trials) {
    if (trial.state == TrialState::running) return NextStep{NextStep::Kind::wait, {}};
  }
  return NextStep{NextStep::Kind::over, {}};
}

std::vector<const TrialRecord*> ranked_trials(const SweepState& state) {
  std::vector<const TrialRecord*> trials;
  trials.reserve(state.trials.size());
  for (const auto& trial : state.trials) trials.push_back(&trial);
  std::stable_sort(trials.begin(), trials.end(), [](const TrialRecord* a, const TrialRecord* b) {
    if (a->rung != b->rung) return a->rung > b->rung;
    return error_at(*a, a->rung) < error_at(*b, b->rung);
  });
  return trials;
}

std::optional<int> best_trial(const SweepState& state) {
  const int top = static_cast<int>(state.rungs.size()) - 1;
  const auto ranked = ranked_trials(state);
  if (ranked.empty() || ranked.front()->rung != top ||
      !std::isfinite(error_at(*ranked.front(), top)))
    return std::nullopt;
  return ranked.front()->id;
}

}  // namespace labpose::pipeline
