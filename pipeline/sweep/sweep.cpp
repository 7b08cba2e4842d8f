// The sweep: planning (algorithm, budget, rungs, trials), creating or checking its files, the
// workers that claim jobs and train them in child processes, and the test error at the end.
#include "pipeline/sweep/sweep.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/console.hpp"
#include "core/error.hpp"
#include "core/file_lock.hpp"
#include "core/interrupt.hpp"
#include "devices/devices.hpp"
#include "devices/precision_speed.hpp"
#include "nets/random.hpp"
#include "pipeline/dataset/create_dataset.hpp"
#include "pipeline/evaluation/evaluate.hpp"
#include "pipeline/sweep/curves.hpp"
#include "pipeline/sweep/results.hpp"
#include "pipeline/sweep/scheduler.hpp"
#include "pipeline/sweep/space.hpp"
#include "pipeline/sweep/trial_config.hpp"
#include "pipeline/sweep/trial_process.hpp"
#include "pipeline/sweep/trials.hpp"
#include "pipeline/training/learning_stats.hpp"
#include "pipeline/training/snapshot.hpp"
#include "pipeline/weights/weight_cache.hpp"
#include "projects/layout.hpp"

namespace labpose::pipeline {
namespace fs = std::filesystem;

namespace {

constexpr double kDefaultMinutesPerTrial = 15.0;
constexpr double kDefaultValidationFraction = 0.15;
constexpr int kEta = 3;
constexpr std::size_t kGridByDefault = 8;  // a grid of more trials is halved by default

// ---- planning ---------------------------------------------------------------------------------

struct Plan {
  std::string algorithm;
  TrialBudget budget;
  std::vector<double> rungs;
  std::vector<TrialParameters> trials;
};

// The budget of each trial from the options (budget_minutes spread over `trials` for a grid).
TrialBudget trial_budget(const SweepOptions& options) {
  TrialBudget budget;
  if (options.iterations_per_trial) {
    budget.iterations = *options.iterations_per_trial;
  } else {
    budget.minutes = options.minutes_per_trial.value_or(kDefaultMinutesPerTrial);
  }
  return budget;
}

void check_budget_options(const SweepOptions& options) {
  if (options.iterations_per_trial && (options.minutes_per_trial || options.budget_minutes)) {
    throw UsageError(
        "--iterations-per-trial sets each trial's budget in iterations; "
        "--minutes-per-trial and --budget-minutes set it in minutes",
        "give the budget one way");
  }
  if (options.trials && options.budget_minutes) {
    throw UsageError("--trials and --budget-minutes both set how many trials run",
                     "give one: the number of trials, or the total minutes to spread over them");
  }
}

// `count` trials from a space of lists: combinations in a seeded order, each once (all of them
// when there are fewer).
std::vector<TrialParameters> grid_sample(const SweepSpace& space, std::size_t count,
                                         std::uint64_t seed) {
  const std::uint64_t size = grid_size(space);
  nets::Random random(seed * 0x2545F4914F6CDD1DULL + 7);
  std::vector<std::uint64_t> chosen;
  if (size <= 4 * static_cast<std::uint64_t>(count) + 1000) {
    // A seeded shuffle of every index.
    chosen.resize(static_cast<std::size_t>(size));
    for (std::size_t i = 0; i < chosen.size(); ++i) chosen[i] = i;
    for (std::size_t i = chosen.size(); i-- > 1;) {
      std::swap(chosen[i], chosen[static_cast<std::size_t>(random.next() % (i + 1))]);
    }
    chosen.resize(std::min<std::size_t>(count, chosen.size()));
  } else {
    // Far more combinations than trials: distinct indices drawn one by one.
    std::set<std::uint64_t> seen;
    while (chosen.size() < count) {
      const std::uint64_t index = random.next() % size;
      if (seen.insert(index).second) chosen.push_back(index);
    }
  }
  std::vector<TrialParameters> trials;
  trials.reserve(chosen.size());
  for (const std::uint64_t index : chosen) trials.push_back(grid_trial(space, index));
  return trials;
}

Plan plan_sweep(const SweepSpace& space, const SweepOptions& options, std::uint64_t seed) {
  check_budget_options(options);
  Plan plan;
  const bool lists = is_grid(space);
  plan.algorithm = options.algorithm.value_or(
      lists && grid_size(space) <= kGridByDefault && !options.trials ? "grid" : "halving");
  if (plan.algorithm == "grid") {
    if (options.trials) {
      throw UsageError(fmt::format("a grid runs every combination of {} ({}); --trials does not "
                                   "apply",
                                   space.file.string(), grid_size(space)),
                       "drop --trials, or draw that many with --algo random or --algo halving");
    }
    plan.trials = grid_trials(space);
    if (options.budget_minutes && options.minutes_per_trial) {
      throw UsageError("--budget-minutes and --minutes-per-trial both set a grid's trial length",
                       "give one");
    }
    plan.budget = trial_budget(options);
    if (options.budget_minutes)
      plan.budget.minutes = *options.budget_minutes / static_cast<double>(plan.trials.size());
    plan.rungs = {plan.budget.amount()};
    return plan;
  }
  plan.budget = trial_budget(options);
  int count = 0;
  if (options.trials) {
    count = *options.trials;
  } else if (options.budget_minutes) {
    count =
        plan.algorithm == "halving"
            ? halving_trials_within(*options.budget_minutes, plan.budget, kEta)
            : static_cast<int>(std::floor(*options.budget_minutes / plan.budget.minutes + 1e-9));
    if (count < 1) {
      throw UsageError(fmt::format("--budget-minutes {:g} does not hold one trial of {:g} minutes",
                                   *options.budget_minutes, plan.budget.minutes),
                       "raise --budget-minutes or lower --minutes-per-trial");
    }
  } else {
    throw UsageError(fmt::format("say how many trials the {} sweep runs", plan.algorithm),
                     "--trials N, or --budget-minutes M (the training minutes of all trials "
                     "together)");
  }
  if (lists) {
    plan.trials = grid_sample(space, static_cast<std::size_t>(count), seed);
    if (plan.trials.size() < static_cast<std::size_t>(count)) {
      console::info("{} has {} combinations: the sweep tries each once", space.file.string(),
                    plan.trials.size());
    }
  } else {
    for (int index = 0; index < count; ++index)
      plan.trials.push_back(random_trial(space, seed, index));
  }
  const int trials = static_cast<int>(plan.trials.size());
  plan.rungs = plan.algorithm == "halving"
                   ? halving_rungs(plan.budget.amount(), trials, kEta,
                                   smallest_first_rung(plan.budget), !plan.budget.by_time())
                   : std::vector<double>{plan.budget.amount()};
  if (plan.algorithm == "halving" && plan.rungs.size() == 1) {
    console::warn(
        "{} trials are too few to halve (at least {} are needed): every trial trains "
        "to the end",
        trials, kEta);
  }
  return plan;
}

// ---- the sweep's files ------------------------------------------------------------------------

std::string budget_text(const TrialBudget& budget) {
  return budget.by_time() ? fmt::format("{:g} minutes", budget.minutes)
                          : fmt::format("{} iterations", budget.iterations);
}

ImageNetWeights imagenet_lookup(const SweepOptions& options) {
  return [cache = options.weights_cache](const std::string& net) -> std::optional<std::string> {
    if (!cache) return std::nullopt;
    const auto found = find_cached_weights(*cache, net);
    if (!found || !found->problem.empty()) return std::nullopt;
    return fs::absolute(found->file).lexically_normal().string();
  };
}

std::vector<std::string> device_list(const std::string& devices) {
  std::vector<std::string> list;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = devices.find(',', start);
    list.push_back(devices.substr(start, comma - start));
    if (comma == std::string::npos) return list;
    start = comma + 1;
  }
}

void check_devices(const std::string& devices) {
  static const std::regex device(R"(auto|cpu|ref|cuda(:[0-9]+)?)");
  for (const std::string& one : device_list(devices)) {
    if (!std::regex_match(one, device)) {
      throw UsageError(fmt::format("--devices {}: '{}' is not a device", devices, one),
                       "give cpu, auto, cuda or cuda:N, or a list such as cuda:0,cuda:1");
    }
  }
}

SweepState new_state(const projects::ProjectConfig& config, const SweepOptions& options,
                     int base_shuffle, double fraction) {
  const std::uint64_t seed = options.seed.value_or(0);
  const SweepBase base = read_sweep_base(config, base_shuffle, fraction);
  const SweepSpace space = read_sweep_space(*options.space);
  check_space_values(base.pose, space);
  const Plan plan = plan_sweep(space, options, seed);
  const ImageNetWeights imagenet = imagenet_lookup(options);
  const int first = largest_shuffle_number(config) + 1;
  std::vector<TrialShuffle> shuffles;
  SweepState state;
  for (std::size_t i = 0; i < plan.trials.size(); ++i) {
    TrialShuffle shuffle;
    shuffle.shuffle = first + static_cast<int>(i);
    shuffle.pose = trial_pose_config(base.pose, plan.trials[i], space, imagenet, plan.budget);
    // Trials are compared at their rungs' ends: no early stop, and always an error there.
    shuffle.pose.early_stop_patience = 0;
    if (shuffle.pose.evaluate_iters == 0) shuffle.pose.evaluate_iters = 500;
    shuffles.push_back(std::move(shuffle));
    TrialRecord trial;
    trial.id = static_cast<int>(i) + 1;
    trial.shuffle = first + static_cast<int>(i);
    trial.parameters = plan.trials[i];
    state.trials.push_back(std::move(trial));
  }
  std::set<std::string> from_scratch;
  const bool weights_searched =
      std::any_of(space.parameters.begin(), space.parameters.end(),
                  [](const SweepParameter& parameter) { return parameter.key == "init_weights"; });
  for (const auto& shuffle : shuffles) {
    if (!weights_searched && !base.pose.init_weights.empty() && shuffle.pose.init_weights.empty())
      from_scratch.insert(shuffle.pose.net_type);
  }
  for (const auto& net : from_scratch) {
    console::info(
        "trials of {} train from scratch: the weights cache has no ImageNet weights of it", net);
  }
  state.name = options.name;
  state.algorithm = plan.algorithm;
  state.eta = kEta;
  state.budget = plan.budget;
  state.rungs = plan.rungs;
  state.training_fraction = fraction;
  state.base_shuffle = base_shuffle;
  state.iteration = config.values().iteration;
  state.device = options.devices.value_or("auto");
  state.seed = seed;
  state.space_file = fs::absolute(*options.space).lexically_normal().string();
  state.space_text = space.text;
  state.validation_fraction = options.validation_fraction.value_or(kDefaultValidationFraction);
  state.validation = draw_validation_images(base.split, state.validation_fraction, seed);
  write_trial_shuffles(config, base, state.validation, seed, std::move(shuffles));
  console::info(
      "sweep {}: {} over {} trial{} (shuffles {} to {}) of up to {} each{}; chosen on {} "
      "validation images of shuffle {}'s {} training images, never its {} test image{}",
      state.name, state.algorithm, state.trials.size(), state.trials.size() == 1 ? "" : "s", first,
      first + static_cast<int>(state.trials.size()) - 1, budget_text(state.budget),
      state.rungs.size() > 1
          ? fmt::format(", rungs at {}",
                        [&] {
                          std::vector<std::string> ends;
                          for (std::size_t k = 0; k < state.rungs.size(); ++k)
                            ends.push_back(rung_text(state, static_cast<int>(k)));
                          return fmt::format("{}", fmt::join(ends, ", "));
                        }())
          : std::string(),
      state.validation.size(), base_shuffle, base.split.train.size(), base.split.test.size(),
      base.split.test.size() == 1 ? "" : "s");
  return state;
}

// The options given that differ from the existing sweep's.
void check_same_sweep(const SweepState& state, const SweepOptions& options) {
  std::vector<std::string> differ;
  if (options.shuffle && *options.shuffle != state.base_shuffle) {
    differ.push_back(
        fmt::format("--shuffle {} (the sweep's: {})", *options.shuffle, state.base_shuffle));
  }
  if (options.training_fraction && *options.training_fraction != state.training_fraction) {
    differ.push_back(fmt::format("--training-fraction {:g} (the sweep's: {:g})",
                                 *options.training_fraction, state.training_fraction));
  }
  const bool planned = options.space || options.algorithm || options.trials ||
                       options.minutes_per_trial || options.iterations_per_trial ||
                       options.budget_minutes || options.seed;
  if (planned) {
    const SweepSpace space = options.space ? read_sweep_space(*options.space)
                                           : parse_sweep_space(state.space_text, state.space_file);
    if (space.text != state.space_text)
      differ.push_back(fmt::format("{} has changed since the sweep started", space.file.string()));
    SweepOptions planning = options;
    if (!options.seed) planning.seed = state.seed;
    if (!options.algorithm) planning.algorithm = state.algorithm;
    if (!options.minutes_per_trial && !options.iterations_per_trial && !options.budget_minutes) {
      if (state.budget.by_time()) {
        planning.minutes_per_trial = state.budget.minutes;
      } else {
        planning.iterations_per_trial = state.budget.iterations;
      }
    }
    if (!options.trials && !options.budget_minutes && state.algorithm != "grid")
      planning.trials = static_cast<int>(state.trials.size());
    if (differ.empty()) {
      const Plan plan = plan_sweep(space, planning, *planning.seed);
      std::vector<TrialParameters> trials;
      for (const auto& trial : state.trials) trials.push_back(trial.parameters);
      if (plan.algorithm != state.algorithm || plan.rungs != state.rungs || plan.trials != trials ||
          plan.budget.minutes != state.budget.minutes ||
          plan.budget.iterations != state.budget.iterations) {
        differ.push_back(fmt::format("the options plan another sweep ({}, {} trials of {})",
                                     plan.algorithm, plan.trials.size(), budget_text(plan.budget)));
      }
    }
  }
  if (differ.empty()) return;
  throw UsageError(
      fmt::format("sweep {} was started otherwise ({} trials of {}, {}): {}", state.name,
                  state.trials.size(), budget_text(state.budget), state.algorithm,
                  fmt::join(differ, "; ")),
      fmt::format("continue it with: labpose sweep <config.yaml> --name {} (its own settings), or "
                  "start another sweep with a new --name",
                  state.name));
}

// ---- running ----------------------------------------------------------------------------------

// labpose-models/.../<Task><date>-trainset<P>shuffle<S>/train of a trial.
fs::path trial_train_dir(const projects::ProjectConfig& config, double fraction, int shuffle) {
  const auto& values = config.values();
  return projects::model_train_dir(
      projects::ProjectLayout(config.project_dir())
          .model_dir(values.iteration, values.task, values.date, fraction, shuffle));
}

// A job this process holds: the trial (as claimed) and its lock.
struct Claim {
  SweepJob job;
  TrialRecord trial;
  FileLock lock;
};

// What a trial's learning_stats.csv says about where it stands.
struct TrialProgress {
  std::int64_t iterations = 0;
  double minutes = 0.0;
  std::optional<double> error;  // the last row's validation error
};

TrialProgress progress_of(const fs::path& train_dir) {
  TrialProgress progress;
  const fs::path file = train_dir / "learning_stats.csv";
  std::error_code error;
  if (!fs::exists(file, error)) return progress;
  const auto rows = read_learning_stats(file);
  if (rows.empty()) return progress;
  progress.iterations = rows.back().iteration;
  progress.minutes = rows.back().seconds / 60.0;
  progress.error = rows.back().test_error;
  return progress;
}

class SweepRunner {
 public:
  SweepRunner(const projects::ProjectConfig& config, const SweepOptions& options,
              const SweepStore& store, const SweepState& state)
      : config_(config),
        options_(options),
        store_(store),
        devices_(device_list(options.devices.value_or(state.device))),
        fraction_(state.training_fraction),
        top_(static_cast<int>(state.rungs.size()) - 1) {
    const int workers = std::max(1, options.parallel);
    int cpu_workers = 0;
    for (int worker = 0; worker < workers; ++worker) {
      const std::string& device = device_of(worker);
      if (!devices::device_kind(device).gpu) ++cpu_workers;
    }
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    if (cpu_workers > 1) cpu_threads_ = std::max(1, static_cast<int>(cores) / cpu_workers);
  }

  bool run() {
    const int workers = std::max(1, options_.parallel);
    std::vector<std::thread> threads;
    std::vector<std::exception_ptr> failures(static_cast<std::size_t>(workers));
    for (int worker = 0; worker < workers; ++worker) {
      threads.emplace_back([this, worker, &failures] {
        try {
          work(worker);
        } catch (...) {
          failures[static_cast<std::size_t>(worker)] = std::current_exception();
          request_interrupt();  // the other workers stop their trials too (they resume later)
        }
      });
    }
    for (auto& thread : threads) thread.join();
    for (const auto& failure : failures) {
      if (failure) std::rethrow_exception(failure);
    }
    return !interrupt_requested();
  }

 private:
  const std::string& device_of(int worker) const {
    return devices_[static_cast<std::size_t>(worker) % devices_.size()];
  }

  void work(int worker) {
    while (!interrupt_requested()) {
      NextStep::Kind kind = NextStep::Kind::over;
      std::optional<Claim> claim = claim_job(kind);
      if (claim) {
        train(*claim, device_of(worker));
        continue;
      }
      if (kind == NextStep::Kind::over) return;
      wait_a_moment();  // others train the trials the next job depends on
    }
  }

  static void wait_a_moment() {
    for (int tick = 0; tick < 10 && !interrupt_requested(); ++tick)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // The next job, marked running in the state with its trial's lock held; nullopt with `kind`
  // wait or over when there is none.
  std::optional<Claim> claim_job(NextStep::Kind& kind) {
    std::optional<Claim> claim;
    store_.update([&](SweepState& state) {
      const NextStep step = next_job(state, [&](int id) { return store_.trial_busy(id); });
      kind = step.kind;
      if (step.kind != NextStep::Kind::run) return false;
      std::optional<FileLock> lock = store_.take_trial(step.job.trial);
      if (!lock) {  // taken between the check and now by a process that did not lock the state
        kind = NextStep::Kind::wait;
        return false;
      }
      TrialRecord& trial = trial_by_id(state, step.job.trial);
      trial.state = TrialState::running;
      trial.target_rung = step.job.rung;
      claim.emplace(Claim{step.job, trial, std::move(*lock)});
      return true;
    });
    return claim;
  }

  fs::path train_dir(const TrialRecord& trial) const {
    return trial_train_dir(config_, fraction_, trial.shuffle);
  }

  // The command that trains `claim`'s trial to the end of its rung.
  TrialCommand command_for(const Claim& claim, const SweepState& state, const fs::path& dir,
                           const std::string& device) const {
    bool resume = false;
    for (const auto& snapshot : list_snapshots(dir)) resume = resume || !snapshot.best;
    TrialCommand command;
    command.executable = options_.executable;
    command.arguments = {"train",
                         config_.file().string(),
                         "--shuffle",
                         std::to_string(claim.trial.shuffle),
                         "--training-fraction",
                         fmt::format("{}", state.training_fraction),
                         "--device",
                         device};
    const double end = state.rungs[static_cast<std::size_t>(claim.job.rung)];
    const bool last = claim.job.rung == top_;
    if (resume) command.arguments.emplace_back("--resume");
    if (state.budget.by_time()) {
      if (!resume) {
        command.arguments.insert(command.arguments.end(),
                                 {"--max-minutes", fmt::format("{}", state.budget.minutes)});
      }
      if (!last)
        command.arguments.insert(command.arguments.end(),
                                 {"--stop-at-minutes", fmt::format("{}", end)});
    } else if (!last) {
      command.arguments.insert(
          command.arguments.end(),
          {"--stop-at-iteration", std::to_string(static_cast<long long>(end))});
    }
    if (cpu_threads_ > 0 && !devices::device_kind(device).gpu)
      command.environment.emplace_back("OMP_NUM_THREADS", std::to_string(cpu_threads_));
    if (trains_in_auto_on_the_cpu(dir, device))
      command.arguments.insert(command.arguments.end(), {"--precision", cpu_precision()});
    command.log_file = store_.trial_log_file(claim.trial.id);
    command.held_descriptor = claim.lock.descriptor();
    return command;
  }

  // Trials on the CPU are compared in one precision. `auto` measures the CPU's bf16 units at each
  // train's start, and two trials could measure differently (bf16 only a little faster, cores
  // shared), so this process measures it once and gives it to each trial it trains there in auto.
  bool trains_in_auto_on_the_cpu(const fs::path& dir, const std::string& device) const {
    if (devices::device_kind(device).name != "cpu") return false;
    try {
      return read_pose_config(dir / "pose_cfg.yaml").precision == "auto";
    } catch (const Error&) {
      return false;  // train says what is wrong with the file
    }
  }

  std::string cpu_precision() const {
    std::call_once(cpu_precision_once_, [this] {
      cpu_precision_ = nets::precision_name(devices::automatic_cpu_precision());
      console::info(
          "precision auto is {} on this CPU: the trials this process trains on it take it (set "
          "precision in the base shuffle's pose_cfg.yaml to choose)",
          cpu_precision_);
    });
    return cpu_precision_;
  }

  // Whether the trial's own files show the rung done already (its process finished the rung, and
  // the sweep stopped before it wrote that down).
  static bool rung_reached(const TrialProgress& progress, const SweepState& state, int rung) {
    if (!progress.error) return false;
    const double end = state.rungs[static_cast<std::size_t>(rung)];
    if (state.budget.by_time()) return progress.minutes >= end - 1e-9;
    return static_cast<double>(progress.iterations) >= end;
  }

  void train(const Claim& claim, const std::string& device) {
    const SweepState state = store_.read();
    const fs::path dir = train_dir(claim.trial);
    const int rung = claim.job.rung;
    const std::string values = describe_trial(claim.trial.parameters);
    TrialExit exit;
    if (!rung_reached(progress_of(dir), state, rung)) {
      const TrialCommand command = command_for(claim, state, dir, device);
      console::info("trial {} of {} ({}): training to {} (rung {} of {}) on {}; log: {}",
                    claim.trial.id, state.trials.size(), values, rung_text(state, rung), rung + 1,
                    state.rungs.size(), device, command.log_file.string());
      {
        std::FILE* log = std::fopen(command.log_file.c_str(), "ae");
        if (log != nullptr) {
          std::fprintf(log, "\n== labpose sweep %s: trial %d, rung %d of %zu: %s\n",
                       state.name.c_str(), claim.trial.id, rung + 1, state.rungs.size(),
                       command_text(command).c_str());
          std::fclose(log);
        }
      }
      exit = run_trial_process(command, [] { return interrupt_requested(); });
    }
    record(claim, exit, progress_of(dir), values);
  }

  void record(const Claim& claim, const TrialExit& exit, const TrialProgress& progress,
              const std::string& values) {
    const int rung = claim.job.rung;
    const SweepState written = store_.update([&](SweepState& state) {
      TrialRecord& trial = trial_by_id(state, claim.trial.id);
      trial.minutes = progress.minutes;
      trial.iterations = progress.iterations;
      switch (exit.kind) {
        case TrialExit::Kind::finished:
          if (!progress.error || !std::isfinite(*progress.error)) {
            trial.state = TrialState::failed;
            trial.message = "training ended without a validation error";
            break;
          }
          trial.state = TrialState::done;
          trial.rung = rung;
          trial.errors.resize(static_cast<std::size_t>(rung));  // one per rung before
          trial.errors.push_back(*progress.error);
          break;
        case TrialExit::Kind::interrupted:
          trial.state = TrialState::stopped;
          break;
        case TrialExit::Kind::failed:
        case TrialExit::Kind::crashed: {
          trial.state = TrialState::failed;
          std::string why = last_error_of_log(store_.trial_log_file(trial.id));
          if (exit.kind == TrialExit::Kind::crashed) {
            why = fmt::format("its process ended by signal {}{}", exit.signal,
                              exit.signal == 9 ? " (out of memory?)" : "");
          } else if (why.empty()) {
            why = fmt::format("train exited with status {}", exit.exit_code);
          }
          trial.message = why;
          break;
        }
      }
      write_sweep_results(state, store_.folder());
      return true;
    });
    write_sweep_curves(
        written, [this](int shuffle) { return trial_train_dir(config_, fraction_, shuffle); },
        store_.folder() / "curves.png");
    const TrialRecord& trial = trial_by_id(written, claim.trial.id);
    switch (trial.state) {
      case TrialState::done:
        console::info("trial {}: validation error {:.2f} px at {} (iteration {}){}", trial.id,
                      error_at(trial, rung), rung_text(written, rung), trial.iterations,
                      rung == top_ ? "" : promotion_note(written, rung));
        break;
      case TrialState::stopped:
        console::info(
            "trial {} stopped at iteration {}; it resumes from its snapshot when the "
            "sweep runs again",
            trial.id, trial.iterations);
        break;
      case TrialState::failed:
        console::warn("trial {} ({}) failed: {}; see {}", trial.id, values, trial.message,
                      store_.trial_log_file(trial.id).string());
        break;
      case TrialState::waiting:
      case TrialState::running:
        break;
    }
  }

  static std::string promotion_note(const SweepState& state, int rung) {
    int finished = 0;  // as the scheduler counts them: a failure in the rung counts too
    for (const auto& trial : state.trials) {
      const bool failed_here = trial.state == TrialState::failed && trial.target_rung == rung;
      finished += trial.rung >= rung || failed_here ? 1 : 0;
    }
    const int going_on = finished / state.eta;
    if (going_on == 0) {
      return fmt::format("; rung {}: {} trial{} finished (the best third go on)", rung + 1,
                         finished, finished == 1 ? "" : "s");
    }
    return fmt::format("; rung {}: {} trials finished, the best {} go on", rung + 1, finished,
                       going_on);
  }

  const projects::ProjectConfig& config_;
  const SweepOptions& options_;
  const SweepStore& store_;
  std::vector<std::string> devices_;
  double fraction_ = 0.95;
  int top_ = 0;
  int cpu_threads_ = 0;  // OMP_NUM_THREADS of each CPU trial when several share the cores
  mutable std::once_flag cpu_precision_once_;
  mutable std::string cpu_precision_;  // `auto` measured once, for the CPU trials
};

// The chosen trial's test error, measured once by the process that takes test.lock first.
void measure_test_error(const projects::ProjectConfig& config, const SweepStore& store,
                        const std::string& devices) {
  SweepState state = store.read();
  const auto best = best_trial(state);
  if (!best || state.chosen) return;
  const auto lock = FileLock::try_take(store.folder() / "locks" / "test.lock");
  if (!lock) return;  // another process measures it
  state = store.read();
  if (state.chosen) return;
  const TrialRecord& trial = trial_by_id(state, *best);
  console::info(
      "the sweep is over: trial {} is the best on the validation images; its test "
      "error, measured once:",
      trial.id);
  EvaluateOptions evaluate;
  evaluate.shuffle = trial.shuffle;
  evaluate.training_fraction = state.training_fraction;
  evaluate.device = device_list(devices).front();
  const auto evaluations = evaluate_network(config, evaluate);
  if (evaluations.empty() || evaluations.back().test_images == 0 ||
      std::isnan(evaluations.back().test.mean)) {
    console::warn("shuffle {} has no test images: trial {} is chosen without a test error",
                  state.base_shuffle, trial.id);
    store.update([&](SweepState& current) {
      current.chosen = trial.id;
      write_sweep_results(current, store.folder());
      return true;
    });
    return;
  }
  const SnapshotEvaluation& result = evaluations.back();
  store.update([&](SweepState& current) {
    current.chosen = trial.id;
    current.test_error = result.test.mean;
    current.test_snapshot = result.snapshot;
    write_sweep_results(current, store.folder());
    return true;
  });
}

}  // namespace

fs::path sweep_folder(const projects::ProjectConfig& config, const std::string& name) {
  return config.project_dir() / "sweeps" / name;
}

SweepState open_sweep(const projects::ProjectConfig& config, const SweepOptions& options) {
  static const std::regex safe_name(R"([A-Za-z0-9][A-Za-z0-9._-]{0,63})");
  if (!std::regex_match(options.name, safe_name)) {
    throw UsageError(fmt::format("--name {} is not a sweep name", options.name),
                     "use letters, digits, '.', '_' and '-' (up to 64), starting with a letter "
                     "or digit");
  }
  if (options.parallel < 1) throw UsageError("--parallel must be at least 1");
  if (options.devices) check_devices(*options.devices);
  const SweepStore store(sweep_folder(config, options.name));
  const fs::path sweeps = config.project_dir() / "sweeps";
  create_folder(sweeps);
  // One sweep is created at a time in a project: each takes the next free shuffle numbers.
  const FileLock creating = FileLock::wait_for(sweeps / ".create.lock");
  if (store.exists()) {
    const SweepState state = store.read();
    check_same_sweep(state, options);
    return state;
  }
  if (!options.space) {
    throw UsageError(
        fmt::format("there is no sweep {} in {} to continue", options.name, sweeps.string()),
        "start one with --space sweep.yaml (labpose sweep --example writes one)");
  }
  const SweepState state =
      new_state(config, options, options.shuffle.value_or(1),
                options.training_fraction.value_or(config.values().training_fraction.front()));
  store.create(state);
  write_sweep_results(state, store.folder());
  return state;
}

SweepRun run_sweep(const projects::ProjectConfig& config, const SweepOptions& options) {
  SweepRun run;
  run.state = open_sweep(config, options);
  if (options.prepare_only) return run;
  const SweepStore store(sweep_folder(config, options.name));
  SweepRunner runner(config, options, store, run.state);
  run.interrupted = !runner.run();
  if (!run.interrupted)
    measure_test_error(config, store, options.devices.value_or(run.state.device));
  run.state = store.read();
  return run;
}

Promotion promote_sweep_trial(projects::ProjectConfig& config, const std::string& name) {
  const SweepState state = read_sweep(config, name);
  const auto& values = config.values();
  if (state.iteration != values.iteration) {
    throw Error(fmt::format("sweep {} trained models of iteration {}; config.yaml is at iteration "
                            "{} now",
                            name, state.iteration, values.iteration),
                "sweep the current iteration's training set, then promote that sweep's trial");
  }
  if (!state.chosen) {
    throw Error(fmt::format("sweep {} is not over: no trial has been chosen yet", name),
                fmt::format("run it to the end first: labpose sweep {} --name {}",
                            config.file().string(), name));
  }
  const TrialRecord& trial = trial_by_id(state, *state.chosen);
  const fs::path pose_file =
      projects::pose_cfg_in(trial_train_dir(config, state.training_fraction, trial.shuffle));
  const PoseConfig pose = read_pose_config(pose_file);
  Promotion promotion;
  promotion.model = {trial.shuffle, state.training_fraction, name, trial.id};
  promotion.previous_net_type = values.default_net_type;
  promotion.net_type = pose.net_type;
  if (promotion.net_type != promotion.previous_net_type) {
    promotion.backup = keep_backup(config.file());
    config.set_default_net_type(pose.net_type);
    config.save();
  }
  projects::write_promoted_model(config, promotion.model);
  return promotion;
}

SweepState read_sweep(const projects::ProjectConfig& config, const std::string& name) {
  const SweepStore store(sweep_folder(config, name));
  if (store.exists()) return store.read();
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(config.project_dir() / "sweeps", error)) {
    if (fs::exists(entry.path() / "state.json")) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  throw UsageError(
      fmt::format("there is no sweep {} in {}", name, (config.project_dir() / "sweeps").string()),
      names.empty() ? std::string("start one: labpose sweep <config.yaml> --space "
                                  "sweep.yaml")
                    : fmt::format("the sweeps of this project: {}", fmt::join(names, ", ")));
}

}  // namespace labpose::pipeline
